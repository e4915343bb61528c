//! The lidar-centred pattern: for each sample of a *pivot* stream, the other
//! streams' values interpolated at the pivot's stamp.
//!
//! [`interpolated`] takes a pivot stream (items that implement
//! [`HasStamp`], e.g. lidar scans), a set of secondary streams of
//! [`Stamped`] values that implement [`Interpolate`] (IMU, wheel speed,
//! GNSS, ...), each wrapped in a [`Secondary`] with its own bounded
//! [`LookupBuffer`], a [`Clock`] and a [`PivotConfig`]. The set is a tuple
//! of 1 to 6 [`Secondary`]s of different value types, or a `Vec` of
//! [`Secondary`]s of one type.
//!
//! For each pivot it yields an [`AtPivot`] holding the pivot and, per
//! secondary stream, `Ok(value at the pivot's stamp)` or an
//! [`AtPivotError`]. When a secondary has no sample at or after the pivot's
//! stamp yet, the combinator **waits** for it (it keeps draining every
//! secondary stream into its buffer meanwhile), for at most
//! [`PivotConfig::timeout`] on the clock, counted from the pivot's arrival
//! (one resettable timer, [`ClockTimer`], as the
//! aligner and the synchronizers use: re-armed, not re-made, per pivot).
//! What happens to a pivot with a missing value is configured by
//! [`OnMissing`]: yield it with the per-stream errors, or drop it. Either way
//! it is counted in [`Interpolated::status`] and logged with `tracing`;
//! nothing is lost silently.
//!
//! Secondary streams must be `Unpin` (wrap others in `Box::pin`). Pivots are
//! handled one at a time, in arrival order; the pivot stream is not polled
//! while a pivot waits (it back-pressures).
//!
//! ```
//! use futures::StreamExt;
//! use syncline::interpolated::{BufferConfig, PivotConfig, Secondary};
//! use syncline::prelude::*;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let ms = |n: i64| Timestamp::from_nanos(n * 1_000_000);
//! let scans = futures::stream::iter([ms(10), ms(20)]);
//! let speed = futures::stream::iter([0, 5, 10, 15, 20, 25].map(|t| Stamped::new(ms(t), t as f64)));
//! let heading = futures::stream::iter([0, 20, 40].map(|t| Stamped::new(ms(t), [t as f64, 1.0])));
//! // `scans.interpolated(...)` is the free function `interpolated(scans, ...)`.
//! let mut out = scans.interpolated(
//!     (
//!         Secondary::new(speed, BufferConfig::new(64)),
//!         Secondary::new(heading, BufferConfig::new(16)),
//!     ),
//!     TokioClock::new(),
//!     PivotConfig::new(TimeDelta::from_millis(50)),
//! );
//! let first = out.next().await.unwrap();
//! assert_eq!(first.stamp, ms(10));
//! assert_eq!(first.values.0, Ok(10.0));
//! assert_eq!(first.values.1, Ok([10.0, 1.0]));
//! assert_eq!(out.next().await.unwrap().values.0, Ok(20.0));
//! assert!(out.next().await.is_none());
//! assert_eq!(out.status().complete, 2);
//! # }
//! ```

use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use pin_project_lite::pin_project;
use serde::{Deserialize, Serialize};
pub use syncline_core::interp::{
    BufferConfig, BufferStatus, Interpolate, LookupBuffer, LookupError,
};
use syncline_core::{HasStamp, Stamped, TimeDelta, Timestamp};

use tokio::sync::watch;

use crate::clock::{Clock, ClockTimer};

/// Samples taken from one secondary stream (and pivots dropped) per poll at
/// most, so that a stream that is always ready cannot starve the others.
const DRAIN_LIMIT: usize = 1024;

