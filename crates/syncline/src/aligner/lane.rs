//! One input of the async aligner: its stream, and the values of its samples
//! while the core holds their stamps.
//!
//! The core is an `Aligner<()>`: it decides on stamps alone. Each lane keeps
//! the values of its queued samples in its own typed FIFO, which mirrors the
//! core's queue of that stream exactly (accept = push back, evict = pop
//! front, release = pop front), so inputs of different types share one core
//! without boxing a sample.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};
use tokio::sync::mpsc;

use syncline_core::{Stamped, Timestamp};

/// A boxed input stream.
pub(super) type Input<T> = Pin<Box<dyn Stream<Item = Stamped<T>> + Send>>;

/// Whether a lane's consumer can take a sample now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ready {
    /// Yes.
    Yes,
    /// The consumer is gone: the sample can only be counted as undelivered.
    Gone,
}

/// A lane, type-erased over its value type; `O` is what a release yields.
pub(super) trait Lane<O>: Send {
    /// Polls the input; a new sample's value is held as pending and its
    /// stamp returned.
    fn poll_input(&mut self, cx: &mut Context<'_>) -> Poll<Option<Timestamp>>;
    /// The core queued the pending sample.
    fn accept(&mut self);
    /// The core dropped the pending sample (late or backward).
    fn discard(&mut self);
    /// The core evicted this lane's oldest queued sample.
    fn evict(&mut self);
    /// Whether the consumer can take the next release now.
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Ready>;
    /// The core released this lane's oldest queued sample, at `stamp`.
    /// `None` when it could not be delivered (counted by the lane).
    fn take(&mut self, stamp: Timestamp) -> Option<O>;
    /// Hands everything taken so far to the consumer; `Pending` while the
    /// consumer has no room (the waker is registered).
    fn poll_flush(&mut self, _cx: &mut Context<'_>) -> Poll<()> {
        Poll::Ready(())
    }
    /// Samples released but not delivered (the consumer was gone).
    fn undelivered(&self) -> u64 {
        0
    }
}

/// The parts every lane has: its input, the pending value and the FIFO.
pub(super) struct Queue<T> {
    input: Input<T>,
    pending: Option<T>,
    queue: VecDeque<T>,
}

impl<T> Queue<T> {
    pub(super) fn new(input: Input<T>, capacity: usize) -> Self {
        Queue {
            input,
            pending: None,
            // Bounded preallocation; the core bounds the length.
            queue: VecDeque::with_capacity(capacity.min(1 << 16)),
        }
    }

    fn poll_input(&mut self, cx: &mut Context<'_>) -> Poll<Option<Timestamp>> {
        self.input.poll_next_unpin(cx).map(|next| {
            next.map(|s| {
                let (stamp, value) = s.into_parts();
                self.pending = Some(value);
                stamp
            })
        })
    }

    fn accept(&mut self) {
        if let Some(v) = self.pending.take() {
            self.queue.push_back(v);
        }
    }
}

/// A lane whose releases become `E` through `wrap` (the `.aligned()`
/// stream of an enum).
pub(super) struct EnumLane<T, F> {
    pub(super) queue: Queue<T>,
    pub(super) wrap: F,
}

impl<T, E, F> Lane<E> for EnumLane<T, F>
where
    T: Send,
    F: Fn(Stamped<T>) -> E + Send,
{
    fn poll_input(&mut self, cx: &mut Context<'_>) -> Poll<Option<Timestamp>> {
        self.queue.poll_input(cx)
    }
    fn accept(&mut self) {
        self.queue.accept();
    }
    fn discard(&mut self) {
        self.queue.pending = None;
    }
    fn evict(&mut self) {
        self.queue.queue.pop_front();
    }
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Ready> {
        Poll::Ready(Ready::Yes)
    }
    fn take(&mut self, stamp: Timestamp) -> Option<E> {
        let v = self.queue.queue.pop_front()?;
        Some((self.wrap)(Stamped::new(stamp, v)))
    }
}

type Reserve<T> =
    Pin<Box<dyn Future<Output = Result<mpsc::OwnedPermit<T>, mpsc::error::SendError<()>>> + Send>>;

/// Releases are sent in batches of at most this many per channel: one
/// wake-up of the consumer per batch instead of one per sample. A batch is
/// also sent whenever the driver waits (so live latency is unchanged).
const BATCH: usize = 64;

/// A lane that delivers into a bounded tokio channel. Releases collect in a
/// small outbox that never exceeds the channel's free room; it is flushed
/// when full and whenever the driver waits. When the channel is full the
/// driver waits for room (backpressure).
pub(super) struct ChannelLane<T> {
    queue: Queue<T>,
    sender: mpsc::Sender<Stamped<T>>,
    outbox: VecDeque<Stamped<T>>,
    permit: Option<mpsc::OwnedPermit<Stamped<T>>>,
    /// Only while the channel is full (no allocation while it has room).
    reserving: Option<Reserve<Stamped<T>>>,
    gone: bool,
    undelivered: u64,
}

impl<T: Send + 'static> ChannelLane<T> {
    pub(super) fn new(queue: Queue<T>, sender: mpsc::Sender<Stamped<T>>) -> Self {
        ChannelLane {
            queue,
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

impl<T: Send + 'static> Lane<()> for ChannelLane<T> {
    fn poll_input(&mut self, cx: &mut Context<'_>) -> Poll<Option<Timestamp>> {
        self.queue.poll_input(cx)
    }
    fn accept(&mut self) {
        self.queue.accept();
    }
    fn discard(&mut self) {
        self.queue.pending = None;
    }
    fn evict(&mut self) {
        self.queue.queue.pop_front();
    }
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
    fn take(&mut self, stamp: Timestamp) -> Option<()> {
        let v = Stamped::new(stamp, self.queue.queue.pop_front()?);
        if self.gone {
            self.undelivered += 1;
            return None;
        }
        self.outbox.push_back(v);
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
