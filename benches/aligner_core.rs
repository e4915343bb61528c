//! Speed of the aligner core: push + drain per sample, 4 streams, one core,
//! steady state. Divan's `AllocProfiler` counts allocations: the `alloc`
//! rows must read 0 (no allocation per sample once the queues exist).
//!
//! `cargo bench --bench aligner_core`
#![allow(missing_docs)]

use divan::counter::ItemsCount;
use divan::{AllocProfiler, Bencher, black_box};
use syncline::core::aligner::{Aligner, AlignerConfig, Push, StreamConfig, StreamId};
use syncline::{TimeDelta, Timestamp};

#[global_allocator]
static ALLOC: AllocProfiler = AllocProfiler::system();

fn main() {
    divan::main();
}

/// Periods and transport latencies (ns) of the 4 streams: IMU-, camera-,
/// odometry- and GPS-like rates, each late by its own latency, so arrivals
/// interleave out of stamp order across streams.
const STREAMS: [(i64, i64); 4] = [
    (1_000_000, 200_000),
    (2_500_000, 3_000_000),
    (4_000_000, 1_500_000),
    (5_000_000, 6_000_000),
];

/// One span of the scenario: `(stream, stamp)` in arrival order.
fn scenario(samples: usize) -> (Vec<(usize, i64)>, i64) {
    let mut rows: Vec<(i64, usize, i64)> = Vec::with_capacity(samples);
    // Start at 1 s: streams not yet seen hold the start back (Rock's rule)
    // until the timeout, as in a real start-up.
    let mut t = [1_000_000_000i64; 4];
    while rows.len() < samples {
        // The stream whose next stamp is earliest produces next.
        let (k, _) = t
            .iter()
            .enumerate()
            .min_by_key(|(_, v)| **v)
            .expect("4 streams");
        rows.push((t[k] + STREAMS[k].1, k, t[k]));
        t[k] += STREAMS[k].0;
    }
    rows.sort_by_key(|r| (r.0, r.1));
    let span = t.iter().copied().max().unwrap_or(0) - 1_000_000_000;
    (rows.into_iter().map(|(_, k, s)| (k, s)).collect(), span)
}

fn aligner() -> (Aligner<u64>, Vec<StreamId>) {
    let mut a = Aligner::new(AlignerConfig {
        timeout: TimeDelta::from_millis(50),
    });
    let ids = STREAMS
        .iter()
        .map(|&(p, _)| {
            a.add_stream(
                StreamConfig::new(TimeDelta::from_nanos(p))
                    .and_then(|c| c.capacity(64))
                    .expect("valid stream configuration"),
            )
        })
        .collect();
    (a, ids)
}

/// Pushes one span (stamps shifted by `offset`) and drains after every push.
/// Not inlined, so that a profiler can attribute exactly its cost:
/// `valgrind --tool=callgrind --toggle-collect='*run_span*'`.
#[inline(never)]
fn run_span(a: &mut Aligner<u64>, ids: &[StreamId], rows: &[(usize, i64)], offset: i64) -> u64 {
    let mut released = 0;
    for (i, &(k, s)) in rows.iter().enumerate() {
        let stamp = Timestamp::from_nanos(s + offset);
        let p = a.push(ids[k], stamp, i as u64);
        assert!(
            matches!(p, Push::Queued),
            "in order per stream, fits the queues"
        );
        while let Some(r) = a.poll_release() {
            released += black_box(r).sample.value & 1;
        }
    }
    released
}

#[divan::bench(args = [4096, 65536])]
fn push_and_release_4_streams(bencher: Bencher, samples: usize) {
    let (rows, span) = scenario(samples);
    let (mut a, ids) = aligner();
    // Warm up: reach the steady state (queues hold their working set).
    let mut offset = 0;
    run_span(&mut a, &ids, &rows, offset);
    offset += span;
    bencher
        .counter(ItemsCount::new(samples))
        .bench_local(move || {
            let r = run_span(&mut a, &ids, &rows, offset);
            offset += span;
            r
        });
}

/// Control: one allocation per iteration, so the `alloc` rows show that the
/// profiler counts (the aligner benches must show none).
#[divan::bench]
fn control_one_allocation(bencher: Bencher) {
    bencher.bench_local(|| black_box(Vec::<u64>::with_capacity(black_box(4))));
}
