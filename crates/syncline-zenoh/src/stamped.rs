//! Stamped streams across processes: publish a `Stream<Stamped<T>>` under
//! a key expression, subscribe to it elsewhere as a stream of stamped
//! samples, with the acquisition stamp intact.
//!
//! Each sample is one zenoh put: the payload is the value in
//! [postcard](https://docs.rs/postcard) (compact binary serde), the
//! attachment is a fixed 41-byte header (little-endian; after `rmw_zenoh`'s
//! 33-byte attachment):
//!
//! | bytes  | field     | meaning                                                  |
//! |--------|-----------|----------------------------------------------------------|
//! | 0      | version   | 1                                                        |
//! | 1..9   | publisher | the publisher's random id (non-zero)                     |
//! | 9..17  | seq       | its sequence number, from 1 (a gap is a lost sample)     |
//! | 17..25 | stamp     | acquisition time, ns (the publisher's clock domain)      |
//! | 25..33 | sent      | publication time, ns, on the publisher's clock           |
//! | 33..41 | clock     | the publisher's clock domain ([`ClockId`])               |
//!
//! Every publisher holds a liveliness token `syncline/publisher/ID/KEY`;
//! a subscriber sees a publisher go (killed, host lost) and, by
//! configuration, ends its stream or waits for another.
//!
//! Every subscriber answers queries on `syncline/progress/PUB/SUB/KEY`
//! (`PUB`, `SUB`: ids in hex) with the last sequence number it has received
//! from publisher `PUB` (8 bytes, little-endian; 0 for none), so that
//! [`StampedPublisher::finish`] can wait until its samples have left the
//! network before the session closes.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::{Stream, StreamExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use syncline::timer::system_now;
use syncline_core::{Stamped, Timestamp};
use zenoh::Wait;
use zenoh::liveliness::LivelinessToken;
use zenoh::pubsub::{Publisher, Subscriber};
use zenoh::qos::{CongestionControl, Priority};
use zenoh::query::{ConsolidationMode, QueryTarget, Queryable};
use zenoh::sample::{Sample, SampleKind};

use crate::Error;
use crate::timing::instance_id;
use crate::wire::{SeqIn, SeqVerdict};

/// The length of a stamped sample's header (its attachment).
pub const HEADER_LEN: usize = 41;
const VERSION: u8 = 1;
/// Publishers a subscriber keeps track of at once.
const MAX_PUBLISHERS: usize = 4096;

/// A clock domain: stamps of two publishers can be compared only when
/// their domains are equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct ClockId(pub u64);

impl ClockId {
    /// A domain named by the user (FNV-1a of the name), e.g. `"ptp-lab"`
    /// for hosts whose clocks are synchronised.
    pub fn named(name: &str) -> Self {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        ClockId(h.max(1))
    }

    /// This host's system clock (its boot id on Linux, else its host
    /// name): processes on one host share it, other hosts differ.
    pub fn system() -> Self {
        let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .or_else(|_| std::fs::read_to_string("/etc/hostname"))
            .unwrap_or_default();
        ClockId::named(id.trim())
    }
}

/// A stamped sample's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The publisher's id.
    pub publisher: u64,
    /// Its sequence number.
    pub seq: u64,
    /// The acquisition time.
    pub stamp: Timestamp,
    /// When it was published (publisher's clock).
    pub sent: Timestamp,
    /// The publisher's clock domain.
    pub clock: ClockId,
}

impl Header {
    /// Encodes the header.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0] = VERSION;
        b[1..9].copy_from_slice(&self.publisher.to_le_bytes());
        b[9..17].copy_from_slice(&self.seq.to_le_bytes());
        b[17..25].copy_from_slice(&self.stamp.as_nanos().to_le_bytes());
        b[25..33].copy_from_slice(&self.sent.as_nanos().to_le_bytes());
        b[33..41].copy_from_slice(&self.clock.0.to_le_bytes());
        b
    }

    /// Decodes a header; `None` for a wrong length or version.
    pub fn decode(bytes: &[u8]) -> Option<Header> {
        let b: &[u8; HEADER_LEN] = bytes.try_into().ok()?;
        if b[0] != VERSION {
            return None;
        }
        let w = |at: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[at..at + 8]);
            u64::from_le_bytes(x)
        };
        Some(Header {
            publisher: w(1),
            seq: w(9),
            stamp: Timestamp::from_nanos(w(17) as i64),
            sent: Timestamp::from_nanos(w(25) as i64),
            clock: ClockId(w(33)),
        })
    }
}

