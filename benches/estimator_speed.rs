//! Speed of the timestamp estimator: updates per second on one core, and
//! allocations per update in steady state (divan's `AllocProfiler`).
//!
//! `cargo bench --bench estimator_speed -- --sample-count 20`

use divan::counter::ItemsCount;
use divan::{AllocProfiler, Bencher, black_box};
use syncline::core::estimator::{Estimator, EstimatorConfig};
use syncline::{TimeDelta, Timestamp};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

const N: usize = 100_000;
#[path = "common/estimator_stream.rs"]
mod estimator_stream;
use estimator_stream::{T0, arrivals};

fn main() {
    divan::main();
}

fn estimator() -> Estimator {
    let config =
        EstimatorConfig::new(TimeDelta::from_secs(5)).with_period(TimeDelta::from_millis(10));
    Estimator::new(config).expect("valid configuration")
}

/// `update` on a warmed-up estimator (history full): the allocation
/// columns must read 0.
#[divan::bench]
fn update_steady_state(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(N))
        .with_inputs(|| {
            let mut e = estimator();
            for q in arrivals(N, 0) {
                let _ = e.update(q);
            }
            (e, arrivals(N, N * 102 / 100))
        })
        .bench_local_refs(|(e, input)| {
            for &q in input.iter() {
                let _ = black_box(e.update(black_box(q)));
            }
        });
}

/// `update_with_index` with an 8-bit wrapping counter.
#[divan::bench]
fn update_with_index(bencher: Bencher) {
    bencher
        .counter(ItemsCount::new(N))
        .with_inputs(|| {
            let input: Vec<(Timestamp, u64)> = arrivals(N, 0)
                .into_iter()
                .map(|q| (q, ((q.as_nanos() - T0) / 10_000_000) as u64 % 256))
                .collect();
            (estimator(), input)
        })
        .bench_local_refs(|(e, input)| {
            for &(q, i) in input.iter() {
                let _ = black_box(e.update_with_index(black_box(q), i));
            }
        });
}

/// Arrivals of a stream of period `period` (ns, +20 ppm) on a host clock
/// of tick `tick`: ready `delay` + Exp(`delay`) after the sample's time,
/// stamped with the first tick after that (FIFO).
fn quantised_arrivals(n: usize, period: i64, tick: i64, delay: i64) -> Vec<Timestamp> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut last = 0;
    (0..n as i64)
        .map(|k| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            let t = T0 + k * period + k * period / 50_000;
            let ready = (t + delay + (-(delay as f64) * (1.0 - u).ln()) as i64).max(last);
            last = ready;
            Timestamp::from_nanos((ready.div_euclid(tick) + 1) * tick)
        })
        .collect()
}

/// The updates of `input` after the first `warm` (the warm-up, not timed),
/// for the quantised-clock fit at the expected `period` (ns).
fn bench_quantised(bencher: Bencher, input: &[Timestamp], warm: usize, period: i64) {
    bencher
        .counter(ItemsCount::new(input.len() - warm))
        .with_inputs(|| {
            let config = EstimatorConfig::new(TimeDelta::from_secs(5))
                .with_period(TimeDelta::from_nanos(period));
            let mut e = Estimator::new(config).expect("valid configuration");
            for &q in &input[..warm] {
                let _ = e.update(q);
            }
            e
        })
        .bench_local_refs(|e| {
            for &q in &input[warm..] {
                let _ = black_box(e.update(black_box(q)));
            }
        });
}

/// A 30 Hz camera stamped on a 4 ms host tick: the quantised-clock fit
/// refits its likelihood over the history (1200-1800 samples after the
/// warm-up) every few updates, so this mode costs far more per update than
/// the others (it is used only for coarse arrival clocks).
#[divan::bench(sample_count = 10)]
fn update_quantised_camera(bencher: Bencher) {
    const P30: i64 = 33_333_333;
    let input = quantised_arrivals(4_000, P30, 4_000_000, 1_000_000);
    bench_quantised(bencher, &input, 2_000, P30);
}

/// A 400 Hz IMU on a 1 ms host tick, history full (8192 samples): the
/// refits are spaced so that the work per update stays bounded
/// (`REFIT_POINTS` history points per update, amortised).
#[divan::bench(sample_count = 10)]
fn update_quantised_imu(bencher: Bencher) {
    const P400: i64 = 2_500_000;
    let input = quantised_arrivals(14_000, P400, 1_000_000, 300_000);
    bench_quantised(bencher, &input, 10_000, P400);
}
