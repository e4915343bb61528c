//! Router tests on tokio's paused clock: order, conservation, isolation of
//! consumers, stalls, drop reports, the yield budget.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use proptest::prelude::*;
use syncline_core::TimeDelta;

use super::*;
use crate::clock::TokioClock;

const T0: i64 = 1_000_000_000;

fn at(ns: i64) -> Timestamp {
    Timestamp::from_nanos(ns)
}

/// A current-thread runtime on tokio's paused clock, for the proptests.
fn paused_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap()
}

/// An input: sample `k` is stamped `T0 + phase + k·period` and arrives
/// `latency(k)` later (FIFO), on the paused clock that reads `T0` at start.
fn timed_input(
    n: usize,
    period: i64,
    phase: i64,
    latencies: Vec<i64>,
) -> impl futures::Stream<Item = Stamped<(usize, i64)>> + Send + 'static {
    let start = tokio::time::Instant::now();
    let mut last = 0i64;
    let schedule: Vec<(i64, i64)> = (0..n)
        .map(|k| {
            let stamp = phase + k as i64 * period;
            let lat = latencies
                .get(k % latencies.len().max(1))
                .copied()
                .unwrap_or(0);
            last = last.max(stamp + lat);
            (stamp, last)
        })
        .collect();
    futures::stream::iter(schedule.into_iter().enumerate()).then(
        move |(k, (stamp, arrival))| async move {
            tokio::time::sleep_until(start + Duration::from_nanos(arrival as u64)).await;
            Stamped::new(at(T0 + stamp), (k, arrival))
        },
    )
}

/// What a consumer task saw: `(stamp, arrival, received)` per sample.
type Seen = Arc<Mutex<Vec<(Timestamp, i64, i64)>>>;

/// A consumer task that takes `work` ns per sample (`None`: never reads),
/// reading one sample at a time (`batch` 0) or up to `batch` at once
/// (`recv_many`).
fn consume<E: Send + 'static>(
    mut c: Consumer<E>,
    work: Option<i64>,
    batch: usize,
    info: impl Fn(&E) -> (Timestamp, i64) + Send + 'static,
    clock: TokioClock,
) -> (Seen, tokio::task::JoinHandle<Consumer<E>>) {
    let seen: Seen = Arc::default();
    let out = seen.clone();
    let task = tokio::spawn(async move {
        let Some(work) = work else {
            std::future::pending::<()>().await;
            return c;
        };
        let mut items = Vec::new();
        loop {
            if batch == 0 {
                match c.next().await {
                    Some(item) => items.push(item),
                    None => break,
                }
            } else {
                let before = items.len();
                let n = c.recv_many(&mut items, batch).await;
                assert!(n <= batch && items.len() == before + n);
                if n == 0 {
                    break;
                }
            }
            for item in items.drain(..) {
                let (stamp, arrival) = info(&item);
                let now = clock.now().nanos_since_wide(at(T0)) as i64;
                out.lock().unwrap().push((stamp, arrival, now));
                if work > 0 {
                    tokio::time::sleep(Duration::from_nanos(work as u64)).await;
                }
            }
        }
        c
    });
    (seen, task)
}

#[derive(Debug, Clone)]
enum Fusion {
    Imu(Stamped<(usize, i64)>),
    Lidar(Stamped<(usize, i64)>),
}

fn fusion_info(f: &Fusion) -> (Timestamp, i64) {
    match f {
        Fusion::Imu(s) | Fusion::Lidar(s) => (s.stamp, s.value.1),
    }
}

fn plain_info(s: &Stamped<(usize, i64)>) -> (Timestamp, i64) {
    (s.stamp, s.value.1)
}

/// Routed samples are all accounted for.
fn conserved(c: &ConsumerStatus) -> bool {
    c.routed == c.received + c.queued as u64 + c.dropped()
}

