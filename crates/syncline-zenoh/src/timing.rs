//! [`CoordinatorTransport`] and [`ParticipantTransport`] over zenoh.
//!
//! Key expressions, under a prefix (default `syncline/timing`):
//!
//! | key                         | what                                        |
//! |-----------------------------|---------------------------------------------|
//! | `P/up/NAME`                 | participant `NAME` to the coordinator       |
//! | `P/down/NAME`               | the coordinator to participant `NAME`       |
//! | `P/alive/c/ID`              | the coordinator's liveliness token          |
//! | `P/alive/p/NAME/ID`         | participant `NAME`'s liveliness token       |
//!
//! `ID` is a process run's random instance id (16 hex digits). Messages are
//! the 41-byte frames of [`crate::wire`], sent reliably (TCP) with blocking
//! congestion control (never dropped) and without batching delay.
//!
//! Delivery is exactly-once and in order even across a lost and restored
//! link: every frame carries a per-direction sequence number (duplicates are
//! dropped, gaps counted) and a cumulative acknowledgement; unacknowledged
//! frames are sent again when the other side's liveliness token comes back.
//! A participant whose token goes away is reported as [`Inbound::Leave`]
//! (at once for a killed process, within the lease for a lost host); when
//! it comes back it joins again ([`Inbound::Join`]) and repeats its last
//! ready report, so a coordinator that dropped it takes it back. A new
//! coordinator (a restarted one) is adopted by the participants, which
//! repeat their last ready report to it.

use std::collections::{HashMap, VecDeque};
use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use syncline::timer::{
    CoordinatorTransport, Inbound, Outbound, ParticipantTransport, PeerKey, TransportClosed,
};
use syncline_core::Timestamp;
use syncline_core::timer::Signal;
use tokio::sync::mpsc;
use zenoh::Wait;
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::{Publisher, Subscriber};
use zenoh::qos::CongestionControl;
use zenoh::sample::{Sample, SampleKind};

use crate::Error;
use crate::wire::{Body, Frame, SeqIn, SeqVerdict};

/// Frames kept for re-sending per connection; beyond this the oldest are
/// forgotten (and counted in `outbox_dropped`).
const OUTBOX_CAP: usize = 4096;
/// Connections the coordinator remembers (alive or gone, for a return).
const MAX_PEERS: usize = 4096;

/// Where the timing messages live and how a participant waits for a lost
/// coordinator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimingConfig {
    /// The key expression prefix (several runs can share a network under
    /// different prefixes).
    pub prefix: String,
    /// Participant: how long to wait for a coordinator that went away
    /// (its liveliness token vanished) before `recv` returns `None`;
    /// `None` waits for ever (a restarted coordinator is adopted).
    pub coordinator_timeout: Option<Duration>,
}

impl Default for TimingConfig {
    fn default() -> Self {
        TimingConfig {
            prefix: "syncline/timing".into(),
            coordinator_timeout: Some(Duration::from_secs(10)),
        }
    }
}

impl TimingConfig {
    /// Sets the prefix.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Sets the coordinator timeout.
    pub fn coordinator_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.coordinator_timeout = timeout;
        self
    }
}

/// Counters of a timing transport's delivery layer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct LinkStats {
    /// Frames taken.
    pub received: u64,
    /// Frames sent (first sends).
    pub sent: u64,
    /// Frames sent again after a link came back.
    pub resent: u64,
    /// Frames dropped as already taken.
    pub duplicates: u64,
    /// Sequence numbers never seen (frames lost for good).
    pub gaps: u64,
    /// Frames that could not be decoded, or came from a forgotten peer.
    pub rejected: u64,
    /// Unacknowledged frames forgotten because an outbox was full.
    pub outbox_dropped: u64,
}

/// A valid participant name: one key chunk of letters, digits, `-`, `_`, `.`.
pub fn check_name(name: &str) -> Result<(), Error> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(Error::Name(name.to_string()))
    }
}

/// A random non-zero instance id for this process run.
pub(crate) fn instance_id() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish().max(1)
}

enum Raw {
    Msg(Sample),
    Alive(Sample),
}

fn forward(tx: mpsc::UnboundedSender<Raw>, wrap: fn(Sample) -> Raw) -> impl Fn(Sample) {
    move |s| {
        let _ = tx.send(wrap(s));
    }
}

/// Sends `frame` on `publisher`; false when the session is closed.
fn put(publisher: &Publisher<'static>, frame: &Frame) -> bool {
    publisher.put(frame.encode().to_vec()).wait().is_ok()
}