fn token_key(id: u64, key: &str) -> String {
    format!("syncline/publisher/{id:016x}/{key}")
}

const PROGRESS: &str = "syncline/progress/";

/// What [`StampedPublisher::finish`] found when it returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Finished {
    /// Samples published (the last sequence number).
    pub published: u64,
    /// Subscribers that answered the last progress query.
    pub subscribers: usize,
    /// Subscribers not known to have received the last sample when the
    /// timeout passed: those that answered with an earlier one, or 1 when
    /// subscribers match but none answered (0: every subscriber caught up).
    pub behind: usize,
}

/// Publishes stamped samples of `T` under one key expression.
pub struct StampedPublisher<T> {
    publisher: Publisher<'static>,
    session: zenoh::Session,
    id: u64,
    seq: u64,
    clock: ClockId,
    buf: Vec<u8>,
    _token: LivelinessToken,
    _t: PhantomData<fn(&T)>,
}

impl<T> std::fmt::Debug for StampedPublisher<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StampedPublisher")
            .field("key", &self.publisher.key_expr().as_str())
            .field("id", &format_args!("{:016x}", self.id))
            .field("seq", &self.seq)
            .field("clock", &self.clock)
            .finish()
    }
}

impl<T: Serialize> StampedPublisher<T> {
    /// Declares a publisher on `key` whose stamps are in clock domain
    /// `clock`. Reliable, blocking congestion control: a slow subscriber
    /// slows the publisher, nothing is dropped.
    pub async fn new(session: &zenoh::Session, key: &str, clock: ClockId) -> Result<Self, Error> {
        Self::with_options(session, key, clock, PublisherOptions::default()).await
    }

    /// [`new`](Self::new) with zenoh's express mode and priority
    /// ([`PublisherOptions`]).
    pub async fn with_options(
        session: &zenoh::Session,
        key: &str,
        clock: ClockId,
        options: PublisherOptions,
    ) -> Result<Self, Error> {
        let id = instance_id();
        let publisher = session
            .declare_publisher(key.to_string())
            .congestion_control(CongestionControl::Block)
            .express(options.express)
            .priority(options.priority)
            .await
            .map_err(Error::zenoh)?;
        let token = session
            .liveliness()
            .declare_token(token_key(id, key))
            .await
            .map_err(Error::zenoh)?;
        Ok(StampedPublisher {
            publisher,
            session: session.clone(),
            id,
            seq: 0,
            clock,
            buf: Vec::new(),
            _token: token,
            _t: PhantomData,
        })
    }

    /// Publishes one sample (returns its sequence number).
    pub fn publish(&mut self, sample: &Stamped<T>) -> Result<u64, Error> {
        self.buf.clear();
        let payload = postcard::to_extend(&sample.value, std::mem::take(&mut self.buf))
            .map_err(|e| Error::Encode(e.to_string()))?;
        self.seq += 1;
        let header = Header {
            publisher: self.id,
            seq: self.seq,
            stamp: sample.stamp,
            sent: system_now(),
            clock: self.clock,
        };
        self.publisher
            .put(payload)
            .attachment(header.encode().to_vec())
            .wait()
            .map_err(Error::zenoh)?;
        Ok(self.seq)
    }

    /// Publishes every sample of `stream`; returns how many.
    pub async fn publish_all<S: Stream<Item = Stamped<T>>>(
        &mut self,
        stream: S,
    ) -> Result<u64, Error> {
        let mut stream = std::pin::pin!(stream);
        let mut n = 0;
        while let Some(s) = stream.next().await {
            self.publish(&s)?;
            n += 1;
        }
        Ok(n)
    }

    /// Samples published so far (the last sequence number).
    pub fn published(&self) -> u64 {
        self.seq
    }

