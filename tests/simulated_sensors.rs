//! A whole sensor pipeline in simulated time is deterministic: an IMU
//! (100 Hz) and a GNSS receiver (10 Hz), both coordinator participants,
//! deliver their samples after seeded-random delays; the samples go through
//! `.timestamped()` and the live aligner, both on the [`SimClock`], and
//! every output (stamps, order, estimator and aligner status) is the same
//! on every run of the program on a multi-thread runtime.
//!
//! The rule that makes it so (see `docs/tick.md`): a sample is delivered at
//! a simulated instant strictly after the step that produced it, and the
//! pipeline's consumer is itself a participant that, at each of its steps,
//! drives the pipeline until it waits. Arrival times are then read at
//! simulated instants only, with every delivery due by then already made.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};
use syncline::aligner::{AlignedStatus, AlignerConfig, OneOf2, StreamConfig};
use syncline::clock::{Clock, SystemClock};
use syncline::core::estimator::{Estimator, EstimatorConfig};
use syncline::core::timer::CoordinatorConfig;
use syncline::prelude::*;
use syncline::timer::{PeriodicTimer, SimClock, TimerConfig, TimingCoordinator, in_process_bus};
use tokio::sync::mpsc;

/// A sample in flight: `(delivery time, sequence number, value)`.
type InFlight = (Timestamp, u32, u32);
type Log = Arc<Mutex<Vec<(i64, String)>>>;
/// The pipeline's state at the last logged step: estimator samples of
/// each sensor and the aligner status.
type Snapshot = (u64, u64, AlignedStatus);
type Last = Arc<Mutex<Option<Snapshot>>>;
/// A run's log `(step time, line)` and its last snapshot.
type Run = (Vec<(i64, String)>, Option<Snapshot>);

const MS: i64 = 1_000_000;
/// Simulated run length.
const END: i64 = 2_000 * MS;

/// A small seeded generator (splitmix64): the delays are random but the
/// same on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// The receiving end of a simulated sensor link: yields each sample once
/// simulated time reached its delivery time, in delivery order.
fn delivered(
    mut rx: mpsc::UnboundedReceiver<InFlight>,
    clock: SimClock,
) -> impl Stream<Item = u32> + Send + 'static {
    let mut heap = BinaryHeap::new();
    let mut closed = false;
    futures::stream::poll_fn(move |cx| {
        while let Poll::Ready(m) = rx.poll_recv(cx) {
            match m {
                Some(m) => heap.push(Reverse(m)),
                None => {
                    closed = true;
                    break;
                }
            }
        }
        match heap.peek() {
            Some(Reverse((at, ..))) if *at <= clock.now() => {
                Poll::Ready(heap.pop().map(|Reverse((_, _, v))| v))
            }
            None if closed => Poll::Ready(None),
            _ => Poll::Pending,
        }
    })
}

fn timer(
    connector: &syncline::timer::BusConnector,
    name: &str,
    period_ms: i64,
    clock: &SimClock,
) -> PeriodicTimer<syncline::timer::BusParticipant> {
    let cfg = TimerConfig::new(name, TimeDelta::from_millis(period_ms), TimeDelta::ZERO)
        .simulated(true, true);
    PeriodicTimer::new(cfg, Some(connector.connect(name).unwrap()))
        .unwrap()
        .with_sim_clock(clock.clone())
}

/// A simulated sensor: at each step it acquires a sample and sends it with
/// a delivery delay of `min_ms + [0, spread_ms)` whole milliseconds.
fn sensor(
    timer: &PeriodicTimer<syncline::timer::BusParticipant>,
    seed: u64,
    (min_ms, spread_ms): (i64, u64),
) -> mpsc::UnboundedReceiver<InFlight> {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut rng = Rng(seed);
    let mut k = 0u32;
    timer
        .start_async(move |t: Timestamp| {
            let delay = min_ms + rng.below(spread_ms) as i64;
            let at = Timestamp::from_nanos(t.as_nanos() + delay * MS);
            let _ = tx.send((at, k, k));
            k += 1;
        })
        .unwrap();
    rx
}