/// Runs `f`, which sends `frames` frames on one link at once, so that it
/// cannot block for ever. On zenoh's own runtime (a task on
/// [`crate::zenoh_runtime`]) under [`crate::ONE_THREAD_RUNTIME`], a put
/// waits when the link's queue (two batches) is full until zenoh's sending
/// task writes, and that task runs on the same thread: a burst of more than
/// one frame (a re-send after a lost link) therefore runs in
/// `block_in_place`, which hands the thread's other tasks to another thread
/// meanwhile. A single frame is sent directly (see [`Unwritten`] for
/// single frames sent one after another).
fn burst<R>(frames: usize, f: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let multi_thread =
        Handle::try_current().is_ok_and(|h| h.runtime_flavor() == RuntimeFlavor::MultiThread);
    if frames > 1 && multi_thread {
        tokio::task::block_in_place(f)
    } else {
        f()
    }
}

/// The puts on one link since the task last waited for a message.
///
/// Every frame is an express message, which takes one of the link's two
/// batches until zenoh's sending task has written it; under
/// [`crate::ONE_THREAD_RUNTIME`] that task runs on the thread of the
/// transport's own task, so it cannot write before that task waits. A third
/// put before then would wait for a free batch on the only thread that can
/// free one: the thread stops (its keep-alives too) until zenoh closes the
/// link after five seconds, and the other side, after its lease (1 s),
/// declares this process lost. That happened to the last participant to
/// join: its repeated ready report (on adopting the coordinator), the first
/// trigger arriving in the same wake-up, the report on entering the
/// simulated loop and the report after its first step went out with no
/// wait in between; the coordinator then dropped it and ran on without it.
///
/// So the first put after a wait (the common case: one report per
/// trigger, one trigger per report) goes out directly, and any further one
/// before the next wait runs in `block_in_place` ([`burst`]), where waiting
/// for a batch is harmless.
#[derive(Debug, Clone, Copy, Default)]
struct Unwritten {
    /// The transport's wait count when `puts` was counted.
    waits: u64,
    /// Puts since then.
    puts: u32,
}

impl Unwritten {
    /// Sends `frame` on `publisher` (see the type's documentation); `waits`
    /// is the transport's count of waits for a message.
    fn put(&mut self, waits: u64, publisher: &Publisher<'static>, frame: &Frame) -> bool {
        if self.count(waits, 1) == 1 {
            put(publisher, frame)
        } else {
            burst(2, || put(publisher, frame))
        }
    }

    /// Counts `n` puts made otherwise (a burst); the puts counted since the
    /// last wait.
    fn count(&mut self, waits: u64, n: usize) -> u32 {
        if self.waits != waits {
            *self = Unwritten { waits, puts: 0 };
        }
        self.puts = self
            .puts
            .saturating_add(u32::try_from(n).unwrap_or(u32::MAX));
        self.puts
    }
}

/// Pushes `frame` on a bounded outbox.
fn keep(outbox: &mut VecDeque<Frame>, frame: Frame, stats: &mut LinkStats) {
    if outbox.len() >= OUTBOX_CAP {
        outbox.pop_front();
        stats.outbox_dropped += 1;
    }
    outbox.push_back(frame);
}

fn trim(outbox: &mut VecDeque<Frame>, ack: u64) {
    while outbox.front().is_some_and(|f| f.seq <= ack) {
        outbox.pop_front();
    }
}

fn parse_id(hex: &str) -> Option<u64> {
    u64::from_str_radix(hex, 16).ok().filter(|&id| id != 0)
}

async fn declare_publisher(
    session: &zenoh::Session,
    key: String,
) -> Result<Publisher<'static>, Error> {
    session
        .declare_publisher(key)
        .congestion_control(CongestionControl::Block)
        .express(true)
        .await
        .map_err(Error::zenoh)
}

struct Peer {
    name: Arc<str>,
    instance: u64,
    alive: bool,
    publisher: Publisher<'static>,
    seq_in: SeqIn,
    seq_out: u64,
    outbox: VecDeque<Frame>,
    unwritten: Unwritten,
}

