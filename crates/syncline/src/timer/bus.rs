//! The in-process timing bus: one coordinator and any number of
//! participants in the same process, sharing one small hub behind a mutex
//! (unbounded queues, so reports and triggers are kept in order and never
//! overwritten).
//!
//! Built for the simulated-time step rate: a participant is addressed by a
//! slot number (no name lookup per message), a signal is a push onto its
//! queue plus one wake-up of its task, and the coordinator drains every
//! report that has arrived in one pass ([`CoordinatorTransport::try_recv`]).

use std::collections::{HashMap, VecDeque};
use std::future::{Future, poll_fn};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Poll, Waker};

use super::transport::{
    CoordinatorTransport, Inbound, Outbound, ParticipantTransport, PeerKey, TransportClosed,
};
use syncline_core::timer::Signal;

struct Peer {
    name: Arc<str>,
    signals: VecDeque<Signal>,
    waker: Option<Waker>,
    /// False for a rejected duplicate: it never gets or sends anything.
    open: bool,
}

#[derive(Default)]
struct Hub {
    /// The coordinator's end exists.
    coordinator: bool,
    /// Connectors and participants alive (the bus is open while > 0).
    handles: usize,
    inbox: VecDeque<Inbound>,
    /// The coordinator task waiting in `recv`.
    waker: Option<Waker>,
    /// Participants by slot (`None`: a free slot, reused).
    peers: Vec<Option<Peer>>,
    free: Vec<usize>,
    /// The slot of the live participant registered under each name.
    by_name: HashMap<Arc<str>, usize>,
}

impl Hub {
    /// Queues a message for the coordinator; returns the waker to wake
    /// (after the lock is released).
    fn post(&mut self, msg: Inbound) -> Option<Waker> {
        self.inbox.push_back(msg);
        self.waker.take()
    }

    /// Queues `signal` for participant `to`, or for every open one.
    fn send(&mut self, to: Option<PeerKey>, signal: Signal) -> Result<(), TransportClosed> {
        match to {
            Some(to) => self.signal(to, signal),
            None => {
                // A participant that left needs no signal.
                for peer in self.peers.iter_mut().flatten().filter(|p| p.open) {
                    peer.signals.push_back(signal);
                    if let Some(w) = &peer.waker {
                        w.wake_by_ref();
                    }
                }
                Ok(())
            }
        }
    }

    /// Queues a signal for the (open) participant `to` and wakes it. The
    /// waker stays stored (woken by reference), so the participant's next
    /// wait needs no new clone.
    fn signal(&mut self, to: PeerKey, signal: Signal) -> Result<(), TransportClosed> {
        let peer = self
            .peers
            .get_mut(to.0 as usize)
            .and_then(Option::as_mut)
            .filter(|p| p.open)
            .ok_or(TransportClosed)?;
        peer.signals.push_back(signal);
        if let Some(w) = &peer.waker {
            w.wake_by_ref();
        }
        Ok(())
    }
}

type Shared = Arc<Mutex<Hub>>;

fn lock(hub: &Shared) -> MutexGuard<'_, Hub> {
    // Nothing panics while the lock is held; a poisoned hub is still whole.
    hub.lock().unwrap_or_else(PoisonError::into_inner)
}

fn wake(waker: Option<Waker>) {
    if let Some(w) = waker {
        w.wake();
    }
}

/// Creates an in-process timing bus: the coordinator's end and a connector
/// that participants use to join.
///
/// ```
/// use syncline::timer::{CoordinatorTransport, Inbound, Outbound, ParticipantTransport, in_process_bus};
/// use syncline::core::timer::Signal;
/// use syncline::Timestamp;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let (mut coord, connector) = in_process_bus();
/// let mut p = connector.connect("planner").unwrap();
/// p.send(Outbound::Ready(Timestamp::EPOCH)).unwrap();
/// let Some(Inbound::Join { peer, name }) = coord.recv().await else { panic!() };
/// assert_eq!(&*name, "planner");
/// assert_eq!(coord.try_recv(), Some(Inbound::Ready { peer, next: Timestamp::EPOCH }));
/// coord.send(Some(peer), Signal::Trigger(Timestamp::EPOCH)).unwrap();
/// assert_eq!(p.recv().await, Some(Signal::Trigger(Timestamp::EPOCH)));
/// # }
/// ```
pub fn in_process_bus() -> (BusCoordinator, BusConnector) {
    let hub = Arc::new(Mutex::new(Hub {
        coordinator: true,
        handles: 1,
        ..Hub::default()
    }));
    (
        BusCoordinator {
            hub: hub.clone(),
            taken: VecDeque::new(),
        },
        BusConnector { hub },
    )
}

