//! Three simulated sensors — an IMU at 100 Hz, a lidar at 10 Hz and a
//! camera at 25 Hz — each delivered late by its own processing / transport
//! delay (with jitter), stamped on arrival by `.timestamped()` (the
//! acquisition-time estimator), aligned by syncline's live aligner
//! (`(imu, lidar, camera).aligned_live(..)`) and dispatched into three typed
//! channels consumed by three tasks.
//!
//! Every consumer checks that it sees its samples in timestamp order and
//! records `(stamp, seq)`, where `seq` is the sample's position in the
//! aligner's output; at the end the main task merges the three records by
//! `seq` and checks that the *global* order held (stamps never decrease
//! across sensors) and that every released sample reached its consumer.
//! The aligner holds each sample back only until no other sensor can still
//! deliver an earlier one, or for at most the timeout after its arrival.
//!
//! `cargo run --release --example aligned_sensors` (runs about 2 s).
#![allow(missing_docs)]

use std::time::Duration;

use futures::{Stream, StreamExt};
use syncline::aligner::{AlignerConfig, OneOf3, StreamConfig};
use syncline::core::estimator::{Estimator, EstimatorConfig};
use syncline::prelude::*;
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

// ---------------------------------------------------------------------------
// STAMPING — the one place that turns a driver's output into `Stamped<T>`:
// the estimator adapter stamps each item with its estimated acquisition time
// from its arrival time on `clock` alone (jitter removed, zero added
// latency), minus the sensor's known minimum latency (its delay without
// jitter), so that stamps of different sensors compare as acquisition
// times. Its status is observable on `status()` (not used here).
fn stamped<T: Send + 'static>(
    raw: impl Stream<Item = T> + Send + 'static,
    period: TimeDelta,
    min_latency: TimeDelta,
    clock: TokioClock,
) -> impl Stream<Item = Stamped<T>> + Send + 'static {
    let config = EstimatorConfig::new(TimeDelta::from_secs(1))
        .with_period(period)
        .with_min_latency(min_latency);
    raw.timestamped(Estimator::new(config).expect("valid estimator configuration"))
        .with_clock(clock)
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
) -> impl Stream<Item = T> + Send + 'static {
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
            if tx.send(make(n as u64)).await.is_err() {
                break;
            }
            n += 1;
        }
    });
    ReceiverStream::new(rx)
}

/// What a consumer reports: `(stamp, seq)` of every sample it received.
type Record = Vec<(Timestamp, u64)>;

/// A consumer task: receives one sensor's samples (with their position in
/// the aligner's output), checks their order, simulates some processing,
/// reports.
fn consumer<T: Send + 'static>(
    name: &'static str,
    clock: TokioClock,
    mut rx: mpsc::Receiver<(u64, Stamped<T>)>,
    work: Duration,
    process: impl Fn(&T) -> f64 + Send + 'static,
) -> tokio::task::JoinHandle<Record> {
    tokio::spawn(async move {
        let mut record = Record::new();
        let mut max_age = TimeDelta::ZERO;
        let mut result = 0.0;
        while let Some((seq, s)) = rx.recv().await {
            record.push((s.stamp, seq));
            let age = clock.now().checked_since(s.stamp).unwrap_or(TimeDelta::MAX);
            max_age = max_age.max(age);
            result += process(&s.value);
            tokio::time::sleep(work).await;
        }
        let in_order = record.windows(2).all(|w| w[0].0 <= w[1].0);
        println!(
            "{name:>6} consumer: {:4} samples, in timestamp order: {}, max age at receipt {max_age}, result {result:.1}",
            record.len(),
            if in_order { "yes" } else { "NO" },
        );
        record
    })
}

#[tokio::main]
async fn main() {
    let clock = TokioClock::new();
    let start = clock.now().saturating_add(TimeDelta::from_millis(20));
    let run = TimeDelta::from_secs(2);
    let ms = TimeDelta::from_millis;
    let stream = |lookahead, capacity| {
        StreamConfig::lookahead(lookahead)
            .and_then(|c| c.capacity(capacity))
            .expect("a lookahead >= 0 and a capacity >= 1")
    };

    // Sensors: period, delay, jitter.
    let imu = driver(clock, start, ms(10), run, ms(2), ms(1), |n| Imu {
        gyro_z: n as f32 * 0.01,
    });
    let lidar = driver(clock, start, ms(100), run, ms(60), ms(10), |_| Scan {
        ranges: vec![5.0; 360],
    });
    let camera = driver(clock, start, ms(40), run, ms(30), ms(5), |n| Frame {
        number: n,
    });

    // Declared periods (lookaheads) are a little below the real ones: a
    // lookahead must never promise too much.
    let mut aligned = (
        stamped(imu, ms(10), ms(1), clock),
        stamped(lidar, ms(100), ms(50), clock),
        stamped(camera, ms(40), ms(25), clock),
    )
        .aligned_live(
            AlignerConfig { timeout: ms(150) },
            (stream(ms(9), 64), stream(ms(90), 8), stream(ms(36), 16)),
            clock,
        );

    let (imu_tx, imu_rx) = mpsc::channel(32);
    let (lidar_tx, lidar_rx) = mpsc::channel(4);
    let (camera_tx, camera_rx) = mpsc::channel(8);
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
    let mut status = aligned.status_watch();
    tokio::spawn(async move {
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
    });

    // Dispatch, in the aligner's (global timestamp) order, into the typed
    // channels; a full channel slows the aligner down (backpressure).
    let mut seq = 0u64;
    while let Some(sample) = aligned.next().await {
        let sent = match sample {
            OneOf3::A(imu) => imu_tx.send((seq, imu)).await.is_ok(),
            OneOf3::B(scan) => lidar_tx.send((seq, scan)).await.is_ok(),
            OneOf3::C(frame) => camera_tx.send((seq, frame)).await.is_ok(),
        };
        assert!(sent, "consumers run to the end");
        seq += 1;
    }
    drop((imu_tx, lidar_tx, camera_tx));

    let mut merged = Vec::new();
    let mut each_in_order = true;
    for c in consumers {
        let record = c.await.expect("consumer task");
        each_in_order &= record.windows(2).all(|w| w[0].0 <= w[1].0);
        merged.extend(record);
    }
    merged.sort_by_key(|&(_, seq)| seq);
    let complete = merged.iter().map(|&(_, s)| s).eq(0..seq);
    let global_order = merged.windows(2).all(|w| w[0].0 <= w[1].0);

    let final_status = aligned.status();
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
        "every consumer saw its samples in timestamp order: {each_in_order}; merged by their \
         position in the aligner's output, the {} samples of the three consumers are in one \
         global timestamp order: {global_order} (all {released} released samples delivered: \
         {complete}; {dropped} dropped)",
        merged.len()
    );
    assert!(each_in_order && global_order && complete && dropped == 0);
}