/// The coordinator's end of the timing transport over zenoh.
pub struct ZenohCoordinator {
    session: zenoh::Session,
    prefix: String,
    instance: u64,
    rx: mpsc::UnboundedReceiver<Raw>,
    peers: Vec<Option<Peer>>,
    by_instance: HashMap<u64, u32>,
    free: Vec<u32>,
    pending: VecDeque<Inbound>,
    stats: LinkStats,
    /// Times `recv` found nothing and waited ([`Unwritten`]).
    waits: u64,
    _token: LivelinessToken,
    _subscribers: [Subscriber<()>; 2],
}

impl std::fmt::Debug for ZenohCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZenohCoordinator")
            .field("prefix", &self.prefix)
            .field("instance", &format_args!("{:016x}", self.instance))
            .field("stats", &self.stats)
            .finish()
    }
}

impl ZenohCoordinator {
    /// Declares the coordinator on `session` (subscriptions first, then its
    /// liveliness token, so a participant that sees the token can talk).
    pub async fn new(session: &zenoh::Session, config: &TimingConfig) -> Result<Self, Error> {
        let prefix = config.prefix.clone();
        let instance = instance_id();
        let (tx, rx) = mpsc::unbounded_channel();
        let up = session
            .declare_subscriber(format!("{prefix}/up/*"))
            .callback(forward(tx.clone(), Raw::Msg))
            .await
            .map_err(Error::zenoh)?;
        let alive = session
            .liveliness()
            .declare_subscriber(format!("{prefix}/alive/p/*/*"))
            .history(true)
            .callback(forward(tx, Raw::Alive))
            .await
            .map_err(Error::zenoh)?;
        let token = session
            .liveliness()
            .declare_token(format!("{prefix}/alive/c/{instance:016x}"))
            .await
            .map_err(Error::zenoh)?;
        Ok(ZenohCoordinator {
            session: session.clone(),
            prefix,
            instance,
            rx,
            peers: Vec::new(),
            by_instance: HashMap::new(),
            free: Vec::new(),
            pending: VecDeque::new(),
            stats: LinkStats::default(),
            waits: 0,
            _token: token,
            _subscribers: [up, alive],
        })
    }

    /// The delivery counters.
    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    /// The name of connection `peer`.
    pub fn name(&self, peer: PeerKey) -> Option<&str> {
        self.peer(peer).map(|p| &*p.name)
    }

    /// Participants whose liveliness token is present.
    pub fn alive(&self) -> impl Iterator<Item = (PeerKey, &str)> {
        self.peers.iter().enumerate().filter_map(|(k, p)| {
            p.as_ref()
                .filter(|p| p.alive)
                .map(|p| (PeerKey(k as u32), &*p.name))
        })
    }

    fn peer(&self, key: PeerKey) -> Option<&Peer> {
        self.peers.get(key.0 as usize).and_then(Option::as_ref)
    }

    /// The connection of `instance`, created (and announced with a join)
    /// when new.
    fn connection(&mut self, name: &str, instance: u64) -> Option<u32> {
        if let Some(&k) = self.by_instance.get(&instance) {
            return Some(k);
        }
        if check_name(name).is_err() {
            return None;
        }
        if self.free.is_empty() && self.peers.len() >= MAX_PEERS {
            // Forget the first connection that is gone.
            let gone = self
                .peers
                .iter()
                .position(|p| p.as_ref().is_some_and(|p| !p.alive))?;
            if let Some(p) = self.peers[gone].take() {
                self.by_instance.remove(&p.instance);
            }
            self.free.push(gone as u32);
        }
        let key = format!("{}/down/{name}", self.prefix);
        let publisher = self
            .session
            .declare_publisher(key)
            .congestion_control(CongestionControl::Block)
            .express(true)
            .wait()
            .ok()?;
        let peer = Peer {
            name: name.into(),
            instance,
            alive: true,
            publisher,
            seq_in: SeqIn::default(),
            seq_out: 0,
            outbox: VecDeque::new(),
            unwritten: Unwritten::default(),
        };
        let k = match self.free.pop() {
            Some(k) => {
                self.peers[k as usize] = Some(peer);
                k
            }
            None => {
                self.peers.push(Some(peer));
                (self.peers.len() - 1) as u32
            }
        };
        self.by_instance.insert(instance, k);
        self.pending.push_back(Inbound::Join {
            peer: PeerKey(k),
            name: name.into(),
        });
        Some(k)
    }

    fn handle(&mut self, raw: Raw) {
        match raw {
            Raw::Alive(s) => self.handle_alive(&s),
            Raw::Msg(s) => self.handle_msg(&s),
        }
    }