fn run_once() -> Run {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _enter = rt.enter();
    let (bus, connector) = in_process_bus();
    // A participant that does not answer within `answer_timeout` (wall
    // time) is left behind, which would change the outputs: give a loaded
    // CI machine plenty of room.
    let config = CoordinatorConfig::simulated()
        .expect(["imu", "gnss", "pipeline"])
        .answer_timeout(TimeDelta::from_secs(30));
    let coordinator = TimingCoordinator::spawn(config, bus, SystemClock).unwrap();
    let clock = SimClock::default();
    let log: Log = Arc::default();
    let last: Last = Arc::default();

    let timers = [
        timer(&connector, "imu", 10, &clock),
        timer(&connector, "gnss", 100, &clock),
        timer(&connector, "pipeline", 1, &clock),
    ];
    let imu_link = sensor(&timers[0], 1, (1, 8));
    let gnss_link = sensor(&timers[1], 2, (20, 60));

    let estimator = |min_latency_ms| {
        Estimator::new(EstimatorConfig {
            min_latency: TimeDelta::from_millis(min_latency_ms),
            ..EstimatorConfig::new(TimeDelta::from_secs(1))
        })
        .expect("valid estimator configuration")
    };
    let imu = delivered(imu_link, clock.clone())
        .timestamped(estimator(1))
        .with_clock(clock.clone());
    let gnss = delivered(gnss_link, clock.clone())
        .timestamped(estimator(20))
        .with_clock(clock.clone());
    let (imu_status, gnss_status) = (imu.status_watch(), gnss.status_watch());
    let mut aligned = (imu, gnss).aligned_live(
        AlignerConfig {
            timeout: TimeDelta::from_millis(100),
        },
        // Lookaheads the estimated stamps keep (half the periods): a
        // stream's next stamp is never earlier than its last plus these.
        (
            StreamConfig::lookahead(TimeDelta::from_millis(5)).unwrap(),
            StreamConfig::lookahead(TimeDelta::from_millis(50)).unwrap(),
        ),
        clock.clone(),
    );

    // The consumer participant: at each simulated millisecond, drive the
    // pipeline until it waits, and log what comes out.
    let consumer_log = log.clone();
    let consumer_clock = clock.clone();
    let consumer_last = last.clone();
    timers[2]
        .start_async(move |t: Timestamp| {
            let mut cx = Context::from_waker(futures::task::noop_waker_ref());
            let mut log = consumer_log.lock().unwrap();
            while let Poll::Ready(Some(sample)) = aligned.poll_next_unpin(&mut cx) {
                assert_eq!(consumer_clock.now(), t);
                let value = match &sample {
                    OneOf2::A(s) | OneOf2::B(s) => s.value,
                };
                log.push((
                    t.as_nanos(),
                    format!("{} {} {value}", sample.input(), sample.stamp().as_nanos()),
                ));
            }
            if t.as_nanos() % (100 * MS) == 99 * MS {
                log.push((t.as_nanos(), format!("imu {:?}", *imu_status.borrow())));
                log.push((t.as_nanos(), format!("gnss {:?}", *gnss_status.borrow())));
                log.push((t.as_nanos(), format!("aligner {:?}", aligned.status())));
                if t.as_nanos() < END {
                    *consumer_last.lock().unwrap() = Some((
                        imu_status.borrow().samples,
                        gnss_status.borrow().samples,
                        aligned.status(),
                    ));
                }
            }
        })
        .unwrap();

    rt.block_on(clock.sleep_until(Timestamp::from_nanos(END)));
    for t in &timers {
        t.stop();
    }
    rt.block_on(async {
        coordinator.stop();
        coordinator.join().await;
    });
    // Every step before `END` is complete: the coordinator reached `END`
    // only after each participant reported back.
    let log = log
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.0 < END)
        .cloned()
        .collect();
    let last = last.lock().unwrap().clone();
    (log, last)
}

/// `(input, stamp, value)` of the released samples, in release order.
fn releases(log: &[(i64, String)]) -> Vec<(usize, i64, u32)> {
    log.iter()
        .filter_map(|(_, line)| {
            let mut f = line.split(' ');
            Some((
                f.next()?.parse().ok()?,
                f.next()?.parse().ok()?,
                f.next()?.parse().ok()?,
            ))
        })
        .collect()
}

#[test]
fn the_same_simulated_sensor_pipeline_gives_the_same_outputs() {
    let first = run_once();
    let out = releases(&first.0);
    // IMU samples acquired at 0, 10, ..., 1990 ms, GNSS at 0, 100, ...,
    // 1900 ms; the last ones may still be in flight or held at `END`.
    let imu: Vec<_> = out.iter().filter(|r| r.0 == 0).collect();
    let gnss: Vec<_> = out.iter().filter(|r| r.0 == 1).collect();
    assert!((195..=200).contains(&imu.len()), "{}", imu.len());
    assert!((15..=20).contains(&gnss.len()), "{}", gnss.len());
    // Each stream in order (every IMU sample once; GNSS samples the aligner
    // found late are dropped and counted, below), the whole output in
    // global stamp order.
    assert!(imu.iter().enumerate().all(|(k, r)| r.2 as usize == k));
    assert!(gnss.windows(2).all(|w| w[0].2 < w[1].2));
    assert!(out.windows(2).all(|w| w[0].1 <= w[1].1));
    // The estimated stamps are acquisition times to within the delivery
    // delay (acquisitions at 10 ms and 100 ms multiples).
    for (period, delay, stream) in [(10, 8, &imu), (100, 80, &gnss)] {
        for r in stream.iter().skip(2) {
            let acquired = i64::from(r.2) * period * MS;
            assert!((r.1 - acquired).abs() <= delay * MS, "{r:?}");
        }
    }
    let status_lines = first.0.iter().filter(|e| e.1.starts_with("aligner"));
    assert_eq!(status_lines.count(), 20);
    // Nothing lost: at 1999 ms, the estimators stamped all 200 IMU and 20
    // GNSS samples, and each was released, queued or counted as dropped.
    let (imu_samples, gnss_samples, status) = first.1.clone().unwrap();
    assert_eq!((imu_samples, gnss_samples), (200, 20));
    for (s, received) in status.aligner.streams.iter().zip([200, 20]) {
        let c = &s.counters;
        assert_eq!(c.received, received);
        let queued = s.queued as u64;
        assert_eq!(c.released + c.dropped_late + queued, received, "{s:?}");
    }
    for run in 1..=3 {
        let again = run_once();
        // Report the first difference, not the whole log.
        let diverged = first.0.iter().zip(&again.0).find(|(a, b)| a != b);
        assert_eq!(diverged, None, "run {run} diverged");
        assert_eq!(again.0.len(), first.0.len(), "run {run}");
        assert_eq!(again.1, first.1, "run {run}");
    }
}