/// Why a secondary stream has no value at a pivot's stamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case", tag = "error")]
pub enum AtPivotError {
    /// The lookup buffer refused (extrapolation before the oldest sample,
    /// a bracket wider than the maximum gap, a non-finite value).
    #[error(transparent)]
    Lookup(#[from] LookupError),
    /// No sample at or after the pivot's stamp arrived within the timeout.
    #[error("timed out waiting for a sample at or after {query}")]
    Timeout {
        /// The pivot's stamp.
        query: Timestamp,
        /// The newest sample held when the wait ended.
        newest: Option<Timestamp>,
    },
    /// The stream ended without a sample at or after the pivot's stamp.
    #[error("the stream ended before a sample at or after {query}")]
    Ended {
        /// The pivot's stamp.
        query: Timestamp,
        /// The newest sample held.
        newest: Option<Timestamp>,
    },
}

/// What to do with a pivot when a secondary value is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnMissing {
    /// Yield it, with an [`AtPivotError`] in place of each missing value.
    #[default]
    Yield,
    /// Drop it (counted in [`PivotStatus::dropped`] and per reason).
    Drop,
}

/// Configuration of [`interpolated`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PivotConfig {
    /// How long (on the clock, from the pivot's arrival) to wait for the
    /// secondary samples that bracket a pivot's stamp. Zero or negative:
    /// never wait.
    pub timeout: TimeDelta,
    /// What to do with a pivot whose values are not all available.
    pub on_missing: OnMissing,
}

impl PivotConfig {
    /// Waits up to `timeout`; yields pivots with missing values.
    pub fn new(timeout: TimeDelta) -> Self {
        PivotConfig {
            timeout,
            on_missing: OnMissing::Yield,
        }
    }

    /// Sets what happens to pivots with missing values.
    pub fn on_missing(mut self, policy: OnMissing) -> Self {
        self.on_missing = policy;
        self
    }
}

/// A pivot and the secondary values at its stamp.
#[derive(Debug, Clone, PartialEq)]
pub struct AtPivot<P, V> {
    /// The pivot's stamp.
    pub stamp: Timestamp,
    /// The pivot sample.
    pub pivot: P,
    /// One `Result` per secondary stream, in the order given.
    pub values: V,
}

/// Missing secondary values, by reason (one count per stream and pivot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MissingCounts {
    /// The pivot was before the oldest buffered sample.
    pub before_oldest: u64,
    /// The bracketing samples were further apart than the maximum gap.
    pub gap_too_large: u64,
    /// The interpolated value was NaN or infinite.
    pub not_finite: u64,
    /// The bracketing sample did not arrive within the timeout.
    pub timeout: u64,
    /// The stream ended before a bracketing sample.
    pub ended: u64,
}

impl MissingCounts {
    fn count(&mut self, e: &AtPivotError) {
        let n = match e {
            AtPivotError::Lookup(LookupError::BeforeOldest { .. }) => &mut self.before_oldest,
            AtPivotError::Lookup(LookupError::GapTooLarge { .. }) => &mut self.gap_too_large,
            AtPivotError::Lookup(LookupError::NotFinite { .. }) => &mut self.not_finite,
            // A live buffer reports "after newest" as waiting, then timeout.
            AtPivotError::Lookup(LookupError::AfterNewest { .. })
            | AtPivotError::Timeout { .. } => &mut self.timeout,
            AtPivotError::Ended { .. } | AtPivotError::Lookup(LookupError::Empty) => {
                &mut self.ended
            }
        };
        *n += 1;
    }

    fn total(&self) -> u64 {
        self.before_oldest + self.gap_too_large + self.not_finite + self.timeout + self.ended
    }
}

/// Counters of an [`Interpolated`] stream.
///
/// Conservation: `pivots == complete + partial + dropped + waiting`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PivotStatus {
    /// Pivots received.
    pub pivots: u64,
    /// Pivots yielded with every value.
    pub complete: u64,
    /// Pivots yielded with at least one missing value ([`OnMissing::Yield`]).
    pub partial: u64,
    /// Pivots dropped for a missing value ([`OnMissing::Drop`]).
    pub dropped: u64,
    /// 1 while a pivot waits for its brackets, else 0.
    pub waiting: u64,
    /// Missing values by reason.
    pub missing: MissingCounts,
    /// Each secondary stream's lookup buffer.
    pub buffers: Vec<BufferStatus>,
}