/// IMU (5 ms) and lidar (100 ms) to a fusion consumer; camera (33 ms) to a
/// vision consumer that never reads (keep newest 2): fusion's latency stays
/// within the timeout, vision only drops.
#[tokio::test(start_paused = true)]
async fn stuck_keep_newest_consumer_does_not_delay_the_others() {
    let ms = 1_000_000i64;
    let clock = TokioClock::starting_at(at(T0));
    let timeout = TimeDelta::from_millis(30);
    let mut r = RouterBuilder::new(AlignerConfig { timeout }).live(clock);
    let imu = r.input(
        "imu",
        timed_input(400, 5 * ms, 0, vec![ms, 3 * ms, 2 * ms]),
        StreamConfig::new(TimeDelta::from_millis(4)).unwrap(),
    );
    let lidar = r.input(
        "lidar",
        timed_input(20, 100 * ms, 7 * ms, vec![20 * ms]),
        StreamConfig::new(TimeDelta::from_millis(90)).unwrap(),
    );
    let camera = r.input(
        "camera",
        timed_input(60, 33 * ms, 2 * ms, vec![5 * ms]),
        StreamConfig::new(TimeDelta::from_millis(30)).unwrap(),
    );
    let fusion = r
        .consumer(
            "fusion",
            QueuePolicy::backpressure(64, TimeDelta::from_millis(10)),
        )
        .route(imu, Fusion::Imu)
        .route(lidar, Fusion::Lidar)
        .build();
    let vision = r
        .consumer("vision", QueuePolicy::keep_newest(2))
        .route(camera, |s| s)
        .build();
    let (fused, f_task) = consume(fusion, Some(0), 0, fusion_info, clock);
    let (_, v_task) = consume(vision, None, 0, plain_info, clock);
    let status = r.build().await;
    let _ = f_task.await.unwrap();
    v_task.abort();

    let fused = fused.lock().unwrap();
    assert_eq!(fused.len(), 420);
    assert!(
        fused.windows(2).all(|w| w[0].0 <= w[1].0),
        "fusion in order"
    );
    let worst = fused.iter().map(|&(_, a, r)| r - a).max().unwrap();
    assert!(
        worst <= timeout.as_nanos() + ms,
        "fusion latency {worst} ns"
    );
    let vision = &status.consumers[1];
    assert_eq!(vision.routed, 60);
    assert_eq!(vision.dropped_overflow, 58);
    assert_eq!(vision.max_queued, 2);
    assert!(status.consumers.iter().all(conserved));
    assert_eq!(status.lanes[0].name, "imu");
    assert_eq!(status.consumers[0].inputs, ["imu", "lidar"]);
}

/// A backpressure consumer that never reads is marked stalled after its
/// deadline; the other consumer of the same input gets everything.
#[tokio::test(start_paused = true)]
async fn stuck_backpressure_consumer_stalls_after_its_deadline() {
    let ms = 1_000_000i64;
    let clock = TokioClock::starting_at(at(T0));
    let timeout = TimeDelta::from_millis(20);
    let deadline = TimeDelta::from_millis(15);
    let mut r = RouterBuilder::new(AlignerConfig { timeout }).live(clock);
    let mut reports = r.drop_reports().unwrap();
    let imu = r.input(
        "imu",
        timed_input(200, 5 * ms, 0, vec![ms]),
        StreamConfig::new(TimeDelta::from_millis(4)).unwrap(),
    );
    let stuck = r
        .consumer("stuck", QueuePolicy::backpressure(4, deadline))
        .route(imu, |s| s)
        .build();
    let fast = r
        .consumer("fast", QueuePolicy::keep_newest(8))
        .route(imu, |s| s)
        .build();
    let (seen, f_task) = consume(fast, Some(0), 0, plain_info, clock);
    let status = r.build().await;
    let _ = f_task.await.unwrap();

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 200);
    let worst = seen.iter().map(|&(_, a, r)| r - a).max().unwrap();
    assert!(
        worst <= timeout.as_nanos() + deadline.as_nanos() + ms,
        "latency {worst} ns"
    );
    let s = &status.consumers[0];
    assert!(s.stalled);
    assert_eq!(s.stalls, 1);
    assert_eq!(s.queued, 4);
    assert_eq!(s.dropped_stalled, 196);
    assert!(status.consumers.iter().all(conserved));
    drop(stuck);
    let mut stalled = 0;
    while let Ok(report) = reports.try_recv() {
        assert_eq!(&*report.stream, "imu");
        if report.reason == DropKind::Stalled {
            assert_eq!(report.consumer.as_deref(), Some("stuck"));
            stalled += 1;
        }
    }
    assert_eq!(stalled, 196);
}