    /// Waits until every subscriber has received the last sample
    /// published, or `timeout` has passed, then undeclares the publisher.
    ///
    /// Call it before closing the session or leaving the process: a
    /// [`publish`](Self::publish) returns once zenoh has queued the sample,
    /// and what is still queued or on the link when the session closes is
    /// lost if a subscriber has fallen behind (zenoh gives the link a few
    /// seconds to drain). The subscribers answer progress queries (module
    /// docs); one that joined after the last sample, or a plain zenoh
    /// subscriber on the key that does not answer, keeps this waiting until
    /// `timeout`. With no subscriber it returns at once.
    pub async fn finish(self, timeout: Duration) -> Result<Finished, Error> {
        let deadline = tokio::time::Instant::now() + timeout;
        let query = format!("{PROGRESS}{:016x}/*/{}", self.id, self.publisher.key_expr());
        let mut pause = Duration::from_millis(2);
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let replies = self
                .session
                .get(&query)
                .target(QueryTarget::All)
                .consolidation(ConsolidationMode::None)
                .timeout(left.clamp(Duration::from_millis(100), Duration::from_secs(1)))
                .await
                .map_err(Error::zenoh)?;
            let (mut subscribers, mut behind) = (0, 0);
            while let Ok(reply) = replies.recv_async().await {
                let Ok(sample) = reply.result() else { continue };
                let seq =
                    <[u8; 8]>::try_from(&*sample.payload().to_bytes()).map(u64::from_le_bytes);
                subscribers += 1;
                if !matches!(seq, Ok(seq) if seq >= self.seq) {
                    behind += 1;
                }
            }
            // No answer while subscribers match: they have not answered
            // yet (one whose queue is full answers once it has room).
            if subscribers == 0 {
                let matching = self
                    .publisher
                    .matching_status()
                    .await
                    .map_err(Error::zenoh)?;
                behind = usize::from(matching.matching());
            }
            let now = tokio::time::Instant::now();
            if behind == 0 || now >= deadline {
                return Ok(Finished {
                    published: self.seq,
                    subscribers,
                    behind,
                });
            }
            tokio::time::sleep(pause.min(deadline - now)).await;
            pause = (pause * 2).min(Duration::from_millis(100));
        }
    }
}

/// How a [`StampedPublisher`] hands its samples to zenoh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublisherOptions {
    /// Zenoh's express mode: each sample is written on its own, never
    /// held to be batched with the next ones (default: off; zenoh then
    /// batches only the samples that queue up behind a busy link, which
    /// is what keeps high rates cheap).
    pub express: bool,
    /// Zenoh's priority on links that carry several (default:
    /// [`Priority::Data`]); a higher one goes ahead of bulk traffic.
    pub priority: Priority,
}

impl Default for PublisherOptions {
    fn default() -> Self {
        PublisherOptions {
            express: false,
            priority: Priority::Data,
        }
    }
}

/// Which clock domains a subscription takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockPolicy {
    /// The domain of the first sample; samples of any other are refused.
    First,
    /// Only this domain.
    Only(ClockId),
    /// Any domain (the user knows the clocks agree).
    Any,
}

/// What a subscription does when a publisher goes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnPublisherLost {
    /// End the stream once no publisher it has heard of is alive.
    End,
    /// Keep waiting for publishers.
    Wait,
}

/// Configuration of a [`StampedSubscriber`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubscriberConfig {
    /// Which clock domains to take.
    pub clock: ClockPolicy,
    /// When a publisher goes away.
    pub on_publisher_lost: OnPublisherLost,
    /// Samples queued before the network is slowed down (never dropped).
    pub capacity: usize,
}

impl Default for SubscriberConfig {
    fn default() -> Self {
        SubscriberConfig {
            clock: ClockPolicy::First,
            on_publisher_lost: OnPublisherLost::Wait,
            capacity: 4096,
        }
    }
}

/// A received value with its delivery details.
#[derive(Debug, Clone, PartialEq)]
pub struct Received<T> {
    /// The value.
    pub value: T,
    /// The publisher's id.
    pub publisher: u64,
    /// Its sequence number.
    pub seq: u64,
    /// The publisher's clock domain.
    pub clock: ClockId,
    /// When it was published (publisher's clock).
    pub sent: Timestamp,
    /// When it was received (this host's system clock).
    pub received: Timestamp,
}