/// One secondary stream and its lookup buffer.
#[derive(Debug)]
pub struct Secondary<S, T> {
    stream: S,
    buffer: LookupBuffer<T>,
    ended: bool,
}

impl<S, T> Secondary<S, T>
where
    S: Stream<Item = Stamped<T>> + Unpin,
    T: Interpolate + Clone,
{
    /// Wraps `stream`, buffering its samples in a [`LookupBuffer`] configured
    /// by `config` (capacity, maximum bracket gap, out-of-order handling).
    pub fn new(stream: S, config: BufferConfig) -> Self {
        Secondary {
            stream,
            buffer: LookupBuffer::new(config),
            ended: false,
        }
    }

    /// The lookup buffer (its counters tell of evicted or rejected samples).
    pub fn buffer(&self) -> &LookupBuffer<T> {
        &self.buffer
    }

    fn drain(&mut self, cx: &mut Context<'_>) {
        for _ in 0..DRAIN_LIMIT {
            if self.ended {
                return;
            }
            match Pin::new(&mut self.stream).poll_next(cx) {
                // Whatever the buffer does with it is counted in its status.
                Poll::Ready(Some(s)) => drop(self.buffer.insert(s.stamp, s.value)),
                Poll::Ready(None) => self.ended = true,
                Poll::Pending => return,
            }
        }
        cx.waker().wake_by_ref();
    }

    /// `None` while the bracketing sample may still come.
    fn lookup(&self, t: Timestamp) -> Option<Result<T, AtPivotError>> {
        let newest = self.buffer.newest().map(|s| s.stamp);
        match self.buffer.interpolate(t) {
            Err(LookupError::Empty | LookupError::AfterNewest { .. }) if !self.ended => None,
            Err(LookupError::Empty | LookupError::AfterNewest { .. }) => {
                Some(Err(AtPivotError::Ended { query: t, newest }))
            }
            r => Some(r.map_err(AtPivotError::from)),
        }
    }

    fn resolve(&self, t: Timestamp, missing: &mut MissingCounts) -> Result<T, AtPivotError> {
        let r = self.lookup(t).unwrap_or(Err(AtPivotError::Timeout {
            query: t,
            newest: self.buffer.newest().map(|s| s.stamp),
        }));
        if let Err(e) = &r {
            missing.count(e);
        }
        r
    }
}

/// A set of [`Secondary`] streams: tuples of 1 to 6 (each with its own value
/// type) and `Vec<Secondary<S, T>>`.
pub trait SecondarySet {
    /// One `Result<T, AtPivotError>` per stream (a tuple, or a `Vec`).
    type Values;