/// An input that is always ready does not starve the thread: the router
/// yields after its budget.
#[tokio::test(flavor = "current_thread")]
async fn always_ready_input_yields() {
    let endless = futures::stream::iter(0i64..).map(|k| Stamped::new(at(k), k));
    let mut r = RouterBuilder::new(AlignerConfig {
        timeout: TimeDelta::from_millis(1),
    });
    let input = r.input(
        "endless",
        endless,
        StreamConfig::new(TimeDelta::ZERO).unwrap(),
    );
    let sink = r
        .consumer("sink", QueuePolicy::keep_newest(4))
        .route(input, |s| s)
        .build();
    let router = tokio::spawn(r.build());
    // If the router never yielded, this task would never run again.
    for _ in 0..3 {
        tokio::task::yield_now().await;
    }
    assert!(sink.status().routed > 0);
    router.abort();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Random input timings, consumer speeds, policies and reading styles
    /// (one at a time, or batches of random size): every consumer sees its
    /// samples in order, and every routed sample is received or counted as
    /// dropped.
    #[test]
    fn random_consumers_keep_order_and_conservation(
        inputs in prop::collection::vec(
            (1i64..20, 0i64..10, prop::collection::vec(0i64..30, 1..6), 5usize..60), 2..4),
        consumers in prop::collection::vec(
            (any::<bool>(), 1usize..6, 0i64..20, prop::option::of(0i64..15), 1u8..8, 0usize..5), 1..4),
        timeout_ms in 1i64..40,
    ) {
        let rt = paused_runtime();
        rt.block_on(async move {
            let ms = 1_000_000i64;
            let clock = TokioClock::starting_at(at(T0));
            let mut r = RouterBuilder::new(AlignerConfig { timeout: TimeDelta::from_millis(timeout_ms) }).live(clock);
            let mut ids = Vec::new();
            for (k, (period, phase, lat, n)) in inputs.iter().enumerate() {
                let lat = lat.iter().map(|l| l * ms).collect();
                let cfg = StreamConfig::new(TimeDelta::from_millis(period / 2)).unwrap().capacity(16).unwrap();
                ids.push(r.input(&format!("in{k}"), timed_input(*n, period * ms, phase * ms, lat), cfg));
            }
            let mut tasks = Vec::new();
            for (j, (keep, cap, deadline, work, mask, batch)) in consumers.iter().enumerate() {
                let policy = if *keep {
                    QueuePolicy::keep_newest(*cap)
                } else {
                    QueuePolicy::backpressure(*cap, TimeDelta::from_millis(*deadline))
                };
                let mut c = r.consumer::<Stamped<(usize, i64)>>(&format!("c{j}"), policy);
                for (k, id) in ids.iter().enumerate() {
                    if mask & (1 << k) != 0 {
                        c = c.route(*id, |s| s);
                    }
                }
                tasks.push(consume(c.build(), work.map(|w| w * ms / 4), *batch, plain_info, clock));
            }
            let status = r.build().await;
            for (j, (seen, task)) in tasks.into_iter().enumerate() {
                let stuck = consumers[j].3.is_none();
                // The final counters: the router's for a consumer that never
                // reads, the consumer's own once it has read everything.
                let s = if stuck {
                    task.abort();
                    status.consumers[j].clone()
                } else {
                    task.await.unwrap().status()
                };
                let seen = seen.lock().unwrap();
                prop_assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "consumer {j} out of order");
                prop_assert!(conserved(&s), "consumer {j}: {s:?}");
                if !stuck {
                    prop_assert_eq!(s.received, seen.len() as u64);
                    prop_assert_eq!(s.queued, 0);
                }
                prop_assert!(s.max_queued <= s.policy.capacity());
                let routed: u64 = status.aligner.streams.iter().enumerate()
                    .filter(|(k, _)| consumers[j].4 & (1 << k) != 0)
                    .map(|(_, st)| st.counters.released)
                    .sum();
                prop_assert_eq!(s.routed, routed);
            }
            for st in &status.aligner.streams {
                let c = st.counters;
                prop_assert_eq!(c.received, c.released + c.dropped_late + c.dropped_backward + c.dropped_overflow + st.queued as u64);
            }
            Ok(())
        })?;
    }
}

