//! One input of the async aligner: its stream, and the values of its samples
//! while the core holds their stamps.
//!
//! The core is an `Aligner<()>`: it decides on stamps alone. Each lane keeps
//! the values of its queued samples in its own typed FIFO, which mirrors the
//! core's queue of that stream exactly, plus at its back the sample polled
//! and not yet pushed (polled = push back, accepted = nothing, dropped = pop
//! back, evicted = pop front, released = pop front), so inputs of different
//! types share one core without boxing a sample.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use tokio::sync::mpsc;

use syncline_core::aligner::{Aligner, Push, StreamId};
use syncline_core::{Stamped, TimeDelta, Timestamp};

use super::consumer::OutletCtl;
use crate::source::Arrived;

/// An item the aligner takes in: a [`Stamped<T>`], or an
/// [`Arrived<Stamped<T>>`](Arrived) that carries the time its sample was
/// handed over (by a [`crate::source`], then stamped by
/// [`timestamped`](crate::SynclineExt::timestamped_arrived)). In live mode
/// the latency bound counts from that hand-over: a sample that waited in a
/// channel before the aligner read it waits that much less in the aligner.
pub trait AlignerItem: Send + 'static {
    /// The sample's value type.
    type Value: Send + 'static;
    /// The sample, and its hand-over time if it carries one.
    fn into_parts(self) -> (Stamped<Self::Value>, Option<Timestamp>);
}

impl<T: Send + 'static> AlignerItem for Stamped<T> {
    type Value = T;
    fn into_parts(self) -> (Stamped<T>, Option<Timestamp>) {
        (self, None)
    }
}

impl<T: Send + 'static> AlignerItem for Arrived<Stamped<T>> {
    type Value = T;
    fn into_parts(self) -> (Stamped<T>, Option<Timestamp>) {
        (self.value, Some(self.arrival))
    }
}

/// Whether a lane's consumer can take a sample now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ready {
    /// Yes.
    Yes,
    /// The consumer is gone: the sample can only be counted as undelivered.
    Gone,
}

/// How a [`Lane::poll_batch`] ended.
pub(super) enum BatchEnd {
    /// It took in its most, or its samples reached the window.
    Full,
    /// The input has nothing more ready (its waker is registered).
    Pending,
    /// The input ended.
    Ended,
    /// Its last push was not simply queued (evicted an older sample, or
    /// was dropped); the lane mirrors it, the driver reports it.
    NotQueued(Push<()>),
}

/// What a [`Lane::poll_batch`] took in.
pub(super) struct Batch {
    /// Samples pushed into the core.
    pub(super) pushed: u32,
    /// Why it stopped.
    pub(super) end: BatchEnd,
}

/// A lane, type-erased over its value type; `O` is what a release yields.
pub(super) trait Lane<O>: Send {
    /// Replay: takes in up to `max` (at least 1) ready samples, pushing
    /// each into `core` as stream `id` (its value at the back of the
    /// FIFO) with no release between them. It stops early when the input
    /// is not ready or ended, after a push that was not simply queued, and
    /// after a sample at least `window` past the last release (or past
    /// its first sample, before any release).
    fn poll_batch(
        &mut self,
        cx: &mut Context<'_>,
        core: &mut Aligner<()>,
        id: StreamId,
        max: u32,
        window: TimeDelta,
    ) -> Batch;
    /// Polls the input; a new sample's value is held as pending (at the
    /// back of the FIFO: the core queuing it needs nothing more) and its
    /// stamp returned, with the hand-over time it carries, if any.
    fn poll_input(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Timestamp, Option<Timestamp>)>>;
    /// The core dropped the pending sample (late or backward).
    fn discard(&mut self);
    /// The core evicted this lane's oldest queued sample.
    fn evict(&mut self);
    /// The stream was removed: drop the queued and pending values.
    fn clear(&mut self);
    /// The core released this lane's oldest queued sample: move its value
    /// aside (later evictions pop the queue, not it) until [`take`](Self::take).
    fn stage(&mut self);
    /// Whether the consumer can take the next release now.
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Ready>;
    /// The core released this lane's oldest queued sample, at `stamp`.
    /// `None` when it could not be delivered (counted by the lane).
    fn take(&mut self, stamp: Timestamp) -> Option<O>;
    /// The same for a router's lane: its routes push into the consumers'
    /// `outlets` (indexed by consumer).
    fn take_to(&mut self, stamp: Timestamp, outlets: &mut [Box<dyn OutletCtl>]);
    /// Hands everything taken so far to the consumer; `Pending` while the
    /// consumer has no room (the waker is registered).
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<()>;
    /// Samples released but not delivered (the consumer was gone).
    fn undelivered(&self) -> u64;
}

/// A lane: its input `S` (polled directly, no boxed adapter between), the
/// pending value, the FIFO of queued values, and `D`, the way released
/// samples go out.
pub(super) struct QueueLane<S, T, D> {
    input: Pin<Box<S>>,
    staged: Option<T>,
    queue: VecDeque<T>,
    out: D,
}