    /// Moves every ready sample of every stream into its buffer.
    fn drain(&mut self, cx: &mut Context<'_>);

    /// True while some stream may still deliver a bracket for `t`.
    fn waiting(&self, t: Timestamp) -> bool;

    /// The values at `t`; streams still waiting resolve to a timeout.
    fn resolve(&self, t: Timestamp, missing: &mut MissingCounts) -> Self::Values;

    /// Each stream's buffer status.
    fn buffers(&self) -> Vec<BufferStatus>;
}

macro_rules! tuple_set {
    ($(($S:ident, $T:ident, $i:tt)),+) => {
        impl<$($S, $T),+> SecondarySet for ($(Secondary<$S, $T>,)+)
        where
            $($S: Stream<Item = Stamped<$T>> + Unpin, $T: Interpolate + Clone,)+
        {
            type Values = ($(Result<$T, AtPivotError>,)+);

            fn drain(&mut self, cx: &mut Context<'_>) {
                $(self.$i.drain(cx);)+
            }

            fn waiting(&self, t: Timestamp) -> bool {
                false $(|| self.$i.lookup(t).is_none())+
            }

            fn resolve(&self, t: Timestamp, missing: &mut MissingCounts) -> Self::Values {
                ($(self.$i.resolve(t, missing),)+)
            }

            fn buffers(&self) -> Vec<BufferStatus> {
                vec![$(self.$i.buffer.status()),+]
            }
        }
    };
}

tuple_set!((S0, T0, 0));
tuple_set!((S0, T0, 0), (S1, T1, 1));
tuple_set!((S0, T0, 0), (S1, T1, 1), (S2, T2, 2));
tuple_set!((S0, T0, 0), (S1, T1, 1), (S2, T2, 2), (S3, T3, 3));
tuple_set!(
    (S0, T0, 0),
    (S1, T1, 1),
    (S2, T2, 2),
    (S3, T3, 3),
    (S4, T4, 4)
);
tuple_set!(
    (S0, T0, 0),
    (S1, T1, 1),
    (S2, T2, 2),
    (S3, T3, 3),
    (S4, T4, 4),
    (S5, T5, 5)
);

impl<S, T> SecondarySet for Vec<Secondary<S, T>>
where
    S: Stream<Item = Stamped<T>> + Unpin,
    T: Interpolate + Clone,
{
    type Values = Vec<Result<T, AtPivotError>>;

    fn drain(&mut self, cx: &mut Context<'_>) {
        self.iter_mut().for_each(|s| s.drain(cx));
    }

    fn waiting(&self, t: Timestamp) -> bool {
        self.iter().any(|s| s.lookup(t).is_none())
    }

    fn resolve(&self, t: Timestamp, missing: &mut MissingCounts) -> Self::Values {
        self.iter().map(|s| s.resolve(t, missing)).collect()
    }

    fn buffers(&self) -> Vec<BufferStatus> {
        self.iter().map(|s| s.buffer.status()).collect()
    }
}

pin_project! {
    /// The stream returned by [`interpolated`].
    #[must_use = "streams do nothing unless polled"]
    pub struct Interpolated<P: Stream, S, C> {
        #[pin]
        pivots: P,
        pivots_ended: bool,
        secondaries: S,
        // The one resettable timer, on the clock (which it owns).
        timer: ClockTimer,
        clock: PhantomData<fn() -> C>,
        config: PivotConfig,
        // The pivot being completed, its stamp and its deadline.
        current: Option<(P::Item, Timestamp, Timestamp)>,
        status: PivotStatus,
        watch: watch::Sender<PivotStatus>,
    }
}

/// For each item of `pivots`, the values of `secondaries` interpolated at
/// its stamp; see the [module documentation](self).
pub fn interpolated<P, S, C>(
    pivots: P,
    secondaries: S,
    clock: C,
    config: PivotConfig,
) -> Interpolated<P, S, C>
where
    P: Stream,
    P::Item: HasStamp,
    S: SecondarySet,
    C: Clock,
{
    Interpolated {
        pivots,
        pivots_ended: false,
        secondaries,
        timer: ClockTimer::new(Arc::new(clock)),
        clock: PhantomData,
        config,
        current: None,
        status: PivotStatus::default(),
        watch: watch::Sender::new(PivotStatus::default()),
    }
}

impl<P: Stream, S: SecondarySet, C> Interpolated<P, S, C> {
    /// Counters, including each secondary buffer's status.
    pub fn status(&self) -> PivotStatus {
        PivotStatus {
            waiting: u64::from(self.current.is_some()),
            buffers: self.secondaries.buffers(),
            ..self.status.clone()
        }
    }

    /// A watch of [`status`](Self::status), updated as the stream is
    /// polled (observable from another task while this stream is
    /// consumed). Every receiver stays live; nothing is published while no
    /// receiver exists.
    pub fn status_watch(&self) -> watch::Receiver<PivotStatus> {
        self.watch.send_replace(self.status());
        self.watch.subscribe()
    }

    fn publish_status(&self) {
        if self.watch.receiver_count() > 0 {
            self.watch.send_replace(self.status());
        }
    }

    /// The secondary streams (and through them their buffers).
    pub fn secondaries(&self) -> &S {
        &self.secondaries
    }
}

impl<P, S, C> Stream for Interpolated<P, S, C>
where
    P: Stream,
    P::Item: HasStamp,
    S: SecondarySet,
    C: Clock,
{
    type Item = AtPivot<P::Item, S::Values>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let out = self.as_mut().poll_pivots(cx);
        self.as_ref().get_ref().publish_status();
        out
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.pivot_size_hint()
    }
}