#[derive(Debug)]
struct Wrapped(Stamped<(usize, i64)>);

impl From<Stamped<(usize, i64)>> for Wrapped {
    fn from(s: Stamped<(usize, i64)>) -> Self {
        Wrapped(s)
    }
}

/// `input()` converts by `From`; a dropped receiver counts its samples as
/// closed while the other consumer of the same input gets them all.
#[tokio::test(start_paused = true)]
async fn from_conversion_and_a_dropped_receiver() {
    let ms = 1_000_000i64;
    let mut r = RouterBuilder::new(AlignerConfig {
        timeout: TimeDelta::from_millis(50),
    });
    let a = r.input(
        "a",
        timed_input(30, 10 * ms, 0, vec![ms]),
        StreamConfig::new(TimeDelta::from_millis(10)).unwrap(),
    );
    let mut kept: Consumer<Wrapped> = r
        .consumer("kept", QueuePolicy::keep_newest(64))
        .input(a)
        .build();
    let gone: Consumer<Wrapped> = r
        .consumer("gone", QueuePolicy::keep_newest(64))
        .input(a)
        .build();
    drop(gone);
    let status = r.build().await;
    let mut n = 0;
    while let Some(Wrapped(s)) = kept.next().await {
        assert_eq!(s.value.0, n);
        n += 1;
    }
    assert_eq!(n, 30);
    let gone = &status.consumers[1];
    assert!(gone.closed);
    assert_eq!(gone.dropped_closed, 30);
    assert!(conserved(gone));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Replay (no clock): backpressure consumers of random capacities that
    /// read at random paces (yielding after some samples), one at a time or
    /// in batches of random size, get every sample of their inputs, in
    /// order, never more queued than their capacity, and the driver never
    /// hangs waiting for room.
    #[test]
    fn replay_backpressure_consumers_lose_nothing(
        inputs in prop::collection::vec((1i64..20, 0i64..10, 1usize..300), 1..4),
        consumers in prop::collection::vec((1usize..40, 1usize..8, 1u8..8, 0usize..50), 1..4),
    ) {
        let rt = paused_runtime();
        rt.block_on(async move {
            let mut r = RouterBuilder::new(AlignerConfig { timeout: TimeDelta::from_millis(5) });
            let mut ids = Vec::new();
            for (k, &(period, phase, n)) in inputs.iter().enumerate() {
                let samples = (0..n).map(move |i| Stamped::new(at(T0 + phase + i as i64 * period), (k, i as i64)));
                let cfg = StreamConfig::lookahead(TimeDelta::from_nanos(period)).unwrap();
                ids.push(r.input(&format!("in{k}"), futures::stream::iter(samples), cfg));
            }
            let mut tasks = Vec::new();
            for (j, (cap, pace, mask, batch)) in consumers.iter().enumerate() {
                let policy = QueuePolicy::backpressure(*cap, TimeDelta::from_millis(1));
                let mut c = r.consumer::<Stamped<(usize, i64)>>(&format!("c{j}"), policy);
                for (k, id) in ids.iter().enumerate() {
                    if mask & (1 << k) != 0 {
                        c = c.route(*id, |s| s);
                    }
                }
                let (mut c, pace, batch) = (c.build(), *pace, *batch);
                tasks.push(tokio::spawn(async move {
                    let mut seen = Vec::new();
                    let mut items = Vec::new();
                    loop {
                        if batch == 0 {
                            match c.next().await {
                                Some(s) => items.push(s),
                                None => break,
                            }
                        } else if c.recv_many(&mut items, batch).await == 0 {
                            break;
                        }
                        for s in items.drain(..) {
                            seen.push(s.stamp);
                            if seen.len() % pace == 0 {
                                tokio::task::yield_now().await;
                            }
                        }
                    }
                    (seen, c.status())
                }));
            }
            let driver = tokio::spawn(r.build());
            let status = tokio::time::timeout(Duration::from_secs(60), driver).await;
            prop_assert!(status.is_ok(), "the driver hung waiting for room");
            for (j, task) in tasks.into_iter().enumerate() {
                let (seen, s) = task.await.unwrap();
                let expected: usize = inputs.iter().enumerate()
                    .filter(|(k, _)| consumers[j].2 & (1 << k) != 0)
                    .map(|(_, i)| i.2)
                    .sum();
                prop_assert!(seen.is_sorted(), "consumer {j} out of order");
                prop_assert_eq!(seen.len(), expected);
                prop_assert_eq!(s.dropped(), 0);
                prop_assert!(s.max_queued <= s.policy.capacity());
            }
            Ok(())
        })?;
    }
}