impl<S, T, D> QueueLane<S, T, D> {
    pub(super) fn new(input: S, capacity: usize, out: D) -> Self {
        QueueLane {
            input: Box::pin(input),
            staged: None,
            // Bounded preallocation (with the pending sample); the core
            // bounds the length.
            queue: VecDeque::with_capacity(capacity.saturating_add(1).min(1 << 16)),
            out,
        }
    }
}

/// How a lane's released samples leave it.
pub(super) trait Deliver<T>: Send {
    /// What a release yields.
    type Out;
    /// Whether the consumer can take the next release now.
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Ready>;
    /// Delivers a released sample; `None` when it could not be (counted).
    fn deliver(&mut self, sample: Stamped<T>) -> Option<Self::Out>;
    /// Delivers a released sample into the consumers' `outlets` (a
    /// router's lane); others deliver as [`deliver`](Self::deliver).
    fn deliver_to(&mut self, sample: Stamped<T>, outlets: &mut [Box<dyn OutletCtl>]) {
        let _ = outlets;
        let _ = self.deliver(sample);
    }
    /// See [`Lane::poll_flush`].
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<()>;
    /// See [`Lane::undelivered`].
    fn undelivered(&self) -> u64;
}

impl<S, T, D> Lane<D::Out> for QueueLane<S, T, D>
where
    S: Stream + Send,
    S::Item: AlignerItem<Value = T>,
    T: Send,
    D: Deliver<T>,
{
    fn poll_batch(
        &mut self,
        cx: &mut Context<'_>,
        core: &mut Aligner<()>,
        id: StreamId,
        max: u32,
        window: TimeDelta,
    ) -> Batch {
        // No release happens during the batch: the horizon stays put.
        let mut horizon = core.current_time().map(|c| c.saturating_add(window));
        let mut pushed = 0;
        while pushed < max {
            let item = match self.input.as_mut().poll_next(cx) {
                Poll::Ready(Some(item)) => item,
                Poll::Ready(None) => {
                    return Batch {
                        pushed,
                        end: BatchEnd::Ended,
                    };
                }
                Poll::Pending => {
                    return Batch {
                        pushed,
                        end: BatchEnd::Pending,
                    };
                }
            };
            // Replay: only the sample-time rule applies, no arrival.
            let (stamp, value) = item.into_parts().0.into_parts();
            pushed += 1;
            match core.push(id, stamp, ()) {
                Push::Queued => self.queue.push_back(value),
                outcome => {
                    if let Push::Evicted(_) = outcome {
                        self.queue.pop_front();
                        self.queue.push_back(value);
                    }
                    return Batch {
                        pushed,
                        end: BatchEnd::NotQueued(outcome),
                    };
                }
            }
            if stamp >= *horizon.get_or_insert(stamp.saturating_add(window)) {
                break;
            }
        }
        Batch {
            pushed,
            end: BatchEnd::Full,
        }
    }
    fn poll_input(&mut self, cx: &mut Context<'_>) -> Poll<Option<(Timestamp, Option<Timestamp>)>> {
        self.input.as_mut().poll_next(cx).map(|next| {
            next.map(|item| {
                let (s, arrival) = item.into_parts();
                let (stamp, value) = s.into_parts();
                self.queue.push_back(value);
                (stamp, arrival)
            })
        })
    }
    fn discard(&mut self) {
        self.queue.pop_back();
    }
    fn evict(&mut self) {
        self.queue.pop_front();
    }
    fn clear(&mut self) {
        self.queue.clear();
    }
    fn stage(&mut self) {
        if self.staged.is_none() {
            self.staged = self.queue.pop_front();
        }
    }
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Ready> {
        self.out.poll_ready(cx)
    }
    fn take(&mut self, stamp: Timestamp) -> Option<D::Out> {
        let v = match self.staged.take() {
            Some(v) => v,
            None => self.queue.pop_front()?,
        };
        self.out.deliver(Stamped::new(stamp, v))
    }
    fn take_to(&mut self, stamp: Timestamp, outlets: &mut [Box<dyn OutletCtl>]) {
        let v = match self.staged.take() {
            Some(v) => v,
            None => match self.queue.pop_front() {
                Some(v) => v,
                None => return,
            },
        };
        self.out.deliver_to(Stamped::new(stamp, v), outlets);
    }
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        self.out.poll_flush(cx)
    }
    fn undelivered(&self) -> u64 {
        self.out.undelivered()
    }
}

/// Releases become `E` through `wrap` (the `.aligned()` stream of an enum).
pub(super) struct Wrap<F>(pub(super) F);

