//! The tuple form of the aligner: `(imu, lidar, camera).aligned(config,
//! (imu_cfg, lidar_cfg, camera_cfg))` yields a library enum over the inputs'
//! types, [`OneOf2`] ... [`OneOf8`], one variant per input (`A` for the
//! first, `B` for the second, ...). It is a shorthand for an
//! [`AlignerBuilder`] with one [`stream`](AlignerBuilder::stream) per input,
//! named `"0"`, `"1"`, ... in tuple order.

use futures::Stream;
use syncline_core::{HasStamp, Stamped, Timestamp};

use super::{Aligned, AlignerBuilder, AlignerConfig, AlignerError, StreamConfig};
use crate::clock::Clock;

/// A tuple of 2 to 8 input streams of [`Stamped<T>`] (each with its own
/// `T`) that can be aligned into one stream of [`OneOf2`] ... [`OneOf8`].
pub trait AlignInputs: Sized {
    /// The enum over the inputs' types, e.g. `OneOf3<A, B, C>`.
    type Item: Send + 'static;
    /// One [`StreamConfig`] per input, as a tuple of the same length.
    type Configs;

    /// Registers every input with `builder` (named `"0"`, `"1"`, ...).
    ///
    /// # Errors
    /// The core's configuration errors (capacity 0, negative period).
    fn register(
        self,
        builder: &mut AlignerBuilder<Self::Item>,
        configs: Self::Configs,
    ) -> Result<(), AlignerError>;
}

/// Aligns a tuple of input streams in replay mode (the sample-time rule
/// only; see [`aligned_live`] for live pipelines). Same as
/// [`AlignedExt::aligned`].
///
/// # Errors
/// The core's configuration errors (capacity 0, negative period).
pub fn aligned<I: AlignInputs>(
    inputs: I,
    config: AlignerConfig,
    streams: I::Configs,
) -> Result<Aligned<I::Item>, AlignerError> {
    build(inputs, AlignerBuilder::new(config), streams)
}

/// Aligns a tuple of input streams in live mode: arrivals are read from
/// `clock`, and no sample waits longer than the timeout after its arrival.
/// Same as [`AlignedExt::aligned_live`].
///
/// # Errors
/// The core's configuration errors (capacity 0, negative period).
pub fn aligned_live<I: AlignInputs>(
    inputs: I,
    config: AlignerConfig,
    streams: I::Configs,
    clock: impl Clock,
) -> Result<Aligned<I::Item>, AlignerError> {
    build(inputs, AlignerBuilder::new(config).live(clock), streams)
}

fn build<I: AlignInputs>(
    inputs: I,
    mut builder: AlignerBuilder<I::Item>,
    streams: I::Configs,
) -> Result<Aligned<I::Item>, AlignerError> {
    inputs.register(&mut builder, streams)?;
    Ok(builder.aligned())
}

/// `.aligned(...)` on a tuple of 2 to 8 streams of [`Stamped<T>`].
///
/// The result is an [`Aligned`] stream: its items come in global timestamp
/// order, its [`status`](Aligned::status) / [`status_watch`](Aligned::status_watch)
/// give the counters and its [`control`](Aligned::control) changes it at
/// run time; [`stream_ids`](Aligned::stream_ids) are the inputs' handles in
/// tuple order.
///
/// ```
/// use futures::{stream, StreamExt};
/// use syncline::aligner::{AlignedExt, AlignerConfig, OneOf3, StreamConfig};
/// use syncline::{Stamped, TimeDelta, Timestamp};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> Result<(), syncline::aligner::AlignerError> {
/// let t = |ms: i64| Timestamp::from_nanos(ms * 1_000_000);
/// let ms = TimeDelta::from_millis;
/// let imu = stream::iter((0..4).map(move |k| Stamped::new(t(10 * k), k as u32)));
/// let lidar = stream::iter([Stamped::new(t(15), "scan")]);
/// let camera = stream::iter([Stamped::new(t(5), 0.5_f64), Stamped::new(t(25), 1.5)]);
///
/// let mut aligned = (imu, lidar, camera).aligned(
///     AlignerConfig { timeout: ms(100) },
///     (StreamConfig::new(ms(10)), StreamConfig::new(ms(100)), StreamConfig::new(ms(20))),
/// )?;
/// let mut order = Vec::new();
/// while let Some(sample) = aligned.next().await {
///     match &sample {
///         OneOf3::A(imu) => assert!(imu.value < 4),
///         OneOf3::B(scan) => assert_eq!(scan.value, "scan"),
///         OneOf3::C(frame) => assert!(frame.value > 0.0),
///     }
///     order.push((sample.input(), sample.stamp()));
/// }
/// assert_eq!(order, [
///     (0, t(0)), (2, t(5)), (0, t(10)), (1, t(15)), (0, t(20)), (2, t(25)), (0, t(30)),
/// ]);
/// assert!(aligned.status().finished);
/// assert_eq!(aligned.status().aligner.streams[0].counters.released, 4);
/// # Ok(())
/// # }
/// ```
pub trait AlignedExt: AlignInputs {
    /// Replay mode: see [`aligned`].
    ///
    /// # Errors
    /// The core's configuration errors (capacity 0, negative period).
    fn aligned(
        self,
        config: AlignerConfig,
        streams: Self::Configs,
    ) -> Result<Aligned<Self::Item>, AlignerError> {
        aligned(self, config, streams)
    }

