//! A jittery simulated 200 Hz IMU, timestamped on arrival with
//! `.timestamped()`.
//!
//! The simulated driver delivers each sample 0.8 ms + an exponential delay
//! (mean 0.3 ms) after acquisition, loses 2 % of the samples, and stalls
//! once for 40 ms (the samples that pile up meanwhile come in a burst).
//! Time is tokio's paused clock, so the 30 simulated seconds run in well
//! under a second. The program prints the error of the raw arrival stamps
//! and of the estimates against the simulated truth, then the estimator's
//! final status.
//!
//! The estimates' max error is one period (5 ms): sample 2399 is lost just
//! before the stall, and at zero latency nothing tells that loss from the
//! stall itself, so the eight samples of the burst come out one period
//! early; the next sample on time shows the loss and the numbering is right
//! again ("Known limits" in `docs/stamp.md`). The example counts them.
//!
//! `cargo run --release --example imu_timestamped`

use std::time::Duration;

use futures::StreamExt;
use syncline::core::estimator::{Estimator, EstimatorConfig};
use syncline::prelude::*;

const PERIOD_US: u64 = 5_000;
const SAMPLES: u64 = 6_000;
const ORIGIN_NS: i64 = 1_700_000_000_000_000_000;

/// One IMU reading; `k` is the true sample number (to score the estimate).
#[derive(Debug, Clone, Copy)]
struct Imu {
    k: u64,
    gyro_z: f32,
}

/// Deterministic uniform numbers in [0, 1) (xorshift).
fn uniform(state: &mut u64) -> f64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// Arrival times (µs after the origin) of the samples the driver delivers.
fn arrivals() -> Vec<(u64, u64)> {
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut out = Vec::new();
    let mut last = 0u64;
    for k in 0..SAMPLES {
        let lost = uniform(&mut rng) < 0.02;
        let jitter = (-300.0 * (1.0 - uniform(&mut rng)).ln()) as u64;
        if lost {
            continue;
        }
        let mut at = k * PERIOD_US + 800 + jitter;
        // The driver stalls from 12.000 s to 12.040 s.
        if (12_000_000..12_040_000).contains(&at) {
            at = 12_040_000;
        }
        at = at.max(last + 30); // FIFO: a burst comes 30 µs apart
        last = at;
        out.push((k, at));
    }
    out
}

/// The IMU driver as a stream, moving tokio's paused clock to each arrival.
fn imu_driver() -> impl futures::Stream<Item = Imu> {
    futures::stream::unfold((arrivals().into_iter(), 0u64), |(mut it, now)| async move {
        let (k, at) = it.next()?;
        tokio::time::advance(Duration::from_micros(at - now)).await;
        let imu = Imu {
            k,
            gyro_z: (k as f32 * 0.01).sin(),
        };
        Some((imu, (it, at)))
    })
}

/// RMS and max |e| after removing the median (the constant latency).
fn stats(mut errors: Vec<i64>) -> (f64, i64, i64) {
    errors.sort_unstable();
    let median = errors[errors.len() / 2];
    let rms = (errors
        .iter()
        .map(|e| ((e - median) as f64).powi(2))
        .sum::<f64>()
        / errors.len() as f64)
        .sqrt();
    let max = errors.iter().map(|e| (e - median).abs()).max().unwrap_or(0);
    (rms, max, median)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()?;
    runtime.block_on(async {
        let clock = TokioClock::starting_at(Timestamp::from_nanos(ORIGIN_NS));
        let config = EstimatorConfig::new(TimeDelta::from_secs(5))
            .with_period(TimeDelta::from_micros(PERIOD_US as i64));
        let stamped = imu_driver()
            .timestamped(Estimator::new(config)?)
            .with_clock(clock);
        let status = stamped.status_watch();

        let mut raw = Vec::new();
        let mut estimated = Vec::new();
        let mut stamped = std::pin::pin!(stamped);
        let mut gyro_sum = 0.0f32;
        let mut early = 0u32;
        while let Some(s) = stamped.next().await {
            let truth = ORIGIN_NS + (s.value.k * PERIOD_US * 1_000) as i64;
            gyro_sum += s.value.gyro_z;
            // Skip the first second (the estimator is still learning).
            if s.value.k >= 200 {
                let error = s.stamp.as_nanos() - truth;
                // More than half a period early: numbered one sample early.
                early += u32::from(error < -(PERIOD_US as i64) * 500);
                estimated.push(error);
                raw.push(clock.now().as_nanos() - truth);
            }
        }
        let (raw_rms, raw_max, raw_med) = stats(raw);
        let (rms, max, med) = stats(estimated);
        println!(
            "samples delivered: {} (of {SAMPLES}), gyro sum {gyro_sum:.2}",
            status.borrow().samples
        );
        println!(
            "arrival stamps : latency {:>8.1} µs, jitter RMS {:>8.1} µs, max {:>8.1} µs",
            raw_med as f64 / 1e3,
            raw_rms / 1e3,
            raw_max as f64 / 1e3
        );
        println!(
            "estimated      : latency {:>8.1} µs, jitter RMS {:>8.1} µs, max {:>8.1} µs",
            med as f64 / 1e3,
            rms / 1e3,
            max as f64 / 1e3
        );
        println!("estimates a whole period early: {early}");
        println!(
            "final status: {}",
            serde_json::to_string_pretty(&*status.borrow())?
        );
        Ok(())
    })
}
