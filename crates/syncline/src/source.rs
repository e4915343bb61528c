//! Arrival stamps taken at hand-over: a [`Source`] handle that a sensor
//! driver calls when a sample is ready, whatever the rest of the pipeline
//! is doing.
//!
//! `.timestamped()` on an ordinary stream reads the clock when the
//! pipeline polls it, so a busy pipeline delays the arrival stamps. A
//! [`Source`] reads the clock in [`Source::send`], in the driver's own
//! thread or task, and queues the sample with that arrival time
//! ([`Arrived`]); the [`SourceStream`] yields them, and its
//! [`timestamped`](SourceStream::timestamped) feeds the estimator with the
//! arrival carried by each item, never the poll time.
//!
//! * `send` never blocks and never waits: usable from a blocking driver
//!   thread, from async code, and as a [`futures::Sink`]. The queue holds
//!   `capacity` samples; when it is full the **oldest** is dropped and
//!   counted ([`SourceStream::overflow`]), like a kernel ring buffer: a
//!   driver is never stalled by its consumer, and memory stays bounded.
//! * A driver that has its own arrival stamp (a kernel `SO_TIMESTAMP`, a
//!   DMA completion time) hands it over with [`Source::send_arrived`].
//! * The stream ends when every clone of the [`Source`] is dropped and the
//!   queue is drained.
//!
//! ```
//! use futures::StreamExt;
//! use syncline::core::estimator::{Estimator, EstimatorConfig};
//! use syncline::prelude::*;
//! use syncline::source::source;
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let clock = TokioClock::starting_at(Timestamp::from_nanos(1_000_000_000));
//! let (imu, samples) = source::<u32>(clock, 64);
//! // A driver task: a sample every 10 ms, stamped when handed over.
//! tokio::spawn(async move {
//!     for k in 0..50 {
//!         tokio::time::sleep(std::time::Duration::from_millis(10)).await;
//!         imu.send(k).ok();
//!     }
//! });
//! let config = EstimatorConfig::new(TimeDelta::from_secs(5)).with_period(TimeDelta::from_millis(10));
//! let stamped = samples.timestamped(Estimator::new(config)?);
//! // Each item: the estimated stamp, with the hand-over time kept (the
//! // aligner's latency bound counts from it).
//! let out: Vec<Arrived<Stamped<u32>>> = stamped.collect().await;
//! assert_eq!(out.len(), 50);
//! assert!(out.iter().all(|a| a.value.stamp <= a.arrival));
//! # Ok(())
//! # }
//! ```

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use futures::task::AtomicWaker;
use futures::{Sink, Stream};
use syncline_core::estimator::Estimator;

use crate::clock::{Clock, SystemClock};
use crate::timestamped::{ItemArrival, NoIndex, NoReferences, Timestamped};
use crate::{HasStamp, Timestamp};

/// A sample and the time it reached the host (its arrival).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrived<T> {
    /// When the sample was handed over (the host clock's reading).
    pub arrival: Timestamp,
    /// The sample.
    pub value: T,
}

impl<T> Arrived<T> {
    /// A sample that arrived at `arrival`.
    pub const fn new(arrival: Timestamp, value: T) -> Self {
        Arrived { arrival, value }
    }
}

/// An arrived stamped sample has its sample's stamp (so it can enter the
/// synchronizers and interpolation as it is).
impl<T: HasStamp> HasStamp for Arrived<T> {
    fn stamp(&self) -> Timestamp {
        self.value.stamp()
    }
}

/// [`Source::send`] after the [`SourceStream`] was dropped: the sample is
/// handed back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the source's stream is gone")]
pub struct SourceClosed<T>(pub T);

struct Ring<T> {
    items: VecDeque<Arrived<T>>,
    capacity: usize,
    overflow: u64,
    sent: u64,
    receiver_gone: bool,
}

struct Shared<T> {
    ring: Mutex<Ring<T>>,
    waker: AtomicWaker,
    senders: AtomicUsize,
}