/// A subscription's counters: every sample is delivered or counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct StreamStats {
    /// Samples delivered.
    pub delivered: u64,
    /// Sequence numbers never received (lost samples).
    pub lost: u64,
    /// Samples dropped as already delivered.
    pub duplicates: u64,
    /// Samples refused: another clock domain.
    pub foreign_clock: u64,
    /// Samples that could not be decoded (header or value).
    pub malformed: u64,
    /// Publishers seen.
    pub publishers: u64,
    /// Publishers that went away.
    pub publishers_lost: u64,
    /// Samples and liveliness changes dropped because the queue was full
    /// while the stream is consumed on zenoh's receiving thread (a task on
    /// [`crate::zenoh_runtime`] under [`crate::ONE_THREAD_RUNTIME`]), where
    /// waiting for room would never end. A dropped sample also shows as a
    /// gap (`lost`) when the publisher's next one arrives.
    pub overflow: u64,
}

enum Event {
    /// A sample and its header (`None`: missing or malformed).
    Sample(Sample, Option<Header>),
    Alive(Sample),
}

/// A number for the current thread (never 0).
fn thread_token() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local!(static TOKEN: u64 = NEXT.fetch_add(1, Ordering::Relaxed));
    TOKEN.with(|t| *t)
}

/// The bounded queue between zenoh's callbacks and the stream.
struct Queue<E> {
    tx: flume::Sender<E>,
    /// The thread that last polled the stream ([`thread_token`]).
    consumer: AtomicU64,
    /// Events dropped because the queue was full while the stream is
    /// consumed on the callback's own thread.
    overflow: AtomicU64,
}

impl<E> Queue<E> {
    fn new(tx: flume::Sender<E>) -> Self {
        Queue {
            tx,
            consumer: AtomicU64::new(0),
            overflow: AtomicU64::new(0),
        }
    }

    /// Called from zenoh's callbacks. A full queue blocks zenoh's
    /// receiving thread, so the publisher is slowed down and nothing is
    /// dropped; except when the stream is consumed on that very thread
    /// (a task on [`crate::zenoh_runtime`] under
    /// [`crate::ONE_THREAD_RUNTIME`]), where blocking would never end: the
    /// event is then dropped and counted.
    fn push(&self, event: E) {
        match self.tx.try_send(event) {
            Ok(()) | Err(flume::TrySendError::Disconnected(_)) => {}
            Err(flume::TrySendError::Full(event)) => {
                if self.consumer.load(Ordering::Relaxed) == thread_token() {
                    self.overflow.fetch_add(1, Ordering::Relaxed);
                } else {
                    let _ = self.tx.send(event);
                }
            }
        }
    }
}

struct PubState {
    seq: SeqIn,
    alive: bool,
}

/// The last sequence number received from each publisher, noted by the
/// data callback once the sample is queued (or counted as overflow), for
/// the publishers' progress queries.
#[derive(Default)]
struct Progress(Mutex<HashMap<u64, u64>>);

impl Progress {
    fn note(&self, publisher: u64, seq: u64) {
        let mut last = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if last.len() >= MAX_PUBLISHERS && !last.contains_key(&publisher) {
            last.clear();
        }
        let at = last.entry(publisher).or_insert(0);
        *at = (*at).max(seq);
    }

    /// Answers `syncline/progress/PUB/*/KEY` on `syncline/progress/PUB/ME/KEY`.
    fn answer(&self, query: &zenoh::query::Query, me: u64) {
        let key = query.key_expr().as_str();
        let Some((publisher, key)) = key
            .strip_prefix(PROGRESS)
            .and_then(|r| r.split_once('/'))
            .and_then(|(p, r)| Some((u64::from_str_radix(p, 16).ok()?, r.split_once('/')?.1)))
        else {
            return;
        };
        let seq = {
            let last = self.0.lock().unwrap_or_else(|e| e.into_inner());
            last.get(&publisher).copied().unwrap_or(0)
        };
        let reply = format!("{PROGRESS}{publisher:016x}/{me:016x}/{key}");
        if let Err(e) = query.reply(reply, seq.to_le_bytes().to_vec()).wait() {
            tracing::debug!(error = %e, "stamped stream: progress answer not sent");
        }
    }
}

