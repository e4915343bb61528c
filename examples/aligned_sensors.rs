//! Three simulated sensors — an IMU at 100 Hz, a lidar at 10 Hz and a
//! camera at 25 Hz — each delivered late by its own processing / transport
//! delay (with jitter), aligned by syncline's live aligner and fanned out
//! into three typed channels consumed by three tasks.
//!
//! Every consumer checks that it sees its samples in timestamp order; the
//! aligner sends them in *global* timestamp order (across all three
//! channels), holding each sample back only until no other sensor can still
//! deliver an earlier one, or for at most the timeout after its arrival.
//!
//! `cargo run --release --example aligned_sensors` (runs about 2 s).
#![allow(missing_docs)]

use std::time::Duration;

use futures::{Stream, StreamExt};
use syncline::aligner::{AlignerConfig, FanOutBuilder, StreamConfig};
use syncline::clock::{Clock, TokioClock};
use syncline::{Stamped, TimeDelta, Timestamp};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

#[derive(Debug, Clone, Copy)]
struct Imu {
    gyro_z: f32,
}
#[derive(Debug, Clone)]
struct Scan {
    ranges: Vec<f32>,
}
#[derive(Debug, Clone, Copy)]
struct Frame {
    number: u64,
}

/// What a simulated driver hands over: the value, and (known only because
/// this is a simulation) when it was acquired.
struct Raw<T> {
    acquired: Timestamp,
    value: T,
}

// ---------------------------------------------------------------------------
// STAMPING — the one place that turns a driver's output into `Stamped<T>`.
// Here the simulation's true acquisition time is used. Once the estimator
// adapter is merged, replace the body with the estimator, e.g.
// `raw.map(|r| r.value).timestamped(estimator_for(period))`, which estimates
// the acquisition time from the arrival times alone.
fn stamped<T: Send + 'static>(
    raw: impl Stream<Item = Raw<T>> + Send + 'static,
    _period: TimeDelta,
) -> impl Stream<Item = Stamped<T>> + Send + 'static {
    raw.map(|r| Stamped::new(r.acquired, r.value))
}
// ---------------------------------------------------------------------------

/// A driver: acquires every `period` from `start` for `duration`, and
/// delivers each sample `delay ± jitter` later.
fn driver<T: Send + 'static>(
    clock: TokioClock,
    start: Timestamp,
    period: TimeDelta,
    duration: TimeDelta,
    delay: TimeDelta,
    jitter: TimeDelta,
    make: impl Fn(u64) -> T + Send + 'static,
) -> impl Stream<Item = Raw<T>> + Send + 'static {
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut n: i64 = 0;
        let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ period.as_nanos() as u64;
        while let Some(offset) = period.checked_mul(n).ok().filter(|o| *o < duration) {
            let acquired = start.saturating_add(offset);
            // A cheap deterministic jitter in [-jitter, +jitter].
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let j = (rng % (2 * jitter.as_nanos().max(1) as u64)) as i64 - jitter.as_nanos();
            let arrival = acquired
                .saturating_add(delay)
                .saturating_add(TimeDelta::from_nanos(j));
            clock.sleep_until(arrival).await;
            if tx
                .send(Raw {
                    acquired,
                    value: make(n as u64),
                })
                .await
                .is_err()
            {
                break;
            }
            n += 1;
        }
    });
    ReceiverStream::new(rx)
}

/// A consumer task: receives one sensor's samples, checks their order,
/// simulates some processing, reports.
fn consumer<T: Send + 'static>(
    name: &'static str,
    clock: TokioClock,
    mut rx: mpsc::Receiver<Stamped<T>>,
    work: Duration,
    process: impl Fn(&T) -> f64 + Send + 'static,
) -> tokio::task::JoinHandle<(usize, bool, TimeDelta)> {
    tokio::spawn(async move {
        let (mut count, mut in_order, mut last) = (0, true, Timestamp::MIN);
        let mut max_age = TimeDelta::ZERO;
        let mut result = 0.0;
        while let Some(s) = rx.recv().await {
            in_order &= s.stamp >= last;
            last = s.stamp;
            count += 1;
            let age = clock.now().checked_since(s.stamp).unwrap_or(TimeDelta::MAX);
            max_age = max_age.max(age);
            result += process(&s.value);
            tokio::time::sleep(work).await;
        }
        println!(
            "{name:>6} consumer: {count:4} samples, in timestamp order: {}, max age at receipt {age}, result {result:.1}",
            if in_order { "yes" } else { "NO" },
            age = max_age,
        );
        (count, in_order, max_age)
    })
}

