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
    fn take(&mut self, stamp: Timestamp) -> Option<O>;
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

/// A lane that delivers into a bounded tokio channel: `poll_ready` waits
/// for room (backpressure), `take` sends with the reserved permit.
pub(super) struct ChannelLane<T> {
    pub(super) queue: Queue<T>,
    pub(super) sender: mpsc::Sender<Stamped<T>>,
    pub(super) permit: Option<mpsc::OwnedPermit<Stamped<T>>>,
    /// Only while the channel is full (no allocation while it has room).
    pub(super) reserving: Option<Reserve<Stamped<T>>>,
    pub(super) gone: bool,
}

impl<T: Send + 'static> ChannelLane<T> {
    pub(super) fn new(queue: Queue<T>, sender: mpsc::Sender<Stamped<T>>) -> Self {
        ChannelLane {
            queue,
            sender,
            permit: None,
            reserving: None,
            gone: false,
        }
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
        if self.gone {
            return Poll::Ready(Ready::Gone);
        }
        if self.permit.is_some() {
            return Poll::Ready(Ready::Yes);
        }
        if self.reserving.is_none() {
            match self.sender.clone().try_reserve_owned() {
                Ok(p) => {
                    self.permit = Some(p);
                    return Poll::Ready(Ready::Yes);
                }
                Err(mpsc::error::TrySendError::Full(_)) => {
                    self.reserving = Some(Box::pin(self.sender.clone().reserve_owned()));
                }
                Err(mpsc::error::TrySendError::Closed(_)) => {
                    self.gone = true;
                    return Poll::Ready(Ready::Gone);
                }
            }
        }
        let Some(fut) = self.reserving.as_mut() else {
            return Poll::Ready(Ready::Gone);
        };
        match fut.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(r) => {
                self.reserving = None;
                match r {
                    Ok(p) => {
                        self.permit = Some(p);
                        Poll::Ready(Ready::Yes)
                    }
                    Err(_) => {
                        self.gone = true;
                        Poll::Ready(Ready::Gone)
                    }
                }
            }
        }
    }
    fn take(&mut self, stamp: Timestamp) -> Option<()> {
        let v = self.queue.queue.pop_front()?;
        match self.permit.take() {
            Some(p) => {
                p.send(Stamped::new(stamp, v));
                Some(())
            }
            None => None,
        }
    }
}
