//! The tuple and `Vec` forms of the aligner: `(imu, lidar,
//! camera).aligned(config, (imu_cfg, lidar_cfg, camera_cfg))` yields a
//! library enum over the inputs' types, [`OneOf1`] ... [`OneOf8`], one
//! variant per input (`A` for the first, `B` for the second, ...);
//! `vec![cam0, cam1, cam2].aligned(config, cfg)` yields [`OneOfN`], the
//! sample with its input's position. Both are shorthands for an
//! [`AlignerBuilder`] with one [`stream`](AlignerBuilder::stream) per input,
//! named `"0"`, `"1"`, ... in input order. The methods are those of
//! [`SynclineExt`](crate::SynclineExt); the free functions [`aligned`] and
//! [`aligned_live`] are the same calls.

use futures::Stream;
use syncline_core::{HasStamp, Stamped, Timestamp};

use super::{Aligned, AlignerBuilder, AlignerConfig, AlignerItem, StreamConfig};
use crate::clock::Clock;

/// The inputs of the aligner's adapters: a tuple of 1 to 8 streams of
/// [`Stamped<T>`] or [`Arrived<Stamped<T>>`](crate::source::Arrived)
/// ([`AlignerItem`]; each with its own `T`), aligned into one stream of
/// [`OneOf1`] ... [`OneOf8`], or a `Vec` of streams of one type, aligned
/// into [`OneOfN`]. The number of inputs is theirs: there is one
/// [`StreamConfig`] per tuple element, and one for every stream of a `Vec`.
pub trait AlignInputs: Sized {
    /// What the aligned stream yields, e.g. `OneOf3<A, B, C>`.
    type Item: Send + 'static;
    /// The inputs' [`StreamConfig`]s: a tuple of the same length, or one
    /// for every stream of a `Vec`.
    type Configs;

    /// Registers every input with `builder` (named `"0"`, `"1"`, ...).
    fn register(self, builder: &mut AlignerBuilder<Self::Item>, configs: Self::Configs);
}

/// Aligns `inputs` in replay mode (the sample-time rule only; see
/// [`aligned_live`] for live pipelines). The same as
/// [`SynclineExt::aligned`](crate::SynclineExt::aligned); it cannot fail:
/// every [`StreamConfig`] was checked when it was built.
pub fn aligned<I: AlignInputs>(
    inputs: I,
    config: AlignerConfig,
    streams: I::Configs,
) -> Aligned<I::Item> {
    build(inputs, AlignerBuilder::new(config), streams)
}

/// Aligns `inputs` in live mode: arrivals are read from `clock` (or carried
/// by the items, [`crate::source::Arrived`]), and no sample waits longer
/// than the timeout after its arrival. The same as
/// [`SynclineExt::aligned_live`](crate::SynclineExt::aligned_live).
pub fn aligned_live<I: AlignInputs>(
    inputs: I,
    config: AlignerConfig,
    streams: I::Configs,
    clock: impl Clock,
) -> Aligned<I::Item> {
    build(inputs, AlignerBuilder::new(config).live(clock), streams)
}

fn build<I: AlignInputs>(
    inputs: I,
    mut builder: AlignerBuilder<I::Item>,
    streams: I::Configs,
) -> Aligned<I::Item> {
    inputs.register(&mut builder, streams);
    builder.aligned()
}

/// Registers one input of an adapter.
fn register_one<E, T, S, F>(
    builder: &mut AlignerBuilder<E>,
    name: &str,
    input: S,
    config: StreamConfig,
    wrap: F,
) where
    E: Send + 'static,
    T: Send + 'static,
    S: Stream + Send + 'static,
    S::Item: AlignerItem<Value = T>,
    F: Fn(Stamped<T>) -> E + Send + 'static,
{
    builder.stream(name, input, config, wrap);
}

/// One sample of a `Vec` of aligned inputs: the sample and the position of
/// its input in the `Vec`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneOfN<T> {
    /// The input it came from: its 0-based position in the `Vec`.
    pub input: usize,
    /// The sample.
    pub sample: Stamped<T>,
}