    fn handle_alive(&mut self, s: &Sample) {
        let key = s.key_expr().as_str();
        let rest = key
            .strip_prefix(self.prefix.as_str())
            .and_then(|k| k.strip_prefix("/alive/p/"));
        let Some((name, id)) = rest.and_then(|r| r.split_once('/')) else {
            return;
        };
        let Some(instance) = parse_id(id) else { return };
        match s.kind() {
            SampleKind::Put => {
                if let Some(k) = self.connection(name, instance) {
                    self.revive(k);
                }
            }
            SampleKind::Delete => {
                if let Some(&k) = self.by_instance.get(&instance)
                    && let Some(p) = self.peers[k as usize].as_mut()
                    && p.alive
                {
                    p.alive = false;
                    self.pending.push_back(Inbound::Leave(PeerKey(k)));
                }
            }
        }
    }

    /// A connection that was gone is back (its token, or a message, came
    /// over a restored link): it joins again and gets what it has not
    /// acknowledged. Nothing for a connection that is alive.
    fn revive(&mut self, k: u32) {
        let Some(p) = self.peers.get_mut(k as usize).and_then(Option::as_mut) else {
            return;
        };
        if p.alive {
            return;
        }
        p.alive = true;
        self.pending.push_back(Inbound::Join {
            peer: PeerKey(k),
            name: p.name.clone(),
        });
        let ack = p.seq_in.last;
        p.unwritten.count(self.waits, p.outbox.len());
        let (publisher, outbox) = (&p.publisher, &p.outbox);
        burst(outbox.len(), || {
            for f in outbox {
                put(publisher, &Frame { ack, ..*f });
            }
        });
        self.stats.resent += p.outbox.len() as u64;
    }

    fn handle_msg(&mut self, s: &Sample) {
        let key = s.key_expr().as_str();
        let Some(name) = key
            .strip_prefix(self.prefix.as_str())
            .and_then(|k| k.strip_prefix("/up/"))
        else {
            return;
        };
        let frame = match Frame::decode(&s.payload().to_bytes()) {
            Ok(f) if f.to == 0 || f.to == self.instance => f,
            _ => {
                self.stats.rejected += 1;
                return;
            }
        };
        let Body::Up(msg) = frame.body else {
            self.stats.rejected += 1;
            return;
        };
        let Some(k) = self.connection(name, frame.from) else {
            self.stats.rejected += 1;
            return;
        };
        // A message from a connection declared gone: the link is back (on
        // one link, its messages and its token's loss arrive in order).
        self.revive(k);
        let Some(p) = self.peers[k as usize].as_mut() else {
            return;
        };
        match p.seq_in.take(frame.seq) {
            SeqVerdict::Duplicate => {
                self.stats.duplicates += 1;
                return;
            }
            SeqVerdict::Take { gap } => self.stats.gaps += gap,
        }
        self.stats.received += 1;
        trim(&mut p.outbox, frame.ack);
        let peer = PeerKey(k);
        self.pending.push_back(match msg {
            Outbound::Ready(next) => Inbound::Ready { peer, next },
            Outbound::StopRequest => Inbound::StopRequest(peer),
        });
    }

    fn deliver(&mut self, k: usize, signal: Signal) -> Result<(), TransportClosed> {
        let p = self
            .peers
            .get_mut(k)
            .and_then(Option::as_mut)
            .ok_or(TransportClosed)?;
        p.seq_out += 1;
        let f = Frame {
            from: self.instance,
            to: p.instance,
            seq: p.seq_out,
            ack: p.seq_in.last,
            body: Body::Down(signal),
        };
        keep(&mut p.outbox, f, &mut self.stats);
        self.stats.sent += 1;
        // A connection that is gone keeps the frame for its return.
        if p.alive && !p.unwritten.put(self.waits, &p.publisher, &f) {
            return Err(TransportClosed);
        }
        Ok(())
    }
}

impl CoordinatorTransport for ZenohCoordinator {
    fn recv(&mut self) -> impl Future<Output = Option<Inbound>> + Send {
        poll_fn(|cx| {
            loop {
                if let Some(m) = self.pending.pop_front() {
                    return Poll::Ready(Some(m));
                }
                match self.rx.poll_recv(cx) {
                    Poll::Ready(Some(raw)) => self.handle(raw),
                    Poll::Ready(None) => return Poll::Ready(None),
                    Poll::Pending => {
                        self.waits = self.waits.wrapping_add(1);
                        return Poll::Pending;
                    }
                }
            }
        })
    }

