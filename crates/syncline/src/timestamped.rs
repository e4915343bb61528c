//! `.timestamped()`: stamp every item of a sensor stream with its estimated
//! acquisition time, on arrival, with zero added latency.
//!
//! The adapter takes each item's arrival time, feeds it to the sans-IO
//! [`Estimator`] and yields [`Stamped`] items. The arrival time is:
//!
//! * for [`SynclineExt::timestamped`](crate::SynclineExt::timestamped), its [`Clock`]'s reading when the
//!   item is polled: right for a stream that is polled as soon as an item
//!   is ready (a driver task feeding the pipeline directly);
//! * for [`SynclineExt::timestamped_arrived`](crate::SynclineExt::timestamped_arrived) (and
//!   [`SourceStream::timestamped`](crate::source::SourceStream::timestamped)),
//!   the arrival carried by each [`Arrived`] item: taken when the driver
//!   handed the sample over ([`crate::source`]) or by the kernel, so a busy
//!   pipeline never delays it. Prefer this in a live robot. These yield
//!   [`Arrived<Stamped<T>>`](Arrived): the estimated stamp, and the
//!   hand-over time kept for the aligner, whose live latency bound counts
//!   from it ([`crate::aligner::AlignerItem`]).
//!
//! The adapter cannot fail: its [`Estimator`] was validated when it was
//! built (`Estimator::new(config)?`). Optional: a device counter extracted
//! from each item ([`Timestamped::with_index`]), and a stream of hardware
//! reference pulses ([`Timestamped::with_references`]). The estimator's
//! status is a value ([`Timestamped::status`]), also published on a
//! [`tokio::sync::watch`] channel after every item
//! ([`Timestamped::status_watch`]) and logged with `tracing`.
//!
//! ```
//! use futures::StreamExt;
//! use syncline::prelude::*;
//! use syncline::core::estimator::{Estimator, EstimatorConfig};
//!
//! # #[tokio::main(flavor = "current_thread", start_paused = true)]
//! # async fn main() {
//! let clock = TokioClock::starting_at(Timestamp::from_nanos(1_000_000_000));
//! // A driver that delivers a sample every 10 ms, 1 ms after acquisition.
//! let imu = futures::stream::unfold(0u32, |k| async move {
//!     tokio::time::sleep(std::time::Duration::from_millis(10)).await;
//!     (k < 100).then_some((k, k + 1))
//! });
//! let estimator = Estimator::new(EstimatorConfig::new(TimeDelta::from_secs(5))).unwrap();
//! let stamped = imu.timestamped(estimator).with_clock(clock);
//! let status = stamped.status_watch();
//! let out: Vec<Stamped<u32>> = stamped.collect().await;
//! assert_eq!(out.len(), 100);
//! assert_eq!(status.borrow().samples, 100);
//! # }
//! ```

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use pin_project_lite::pin_project;
use syncline_core::estimator::{Estimator, EstimatorStatus};
use tokio::sync::watch;

use crate::clock::{Clock, SystemClock};
pub use crate::source::Arrived;
use crate::{Stamped, TimeDelta, Timestamp};

/// How often (in samples) the status is logged at `debug` level.
const LOG_EVERY: u64 = 1000;

/// Extracts a device sample counter from an item (see
/// [`Timestamped::with_index`]).
pub trait IndexOf<T> {
    /// The item's counter value, if it has one.
    fn index_of(&mut self, item: &T) -> Option<u64>;
}

/// No device counter: samples are numbered from their arrival times.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoIndex;

impl<T> IndexOf<T> for NoIndex {
    fn index_of(&mut self, _: &T) -> Option<u64> {
        None
    }
}

/// A device counter read by a closure.
#[derive(Debug, Clone, Copy)]
pub struct IndexFn<F>(F);

impl<T, F: FnMut(&T) -> u64> IndexOf<T> for IndexFn<F> {
    fn index_of(&mut self, item: &T) -> Option<u64> {
        Some((self.0)(item))
    }
}

/// No reference pulses.
pub type NoReferences = futures::stream::Empty<Timestamp>;

/// Where an item's arrival time comes from, what value is stamped, and
/// what the adapter yields.
pub trait ArrivalOf<T> {
    /// The value the stamped items carry.
    type Value;
    /// What the adapter yields: [`Stamped`], or [`Arrived<Stamped>`](Arrived)
    /// when the item carried its arrival (kept for the aligner's latency
    /// bound).
    type Output;
    /// The item's arrival time and its value (`clock` is read only when the
    /// item carries no arrival of its own).
    fn split<C: Clock>(&mut self, item: T, clock: &C) -> (Timestamp, Self::Value);
    /// The stamped value, with its arrival if it is kept.
    fn output(stamped: Stamped<Self::Value>, arrival: Timestamp) -> Self::Output;
}