/// Replay (no clock): one task reads two backpressure consumers in turn,
/// one sample of each, while the first one's queue stays above half. The
/// second one's receiver, waiting for a sample, wakes the router, which
/// pushes what fits, so the task never waits on a router that waits for it.
#[tokio::test(start_paused = true)]
async fn one_task_reads_two_backpressure_consumers_in_turn() {
    let mut r = RouterBuilder::new(AlignerConfig {
        timeout: TimeDelta::from_millis(5),
    });
    let n = 200usize;
    let input = |phase: i64, k: usize| {
        futures::stream::iter(
            (0..n).map(move |i| Stamped::new(at(T0 + phase + i as i64 * 10), (k, i as i64))),
        )
    };
    let cfg = || StreamConfig::lookahead(TimeDelta::from_nanos(10)).unwrap();
    // `a` runs six samples ahead of `b`: `a`'s queue of 8 holds 6-8 samples
    // while the task reads both in turn, above its half.
    let a = r.input("a", input(0, 0), cfg());
    let b = r.input("b", input(65, 1), cfg());
    let policy = QueuePolicy::backpressure(8, TimeDelta::from_millis(1));
    let mut ca = r
        .consumer::<Stamped<(usize, i64)>>("a", policy)
        .route(a, |s| s)
        .build();
    let mut cb = r
        .consumer::<Stamped<(usize, i64)>>("b", policy)
        .route(b, |s| s)
        .build();
    let driver = tokio::spawn(r.build());
    let reader = tokio::spawn(async move {
        let (mut na, mut nb) = (0, 0);
        loop {
            let x = ca.next().await;
            let y = cb.next().await;
            na += usize::from(x.is_some());
            nb += usize::from(y.is_some());
            if x.is_none() && y.is_none() {
                return (na, nb);
            }
        }
    });
    let read = tokio::time::timeout(Duration::from_secs(60), reader).await;
    let (na, nb) = read
        .expect("the reader and the router waited for each other")
        .unwrap();
    assert_eq!((na, nb), (n, n));
    driver.await.unwrap();
}

/// A backpressure consumer takes its whole queue at once, but the room it
/// gives back counts as it returns samples: one that reads steadily, in
/// bursts that take longer than its deadline to get through, is never
/// stalled and loses nothing, and its queue (with the batch it holds)
/// never exceeds its capacity.
#[tokio::test(start_paused = true)]
async fn steady_reader_of_a_long_batch_is_not_stalled() {
    let ms = 1_000_000i64;
    let clock = TokioClock::starting_at(at(T0));
    let timeout = TimeDelta::from_millis(100);
    // Capacity 8, deadline 5 ms; a batch of 8 takes 7.2 ms to read.
    let policy = QueuePolicy::backpressure(8, TimeDelta::from_millis(5));
    let mut r = RouterBuilder::new(AlignerConfig { timeout }).live(clock);
    // 1 sample per ms, arriving in bursts of 16 every 16 ms.
    let latencies = (0..16).map(|k| (16 - k) * ms).collect();
    let imu = r.input(
        "imu",
        timed_input(160, ms, 0, latencies),
        StreamConfig::new(TimeDelta::ZERO).unwrap(),
    );
    let c = r.consumer("steady", policy).route(imu, |s| s).build();
    let (seen, task) = consume(c, Some(900_000), 0, plain_info, clock);
    let status = r.build().await;
    let c = task.await.unwrap();

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 160);
    assert!(seen.windows(2).all(|w| w[0].0 <= w[1].0), "in order");
    let s = c.status();
    assert_eq!((s.stalls, s.dropped()), (0, 0), "{s:?}");
    assert_eq!((s.received, s.queued), (160, 0));
    assert!(status.consumers.iter().all(conserved));
    assert!(status.consumers.iter().all(|c| c.max_queued <= 8));
}
