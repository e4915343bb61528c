//! End-to-end speed of the async aligner: 4 input streams of different
//! types → `FanOut` → 4 typed bounded channels → 4 consumer tasks; the same
//! through a `Router` into 4 consumers (one input each; read one sample at a
//! time with `next()`, and in batches with `recv_many`) and into 1 consumer
//! (all four inputs in one order), on a 2-worker multi-thread tokio runtime.
//!
//! `cargo bench --bench aligner_async`
//!
//! Divan's `AllocProfiler` counts the allocations of each iteration (the
//! pipeline's build and its 400,000 samples): a per-sample allocation would
//! show as hundreds of thousands.
#![allow(missing_docs)]

use divan::counter::ItemsCount;
use divan::{AllocProfiler, Bencher, black_box};
use futures::stream;
use syncline::aligner::{
    AlignerConfig, Consumer, FanOutBuilder, QueuePolicy, RouterBuilder, StreamConfig,
};
use syncline::{Stamped, TimeDelta, Timestamp};
use tokio::sync::mpsc;

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

/// Four different sample types.
type Imu = [f32; 6];
type Frame = u64;
type Odom = [f64; 3];
type Fix = (f64, f64);

const PERIOD_NS: i64 = 1_000_000;

/// `n` samples of one stream with phase `phase` (ns).
fn samples<T: Copy>(n: usize, phase: i64, v: T) -> Vec<Stamped<T>> {
    (0..n as i64)
        .map(|i| {
            Stamped::new(
                Timestamp::from_nanos(1_000_000_000 + phase + i * PERIOD_NS),
                v,
            )
        })
        .collect()
}

/// The four inputs' samples, one stream of each type, a quarter period apart.
type Inputs = (
    Vec<Stamped<Imu>>,
    Vec<Stamped<Frame>>,
    Vec<Stamped<Odom>>,
    Vec<Stamped<Fix>>,
);

/// A 2-worker multi-thread runtime and `per_stream` samples of each input.
fn setup(per_stream: usize) -> (tokio::runtime::Runtime, Inputs) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .expect("runtime");
    let inputs = (
        samples::<Imu>(per_stream, 0, [0.0; 6]),
        samples::<Frame>(per_stream, 250_000, 7),
        samples::<Odom>(per_stream, 500_000, [1.0; 3]),
        samples::<Fix>(per_stream, 750_000, (48.1, 11.6)),
    );
    (rt, inputs)
}

/// Every input's configuration: a lookahead of one period, capacity 64.
fn stream_config() -> StreamConfig {
    StreamConfig::new(TimeDelta::from_nanos(PERIOD_NS))
        .and_then(|c| c.capacity(64))
        .expect("valid stream configuration")
}

fn consume<T: Send + 'static>(
    rt: &tokio::runtime::Runtime,
    mut rx: mpsc::Receiver<Stamped<T>>,
) -> tokio::task::JoinHandle<u64> {
    rt.spawn(async move {
        let mut n = 0u64;
        let mut last = Timestamp::MIN;
        let mut batch = Vec::with_capacity(256);
        while rx.recv_many(&mut batch, 256).await > 0 {
            n += take_in_order(&mut batch, &mut last);
        }
        n
    })
}

#[divan::bench(args = [100_000])]
fn fan_out_4_streams_multi_thread(bencher: Bencher, per_stream: usize) {
    let (rt, inputs) = setup(per_stream);
    bencher
        .counter(ItemsCount::new(4 * per_stream))
        .with_inputs(|| inputs.clone())
        .bench_local_values(|(imu, cam, odom, gps)| {
            let cfg = stream_config();
            let mut b = FanOutBuilder::new(AlignerConfig {
                timeout: TimeDelta::from_millis(100),
            });
            let rx = (
                b.channel("imu", stream::iter(imu), cfg, 1024),
                b.channel("cam", stream::iter(cam), cfg, 1024),
                b.channel("odom", stream::iter(odom), cfg, 1024),
                b.channel("gps", stream::iter(gps), cfg, 1024),
            );
            let consumers = [
                consume(&rt, rx.0),
                consume(&rt, rx.1),
                consume(&rt, rx.2),
                consume(&rt, rx.3),
            ];
            let driver = rt.spawn(b.build());
            rt.block_on(async move {
                let status = driver.await.expect("driver").expect("consumers");
                let mut total = 0;
                for c in consumers {
                    total += c.await.expect("consumer");
                }
                assert_eq!(total as usize, 4 * per_stream);
                assert!(
                    status
                        .aligner
                        .streams
                        .iter()
                        .all(|s| s.counters.dropped_overflow == 0)
                );
                total
            })
        });
}

/// Drains a router consumer, checking the order.
fn drain<T: Send + 'static>(
    rt: &tokio::runtime::Runtime,
    mut c: Consumer<Stamped<T>>,
) -> tokio::task::JoinHandle<u64> {
    rt.spawn(async move {
        use futures::StreamExt;
        let mut n = 0u64;
        let mut last = Timestamp::MIN;
        while let Some(s) = c.next().await {
            assert!(s.stamp >= last, "in order");
            last = s.stamp;
            black_box(&s.value);
            n += 1;
        }
        n
    })
}

/// Empties a batch a consumer received, checking that its stamps keep
/// the order of those before it; returns how many it held.
fn take_in_order<T>(batch: &mut Vec<Stamped<T>>, last: &mut Timestamp) -> u64 {
    let n = batch.len() as u64;
    for s in batch.drain(..) {
        assert!(s.stamp >= *last, "in order");
        *last = s.stamp;
        black_box(&s.value);
    }
    n
}