#[tokio::main]
async fn main() {
    let clock = TokioClock::new();
    let start = clock.now().saturating_add(TimeDelta::from_millis(20));
    let run = TimeDelta::from_secs(2);
    let ms = TimeDelta::from_millis;

    // Sensors: period, delay, jitter. Declared periods are a little below
    // the real ones (a lookahead must never promise too much).
    let imu = driver(clock, start, ms(10), run, ms(2), ms(1), |n| Imu {
        gyro_z: n as f32 * 0.01,
    });
    let lidar = driver(clock, start, ms(100), run, ms(60), ms(10), |_| Scan {
        ranges: vec![5.0; 360],
    });
    let camera = driver(clock, start, ms(40), run, ms(30), ms(5), |n| Frame {
        number: n,
    });

    let mut aligner = FanOutBuilder::new(AlignerConfig { timeout: ms(150) }).live(clock);
    let imu_rx = aligner
        .channel(
            "imu",
            stamped(imu, ms(10)),
            StreamConfig::new(ms(9)).capacity(64),
            32,
        )
        .expect("valid stream");
    let lidar_rx = aligner
        .channel(
            "lidar",
            stamped(lidar, ms(100)),
            StreamConfig::new(ms(90)).capacity(8),
            4,
        )
        .expect("valid stream");
    let camera_rx = aligner
        .channel(
            "camera",
            stamped(camera, ms(40)),
            StreamConfig::new(ms(36)).capacity(16),
            8,
        )
        .expect("valid stream");
    let driver = aligner.build();
    let mut status = driver.status_watch();
    let driver = tokio::spawn(driver);

    let consumers = [
        consumer(
            "imu",
            clock,
            imu_rx,
            Duration::from_micros(200),
            |i: &Imu| f64::from(i.gyro_z),
        ),
        consumer(
            "lidar",
            clock,
            lidar_rx,
            Duration::from_millis(5),
            |s: &Scan| s.ranges.iter().copied().fold(f32::MAX, f32::min).into(),
        ),
        consumer(
            "camera",
            clock,
            camera_rx,
            Duration::from_millis(2),
            |f: &Frame| f.number as f64,
        ),
    ];

    // The status is observable while running.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let mid = status.borrow_and_update().clone();
    println!(
        "after 1 s: latency {:?}, released {:?}",
        mid.aligner.latency,
        mid.aligner
            .streams
            .iter()
            .map(|s| s.counters.released)
            .collect::<Vec<_>>()
    );

    let final_status = driver.await.expect("driver task").expect("consumers alive");
    let mut all_in_order = true;
    for c in consumers {
        let (_, in_order, _) = c.await.expect("consumer task");
        all_in_order &= in_order;
    }
    println!(
        "final status: {}",
        serde_json::to_string_pretty(&final_status).expect("status is serde")
    );
    let streams = &final_status.aligner.streams;
    let released: u64 = streams.iter().map(|s| s.counters.released).sum();
    let dropped: u64 = streams
        .iter()
        .map(|s| {
            s.counters.dropped_late + s.counters.dropped_backward + s.counters.dropped_overflow
        })
        .sum();
    println!(
        "every consumer saw its samples in timestamp order: {all_in_order}; the aligner released \
         all {released} samples of the three sensors in one global timestamp order \
         ({dropped} dropped)"
    );
    assert!(all_in_order && dropped == 0);
}
