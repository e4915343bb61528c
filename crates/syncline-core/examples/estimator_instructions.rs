//! The estimator's cost per update in instructions, on the stream of
//! `benches/estimator_speed.rs` (100 Hz, exponential delays of mean 0.3 ms,
//! 2 % losses, a 30 ms stall every 997 samples), for callgrind: timing
//! on a shared machine is noisy, instruction counts are not.
//!
//! ```text
//! cargo build --release -p syncline-core --example estimator_instructions
//! valgrind --tool=callgrind --callgrind-out-file=/tmp/est.cg \
//!     --toggle-collect='estimator_instructions::steady' \
//!     target/release/examples/estimator_instructions plain
//! ```
//!
//! Instructions per update: the `I refs` callgrind prints / 1e5 (`plain`:
//! `update`), or / 2e5 with `indexed` (`update_with_index`, an 8-bit
//! counter; toggle `estimator_instructions::indexed`). The checksum it
//! prints folds every estimate: equal checksums, byte-identical
//! estimates. `OFF=ramp,step,forget` turns those tests off (their
//! `Tuning` threshold at 0), to measure what each costs. `time` (no
//! valgrind) prints the fastest of 50 timed runs of `steady`, in ns per
//! update: a wall-clock figure that a busy host disturbs less than a mean.

use std::hint::black_box;
use syncline_core::estimator::{Estimator, EstimatorConfig};
use syncline_core::{TimeDelta, Timestamp};

const N: usize = 100_000;
/// Runs timed by `time` (the fastest is printed).
const RUNS: usize = 50;
#[path = "../../../benches/common/estimator_stream.rs"]
mod estimator_stream;
use estimator_stream::{T0, arrivals};

/// The bench's estimator (5 s window, 10 ms expected period), with the
/// tests named in `OFF` turned off.
fn estimator() -> Estimator {
    let mut config =
        EstimatorConfig::new(TimeDelta::from_secs(5)).with_period(TimeDelta::from_millis(10));
    if let Ok(off) = std::env::var("OFF") {
        for o in off.split(',') {
            match o {
                "ramp" => config.tuning.ramp_t = 0.0,
                "step" => config.tuning.step_t = 0.0,
                "forget" => config.tuning.forget_t = 0.0,
                "" => {}
                _ => panic!("unknown test {o} in OFF (ramp, step, forget)"),
            }
        }
    }
    Estimator::new(config).expect("valid configuration")
}

fn fold(c: u64, v: i64) -> u64 {
    (c ^ v as u64).wrapping_mul(0x100_0000_01B3).rotate_left(5)
}

/// `update` over `qs` (the measured function): the estimates' checksum.
#[inline(never)]
fn steady(e: &mut Estimator, qs: &[Timestamp]) -> u64 {
    let mut c = 0xcbf2_9ce4_8422_2325u64;
    for &q in qs {
        if let Ok(est) = e.update(black_box(q)) {
            c = fold(c, est.stamp.as_nanos());
            c = fold(c, est.sample);
        } else {
            c = fold(c, -1);
        }
    }
    c
}

/// `update_with_index` over `qs` (the measured function, warm-up
/// included): the estimates' checksum.
#[inline(never)]
fn indexed(e: &mut Estimator, qs: &[(Timestamp, u64)]) -> u64 {
    let mut c = 0xcbf2_9ce4_8422_2325u64;
    for &(q, i) in qs {
        if let Ok(est) = e.update_with_index(black_box(q), i) {
            c = fold(c, est.stamp.as_nanos());
            c = fold(c, est.sample);
        } else {
            c = fold(c, -1);
        }
    }
    c
}

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "plain".into());
    let warm = arrivals(N, 0);
    let next = arrivals(N, N * 102 / 100);
    if mode == "indexed" {
        let idx = |v: Vec<Timestamp>| -> Vec<(Timestamp, u64)> {
            v.into_iter()
                .map(|q| (q, ((q.as_nanos() - T0) / 10_000_000) as u64 % 256))
                .collect()
        };
        let (w, n) = (idx(warm), idx(next));
        let mut e = estimator();
        let _ = indexed(&mut e, &w);
        let c = indexed(&mut e, &n);
        println!("indexed checksum {c:016x}");
    } else {
        let mut e = estimator();
        for &q in &warm {
            let _ = e.update(q);
        }
        if mode == "time" {
            // The fastest of `RUNS` runs, each on a copy of the warmed
            // estimator: the least disturbed by the host.
            let best = (0..RUNS)
                .map(|_| {
                    let mut c = e.clone();
                    let start = std::time::Instant::now();
                    black_box(steady(&mut c, &next));
                    start.elapsed()
                })
                .min()
                .unwrap_or_default();
            let ns = best.as_nanos() as f64 / N as f64;
            println!("time {ns:.1} ns per update ({:.2} M/s)", 1e3 / ns);
            return;
        }
        let c = steady(&mut e, &next);
        println!("plain checksum {c:016x}");
    }
}