/// The coordinator's end of the in-process bus. Dropping it closes the bus:
/// participants receive what was already sent, then `None`.
pub struct BusCoordinator {
    hub: Shared,
    /// Messages taken from the hub's inbox in one swap (one lock per burst,
    /// no allocation: the two queues trade places and keep their capacity).
    taken: VecDeque<Inbound>,
}

/// Swaps the hub's whole inbox into `taken` (empty) and pops the first.
fn take_inbox(taken: &mut VecDeque<Inbound>, hub: &mut Hub) -> Option<Inbound> {
    std::mem::swap(taken, &mut hub.inbox);
    taken.pop_front()
}

impl std::fmt::Debug for BusCoordinator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusCoordinator")
            .field("peers", &lock(&self.hub).by_name.len())
            .finish()
    }
}

impl Drop for BusCoordinator {
    fn drop(&mut self) {
        let mut hub = lock(&self.hub);
        hub.coordinator = false;
        hub.inbox.clear();
        for peer in hub.peers.iter_mut().flatten() {
            wake(peer.waker.take());
        }
    }
}

/// Joins participants to an in-process bus (cheap to clone). The bus stays
/// open while a connector or a participant exists.
pub struct BusConnector {
    hub: Shared,
}

impl std::fmt::Debug for BusConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BusConnector")
    }
}

impl Clone for BusConnector {
    fn clone(&self) -> Self {
        lock(&self.hub).handles += 1;
        BusConnector {
            hub: self.hub.clone(),
        }
    }
}

/// One handle fewer; the last one wakes the coordinator (its `recv` then
/// returns `None`).
fn release(hub: &mut Hub) -> Option<Waker> {
    hub.handles = hub.handles.saturating_sub(1);
    if hub.handles == 0 {
        hub.waker.take()
    } else {
        None
    }
}

impl Drop for BusConnector {
    fn drop(&mut self) {
        let waker = release(&mut lock(&self.hub));
        wake(waker);
    }
}

impl BusConnector {
    /// Joins the bus as `name`. The coordinator registers the name; if it is
    /// already taken by a live participant, the newcomer is closed at once
    /// (its `send` fails and its `recv` returns `None`) and the coordinator
    /// logs the duplicate. Fails once the coordinator is gone.
    pub fn connect(&self, name: &str) -> Result<BusParticipant, TransportClosed> {
        let name: Arc<str> = name.into();
        let mut hub = lock(&self.hub);
        if !hub.coordinator {
            return Err(TransportClosed);
        }
        let open = !hub.by_name.contains_key(&name);
        let peer = Peer {
            name: name.clone(),
            signals: VecDeque::new(),
            waker: None,
            open,
        };
        let slot = match hub.free.pop() {
            Some(slot) => {
                if let Some(free) = hub.peers.get_mut(slot) {
                    *free = Some(peer);
                }
                slot
            }
            None => {
                hub.peers.push(Some(peer));
                hub.peers.len() - 1
            }
        };
        let Ok(key) = u32::try_from(slot) else {
            hub.free.push(slot);
            return Err(TransportClosed); // 2^32 connections at once
        };
        if open {
            hub.by_name.insert(name.clone(), slot);
        }
        hub.handles += 1;
        let waker = hub.post(Inbound::Join {
            peer: PeerKey(key),
            name: name.clone(),
        });
        drop(hub);
        wake(waker);
        Ok(BusParticipant {
            name,
            key: PeerKey(key),
            hub: self.hub.clone(),
        })
    }
}

/// A participant's end of the in-process bus. Dropping it tells the
/// coordinator that the participant left.
pub struct BusParticipant {
    name: Arc<str>,
    key: PeerKey,
    hub: Shared,
}

impl BusParticipant {
    fn slot(&self) -> usize {
        self.key.0 as usize
    }
}

impl std::fmt::Debug for BusParticipant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BusParticipant")
            .field("name", &self.name)
            .finish()
    }
}

