//! Lookup buffer and association speed.
//!
//! Run: `cargo bench --bench interp` (results in docs/PERFORMANCE.md,
//! section "Match", "Interpolation and association").

use divan::{Bencher, black_box};
use glam::DQuat;
use syncline::core::associate::{associate_greedy, associate_optimal};
use syncline::core::interp::{BufferConfig, Interpolate, LookupBuffer};
use syncline::{TimeDelta, Timestamp};

const PERIOD_NS: i64 = 5_000_000; // 200 Hz
const CAPACITY: usize = 256;

fn full_buffer<T>(value: impl Fn(i64) -> T) -> LookupBuffer<T> {
    let mut b = LookupBuffer::new(BufferConfig::new(CAPACITY).max_gap(TimeDelta::from_millis(20)));
    for k in 0..CAPACITY as i64 {
        b.insert(Timestamp::from_nanos(k * PERIOD_NS), value(k));
    }
    b
}

/// Query times spread over the buffer's span (deterministic).
fn queries() -> Vec<Timestamp> {
    let span = (CAPACITY as i64 - 1) * PERIOD_NS;
    (0..1024i64)
        .map(|k| Timestamp::from_nanos((k * 7_919_111) % span))
        .collect()
}

/// One insert into a full ring (evicts the oldest), in time order.
#[divan::bench]
fn insert_in_order_full(bencher: Bencher) {
    let mut b = full_buffer(|k| k as f64);
    let mut k = CAPACITY as i64;
    bencher.bench_local(|| {
        k += 1;
        black_box(b.insert(Timestamp::from_nanos(k * PERIOD_NS), k as f64));
    });
}

/// Interpolation at random times inside the span of a full buffer.
fn bench_interpolate<T: Interpolate + Clone>(bencher: Bencher, value: impl Fn(i64) -> T) {
    let b = full_buffer(value);
    let q = queries();
    let mut i = 0;
    bencher.bench_local(|| {
        i = (i + 1) % q.len();
        black_box(b.interpolate(q[i]).ok())
    });
}

/// Interpolated `f64`.
#[divan::bench]
fn interpolate_f64(bencher: Bencher) {
    bench_interpolate(bencher, |k| k as f64);
}

/// Interpolated `[f64; 3]`.
#[divan::bench]
fn interpolate_vec3(bencher: Bencher) {
    bench_interpolate(bencher, |k| [k as f64, 1.0, -(k as f64)]);
}

/// Slerped `glam::DQuat`.
#[divan::bench]
fn interpolate_dquat(bencher: Bencher) {
    bench_interpolate(bencher, |k| DQuat::from_rotation_z(k as f64 * 0.01));
}

/// Two 30 Hz lists of 10,000 jittered stamps (seconds).
fn lists() -> (Vec<f64>, Vec<f64>) {
    let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
    let mut jitter = move || {
        rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        ((rng >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.008
    };
    let a = (0..10_000)
        .map(|k| 1e9 + k as f64 / 30.0 + jitter())
        .collect();
    let b = (0..10_000)
        .map(|k| 1e9 + 0.007 + k as f64 / 30.0 + jitter())
        .collect();
    (a, b)
}

/// TUM `associate.py` greedy on 10,000 × 10,000 stamps.
#[divan::bench]
fn associate_greedy_10k(bencher: Bencher) {
    let (a, b) = lists();
    bencher.bench_local(|| black_box(associate_greedy(&a, &b, 0.0, 0.02)));
}

/// Optimal non-crossing matching on 10,000 × 10,000 stamps.
#[divan::bench]
fn associate_optimal_10k(bencher: Bencher) {
    let (a, b) = lists();
    bencher.bench_local(|| black_box(associate_optimal(&a, &b, 0.0, 0.02)));
}

fn main() {
    divan::Divan::from_args()
        .sample_count(200)
        .max_time(std::time::Duration::from_secs(2))
        .main();
}