    fn try_recv(&mut self) -> Option<Inbound> {
        loop {
            if let Some(m) = self.pending.pop_front() {
                return Some(m);
            }
            let raw = self.rx.try_recv().ok()?;
            self.handle(raw);
        }
    }

    fn send(&mut self, to: Option<PeerKey>, signal: Signal) -> Result<(), TransportClosed> {
        match to {
            Some(k) => self.deliver(k.0 as usize, signal),
            None => {
                for k in 0..self.peers.len() {
                    if self.peers[k].is_some() {
                        self.deliver(k, signal)?;
                    }
                }
                Ok(())
            }
        }
    }
}

struct Coord {
    instance: u64,
    alive: bool,
    seq_in: SeqIn,
}

/// A participant's end of the timing transport over zenoh.
pub struct ZenohParticipant {
    name: Arc<str>,
    instance: u64,
    prefix: String,
    publisher: Publisher<'static>,
    rx: mpsc::UnboundedReceiver<Raw>,
    coord: Option<Coord>,
    seq_out: u64,
    outbox: VecDeque<Frame>,
    last_ready: Option<Timestamp>,
    pending: VecDeque<Signal>,
    timeout: Option<Duration>,
    lost: Option<Pin<Box<tokio::time::Sleep>>>,
    closed: bool,
    stats: LinkStats,
    /// Times `recv` found nothing and waited ([`Unwritten`]).
    waits: u64,
    unwritten: Unwritten,
    _token: LivelinessToken,
    _subscribers: [Subscriber<()>; 2],
}

impl std::fmt::Debug for ZenohParticipant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZenohParticipant")
            .field("name", &self.name)
            .field("instance", &format_args!("{:016x}", self.instance))
            .field("stats", &self.stats)
            .finish()
    }
}

impl ZenohParticipant {
    /// Declares participant `name` on `session`. The name must be one key
    /// chunk ([`check_name`]).
    pub async fn new(
        session: &zenoh::Session,
        name: &str,
        config: &TimingConfig,
    ) -> Result<Self, Error> {
        check_name(name)?;
        let prefix = config.prefix.clone();
        let instance = instance_id();
        let (tx, rx) = mpsc::unbounded_channel();
        let down = session
            .declare_subscriber(format!("{prefix}/down/{name}"))
            .callback(forward(tx.clone(), Raw::Msg))
            .await
            .map_err(Error::zenoh)?;
        let alive = session
            .liveliness()
            .declare_subscriber(format!("{prefix}/alive/c/*"))
            .history(true)
            .callback(forward(tx, Raw::Alive))
            .await
            .map_err(Error::zenoh)?;
        let publisher = declare_publisher(session, format!("{prefix}/up/{name}")).await?;
        let token = session
            .liveliness()
            .declare_token(format!("{prefix}/alive/p/{name}/{instance:016x}"))
            .await
            .map_err(Error::zenoh)?;
        Ok(ZenohParticipant {
            name: name.into(),
            instance,
            prefix,
            publisher,
            rx,
            coord: None,
            seq_out: 0,
            outbox: VecDeque::new(),
            last_ready: None,
            pending: VecDeque::new(),
            timeout: config.coordinator_timeout,
            lost: None,
            closed: false,
            stats: LinkStats::default(),
            waits: 0,
            unwritten: Unwritten::default(),
            _token: token,
            _subscribers: [down, alive],
        })
    }

    /// The delivery counters.
    pub fn stats(&self) -> LinkStats {
        self.stats
    }

    /// Whether a coordinator is known and alive.
    pub fn coordinator_alive(&self) -> bool {
        self.coord.as_ref().is_some_and(|c| c.alive)
    }

    fn transmit(&mut self, msg: Outbound) -> bool {
        self.seq_out += 1;
        let f = Frame {
            from: self.instance,
            to: self.coord.as_ref().map_or(0, |c| c.instance),
            seq: self.seq_out,
            ack: self.coord.as_ref().map_or(0, |c| c.seq_in.last),
            body: Body::Up(msg),
        };
        keep(&mut self.outbox, f, &mut self.stats);
        self.stats.sent += 1;
        self.unwritten.put(self.waits, &self.publisher, &f)
    }

    /// Adopts coordinator `instance` (a new one: forget the old exchange).
    fn adopt(&mut self, instance: u64) {
        self.coord = Some(Coord {
            instance,
            alive: true,
            seq_in: SeqIn::default(),
        });
        self.outbox.clear();
        self.lost = None;
    }