impl<T> OneOfN<T> {
    /// The sample's stamp.
    pub fn stamp(&self) -> Timestamp {
        self.sample.stamp
    }

    /// The input it came from: its 0-based position in the `Vec`.
    pub fn input(&self) -> usize {
        self.input
    }
}

impl<T> HasStamp for OneOfN<T> {
    fn stamp(&self) -> Timestamp {
        self.sample.stamp
    }
}

impl<S, T> AlignInputs for Vec<S>
where
    S: Stream + Send + 'static,
    S::Item: AlignerItem<Value = T>,
    T: Send + 'static,
{
    type Item = OneOfN<T>;
    type Configs = StreamConfig;

    fn register(self, builder: &mut AlignerBuilder<Self::Item>, config: StreamConfig) {
        for (input, stream) in self.into_iter().enumerate() {
            let wrap = move |sample| OneOfN { input, sample };
            register_one(builder, &input.to_string(), stream, config, wrap);
        }
    }
}

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
            $($S: Stream + Send + 'static, $S::Item: AlignerItem<Value = $V>, $V: Send + 'static,)+
        {
            type Item = $name<$($V),+>;
            type Configs = ($(config_of!($V),)+);

            fn register(self, builder: &mut AlignerBuilder<Self::Item>, configs: Self::Configs) {
                $(register_one(builder, stringify!($i), self.$i, configs.$i, $name::$V);)+
            }
        }
    };
}

one_of!(
    /// The sample of a 1-tuple of aligned inputs.
    OneOf1; (0, A, S0)
);
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
    use crate::SynclineExt;
    use crate::clock::TokioClock;

    fn ms(v: i64) -> Timestamp {
        Timestamp::from_nanos(v * 1_000_000)
    }

    fn cfg(p_ms: i64) -> StreamConfig {
        StreamConfig::new(TimeDelta::from_millis(p_ms))
            .and_then(|c| c.capacity(16))
            .unwrap()
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
            .collect()
            .await;
        let stamps: Vec<_> = out.iter().map(OneOf8::stamp).collect();
        assert_eq!(stamps, (0..40).map(ms).collect::<Vec<_>>());
        let inputs: Vec<_> = out.iter().map(OneOf8::input).collect();
        assert_eq!(inputs, (0..40).map(|k| k % 8).collect::<Vec<_>>());
        assert!(matches!(out[7], OneOf8::H(Stamped { value: 0, .. })));
    }

    #[tokio::test(start_paused = true)]
    async fn a_vec_and_a_single_input_are_aligned_too() {
        // Input k of the `Vec` delivers stamps k, k + 3, k + 6 (ms).
        let s = |k: i64| futures::stream::iter((0..3).map(move |j| Stamped::new(ms(3 * j + k), k)));
        let out: Vec<OneOfN<i64>> = vec![s(2), s(0), s(1)]
            .aligned(timeout(1000), cfg(1))
            .collect()
            .await;
        let stamps: Vec<_> = out.iter().map(OneOfN::stamp).collect();
        assert_eq!(stamps, (0..9).map(ms).collect::<Vec<_>>());
        // Each sample names its position in the `Vec`.
        assert!(
            out.iter()
                .all(|o| o.input == [1, 2, 0][o.sample.value as usize])
        );

        let one: Vec<_> = (s(0),).aligned(timeout(10), (cfg(3),)).collect().await;
        assert_eq!(one.len(), 3);
        assert!(matches!(one[2], OneOf1::A(Stamped { value: 0, .. })));

        let none: Vec<futures::stream::Iter<std::vec::IntoIter<Stamped<u8>>>> = Vec::new();
        assert_eq!(none.aligned(timeout(10), cfg(1)).count().await, 0);
    }

    #[tokio::test(start_paused = true)]
    async fn live_bound_status_and_control() {
        let clock = TokioClock::starting_at(ms(1_000));
        let (a_tx, a) = input::<u32>();
        let (b_tx, b) = input::<String>(); // silent until the end
        let mut out = (a, b).aligned_live(timeout(100), (cfg(10), cfg(10)), clock);
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