impl<T, E, F: Fn(Stamped<T>) -> E + Send> Deliver<T> for Wrap<F> {
    type Out = E;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Ready> {
        Poll::Ready(Ready::Yes)
    }
    fn deliver(&mut self, sample: Stamped<T>) -> Option<E> {
        Some((self.0)(sample))
    }
    fn poll_flush(&mut self, _: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
    fn undelivered(&self) -> u64 {
        0
    }
}

type Reserve<T> =
    Pin<Box<dyn Future<Output = Result<mpsc::OwnedPermit<T>, mpsc::error::SendError<()>>> + Send>>;

/// Releases are sent in batches of at most this many per channel: one
/// wake-up of the consumer per batch instead of one per sample. A batch is
/// also sent whenever the driver waits (so live latency is unchanged).
const BATCH: usize = 64;

/// Delivery into a bounded tokio channel. Releases collect in a small
/// outbox that never exceeds the channel's free room; it is flushed when
/// full and whenever the driver waits. When the channel is full the driver
/// waits for room (backpressure).
pub(super) struct Channel<T> {
    sender: mpsc::Sender<Stamped<T>>,
    outbox: VecDeque<Stamped<T>>,
    permit: Option<mpsc::OwnedPermit<Stamped<T>>>,
    /// Only while the channel is full (no allocation while it has room).
    reserving: Option<Reserve<Stamped<T>>>,
    gone: bool,
    undelivered: u64,
}

impl<T: Send + 'static> Channel<T> {
    pub(super) fn new(sender: mpsc::Sender<Stamped<T>>) -> Self {
        Channel {
            sender,
            outbox: VecDeque::with_capacity(BATCH),
            permit: None,
            reserving: None,
            gone: false,
            undelivered: 0,
        }
    }

    fn mark_gone(&mut self) {
        self.gone = true;
        self.undelivered += self.outbox.len() as u64;
        self.outbox.clear();
        self.permit = None;
        self.reserving = None;
    }

    /// Sends from the outbox while the channel has room.
    fn try_flush(&mut self) {
        while let Some(v) = self.outbox.pop_front() {
            if let Some(p) = self.permit.take() {
                p.send(v);
                continue;
            }
            match self.sender.try_send(v) {
                Ok(()) => {}
                Err(mpsc::error::TrySendError::Full(v)) => {
                    self.outbox.push_front(v);
                    return;
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    self.undelivered += 1;
                    self.mark_gone();
                    return;
                }
            }
        }
    }

    /// Waits for one free slot (a permit), registering the waker.
    fn poll_permit(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let sender = &self.sender;
        let fut = self
            .reserving
            .get_or_insert_with(|| Box::pin(sender.clone().reserve_owned()));
        let r = std::task::ready!(fut.as_mut().poll(cx));
        self.reserving = None;
        match r {
            Ok(p) => self.permit = Some(p),
            Err(_) => self.mark_gone(),
        }
        Poll::Ready(())
    }
}

impl<T: Send + 'static> Deliver<T> for Channel<T> {
    type Out = ();
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Ready> {
        loop {
            if !self.gone && self.sender.is_closed() {
                self.mark_gone();
            }
            if self.gone {
                return Poll::Ready(Ready::Gone);
            }
            // The lane is its channel's only sender: the outbox always fits
            // into the room the channel has (or a held permit gives).
            let room = self.sender.capacity() + usize::from(self.permit.is_some());
            if self.outbox.len() < room.min(BATCH) {
                return Poll::Ready(Ready::Yes);
            }
            if !self.outbox.is_empty() {
                let before = self.outbox.len();
                self.try_flush();
                if self.outbox.len() < before || self.gone {
                    continue;
                }
            }
            std::task::ready!(self.poll_permit(cx));
        }
    }
    fn deliver(&mut self, sample: Stamped<T>) -> Option<()> {
        if self.gone {
            self.undelivered += 1;
            return None;
        }
        self.outbox.push_back(sample);
        Some(())
    }
    fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            self.try_flush();
            if self.gone || self.outbox.is_empty() {
                return Poll::Ready(());
            }
            std::task::ready!(self.poll_permit(cx));
        }
    }
    fn undelivered(&self) -> u64 {
        self.undelivered
    }
}

/// One consumer's end of an input: pushes a released value into its
/// outlet (found among the driver's outlets).
pub(super) type Route<T> = Box<dyn FnMut(Timestamp, T, &mut [Box<dyn OutletCtl>]) + Send>;

/// Releases go to every consumer routed from this input (cloned for all
/// but the last).
pub(super) struct Routes<T> {
    pub(super) routes: Vec<Route<T>>,
    /// Releases delivered without the outlets (never, in a router).
    pub(super) undelivered: u64,
}

impl<T: Clone + Send> Deliver<T> for Routes<T> {
    type Out = ();
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Ready> {
        Poll::Ready(Ready::Yes)
    }
    fn deliver(&mut self, _: Stamped<T>) -> Option<()> {
        self.undelivered += 1;
        None
    }
    fn deliver_to(&mut self, sample: Stamped<T>, outlets: &mut [Box<dyn OutletCtl>]) {
        let (stamp, value) = sample.into_parts();
        if let Some((last, rest)) = self.routes.split_last_mut() {
            for r in rest {
                r(stamp, value.clone(), outlets);
            }
            last(stamp, value, outlets);
        }
    }
    fn poll_flush(&mut self, _: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
    fn undelivered(&self) -> u64 {
        self.undelivered
    }
}