/// The arrival is the clock's reading when the item is polled.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadClock;

impl<T> ArrivalOf<T> for ReadClock {
    type Value = T;
    type Output = Stamped<T>;
    fn split<C: Clock>(&mut self, item: T, clock: &C) -> (Timestamp, T) {
        (clock.now(), item)
    }
    fn output(stamped: Stamped<T>, _: Timestamp) -> Stamped<T> {
        stamped
    }
}

/// The arrival is carried by the item ([`Arrived`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct ItemArrival;

impl<T> ArrivalOf<Arrived<T>> for ItemArrival {
    type Value = T;
    type Output = Arrived<Stamped<T>>;
    fn split<C: Clock>(&mut self, item: Arrived<T>, _: &C) -> (Timestamp, T) {
        (item.arrival, item.value)
    }
    fn output(stamped: Stamped<T>, arrival: Timestamp) -> Arrived<Stamped<T>> {
        Arrived::new(arrival, stamped)
    }
}

pin_project! {
    /// The stream returned by [`SynclineExt::timestamped`](crate::SynclineExt::timestamped).
    #[must_use = "streams do nothing unless polled"]
    pub struct Timestamped<S, C = SystemClock, I = NoIndex, R = NoReferences, A = ReadClock> {
        #[pin]
        stream: S,
        #[pin]
        references: R,
        references_done: bool,
        clock: C,
        index: I,
        arrival: A,
        estimator: Estimator,
        status: watch::Sender<EstimatorStatus>,
    }
}

impl<S> Timestamped<S> {
    pub(crate) fn new(stream: S, estimator: Estimator) -> Self {
        let (status, _) = watch::channel(estimator.status());
        Timestamped {
            stream,
            references: futures::stream::empty(),
            references_done: false,
            clock: SystemClock,
            index: NoIndex,
            arrival: ReadClock,
            estimator,
            status,
        }
    }

    /// Takes each item's arrival from the item itself ([`Arrived`]).
    pub(crate) fn with_item_arrival(
        self,
    ) -> Timestamped<S, SystemClock, NoIndex, NoReferences, ItemArrival> {
        Timestamped {
            stream: self.stream,
            references: self.references,
            references_done: self.references_done,
            clock: self.clock,
            index: self.index,
            arrival: ItemArrival,
            estimator: self.estimator,
            status: self.status,
        }
    }
}

impl<S, C, I, R, A> Timestamped<S, C, I, R, A> {
    /// Stamps arrivals with `clock` instead (e.g. [`crate::clock::TokioClock`]
    /// under paused time in tests, or a simulated clock).
    pub fn with_clock<C2: Clock>(self, clock: C2) -> Timestamped<S, C2, I, R, A> {
        Timestamped {
            stream: self.stream,
            references: self.references,
            references_done: self.references_done,
            clock,
            index: self.index,
            arrival: self.arrival,
            estimator: self.estimator,
            status: self.status,
        }
    }

    /// Reads the device's sample counter from each item (counter gaps are
    /// losses; wrap-around per the configured counter width).
    pub fn with_index<F>(self, index: F) -> Timestamped<S, C, IndexFn<F>, R, A>
    where
        S: Stream,
        A: ArrivalOf<S::Item>,
        F: FnMut(&A::Value) -> u64,
    {
        Timestamped {
            stream: self.stream,
            references: self.references,
            references_done: self.references_done,
            clock: self.clock,
            index: IndexFn(index),
            arrival: self.arrival,
            estimator: self.estimator,
            status: self.status,
        }
    }

    /// Takes hardware reference pulses (host-clock times of acquisitions)
    /// from `references`; they lock the estimates to the pulses. The
    /// references are read whenever the adapter is polled; the adapter ends
    /// when the sensor stream ends.
    pub fn with_references<R2>(self, references: R2) -> Timestamped<S, C, I, R2, A>
    where
        R2: Stream<Item = Timestamp>,
    {
        Timestamped {
            stream: self.stream,
            references,
            references_done: false,
            clock: self.clock,
            index: self.index,
            arrival: self.arrival,
            estimator: self.estimator,
            status: self.status,
        }
    }

    /// The estimator's status now.
    pub fn status(&self) -> EstimatorStatus {
        self.estimator.status()
    }

    /// A receiver of the estimator's status, updated after every item.
    pub fn status_watch(&self) -> watch::Receiver<EstimatorStatus> {
        self.status.subscribe()
    }

    /// The aligner lookahead that suits this stream: half the period the
    /// estimator was configured with (estimated stamps wander by their
    /// jitter, so consecutive stamps can be a little less than a period
    /// apart), or `None` without a configured period. Use it as
    /// `StreamConfig::lookahead(stamped.lookahead().unwrap_or_default()).unwrap()`.
    pub fn lookahead(&self) -> Option<TimeDelta> {
        let period = self.estimator.status().period_ns?;
        Some(TimeDelta::from_nanos((period / 2.0) as i64))
    }