impl Drop for BusParticipant {
    fn drop(&mut self) {
        let mut hub = lock(&self.hub);
        let peer = hub.peers.get_mut(self.slot()).and_then(Option::take);
        hub.free.push(self.slot());
        let mut waker = release(&mut hub);
        if let Some(peer) = peer
            && peer.open
        {
            hub.by_name.remove(&peer.name);
            if hub.coordinator {
                waker = hub.post(Inbound::Leave(self.key)).or(waker);
            }
        }
        drop(hub);
        wake(waker);
    }
}

impl CoordinatorTransport for BusCoordinator {
    fn recv(&mut self) -> impl Future<Output = Option<Inbound>> + Send {
        poll_fn(|cx| {
            if let Some(msg) = self.taken.pop_front() {
                return Poll::Ready(Some(msg));
            }
            let mut hub = lock(&self.hub);
            if let Some(msg) = take_inbox(&mut self.taken, &mut hub) {
                return Poll::Ready(Some(msg));
            }
            if hub.handles == 0 {
                return Poll::Ready(None);
            }
            match &mut hub.waker {
                Some(w) if w.will_wake(cx.waker()) => {}
                slot => *slot = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
    }

    fn try_recv(&mut self) -> Option<Inbound> {
        if let Some(msg) = self.taken.pop_front() {
            return Some(msg);
        }
        take_inbox(&mut self.taken, &mut lock(&self.hub))
    }

    fn send(&mut self, to: Option<PeerKey>, signal: Signal) -> Result<(), TransportClosed> {
        lock(&self.hub).send(to, signal)
    }

    fn send_all<I: IntoIterator<Item = (Option<PeerKey>, Signal)>>(&mut self, signals: I) -> usize {
        let mut hub = lock(&self.hub);
        signals
            .into_iter()
            .filter(|&(to, signal)| hub.send(to, signal).is_err())
            .count()
    }
}

impl ParticipantTransport for BusParticipant {
    fn name(&self) -> &str {
        &self.name
    }

    fn send(&mut self, msg: Outbound) -> Result<(), TransportClosed> {
        let mut hub = lock(&self.hub);
        let open = hub
            .peers
            .get(self.slot())
            .and_then(Option::as_ref)
            .is_some_and(|p| p.open);
        if !hub.coordinator || !open {
            return Err(TransportClosed);
        }
        let peer = self.key;
        let waker = hub.post(match msg {
            Outbound::Ready(next) => Inbound::Ready { peer, next },
            Outbound::StopRequest => Inbound::StopRequest(peer),
        });
        drop(hub);
        wake(waker);
        Ok(())
    }

    fn recv(&mut self) -> impl Future<Output = Option<Signal>> + Send {
        poll_fn(|cx| {
            let mut hub = lock(&self.hub);
            let coordinator = hub.coordinator;
            let slot = self.slot();
            let Some(peer) = hub.peers.get_mut(slot).and_then(Option::as_mut) else {
                return Poll::Ready(None);
            };
            if let Some(s) = peer.signals.pop_front() {
                return Poll::Ready(Some(s));
            }
            if !coordinator || !peer.open {
                return Poll::Ready(None);
            }
            match &mut peer.waker {
                Some(w) if w.will_wake(cx.waker()) => {}
                slot => *slot = Some(cx.waker().clone()),
            }
            Poll::Pending
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syncline_core::Timestamp;

    fn t(ns: i64) -> Timestamp {
        Timestamp::from_nanos(ns)
    }

    fn join(key: u32, name: &str) -> Inbound {
        Inbound::Join {
            peer: PeerKey(key),
            name: name.into(),
        }
    }

    const A: PeerKey = PeerKey(0);
    const B: PeerKey = PeerKey(1);

    #[tokio::test(start_paused = true)]
    async fn reports_arrive_in_order_and_drain_in_one_pass() {
        let (mut coord, connector) = in_process_bus();
        let mut a = connector.connect("a").unwrap();
        let mut b = connector.connect("b").unwrap();
        a.send(Outbound::Ready(t(1))).unwrap();
        b.send(Outbound::Ready(t(2))).unwrap();
        assert_eq!(coord.recv().await, Some(join(0, "a")));
        // Arrives while the coordinator holds a swapped-out burst: kept in order.
        b.send(Outbound::StopRequest).unwrap();
        let rest: Vec<_> = std::iter::from_fn(|| coord.try_recv()).collect();
        assert_eq!(
            rest,
            [
                join(1, "b"),
                Inbound::Ready {
                    peer: A,
                    next: t(1)
                },
                Inbound::Ready {
                    peer: B,
                    next: t(2)
                },
                Inbound::StopRequest(B),
            ]
        );
        assert_eq!(coord.try_recv(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn signals_reach_only_their_addressee_and_broadcasts_reach_all() {
        let (mut coord, connector) = in_process_bus();
        let mut a = connector.connect("a").unwrap();
        let mut b = connector.connect("b").unwrap();
        coord.send(Some(B), Signal::Trigger(t(5))).unwrap();
        coord.send(None, Signal::Stop).unwrap();
        assert_eq!(
            coord.send(Some(PeerKey(9)), Signal::Stop),
            Err(TransportClosed)
        );
        assert_eq!(a.recv().await, Some(Signal::Stop));
        assert_eq!(b.recv().await, Some(Signal::Trigger(t(5))));
        assert_eq!(b.recv().await, Some(Signal::Stop));
        // Nothing more: recv waits (a later signal wakes it).
        let waiting = tokio::spawn(async move { (a.recv().await, a) });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        coord.send(Some(A), Signal::Trigger(t(7))).unwrap();
        let (got, mut a) = waiting.await.unwrap();
        assert_eq!(got, Some(Signal::Trigger(t(7))));
        // A batch under one lock: in order; undeliverable ones counted.
        let batch = [
            (Some(A), Signal::Trigger(t(8))),
            (Some(PeerKey(7)), Signal::Trigger(t(8))),
            (Some(B), Signal::Trigger(t(8))),
            (None, Signal::Stop),
        ];
        assert_eq!(coord.send_all(batch), 1);
        for p in [&mut a, &mut b] {
            assert_eq!(p.recv().await, Some(Signal::Trigger(t(8))));
            assert_eq!(p.recv().await, Some(Signal::Stop));
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_duplicate_is_closed_and_signals_to_it_fail() {
        let (mut coord, connector) = in_process_bus();
        let _a = connector.connect("a").unwrap();
        let mut dup = connector.connect("a").unwrap();
        assert_eq!(dup.recv().await, None);
        assert_eq!(dup.send(Outbound::StopRequest), Err(TransportClosed));
        assert_eq!(coord.send(Some(B), Signal::Stop), Err(TransportClosed));
        drop(dup); // no leave for a duplicate
        let seen: Vec<_> = std::iter::from_fn(|| coord.try_recv()).collect();
        assert_eq!(seen, [join(0, "a"), join(1, "a")]);
    }

    #[tokio::test(start_paused = true)]
    async fn leaving_frees_the_name_and_the_key_for_a_rejoin() {
        let (mut coord, connector) = in_process_bus();
        let a = connector.connect("a").unwrap();
        drop(a);
        let mut again = connector.connect("a").unwrap();
        let seen: Vec<_> = std::iter::from_fn(|| coord.try_recv()).collect();
        assert_eq!(seen, [join(0, "a"), Inbound::Leave(A), join(0, "a")]);
        coord.send(Some(A), Signal::Trigger(t(1))).unwrap();
        assert_eq!(again.recv().await, Some(Signal::Trigger(t(1))));
    }

    #[tokio::test(start_paused = true)]
    async fn closing_either_side_ends_the_other() {
        let (mut coord, connector) = in_process_bus();
        let mut p = connector.connect("p").unwrap();
        coord.send(Some(A), Signal::Trigger(t(1))).unwrap();
        drop(coord);
        // What was sent is still delivered, then the end.
        assert_eq!(p.recv().await, Some(Signal::Trigger(t(1))));
        assert_eq!(p.recv().await, None);
        assert_eq!(p.send(Outbound::StopRequest), Err(TransportClosed));
        assert!(connector.connect("q").is_err());

        let (mut coord, connector) = in_process_bus();
        let p = connector.connect("p").unwrap();
        let c2 = connector.clone();
        let waiting = tokio::spawn(async move {
            let mut seen = vec![];
            while let Some(m) = coord.recv().await {
                seen.push(m);
            }
            seen
        });
        drop(connector);
        drop(p);
        tokio::task::yield_now().await;
        assert!(
            !waiting.is_finished(),
            "a connector clone keeps the bus open"
        );
        drop(c2);
        let seen = waiting.await.unwrap();
        assert_eq!(seen, [join(0, "p"), Inbound::Leave(A)]);
    }
}