impl<T> Shared<T> {
    /// The ring; a poisoned lock (a panic elsewhere while holding it) is
    /// taken over: the ring is always in a consistent state.
    fn lock(&self) -> MutexGuard<'_, Ring<T>> {
        self.ring.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Creates a source: the [`Source`] handle for the driver (cloneable,
/// `Send`), and the [`SourceStream`] of its samples with their arrival
/// times. `capacity` (at least 1) samples are held while the pipeline is
/// busy; beyond it the oldest are dropped and counted. The queue is
/// allocated now: no allocation per sample.
pub fn source<T>(clock: impl Clock, capacity: usize) -> (Source<T>, SourceStream<T>) {
    let capacity = capacity.max(1);
    let shared = Arc::new(Shared {
        ring: Mutex::new(Ring {
            items: VecDeque::with_capacity(capacity.min(1 << 16)),
            capacity,
            overflow: 0,
            sent: 0,
            receiver_gone: false,
        }),
        waker: AtomicWaker::new(),
        senders: AtomicUsize::new(1),
    });
    let source = Source {
        shared: shared.clone(),
        clock: Arc::new(clock),
    };
    (source, SourceStream { shared })
}

/// The driver's handle: stamps each sample with the clock's reading when
/// it is handed over. See the [module docs](self).
pub struct Source<T> {
    shared: Arc<Shared<T>>,
    clock: Arc<dyn Clock>,
}

impl<T> std::fmt::Debug for Source<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ring = self.shared.lock();
        f.debug_struct("Source")
            .field("queued", &ring.items.len())
            .field("overflow", &ring.overflow)
            .finish()
    }
}

impl<T> Clone for Source<T> {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::Relaxed);
        Source {
            shared: self.shared.clone(),
            clock: self.clock.clone(),
        }
    }
}

impl<T> Drop for Source<T> {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.shared.waker.wake();
        }
    }
}

impl<T> Source<T> {
    /// Hands a sample over now: it is stamped with the clock's reading
    /// and queued (the oldest queued sample is dropped and counted when
    /// the queue is full). Never blocks.
    ///
    /// # Errors
    /// [`SourceClosed`] when the stream was dropped (the sample is handed
    /// back).
    pub fn send(&self, value: T) -> Result<(), SourceClosed<T>> {
        let arrival = self.clock.now();
        self.send_arrived(arrival, value)
    }

    /// Hands a sample over with its own arrival time (a kernel or driver
    /// stamp on the same clock as the pipeline's).
    ///
    /// # Errors
    /// [`SourceClosed`] when the stream was dropped.
    pub fn send_arrived(&self, arrival: Timestamp, value: T) -> Result<(), SourceClosed<T>> {
        {
            let mut ring = self.shared.lock();
            if ring.receiver_gone {
                return Err(SourceClosed(value));
            }
            if ring.items.len() >= ring.capacity {
                ring.items.pop_front();
                ring.overflow = ring.overflow.saturating_add(1);
            }
            ring.items.push_back(Arrived { arrival, value });
            ring.sent = ring.sent.saturating_add(1);
        }
        self.shared.waker.wake();
        Ok(())
    }

    /// Samples dropped so far because the queue was full.
    pub fn overflow(&self) -> u64 {
        self.shared.lock().overflow
    }
}

impl<T> Sink<T> for Source<T> {
    type Error = SourceClosed<T>;

    fn poll_ready(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        // Never waits: a full queue drops its oldest sample.
        Poll::Ready(Ok(()))
    }

    fn start_send(self: Pin<&mut Self>, item: T) -> Result<(), Self::Error> {
        self.send(item)
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }
}

/// The samples of a [`Source`] with their arrival times, in hand-over
/// order. Ends when every `Source` clone is dropped and the queue is empty.
#[must_use = "streams do nothing unless polled"]
pub struct SourceStream<T> {
    shared: Arc<Shared<T>>,
}

impl<T> std::fmt::Debug for SourceStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceStream")
            .field("overflow", &self.shared.lock().overflow)
            .finish()
    }
}

impl<T: Send + 'static> SourceStream<T> {
    /// Samples dropped so far because the queue was full.
    pub fn overflow(&self) -> u64 {
        self.shared.lock().overflow
    }

    /// Samples handed over so far (queued, yielded or dropped).
    pub fn sent(&self) -> u64 {
        self.shared.lock().sent
    }

    /// A handle to this source's counters that stays valid after the
    /// stream is moved into a pipeline.
    pub fn stats(&self) -> SourceStats {
        SourceStats {
            shared: self.shared.clone(),
        }
    }

    /// Stamps every sample with its estimated acquisition time, from the
    /// arrival time taken at hand-over (same as
    /// [`SynclineExt::timestamped_arrived`](crate::SynclineExt::timestamped_arrived)).
    pub fn timestamped(
        self,
        estimator: Estimator,
    ) -> Timestamped<Self, SystemClock, NoIndex, NoReferences, ItemArrival> {
        Timestamped::new(self, estimator).with_item_arrival()
    }
}