    /// Our coordinator, declared gone, is back: re-send what it has not
    /// acknowledged, then the last ready report (it may have dropped us).
    fn revive(&mut self) {
        let ack = match self.coord.as_mut() {
            Some(c) if !c.alive => {
                c.alive = true;
                c.seq_in.last
            }
            _ => return,
        };
        self.lost = None;
        // The unacknowledged frames, then the last ready report.
        let frames = self.outbox.len() + usize::from(self.last_ready.is_some());
        self.unwritten.count(self.waits, frames);
        burst(frames, || {
            for f in &self.outbox {
                put(&self.publisher, &Frame { ack, ..*f });
                self.stats.resent += 1;
            }
            self.refresh();
        });
    }

    /// Repeats the last ready report (to a coordinator that may have
    /// dropped or never seen it).
    fn refresh(&mut self) {
        if let Some(t) = self.last_ready {
            self.transmit(Outbound::Ready(t));
        }
    }

    fn handle(&mut self, raw: Raw) {
        match raw {
            Raw::Alive(s) => {
                let id = s
                    .key_expr()
                    .as_str()
                    .strip_prefix(self.prefix.as_str())
                    .and_then(|k| k.strip_prefix("/alive/c/"))
                    .and_then(parse_id);
                let Some(id) = id else { return };
                let same = self.coord.as_ref().is_some_and(|c| c.instance == id);
                match (s.kind(), same) {
                    (SampleKind::Put, true) => self.revive(),
                    (SampleKind::Put, false) => {
                        self.adopt(id);
                        self.refresh();
                    }
                    (SampleKind::Delete, true) => {
                        if let Some(c) = self.coord.as_mut() {
                            c.alive = false;
                        }
                        self.lost = self.timeout.map(|t| Box::pin(tokio::time::sleep(t)));
                    }
                    (SampleKind::Delete, false) => {}
                }
            }
            Raw::Msg(s) => {
                let frame = match Frame::decode(&s.payload().to_bytes()) {
                    Ok(f) if f.to == self.instance => f,
                    _ => {
                        self.stats.rejected += 1;
                        return;
                    }
                };
                let Body::Down(signal) = frame.body else {
                    self.stats.rejected += 1;
                    return;
                };
                match &self.coord {
                    Some(c) if c.instance == frame.from => {
                        // Ours, declared gone: the link is back.
                        self.revive();
                    }
                    Some(c) if c.alive => {
                        // Another coordinator while ours is alive: not ours.
                        self.stats.rejected += 1;
                        return;
                    }
                    _ => self.adopt(frame.from),
                }
                let Some(c) = self.coord.as_mut() else { return };
                match c.seq_in.take(frame.seq) {
                    SeqVerdict::Duplicate => {
                        self.stats.duplicates += 1;
                        return;
                    }
                    SeqVerdict::Take { gap } => self.stats.gaps += gap,
                }
                self.stats.received += 1;
                trim(&mut self.outbox, frame.ack);
                self.pending.push_back(signal);
            }
        }
    }

    fn poll_signal(&mut self, cx: &mut Context<'_>) -> Poll<Option<Signal>> {
        loop {
            if let Some(s) = self.pending.pop_front() {
                return Poll::Ready(Some(s));
            }
            if self.closed {
                return Poll::Ready(None);
            }
            match self.rx.poll_recv(cx) {
                Poll::Ready(Some(raw)) => {
                    self.handle(raw);
                    continue;
                }
                Poll::Ready(None) => self.closed = true,
                Poll::Pending => {}
            }
            if let Some(lost) = self.lost.as_mut()
                && lost.as_mut().poll(cx).is_ready()
            {
                tracing::warn!(participant = %self.name, "timing: coordinator gone");
                self.closed = true;
                continue;
            }
            self.waits = self.waits.wrapping_add(1);
            return Poll::Pending;
        }
    }
}

impl ParticipantTransport for ZenohParticipant {
    fn name(&self) -> &str {
        &self.name
    }

    fn send(&mut self, msg: Outbound) -> Result<(), TransportClosed> {
        if self.closed {
            return Err(TransportClosed);
        }
        if let Outbound::Ready(t) = msg {
            self.last_ready = Some(t);
        }
        if self.transmit(msg) {
            Ok(())
        } else {
            Err(TransportClosed)
        }
    }

    fn recv(&mut self) -> impl Future<Output = Option<Signal>> + Send {
        poll_fn(|cx| self.poll_signal(cx))
    }
}
