//! The one extension trait, [`SynclineExt`].

use futures::Stream;
use syncline_core::HasStamp;
use syncline_core::estimator::Estimator;

#[cfg(doc)]
use crate::aligner::StreamConfig;
use crate::aligner::{AlignInputs, Aligned, AlignerConfig};
use crate::clock::{Clock, SystemClock};
use crate::interpolated::{Interpolated, PivotConfig, SecondarySet};
use crate::source::Arrived;
use crate::sync::{
    ApproximateSettings, ApproximateTime, CloneInputs, ExactSettings, ExactTime, LatestSettings,
    LatestTime, SyncInputs, Synchronized,
};
use crate::timestamped::{ItemArrival, NoIndex, NoReferences, Timestamped};

/// Every syncline adapter as a method of its input, in tokio-stream's
/// manner: one trait, in the [prelude](crate::prelude).
///
///
/// The trait is implemented for every type; each method says what it needs
/// of its receiver:
///
/// | method | receiver | yields |
/// |---|---|---|
/// | [`timestamped`](SynclineExt::timestamped) | a `Stream` | [`Stamped`](crate::Stamped) items, arrival read from a clock |
/// | [`timestamped_arrived`](SynclineExt::timestamped_arrived) | a `Stream` of [`Arrived`] items | [`Stamped`](crate::Stamped) items, arrival carried by the item |
/// | [`aligned`](SynclineExt::aligned), [`aligned_live`](SynclineExt::aligned_live) | a tuple of 1 to 8 streams, or a `Vec` ([`AlignInputs`]) | one global timestamp order |
/// | [`approximate_time`](SynclineExt::approximate_time), [`exact_time`](SynclineExt::exact_time), [`latest_time`](SynclineExt::latest_time) | a tuple of 2 to 12 streams, or a `Vec` ([`SyncInputs`]) | sets |
/// | [`interpolated`](SynclineExt::interpolated) | a `Stream` of pivots ([`HasStamp`]) | secondaries' values at each pivot |
///
/// None of them can fail: their configurations are checked when they are
/// built ([`Estimator::new`], [`StreamConfig::new`],
/// [`ApproximateConfig::check`](crate::sync::ApproximateConfig::check), ...),
/// and the number of inputs is the tuple's or the `Vec`'s.
///
/// ```
/// use futures::{stream, StreamExt};
/// use syncline::prelude::*;
/// use syncline::aligner::{AlignerConfig, OneOf2, StreamConfig};
/// use syncline::sync::ApproximateConfig;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let ms = |v: i64| Timestamp::from_nanos(v * 1_000_000);
/// let imu = || stream::iter((0..10).map(move |k| Stamped::new(ms(10 * k), k)));
/// let cam = || stream::iter((0..3).map(move |k| Stamped::new(ms(33 * k + 1), "frame")));
///
/// // One global order.
/// let timeout = AlignerConfig { timeout: TimeDelta::from_millis(100) };
/// let lookahead = |v| StreamConfig::lookahead(TimeDelta::from_millis(v));
/// let ordered: Vec<_> = (imu(), cam())
///     .aligned(timeout, (lookahead(10)?, lookahead(33)?))
///     .collect()
///     .await;
/// assert!(ordered.windows(2).all(|w| w[0].stamp() <= w[1].stamp()));
/// assert!(matches!(ordered[1], OneOf2::B(_)));
///
/// // Sets, with settings checked once, where they are built.
/// let settings = ApproximateConfig::default().queue_size(4).check()?;
/// let sets: Vec<_> = (cam(), imu()).approximate_time(settings).collect().await;
/// assert!(!sets.is_empty());
/// # Ok(())
/// # }
/// ```
pub trait SynclineExt: Sized {
    /// Stamps every item with its estimated acquisition time, the arrival
    /// being the clock's reading when the item is polled (system clock by
    /// default; see [`Timestamped::with_clock`], [`Timestamped::with_index`],
    /// [`Timestamped::with_references`]). For a live robot prefer a
    /// [`crate::source`], stamped at hand-over.
    fn timestamped(self, estimator: Estimator) -> Timestamped<Self>
    where
        Self: Stream,
    {
        Timestamped::new(self, estimator)
    }

    /// Stamps every [`Arrived`] item with its estimated acquisition time,
    /// from the arrival the item carries (taken at hand-over, see
    /// [`crate::source`], or by the kernel).
    fn timestamped_arrived<T>(
        self,
        estimator: Estimator,
    ) -> Timestamped<Self, SystemClock, NoIndex, NoReferences, ItemArrival>
    where
        Self: Stream<Item = Arrived<T>>,
    {
        Timestamped::new(self, estimator).with_item_arrival()
    }

    /// Replays a tuple of 1 to 8 inputs, or a `Vec` of inputs, in one global
    /// timestamp order (replay mode: the sample-time rule only), with one
    /// [`StreamConfig`] per tuple element or one for every stream of the
    /// `Vec` ([`crate::aligner::aligned`]).
    fn aligned(
        self,
        config: AlignerConfig,
        streams: <Self as AlignInputs>::Configs,
    ) -> Aligned<<Self as AlignInputs>::Item>
    where
        Self: AlignInputs,
    {
        crate::aligner::aligned(self, config, streams)
    }

    /// [`aligned`](Self::aligned) in live mode with `clock`: no sample
    /// waits longer than the timeout after its arrival
    /// ([`crate::aligner::aligned_live`]).
    fn aligned_live(
        self,
        config: AlignerConfig,
        streams: <Self as AlignInputs>::Configs,
        clock: impl Clock,
    ) -> Aligned<<Self as AlignInputs>::Item>
    where
        Self: AlignInputs,
    {
        crate::aligner::aligned_live(self, config, streams, clock)
    }

    /// ApproximateTime (the ROS algorithm) over a tuple of 2 to 12 streams
    /// or a `Vec` of streams ([`crate::sync::approximate_time`]).
    fn approximate_time(
        self,
        settings: ApproximateSettings,
    ) -> Synchronized<Self, ApproximateTime<u64>>
    where
        Self: SyncInputs,
    {
        crate::sync::approximate_time(self, settings)
    }

    /// ExactTime over a tuple of 2 to 12 streams or a `Vec` of streams
    /// ([`crate::sync::exact_time`]).
    fn exact_time(self, settings: ExactSettings) -> Synchronized<Self, ExactTime<u64>>
    where
        Self: SyncInputs,
    {
        crate::sync::exact_time(self, settings)
    }

    /// LatestTime with `clock` as the receipt clock, over a tuple or a `Vec`
    /// of streams of `Clone` items ([`crate::sync::latest_time`]).
    fn latest_time(
        self,
        settings: LatestSettings,
        clock: impl Clock,
    ) -> Synchronized<Self, LatestTime<u64>>
    where
        Self: CloneInputs,
    {
        crate::sync::latest_time(self, settings, clock)
    }

    /// For each item of this pivot stream, the values of `secondaries`
    /// interpolated at its stamp ([`crate::interpolated::interpolated`]).
    fn interpolated<S: SecondarySet, C: Clock>(
        self,
        secondaries: S,
        clock: C,
        config: PivotConfig,
    ) -> Interpolated<Self, S, C>
    where
        Self: Stream,
        Self::Item: HasStamp,
    {
        crate::interpolated::interpolated(self, secondaries, clock, config)
    }
}

impl<T> SynclineExt for T {}
