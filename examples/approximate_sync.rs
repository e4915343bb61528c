//! A 3-topic ApproximateTime synchronizer on simulated camera (30 Hz),
//! IMU (200 Hz) and odometry (50 Hz) streams with stamp jitter, transport
//! latency and lost camera frames. Prints some sets, then the drop counts
//! by reason.
//!
//! The sensors run on tokio's paused clock, so 5 s of simulated data take
//! a fraction of a second:
//!
//! ```text
//! cargo run --release --example approximate_sync
//! ```

use std::time::Duration;

use futures::StreamExt;
use syncline::prelude::*;
use syncline::sync::{ApproximateConfig, DropCounts};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

#[derive(Debug, Clone)]
struct Image {
    frame: u32,
}

#[derive(Debug, Clone)]
struct Imu {
    gyro_z: f64,
}

#[derive(Debug, Clone)]
struct Odometry {
    x: f64,
}

/// A simulated sensor: sample `k` is stamped `k * period + jitter` and
/// delivered `latency` later on the clock; `lost(k)` samples never arrive.
fn sensor<T: Send + 'static>(
    clock: TokioClock,
    period_us: i64,
    jitter_us: i64,
    latency_us: i64,
    seed: u64,
    lost: impl Fn(u64) -> bool + Send + 'static,
    make: impl Fn(u64) -> T + Send + 'static,
) -> ReceiverStream<Stamped<T>> {
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(async move {
        let mut rng = seed;
        let mut uniform = move |spread: i64| {
            rng = rng
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((rng >> 33) as i64 % (2 * spread + 1)) - spread
        };
        let start = clock.now();
        for k in 0..(5_000_000 / period_us) as u64 {
            let offset = k as i64 * period_us + uniform(jitter_us);
            let stamp = start.saturating_add(TimeDelta::from_micros(offset));
            let arrival =
                stamp.saturating_add(TimeDelta::from_micros(latency_us + uniform(latency_us / 2)));
            clock.sleep_until(arrival).await;
            if !lost(k) && tx.send(Stamped::new(stamp, make(k))).await.is_err() {
                return;
            }
        }
    });
    ReceiverStream::new(rx)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    tokio::time::pause();
    let clock = TokioClock::starting_at(Timestamp::from_nanos(1_700_000_000_000_000_000));
    let camera = sensor(
        clock,
        33_333,
        2_000,
        15_000,
        1,
        |k| k % 50 == 7,
        |k| Image { frame: k as u32 },
    );
    let imu = sensor(
        clock,
        5_000,
        200,
        1_000,
        2,
        |_| false,
        |k| Imu {
            gyro_z: (k as f64 * 0.01).sin(),
        },
    );
    let odometry = sensor(
        clock,
        20_000,
        1_000,
        5_000,
        3,
        |_| false,
        |k| Odometry { x: k as f64 * 0.02 },
    );

    // IMU samples arrive ~14 ms before the camera frame they match: a
    // queue of 30 IMU samples covers that skew comfortably.
    let settings = ApproximateConfig::default()
        .queue_size(30)
        .check()
        .expect("valid settings");
    let mut sets = (camera, imu, odometry)
        .approximate_time(settings)
        .named(["camera", "imu", "odometry"]);
    let mut drops = sets.drop_reports();

    let mut count = 0;
    let mut worst = Duration::ZERO;
    while let Some((img, imu, odo)) = sets.next().await {
        let stamps = [img.stamp, imu.stamp, odo.stamp];
        let (lo, hi) = (stamps.iter().min().unwrap(), stamps.iter().max().unwrap());
        let spread = Duration::try_from(hi.checked_since(*lo).unwrap()).unwrap_or_default();
        worst = worst.max(spread);
        if count < 5 || count % 30 == 0 {
            println!(
                "set {count:3}: frame {:3} | imu {:+.3} rad/s | odom x {:.2} m | spread {:?}",
                img.value.frame, imu.value.gyro_z, odo.value.x, spread
            );
        }
        count += 1;
    }

    let mut by_reason = DropCounts::default();
    while let Ok(d) = drops.try_recv() {
        by_reason.add(d.reason);
    }
    let status = sets.status();
    println!(
        "\n{count} sets (widest spread {worst:?}), {} messages in",
        status.pushed
    );
    println!(
        "dropped: skipped {} / overflow {} / end {} (total {})",
        by_reason.skipped,
        by_reason.overflow,
        by_reason.end,
        by_reason.total()
    );
    println!(
        "status: {}",
        serde_json::to_string(&status).unwrap_or_default()
    );
    assert_eq!(status.pushed, 3 * status.sets + status.dropped.total());
}