    /// Live mode with `clock`: see [`aligned_live`].
    ///
    /// # Errors
    /// The core's configuration errors (capacity 0, negative period).
    fn aligned_live(
        self,
        config: AlignerConfig,
        streams: Self::Configs,
        clock: impl Clock,
    ) -> Result<Aligned<Self::Item>, AlignerError> {
        aligned_live(self, config, streams, clock)
    }
}

impl<I: AlignInputs> AlignedExt for I {}

/// Expands to `StreamConfig` whatever it is given (one per input).
macro_rules! config_of {
    ($x:ident) => {
        StreamConfig
    };
}

macro_rules! one_of {
    ($(#[$doc:meta])* $name:ident; $(($i:tt, $V:ident, $S:ident)),+) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum $name<$($V),+> {
            $(
                #[doc = concat!("A sample of input ", stringify!($i), " (0-based tuple position).")]
                $V(Stamped<$V>),
            )+
        }

        impl<$($V),+> $name<$($V),+> {
            /// The sample's stamp.
            pub fn stamp(&self) -> Timestamp {
                match self {
                    $($name::$V(s) => s.stamp,)+
                }
            }

            /// The input it came from: its 0-based position in the tuple.
            pub fn input(&self) -> usize {
                match self {
                    $($name::$V(_) => $i,)+
                }
            }
        }

        impl<$($V),+> HasStamp for $name<$($V),+> {
            fn stamp(&self) -> Timestamp {
                $name::stamp(self)
            }
        }

        impl<$($S, $V),+> AlignInputs for ($($S,)+)
        where
            $($S: Stream<Item = Stamped<$V>> + Send + 'static, $V: Send + 'static,)+
        {
            type Item = $name<$($V),+>;
            type Configs = ($(config_of!($V),)+);

            fn register(
                self,
                builder: &mut AlignerBuilder<Self::Item>,
                configs: Self::Configs,
            ) -> Result<(), AlignerError> {
                $(builder.stream(stringify!($i), self.$i, configs.$i, $name::$V)?;)+
                Ok(())
            }
        }
    };
}