impl<P, S, C> Interpolated<P, S, C>
where
    P: Stream,
    P::Item: HasStamp,
    S: SecondarySet,
    C: Clock,
{
    fn poll_pivots(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<AtPivot<P::Item, S::Values>>> {
        let mut this = self.project();
        this.secondaries.drain(cx);
        // Pivots dropped in this poll: past the budget, yield to the
        // scheduler so that a stream of droppable pivots cannot spin.
        let mut dropped_here = 0;
        loop {
            if dropped_here >= DRAIN_LIMIT {
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            if this.current.is_none() {
                if *this.pivots_ended {
                    return Poll::Ready(None);
                }
                match this.pivots.as_mut().poll_next(cx) {
                    Poll::Ready(Some(p)) => {
                        let stamp = p.stamp();
                        let deadline = this.timer.clock().now().saturating_add(this.config.timeout);
                        this.status.pivots += 1;
                        *this.current = Some((p, stamp, deadline));
                    }
                    Poll::Ready(None) => {
                        *this.pivots_ended = true;
                        return Poll::Ready(None);
                    }
                    Poll::Pending => return Poll::Pending,
                }
            }
            let Some((_, stamp, deadline)) = this.current.as_ref() else {
                continue;
            };
            let (stamp, deadline) = (*stamp, *deadline);
            if this.secondaries.waiting(stamp) && this.timer.poll_at(cx, deadline).is_pending() {
                return Poll::Pending;
            }
            this.timer.disarm();
            let Some((pivot, _, _)) = this.current.take() else {
                continue;
            };
            let before = this.status.missing.total();
            let values = this.secondaries.resolve(stamp, &mut this.status.missing);
            let out = AtPivot {
                stamp,
                pivot,
                values,
            };
            if this.status.missing.total() == before {
                this.status.complete += 1;
                return Poll::Ready(Some(out));
            }
            match this.config.on_missing {
                OnMissing::Yield => {
                    this.status.partial += 1;
                    tracing::debug!(%stamp, "pivot yielded with missing values");
                    return Poll::Ready(Some(out));
                }
                OnMissing::Drop => {
                    this.status.dropped += 1;
                    dropped_here += 1;
                    tracing::debug!(%stamp, "pivot dropped: missing values");
                }
            }
        }
    }

    fn pivot_size_hint(&self) -> (usize, Option<usize>) {
        let current = usize::from(self.current.is_some());
        let (_, upper) = self.pivots.size_hint();
        let upper = if self.pivots_ended {
            Some(current)
        } else {
            upper.and_then(|u| u.checked_add(current))
        };
        match self.config.on_missing {
            OnMissing::Yield if !self.pivots_ended => {
                (self.pivots.size_hint().0.saturating_add(current), upper)
            }
            OnMissing::Yield => (current, upper),
            OnMissing::Drop => (0, upper),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::TokioClock;
    use futures::StreamExt;
    use futures::channel::mpsc;

    fn ms(n: i64) -> Timestamp {
        Timestamp::from_nanos(n * 1_000_000)
    }

    type Tx<T> = mpsc::UnboundedSender<Stamped<T>>;

    fn send<T>(tx: &Tx<T>, t: i64, v: T) {
        tx.unbounded_send(Stamped::new(ms(t), v)).unwrap();
    }

    #[tokio::test(start_paused = true)]
    async fn waits_for_the_bracket_then_interpolates() {
        let clock = TokioClock::starting_at(Timestamp::EPOCH);
        let (ptx, prx) = mpsc::unbounded::<Timestamp>();
        let (itx, irx) = mpsc::unbounded::<Stamped<f64>>();
        let (vtx, vrx) = mpsc::unbounded::<Stamped<[f32; 2]>>();
        let mut out = interpolated(
            prx,
            (
                Secondary::new(irx, BufferConfig::new(8)),
                Secondary::new(vrx, BufferConfig::new(8)),
            ),
            clock,
            PivotConfig::new(TimeDelta::from_millis(100)),
        );
        send(&itx, 0, 0.0);
        send(&vtx, 0, [0.0, 10.0]);
        send(&vtx, 40, [4.0, 10.0]);
        ptx.unbounded_send(ms(30)).unwrap();
        let producer = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
            send(&itx, 50, 5.0);
            (itx, vtx, ptx)
        });
        let got = out.next().await.unwrap();
        // Emitted when the IMU bracket arrived, 25 ms later, not at the timeout.
        assert_eq!(clock.now(), ms(25));
        assert_eq!(got.stamp, ms(30));
        assert_eq!(got.values, (Ok(3.0), Ok([3.0, 10.0])));
        let _keep = producer.await.unwrap();
        assert_eq!(out.status().complete, 1);
        assert_eq!(out.status().buffers.len(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn timeout_yields_typed_errors_or_drops_counted() {
        for policy in [OnMissing::Yield, OnMissing::Drop] {
            let clock = TokioClock::starting_at(Timestamp::EPOCH);
            let (itx, irx) = mpsc::unbounded::<Stamped<f64>>();
            let pivots = futures::stream::iter([ms(5), ms(20), ms(-10)]);
            let mut out = interpolated(
                pivots,
                (Secondary::new(irx, BufferConfig::new(8)),),
                clock,
                PivotConfig::new(TimeDelta::from_millis(40)).on_missing(policy),
            );
            let watches = [out.status_watch(), out.status_watch()];
            send(&itx, 0, 0.0);
            send(&itx, 10, 1.0);
            let first = out.next().await.unwrap();
            assert_eq!(first.values.0, Ok(0.5));
            let t0 = clock.now();
            let rest: Vec<_> = (&mut out).collect().await;
            // Every status receiver follows the stream.
            for w in &watches {
                assert_eq!(*w.borrow(), out.status());
            }
            // Only the wait for ms(20) took time: exactly the timeout.
            assert_eq!(
                clock.now().checked_since(t0).unwrap(),
                TimeDelta::from_millis(40)
            );
            let s = out.status();
            assert_eq!(s.pivots, 3);
            assert_eq!((s.missing.timeout, s.missing.before_oldest), (1, 1));
            match policy {
                OnMissing::Yield => {
                    assert_eq!(s.partial, 2);
                    assert_eq!(
                        rest[0].values.0,
                        Err(AtPivotError::Timeout {
                            query: ms(20),
                            newest: Some(ms(10))
                        })
                    );
                    assert!(matches!(
                        rest[1].values.0,
                        Err(AtPivotError::Lookup(LookupError::BeforeOldest { .. }))
                    ));
                }
                OnMissing::Drop => {
                    assert!(rest.is_empty());
                    assert_eq!(s.dropped, 2);
                }
            }
            assert_eq!(s.complete + s.partial + s.dropped, s.pivots);
            drop(itx);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn many_dropped_pivots_yield_to_the_scheduler_and_are_counted() {
        let empty = futures::stream::iter(Vec::<Stamped<f64>>::new());
        let mut out = interpolated(
            futures::stream::iter((0..3000).map(ms)),
            (Secondary::new(empty, BufferConfig::new(1)),),
            TokioClock::starting_at(Timestamp::EPOCH),
            PivotConfig::new(TimeDelta::ZERO).on_missing(OnMissing::Drop),
        );
        let waker = futures::task::noop_waker();
        let mut cx = Context::from_waker(&waker);
        // The first poll stops after the budget instead of spinning through all.
        assert!(Pin::new(&mut out).poll_next(&mut cx).is_pending());
        assert_eq!(out.status().dropped, DRAIN_LIMIT as u64);
        assert!((&mut out).collect::<Vec<_>>().await.is_empty());
        let s = out.status();
        assert_eq!((s.pivots, s.dropped, s.missing.ended), (3000, 3000, 3000));
    }

    proptest::proptest! {
        /// With every secondary sample available at once, each pivot gets
        /// exactly what a lookup buffer holding the whole stream answers, and
        /// every pivot is accounted for.
        #[test]
        fn matches_the_lookup_buffer_and_conserves_pivots(
            samples in proptest::collection::vec((0i64..200, -5.0f64..5.0), 0..40),
            pivots in proptest::collection::vec(-10i64..210, 0..20),
            cap in 1usize..50,
            drop_missing in proptest::bool::ANY,
        ) {
            let config = BufferConfig::new(cap).max_gap(TimeDelta::from_millis(30));
            let mut reference = LookupBuffer::new(config);
            for &(t, v) in &samples {
                reference.insert(ms(t), v);
            }
            let policy = if drop_missing { OnMissing::Drop } else { OnMissing::Yield };
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            let (out, status) = rt.block_on(async {
                let secondary = futures::stream::iter(samples.clone())
                    .map(|(t, v)| Stamped::new(ms(t), v));
                let mut s = interpolated(
                    futures::stream::iter(pivots.iter().map(|&t| ms(t))),
                    (Secondary::new(secondary, config),),
                    TokioClock::starting_at(Timestamp::EPOCH),
                    PivotConfig::new(TimeDelta::from_millis(10)).on_missing(policy),
                );
                let out: Vec<_> = (&mut s).collect().await;
                (out, s.status())
            });
            let mut expected = Vec::new();
            for &t in &pivots {
                let want = match reference.interpolate(ms(t)) {
                    Err(LookupError::Empty | LookupError::AfterNewest { .. }) => {
                        Err(AtPivotError::Ended { query: ms(t), newest: reference.newest().map(|s| s.stamp) })
                    }
                    r => r.map_err(AtPivotError::from),
                };
                if want.is_ok() || policy == OnMissing::Yield {
                    expected.push((ms(t), want));
                }
            }
            let got: Vec<_> = out.into_iter().map(|a| (a.stamp, a.values.0)).collect();
            proptest::prop_assert_eq!(got, expected);
            proptest::prop_assert_eq!(status.pivots, pivots.len() as u64);
            proptest::prop_assert_eq!(status.complete + status.partial + status.dropped, status.pivots);
            proptest::prop_assert_eq!(status.buffers[0], reference.status());
        }
    }

    #[tokio::test(start_paused = true)]
    async fn ended_streams_gaps_and_nan_are_reported() {
        let clock = TokioClock::starting_at(Timestamp::EPOCH);
        let a = futures::stream::iter([(0, 0.0), (10, f64::NAN), (20, 1.0), (100, 2.0)])
            .map(|(t, v)| Stamped::new(ms(t), v));
        let empty = futures::stream::iter(Vec::<Stamped<f64>>::new());
        let mut out = interpolated(
            futures::stream::iter([ms(5), ms(50), ms(100), ms(200)]),
            vec![
                Secondary::new(
                    a.boxed(),
                    BufferConfig::new(8).max_gap(TimeDelta::from_millis(30)),
                ),
                Secondary::new(empty.boxed(), BufferConfig::new(8)),
            ],
            clock,
            PivotConfig::new(TimeDelta::from_secs(1)),
        );
        let all: Vec<_> = (&mut out).collect().await;
        // Nothing waited: both streams had ended.
        assert_eq!(clock.now(), Timestamp::EPOCH);
        assert_eq!(all.len(), 4);
        assert!(matches!(
            all[0].values[0],
            Err(AtPivotError::Lookup(LookupError::NotFinite { .. }))
        ));
        assert!(matches!(
            all[1].values[0],
            Err(AtPivotError::Lookup(LookupError::GapTooLarge { .. }))
        ));
        assert_eq!(all[2].values[0], Ok(2.0));
        assert!(matches!(all[3].values[0], Err(AtPivotError::Ended { .. })));
        assert!(
            all.iter()
                .all(|p| matches!(p.values[1], Err(AtPivotError::Ended { .. })))
        );
        let s = out.status();
        assert_eq!(s.missing.ended, 5);
        assert_eq!((s.missing.not_finite, s.missing.gap_too_large), (1, 1));
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["partial"], 4);
    }
}