    /// The estimator (read-only).
    pub fn estimator(&self) -> &Estimator {
        &self.estimator
    }
}

impl<S, C, I, R, A> Stream for Timestamped<S, C, I, R, A>
where
    S: Stream,
    C: Clock,
    A: ArrivalOf<S::Item>,
    I: IndexOf<A::Value>,
    R: Stream<Item = Timestamp>,
{
    type Item = A::Output;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let mut this = self.project();
        while !*this.references_done {
            match this.references.as_mut().poll_next(cx) {
                Poll::Ready(Some(h)) => {
                    this.estimator.update_reference(h);
                }
                Poll::Ready(None) => *this.references_done = true,
                Poll::Pending => break,
            }
        }
        let item = match this.stream.poll_next(cx) {
            Poll::Ready(Some(item)) => item,
            Poll::Ready(None) => {
                tracing::debug!(status = ?this.estimator.status(), "sensor stream ended");
                return Poll::Ready(None);
            }
            Poll::Pending => return Poll::Pending,
        };
        let (now, item) = this.arrival.split(item, &*this.clock);
        let result = match this.index.index_of(&item) {
            Some(i) => this.estimator.update_with_index(now, i),
            None => this.estimator.update(now),
        };
        let stamp = match result {
            Ok(e) => e.stamp,
            Err(e) => {
                // The clock went backwards (counted in the status): the
                // arrival time stands for this item.
                tracing::warn!(error = %e, "arrival rejected by the estimator");
                now
            }
        };
        let status = this.estimator.status();
        if status.samples.is_multiple_of(LOG_EVERY) {
            tracing::debug!(?status, "timestamp estimator");
        }
        this.status.send_replace(status);
        Poll::Ready(Some(A::output(Stamped::new(stamp, item), now)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.stream.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures::StreamExt;
    use syncline_core::estimator::EstimatorConfig;

    use super::*;
    use crate::SynclineExt;
    use crate::clock::TokioClock;

    const T0: i64 = 1_700_000_000_000_000_000;

    /// Item k is acquired at k·10 ms after the clock origin and delivered
    /// `delay(k)` µs later (FIFO); items in `lost` never come. Time is moved
    /// with `tokio::time::advance`, which is exact (timers are not).
    fn sensor(
        n: u64,
        delay: impl Fn(u64) -> u64 + 'static,
        lost: &'static [u64],
    ) -> impl Stream<Item = u64> {
        let arrivals: Vec<(u64, u64)> = (0..n)
            .filter(|k| !lost.contains(k))
            .map(|k| (k, 10_000 * k + delay(k)))
            .collect();
        futures::stream::unfold((arrivals.into_iter(), 0u64), |(mut it, now)| async move {
            let (k, at) = it.next()?;
            let at = at.max(now);
            tokio::time::advance(Duration::from_micros(at - now)).await;
            Some((k, (it, at)))
        })
    }

    /// A deterministic exponential-looking delay in µs (mean `mean`).
    fn exp_delay(k: u64, mean: f64) -> u64 {
        let u = ((k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        (-mean * u.ln()) as u64
    }

    fn config() -> EstimatorConfig {
        EstimatorConfig::new(TimeDelta::from_secs(5)).with_period(TimeDelta::from_millis(10))
    }

    fn estimator(config: EstimatorConfig) -> Estimator {
        Estimator::new(config).unwrap()
    }

    fn truth(k: u64) -> i64 {
        T0 + k as i64 * 10_000_000
    }

    #[tokio::test(start_paused = true)]
    async fn jitter_is_removed() {
        let clock = TokioClock::starting_at(Timestamp::from_nanos(T0));
        // 1 ms latency plus exponential jitter.
        let s = sensor(500, |k| 1000 + exp_delay(k, 300.0), &[]);
        let out: Vec<_> = s
            .timestamped(estimator(config()))
            .with_clock(clock)
            .collect()
            .await;
        assert_eq!(out.len(), 500);
        for st in &out[100..] {
            let err = st.stamp.as_nanos() - truth(st.value) - 1_000_000;
            assert!(err.abs() < 20_000, "item {}: error {err} ns", st.value);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn status_is_observable_while_running() {
        let clock = TokioClock::starting_at(Timestamp::from_nanos(T0));
        let s = sensor(50, |_| 500, &[])
            .timestamped(estimator(config()))
            .with_clock(clock);
        let mut rx = s.status_watch();
        assert_eq!(rx.borrow().samples, 0);
        let mut s = Box::pin(s);
        for k in 1..=10u64 {
            s.next().await.unwrap();
            assert!(rx.has_changed().unwrap());
            assert_eq!(rx.borrow_and_update().samples, k);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn device_index_counts_losses() {
        static LOST: [u64; 3] = [100, 200, 201];
        let clock = TokioClock::starting_at(Timestamp::from_nanos(T0));
        let s = sensor(400, |_| 800, &LOST)
            .timestamped(estimator(config().with_counter_bits(8)))
            .with_clock(clock)
            .with_index(|k: &u64| k % 256);
        let rx = s.status_watch();
        let out: Vec<_> = s.collect().await;
        assert_eq!(out.len(), 397);
        assert_eq!(rx.borrow().losses_from_index, 3);
        for st in &out {
            assert!((st.stamp.as_nanos() - truth(st.value) - 800_000).abs() < 1_000);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn references_lock_the_phase() {
        let clock = TokioClock::starting_at(Timestamp::from_nanos(T0));
        // Each pulse reaches the adapter right after its sample.
        let (tx, refs) = futures::channel::mpsc::unbounded();
        let s = sensor(300, |k| 3000 + exp_delay(k, 2000.0), &[])
            .inspect(move |k| tx.unbounded_send(Timestamp::from_nanos(truth(*k))).unwrap())
            .timestamped(estimator(config()))
            .with_clock(clock)
            .with_references(refs);
        let rx = s.status_watch();
        let out: Vec<_> = s.collect().await;
        assert!(rx.borrow().references_used > 0);
        let last = out.last().unwrap();
        assert!((last.stamp.as_nanos() - truth(last.value)).abs() < 10_000);
    }

    /// Delays of 1 ms + U(0, 19 ms) on a 10 ms sensor: the model puts some
    /// estimates before the one before; the stream's stamps still go
    /// forward, and the status counts the held ones.
    #[tokio::test(start_paused = true)]
    async fn stamps_never_go_backwards() {
        let delay = |k: u64| 1000 + (k * 7919 % 191) * 100;
        let run = |monotonic: bool| {
            let clock = TokioClock::starting_at(Timestamp::from_nanos(T0));
            let s = sensor(600, delay, &[])
                .timestamped(estimator(config().with_monotonic(monotonic)))
                .with_clock(clock);
            let rx = s.status_watch();
            async move {
                let out: Vec<_> = s.collect().await;
                let stamps: Vec<i64> = out.iter().map(|s| s.stamp.as_nanos()).collect();
                let held = rx.borrow().held;
                (stamps, held)
            }
        };
        let (raw, none) = run(false).await;
        let (stamps, held) = run(true).await;
        let back = raw.windows(2).filter(|w| w[1] <= w[0]).count();
        assert_eq!(none, 0);
        assert!(
            back > 0,
            "the model does not go back here: the test tests nothing"
        );
        assert!(held > 0);
        assert!(stamps.windows(2).all(|w| w[1] > w[0]));
    }

    #[tokio::test(start_paused = true)]
    async fn size_hint_is_the_inner_one() {
        let s = futures::stream::iter(0..7).timestamped(estimator(config()));
        assert_eq!(s.size_hint(), (7, Some(7)));
        assert_eq!(s.status().samples, 0);
        assert_eq!(s.lookahead(), Some(TimeDelta::from_millis(5)));
        let no_period = futures::stream::iter(0..1)
            .timestamped(estimator(EstimatorConfig::new(TimeDelta::from_secs(1))));
        assert_eq!(no_period.lookahead(), None);
    }

    /// The pipeline reads every item half a second after it was handed
    /// over; the arrivals carried by the items still stamp them right.
    #[tokio::test(start_paused = true)]
    async fn carried_arrivals_ignore_a_busy_pipeline() {
        let clock = TokioClock::starting_at(Timestamp::from_nanos(T0));
        let (tx, rx) = crate::source::source::<u64>(clock, 1024);
        tokio::time::advance(Duration::from_millis(1)).await;
        for k in 0..300u64 {
            tx.send(k).unwrap();
            tokio::time::advance(Duration::from_millis(10)).await;
        }
        drop(tx);
        tokio::time::advance(Duration::from_millis(500)).await;
        let out: Vec<_> = rx
            .timestamped(estimator(config()))
            .with_clock(clock)
            .collect()
            .await;
        assert_eq!(out.len(), 300);
        for (k, st) in out.iter().enumerate() {
            let (stamp, value) = (st.value.stamp, st.value.value);
            let err = stamp.as_nanos() - truth(value) - 1_000_000;
            assert!(err.abs() < 1_000, "item {value}: error {err} ns");
            // The hand-over time is kept, for the aligner's latency bound.
            assert_eq!(st.arrival.as_nanos(), truth(k as u64) + 1_000_000);
        }
    }
}