one_of!(
    /// One sample of a 2-tuple of aligned inputs.
    OneOf2; (0, A, S0), (1, B, S1)
);
one_of!(
    /// One sample of a 3-tuple of aligned inputs.
    OneOf3; (0, A, S0), (1, B, S1), (2, C, S2)
);
one_of!(
    /// One sample of a 4-tuple of aligned inputs.
    OneOf4; (0, A, S0), (1, B, S1), (2, C, S2), (3, D, S3)
);
one_of!(
    /// One sample of a 5-tuple of aligned inputs.
    OneOf5; (0, A, S0), (1, B, S1), (2, C, S2), (3, D, S3), (4, E, S4)
);
one_of!(
    /// One sample of a 6-tuple of aligned inputs.
    OneOf6; (0, A, S0), (1, B, S1), (2, C, S2), (3, D, S3), (4, E, S4), (5, F, S5)
);
one_of!(
    /// One sample of a 7-tuple of aligned inputs.
    OneOf7; (0, A, S0), (1, B, S1), (2, C, S2), (3, D, S3), (4, E, S4), (5, F, S5), (6, G, S6)
);
one_of!(
    /// One sample of an 8-tuple of aligned inputs.
    OneOf8; (0, A, S0), (1, B, S1), (2, C, S2), (3, D, S3), (4, E, S4), (5, F, S5), (6, G, S6),
    (7, H, S7)
);

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use futures::StreamExt;
    use syncline_core::TimeDelta;
    use tokio::sync::mpsc;
    use tokio_stream::wrappers::ReceiverStream;

    use super::*;
    use crate::clock::TokioClock;

    fn ms(v: i64) -> Timestamp {
        Timestamp::from_nanos(v * 1_000_000)
    }

    fn cfg(p_ms: i64) -> StreamConfig {
        StreamConfig::new(TimeDelta::from_millis(p_ms)).capacity(16)
    }

    fn timeout(t_ms: i64) -> AlignerConfig {
        AlignerConfig {
            timeout: TimeDelta::from_millis(t_ms),
        }
    }

    fn input<T: Send + 'static>() -> (mpsc::Sender<Stamped<T>>, ReceiverStream<Stamped<T>>) {
        let (tx, rx) = mpsc::channel(64);
        (tx, ReceiverStream::new(rx))
    }

    #[tokio::test(start_paused = true)]
    async fn replay_of_eight_inputs_is_in_global_order() {
        // Input k delivers stamps k, k + 8, k + 16, ... (ms): the global
        // order interleaves them 0, 1, 2, ... whatever the polling order.
        let s = |k: i64| futures::stream::iter((0..5).map(move |j| Stamped::new(ms(8 * j + k), j)));
        let c = cfg(8);
        let out: Vec<_> = (s(0), s(1), s(2), s(3), s(4), s(5), s(6), s(7))
            .aligned(timeout(1000), (c, c, c, c, c, c, c, c))
            .unwrap()
            .collect()
            .await;
        let stamps: Vec<_> = out.iter().map(OneOf8::stamp).collect();
        assert_eq!(stamps, (0..40).map(ms).collect::<Vec<_>>());
        let inputs: Vec<_> = out.iter().map(OneOf8::input).collect();
        assert_eq!(inputs, (0..40).map(|k| k % 8).collect::<Vec<_>>());
        assert!(matches!(out[7], OneOf8::H(Stamped { value: 0, .. })));
    }

    #[tokio::test(start_paused = true)]
    async fn bad_config_is_an_error() {
        let a = futures::stream::iter([Stamped::new(ms(0), 1u8)]);
        let b = futures::stream::iter([Stamped::new(ms(0), 'b')]);
        let r = aligned((a, b), timeout(10), (cfg(1), cfg(1).capacity(0)));
        assert_eq!(r.err(), Some(AlignerError::ZeroCapacity));
    }

    #[tokio::test(start_paused = true)]
    async fn live_bound_status_and_control() {
        let clock = TokioClock::starting_at(ms(1_000));
        let (a_tx, a) = input::<u32>();
        let (b_tx, b) = input::<String>(); // silent until the end
        let mut out = (a, b)
            .aligned_live(timeout(100), (cfg(10), cfg(10)), clock)
            .unwrap();
        let ids = out.stream_ids().to_vec();
        assert_eq!(ids.len(), 2);
        assert_eq!(out.stream_id("1"), Some(ids[1]));

        // `b` never delivers: `a`'s sample waits for it until 100 ms after
        // its arrival (wall clock), not a moment longer.
        a_tx.send(Stamped::new(ms(1_000), 7)).await.unwrap();
        let first = tokio::time::timeout(Duration::from_millis(99), out.next()).await;
        assert!(first.is_err(), "released before the timeout");
        let first = tokio::time::timeout(Duration::from_millis(2), out.next()).await;
        assert_eq!(first.unwrap(), Some(OneOf2::A(Stamped::new(ms(1_000), 7))));
        assert_eq!(out.status().aligner.streams[0].counters.released, 1);

        // Disabling `b` through the control handle: `a` no longer waits.
        out.control().disable(ids[1]).unwrap();
        a_tx.send(Stamped::new(ms(1_010), 8)).await.unwrap();
        let next = tokio::time::timeout(Duration::from_millis(1), out.next()).await;
        assert_eq!(next.unwrap(), Some(OneOf2::A(Stamped::new(ms(1_010), 8))));

        // A late `b` sample is dropped (counted), a fresh one is released.
        b_tx.send(Stamped::new(ms(1_005), "late".into()))
            .await
            .unwrap();
        b_tx.send(Stamped::new(ms(1_020), "b".into()))
            .await
            .unwrap();
        drop((a_tx, b_tx));
        let rest: Vec<_> = out.by_ref().collect().await;
        assert_eq!(rest, [OneOf2::B(Stamped::new(ms(1_020), "b".to_string()))]);
        let st = out.status();
        assert!(st.finished);
        assert_eq!(st.aligner.streams[1].counters.dropped_late, 1);
        assert_eq!(st.aligner.streams[1].counters.received, 2);
    }
}
