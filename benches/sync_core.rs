//! Speed of the ApproximateTime core on the shape of `../shared/perf`'s
//! input: 3 topics at 100 / 30 / 10 Hz with stamp jitter and per-topic
//! latency (arrival order differs from stamp order across topics), queue
//! 10, age penalty 0.1. The synchronizer is warmed up first, so the
//! allocation profile shows the steady state (expected: 0 allocations).
//!
//! `cargo bench --bench sync_core -- --sample-count 20`

use std::sync::LazyLock;

use divan::counter::ItemsCount;
use divan::{AllocProfiler, Bencher};
use syncline::Timestamp;
use syncline::core::sync::{ApproximateConfig, ApproximateTime};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

const WARM_UP: usize = 20_000;
const MEASURED: usize = 100_000;

/// (topic, stamp) rows in arrival order, deterministic.
static INPUT: LazyLock<Vec<(usize, i64)>> = LazyLock::new(|| {
    let mut seed: u64 = 4001;
    let mut rand = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as f64) / ((1u64 << 31) as f64) - 0.5 // in [-0.5, 0.5)
    };
    // (period, phase, jitter, latency, latency spread), ns
    let topics = [
        (10_000_000i64, 0i64, 2_000_000.0, 2_000_000.0, 2_000_000.0),
        (
            33_333_333,
            3_000_000,
            4_000_000.0,
            12_000_000.0,
            8_000_000.0,
        ),
        (
            100_000_000,
            7_000_000,
            6_000_000.0,
            30_000_000.0,
            20_000_000.0,
        ),
    ];
    let base = 1_700_000_000_000_000_000i64;
    let span = 1_300_000_000_000i64; // enough for WARM_UP + MEASURED rows
    let mut rows: Vec<(i64, usize, i64)> = Vec::new();
    for (i, &(period, phase, jitter, lat, spread)) in topics.iter().enumerate() {
        let mut last_arrival = i64::MIN;
        let mut k = 0;
        while k * period < span {
            let stamp = base + phase + k * period + (rand() * jitter) as i64;
            let arrival = (stamp + (lat + rand() * spread) as i64).max(last_arrival + 1);
            last_arrival = arrival;
            rows.push((arrival, i, stamp));
            k += 1;
        }
    }
    rows.sort_by_key(|r| (r.0, r.1));
    rows.into_iter().map(|(_, i, s)| (i, s)).collect()
});

fn main() {
    divan::main();
}

/// Pushes `MEASURED` messages into a warmed-up synchronizer, polling every
/// set (as the CLI does).
#[divan::bench]
fn approximate_time_3_topics(bencher: Bencher) {
    let input = &*INPUT;
    assert!(input.len() >= WARM_UP + MEASURED);
    bencher
        .counter(ItemsCount::new(MEASURED))
        .with_inputs(|| {
            let config = ApproximateConfig::new(3).queue_size(10).age_penalty(0.1);
            let mut sync = ApproximateTime::new(config).unwrap();
            for (id, &(topic, stamp)) in input[..WARM_UP].iter().enumerate() {
                sync.push(topic, Timestamp::from_nanos(stamp), id as u64)
                    .unwrap();
                while sync.poll_set().is_some() {}
            }
            sync
        })
        .bench_local_values(|mut sync| {
            let mut sets = 0u64;
            for (id, &(topic, stamp)) in input[WARM_UP..WARM_UP + MEASURED].iter().enumerate() {
                let _ = sync.push(topic, Timestamp::from_nanos(stamp), id as u64);
                while let Some(set) = sync.poll_set() {
                    sets += set.get(2).map_or(0, |m| m.value & 1);
                }
            }
            (sets, sync)
        });
}