/// The counters of a source (from [`SourceStream::stats`]).
pub struct SourceStats {
    shared: Arc<dyn Counters>,
}

trait Counters: Send + Sync {
    fn overflow(&self) -> u64;
    fn sent(&self) -> u64;
}

impl<T: Send> Counters for Shared<T> {
    fn overflow(&self) -> u64 {
        self.lock().overflow
    }
    fn sent(&self) -> u64 {
        self.lock().sent
    }
}

impl std::fmt::Debug for SourceStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceStats")
            .field("sent", &self.sent())
            .field("overflow", &self.overflow())
            .finish()
    }
}

impl SourceStats {
    /// Samples dropped because the queue was full.
    pub fn overflow(&self) -> u64 {
        self.shared.overflow()
    }

    /// Samples handed over.
    pub fn sent(&self) -> u64 {
        self.shared.sent()
    }
}

impl<T> Drop for SourceStream<T> {
    fn drop(&mut self) {
        let mut ring = self.shared.lock();
        ring.receiver_gone = true;
        ring.items.clear();
    }
}

impl<T> Stream for SourceStream<T> {
    type Item = Arrived<T>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Arrived<T>>> {
        let shared = &self.shared;
        if let Some(item) = shared.lock().items.pop_front() {
            return Poll::Ready(Some(item));
        }
        shared.waker.register(cx.waker());
        // Re-check after registering (a send may have raced the first look).
        if let Some(item) = shared.lock().items.pop_front() {
            return Poll::Ready(Some(item));
        }
        if shared.senders.load(Ordering::Acquire) == 0 {
            return Poll::Ready(None);
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::TokioClock;
    use futures::{SinkExt, StreamExt};

    #[tokio::test(start_paused = true)]
    async fn full_queue_drops_oldest_and_counts() {
        let clock = TokioClock::starting_at(Timestamp::EPOCH);
        let (tx, rx) = source::<u32>(clock, 3);
        for k in 0..5 {
            tx.send(k).unwrap();
        }
        assert_eq!(tx.overflow(), 2);
        drop(tx);
        let out: Vec<u32> = rx.map(|a| a.value).collect().await;
        assert_eq!(out, [2, 3, 4]);
    }

    #[tokio::test(start_paused = true)]
    async fn stamps_are_taken_at_hand_over_not_at_poll() {
        let clock = TokioClock::starting_at(Timestamp::EPOCH);
        let (tx, mut rx) = source::<u32>(clock, 16);
        tx.send(1).unwrap();
        tokio::time::advance(std::time::Duration::from_millis(7)).await;
        tx.send(2).unwrap();
        // The pipeline reads both 50 ms later.
        tokio::time::advance(std::time::Duration::from_millis(50)).await;
        assert_eq!(rx.next().await.unwrap().arrival, Timestamp::EPOCH);
        assert_eq!(
            rx.next().await.unwrap().arrival,
            Timestamp::from_nanos(7_000_000)
        );
    }

    #[test]
    fn blocking_thread_driver_and_sink() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let (tx, rx) = source::<u64>(SystemClock, 1024);
        let mut sink = tx.clone();
        let driver = std::thread::spawn(move || {
            for k in 0..500 {
                tx.send(k).unwrap();
            }
        });
        let out: Vec<Arrived<u64>> = rt.block_on(async move {
            SinkExt::send(&mut sink, 500).await.unwrap();
            drop(sink);
            rx.collect().await
        });
        driver.join().unwrap();
        assert_eq!(out.len(), 501);
        let from_thread: Vec<u64> = out.iter().map(|a| a.value).filter(|&v| v < 500).collect();
        assert_eq!(from_thread, (0..500).collect::<Vec<_>>());
    }

    #[tokio::test]
    async fn send_after_stream_dropped_hands_back() {
        let (tx, rx) = source::<u8>(SystemClock, 1);
        drop(rx);
        assert_eq!(tx.send(9), Err(SourceClosed(9)));
    }
}