/// A subscription to stamped samples of `T`: a
/// `Stream<Item = Stamped<Received<T>>>` in arrival order (per publisher:
/// publication order). [`values`](Self::values) gives plain
/// `Stamped<T>`; both plug into `.aligned()` and the synchronizers.
pub struct StampedSubscriber<T> {
    rx: flume::r#async::RecvStream<'static, Event>,
    queue: Arc<Queue<Event>>,
    publishers: HashMap<u64, PubState>,
    config: SubscriberConfig,
    clock: Option<ClockId>,
    stats: StreamStats,
    ended: bool,
    _subscribers: (Subscriber<()>, Subscriber<()>, Queryable<()>),
    _t: PhantomData<fn() -> T>,
}

impl<T> std::fmt::Debug for StampedSubscriber<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StampedSubscriber")
            .field("stats", &self.stats)
            .finish()
    }
}

impl<T: DeserializeOwned> StampedSubscriber<T> {
    /// Subscribes to `key` (a key expression; wildcards allowed).
    pub async fn new(
        session: &zenoh::Session,
        key: &str,
        config: SubscriberConfig,
    ) -> Result<Self, Error> {
        let (tx, rx) = flume::bounded(config.capacity.max(1));
        let queue = Arc::new(Queue::new(tx));
        let alive_queue = queue.clone();
        let alive = session
            .liveliness()
            .declare_subscriber(format!("syncline/publisher/*/{key}"))
            .history(true)
            .callback(move |s| alive_queue.push(Event::Alive(s)))
            .await
            .map_err(Error::zenoh)?;
        let data_queue = queue.clone();
        let progress = Arc::new(Progress::default());
        let received = progress.clone();
        let data = session
            .declare_subscriber(key.to_string())
            .callback(move |s| {
                let header = s.attachment().and_then(|a| Header::decode(&a.to_bytes()));
                data_queue.push(Event::Sample(s, header));
                if let Some(h) = header {
                    received.note(h.publisher, h.seq);
                }
            })
            .await
            .map_err(Error::zenoh)?;
        let me = instance_id();
        let answers = session
            .declare_queryable(format!("{PROGRESS}*/{me:016x}/{key}"))
            .callback(move |q| progress.answer(&q, me))
            .await
            .map_err(Error::zenoh)?;
        let clock = match config.clock {
            ClockPolicy::Only(c) => Some(c),
            _ => None,
        };
        Ok(StampedSubscriber {
            rx: rx.into_stream(),
            queue,
            publishers: HashMap::new(),
            config,
            clock,
            stats: StreamStats::default(),
            ended: false,
            _subscribers: (alive, data, answers),
            _t: PhantomData,
        })
    }

    /// The counters.
    pub fn stats(&self) -> StreamStats {
        StreamStats {
            overflow: self.queue.overflow.load(Ordering::Relaxed),
            ..self.stats
        }
    }

    /// Publishers alive now.
    pub fn publishers_alive(&self) -> usize {
        self.publishers.values().filter(|p| p.alive).count()
    }

    /// The same stream as plain `Stamped<T>`.
    pub fn values(self) -> impl Stream<Item = Stamped<T>> {
        self.map(|s| s.map(|r| r.value))
    }

    fn publisher(&mut self, id: u64) -> &mut PubState {
        if !self.publishers.contains_key(&id) && self.publishers.len() >= MAX_PUBLISHERS {
            self.publishers.retain(|_, p| p.alive);
        }
        let stats = &mut self.stats;
        self.publishers.entry(id).or_insert_with(|| {
            stats.publishers += 1;
            PubState {
                seq: SeqIn::default(),
                alive: true,
            }
        })
    }