/// Drains a router consumer in batches (`recv_many`, as the fan-out's
/// consumers drain their channels), checking the order.
fn drain_many<T: Send + 'static>(
    rt: &tokio::runtime::Runtime,
    mut c: Consumer<Stamped<T>>,
) -> tokio::task::JoinHandle<u64> {
    rt.spawn(async move {
        let mut n = 0u64;
        let mut last = Timestamp::MIN;
        let mut batch = Vec::with_capacity(256);
        while c.recv_many(&mut batch, 256).await > 0 {
            n += take_in_order(&mut batch, &mut last);
        }
        n
    })
}

/// The same 4 inputs through a `Router` into 4 consumers (one input each,
/// lossless backpressure queues of 1,024), read one sample at a time.
#[divan::bench(args = [100_000])]
fn router_4_streams_4_consumers_multi_thread(bencher: Bencher, per_stream: usize) {
    router_4_streams_4_consumers(bencher, per_stream, false);
}

/// The same, read in batches of up to 256 (`recv_many`).
#[divan::bench(args = [100_000])]
fn router_4_streams_4_consumers_recv_many_multi_thread(bencher: Bencher, per_stream: usize) {
    router_4_streams_4_consumers(bencher, per_stream, true);
}

fn router_4_streams_4_consumers(bencher: Bencher, per_stream: usize, batches: bool) {
    let (rt, inputs) = setup(per_stream);
    bencher
        .counter(ItemsCount::new(4 * per_stream))
        .with_inputs(|| inputs.clone())
        .bench_local_values(|(imu, cam, odom, gps)| {
            let cfg = stream_config();
            let policy = QueuePolicy::backpressure(1024, TimeDelta::from_secs(1));
            let mut r = RouterBuilder::new(AlignerConfig {
                timeout: TimeDelta::from_millis(100),
            });
            let ids = (
                r.input("imu", stream::iter(imu), cfg),
                r.input("cam", stream::iter(cam), cfg),
                r.input("odom", stream::iter(odom), cfg),
                r.input("gps", stream::iter(gps), cfg),
            );
            let consumers = if batches {
                [
                    drain_many(&rt, r.consumer("a", policy).route(ids.0, |s| s).build()),
                    drain_many(&rt, r.consumer("b", policy).route(ids.1, |s| s).build()),
                    drain_many(&rt, r.consumer("c", policy).route(ids.2, |s| s).build()),
                    drain_many(&rt, r.consumer("d", policy).route(ids.3, |s| s).build()),
                ]
            } else {
                [
                    drain(&rt, r.consumer("a", policy).route(ids.0, |s| s).build()),
                    drain(&rt, r.consumer("b", policy).route(ids.1, |s| s).build()),
                    drain(&rt, r.consumer("c", policy).route(ids.2, |s| s).build()),
                    drain(&rt, r.consumer("d", policy).route(ids.3, |s| s).build()),
                ]
            };
            let driver = rt.spawn(r.build());
            rt.block_on(async move {
                let status = driver.await.expect("driver");
                let mut total = 0;
                for c in consumers {
                    total += c.await.expect("consumer");
                }
                assert_eq!(total as usize, 4 * per_stream);
                assert!(status.consumers.iter().all(|c| c.dropped() == 0));
                total
            })
        });
}

/// What the one consumer of all four inputs receives.
enum Any4 {
    Imu(Stamped<Imu>),
    Frame(Stamped<Frame>),
    Odom(Stamped<Odom>),
    Fix(Stamped<Fix>),
}

impl Any4 {
    fn stamp(&self) -> Timestamp {
        match self {
            Any4::Imu(s) => s.stamp,
            Any4::Frame(s) => s.stamp,
            Any4::Odom(s) => s.stamp,
            Any4::Fix(s) => s.stamp,
        }
    }
}

/// The same 4 inputs through a `Router` into one consumer of all four (an
/// enum, in one global order; a lossless backpressure queue of 1,024).
#[divan::bench(args = [100_000])]
fn router_4_streams_1_consumer_multi_thread(bencher: Bencher, per_stream: usize) {
    let (rt, inputs) = setup(per_stream);
    bencher
        .counter(ItemsCount::new(4 * per_stream))
        .with_inputs(|| inputs.clone())
        .bench_local_values(|(imu, cam, odom, gps)| {
            let cfg = stream_config();
            let policy = QueuePolicy::backpressure(1024, TimeDelta::from_secs(1));
            let mut r = RouterBuilder::new(AlignerConfig {
                timeout: TimeDelta::from_millis(100),
            });
            let ids = (
                r.input("imu", stream::iter(imu), cfg),
                r.input("cam", stream::iter(cam), cfg),
                r.input("odom", stream::iter(odom), cfg),
                r.input("gps", stream::iter(gps), cfg),
            );
            let mut all = r
                .consumer("all", policy)
                .route(ids.0, Any4::Imu)
                .route(ids.1, Any4::Frame)
                .route(ids.2, Any4::Odom)
                .route(ids.3, Any4::Fix)
                .build();
            let consumer = rt.spawn(async move {
                use futures::StreamExt;
                let mut n = 0u64;
                let mut last = Timestamp::MIN;
                while let Some(item) = all.next().await {
                    assert!(item.stamp() >= last, "in order");
                    last = item.stamp();
                    black_box(&item);
                    n += 1;
                }
                n
            });
            let driver = rt.spawn(r.build());
            rt.block_on(async move {
                let status = driver.await.expect("driver");
                let total = consumer.await.expect("consumer");
                assert_eq!(total as usize, 4 * per_stream);
                assert!(status.consumers.iter().all(|c| c.dropped() == 0));
                total
            })
        });
}
