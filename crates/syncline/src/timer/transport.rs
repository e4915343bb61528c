//! The timing transport: how coordinator and participants exchange ready
//! reports and signals. The in-process bus ([`super::bus`]) is the default;
//! a network transport (zenoh) implements the same two traits.
//!
//! Requirements on an implementation (CPM Lab's fixes): every message is
//! delivered, in order, exactly once (keep-all, reliable: a lost "ready"
//! would stall simulated time, a lost trigger would too); a participant that
//! disappears is reported as [`Inbound::Leave`]; a closed coordinator makes
//! the participant's `recv` return `None`.
//!
//! A participant's name travels once, in [`Inbound::Join`]; after that the
//! transport identifies the connection by a [`PeerKey`] of its choosing, so
//! no message needs a name lookup on the coordinator's hot path.

use std::future::Future;

use futures::FutureExt;
use std::sync::Arc;

use syncline_core::Timestamp;
use syncline_core::timer::Signal;

/// A participant's connection as the transport numbers it: given in its
/// [`Inbound::Join`], valid until its [`Inbound::Leave`] (then free for
/// reuse). Keys should be small (below 2^20): the coordinator indexes a
/// table by them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeerKey(pub u32);

/// A message from a participant, as the coordinator receives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inbound {
    /// A participant joined under this name.
    Join {
        /// Its connection.
        peer: PeerKey,
        /// Its name (the coordinator rejects a name already in use).
        name: Arc<str>,
    },
    /// "Ready, next wake-up at `next`."
    Ready {
        /// The participant.
        peer: PeerKey,
        /// Its next wake-up (simulated time), or anything (real time).
        next: Timestamp,
    },
    /// "Stop everyone."
    StopRequest(PeerKey),
    /// The participant left (or its connection was lost).
    Leave(PeerKey),
}

/// A message from a participant to the coordinator (its name is implied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outbound {
    /// "Ready, next wake-up at this time."
    Ready(Timestamp),
    /// "Stop everyone."
    StopRequest,
}

/// The transport is closed: the other side is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the timing transport is closed")]
pub struct TransportClosed;

/// The coordinator's end of a timing transport.
pub trait CoordinatorTransport: Send + 'static {
    /// The next message from any participant; `None` once no participant
    /// can ever send again. Must be cancel-safe (it is used in `select!`).
    fn recv(&mut self) -> impl Future<Output = Option<Inbound>> + Send;

    /// A message that has already arrived, without waiting (`None` when
    /// none has): the coordinator handles a burst of reports in one pass.
    /// The default polls [`recv`](Self::recv) once; a transport with a
    /// queue should pop it directly.
    fn try_recv(&mut self) -> Option<Inbound> {
        self.recv().now_or_never().flatten()
    }

    /// Delivers `signal` to the participant `to`, or to every participant
    /// when `to` is `None`. Must not block.
    fn send(&mut self, to: Option<PeerKey>, signal: Signal) -> Result<(), TransportClosed>;

    /// Delivers several signals in order (a step's triggers) and returns
    /// how many could not be delivered (their participant is gone). The
    /// default calls [`send`](Self::send) for each; a transport can take
    /// one lock, or build one network batch, for all of them.
    fn send_all<I: IntoIterator<Item = (Option<PeerKey>, Signal)>>(&mut self, signals: I) -> usize {
        signals
            .into_iter()
            .filter(|&(to, signal)| self.send(to, signal).is_err())
            .count()
    }
}

/// A participant's end of a timing transport.
pub trait ParticipantTransport: Send + 'static {
    /// This participant's name.
    fn name(&self) -> &str;

    /// Sends a message to the coordinator. Must not block.
    fn send(&mut self, msg: Outbound) -> Result<(), TransportClosed>;

    /// The next signal for this participant; `None` once the coordinator is
    /// gone. Must be cancel-safe (it is used in `select!`).
    fn recv(&mut self) -> impl Future<Output = Option<Signal>> + Send;
}