    fn accept(&mut self, s: &Sample, header: Option<Header>) -> Option<Stamped<Received<T>>> {
        let Some(h) = header else {
            self.stats.malformed += 1;
            return None;
        };
        match self.config.clock {
            ClockPolicy::Any => {}
            _ => {
                if *self.clock.get_or_insert(h.clock) != h.clock {
                    self.stats.foreign_clock += 1;
                    return None;
                }
            }
        }
        match self.publisher(h.publisher).seq.take(h.seq) {
            SeqVerdict::Duplicate => {
                self.stats.duplicates += 1;
                return None;
            }
            SeqVerdict::Take { gap } => self.stats.lost += gap,
        }
        let Ok(value) = postcard::from_bytes::<T>(&s.payload().to_bytes()) else {
            self.stats.malformed += 1;
            return None;
        };
        self.stats.delivered += 1;
        Some(Stamped::new(
            h.stamp,
            Received {
                value,
                publisher: h.publisher,
                seq: h.seq,
                clock: h.clock,
                sent: h.sent,
                received: system_now(),
            },
        ))
    }

    fn alive(&mut self, s: &Sample) {
        let id = s
            .key_expr()
            .as_str()
            .strip_prefix("syncline/publisher/")
            .and_then(|r| r.split('/').next())
            .and_then(|h| u64::from_str_radix(h, 16).ok());
        let Some(id) = id else { return };
        match s.kind() {
            SampleKind::Put => self.publisher(id).alive = true,
            SampleKind::Delete => {
                if let Some(p) = self.publishers.get_mut(&id)
                    && p.alive
                {
                    p.alive = false;
                    self.stats.publishers_lost += 1;
                    tracing::info!(publisher = %format_args!("{id:016x}"), "stamped stream: publisher gone");
                    if self.config.on_publisher_lost == OnPublisherLost::End
                        && self.publishers_alive() == 0
                    {
                        self.ended = true;
                    }
                }
            }
        }
    }
}

impl<T: DeserializeOwned> Stream for StampedSubscriber<T> {
    type Item = Stamped<Received<T>>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        this.queue.consumer.store(thread_token(), Ordering::Relaxed);
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            match this.rx.poll_next_unpin(cx) {
                Poll::Ready(Some(Event::Sample(s, header))) => {
                    if let Some(item) = this.accept(&s, header) {
                        return Poll::Ready(Some(item));
                    }
                }
                Poll::Ready(Some(Event::Alive(s))) => this.alive(&s),
                Poll::Ready(None) => return Poll::Ready(None),
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_full_queue_consumed_on_the_callback_thread_drops_and_counts() {
        let (tx, rx) = flume::bounded(2);
        let queue = Queue::new(tx);
        queue.consumer.store(thread_token(), Ordering::Relaxed);
        for i in 0..5u32 {
            queue.push(i);
        }
        assert_eq!(rx.try_iter().collect::<Vec<_>>(), [0, 1]);
        assert_eq!(queue.overflow.load(Ordering::Relaxed), 3);
    }

    #[test]
    fn a_full_queue_consumed_on_another_thread_waits_and_loses_nothing() {
        let (tx, rx) = flume::bounded(2);
        let queue = Arc::new(Queue::new(tx));
        let consumer = std::thread::spawn(move || {
            // Registers as the consumer, then takes everything.
            let mut got = Vec::new();
            while let Ok(v) = rx.recv() {
                got.push(v);
            }
            got
        });
        queue.consumer.store(u64::MAX, Ordering::Relaxed);
        for i in 0..100u32 {
            queue.push(i);
        }
        let overflow = queue.overflow.load(Ordering::Relaxed);
        drop(queue);
        assert_eq!(consumer.join().unwrap(), (0..100).collect::<Vec<_>>());
        assert_eq!(overflow, 0);
    }

    proptest! {
        #[test]
        fn headers_round_trip(publisher: u64, seq: u64, stamp: i64, sent: i64, clock: u64) {
            let h = Header {
                publisher,
                seq,
                stamp: Timestamp::from_nanos(stamp),
                sent: Timestamp::from_nanos(sent),
                clock: ClockId(clock),
            };
            prop_assert_eq!(Header::decode(&h.encode()), Some(h));
        }

        #[test]
        fn other_lengths_and_versions_are_refused(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let ok = bytes.len() == HEADER_LEN && bytes[0] == VERSION;
            prop_assert_eq!(Header::decode(&bytes).is_some(), ok);
        }
    }

    #[test]
    fn clock_names_differ() {
        assert_ne!(ClockId::named("a"), ClockId::named("b"));
        assert_eq!(ClockId::system(), ClockId::system());
    }
}
