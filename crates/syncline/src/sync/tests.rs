use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::{Stream, StreamExt, stream};
use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;

use super::*;
use crate::SynclineExt;
use crate::clock::TokioClock;
use crate::{Stamped, TimeDelta};

fn ms(x: i64) -> Timestamp {
    Timestamp::from_nanos(x * 1_000_000)
}

#[derive(Debug, Clone, PartialEq)]
struct Image(u32);
#[derive(Debug, Clone, PartialEq)]
struct Imu([f64; 3]);

fn channel<T>() -> (mpsc::UnboundedSender<T>, UnboundedReceiverStream<T>) {
    let (tx, rx) = mpsc::unbounded_channel();
    (tx, UnboundedReceiverStream::new(rx))
}

#[tokio::test(start_paused = true)]
async fn three_types_sets_as_data_arrives_and_end_drops() {
    let (cam_tx, cam) = channel::<Stamped<Image>>();
    let (imu_tx, imu) = channel::<Stamped<Imu>>();
    let (odo_tx, odo) = channel::<Stamped<u64>>();
    let mut sets = approximate_time(
        (cam, imu, odo),
        ApproximateConfig::default().check().unwrap(),
    );
    let mut drops = sets.drop_reports();
    let status = sets.status_watch();
    let task = tokio::spawn(async move {
        let mut got = Vec::new();
        while let Some((c, i, o)) = sets.next().await {
            got.push((c.value.0, i.stamp, o.value));
        }
        got
    });
    for k in 0..10i64 {
        let t = ms(100 * k);
        cam_tx.send(Stamped::new(t, Image(k as u32))).unwrap();
        for j in 0..10 {
            imu_tx
                .send(Stamped::new(
                    t.saturating_add(TimeDelta::from_millis(10 * j)),
                    Imu([0.0; 3]),
                ))
                .unwrap();
        }
        odo_tx
            .send(Stamped::new(ms(100 * k + 3), k as u64))
            .unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop((cam_tx, imu_tx, odo_tx));
    let got = task.await.unwrap();
    // Each camera frame matched with the IMU sample of its stamp and its odometry.
    assert!(got.len() >= 9, "{got:?}");
    for (c, imu_stamp, o) in &got {
        assert_eq!(u64::from(*c), *o);
        assert_eq!(*imu_stamp, ms(100 * i64::from(*c)));
    }
    let mut reasons = DropCounts::default();
    let mut n_drops = 0;
    while let Ok(d) = drops.try_recv() {
        reasons.add(d.reason);
        n_drops += 1;
        if d.topic == 1 {
            assert!(d.message.downcast_ref::<Stamped<Imu>>().is_some());
        }
    }
    let st = status.borrow().clone();
    assert_eq!(st.pushed, 120);
    assert_eq!(st.sets as usize, got.len());
    assert_eq!(st.sets * 3 + n_drops, 120, "conservation: {st:?}");
    assert_eq!(st.dropped, reasons);
    assert!(reasons.end > 0);
}

#[tokio::test]
async fn vec_form_any_count_and_tuples_up_to_twelve() {
    let streams: Vec<_> = (0..11)
        .map(|i| stream::iter((0..4).map(move |k| Stamped::new(ms(10 * k + i % 2), (i, k)))))
        .collect();
    let sets: Vec<Vec<Stamped<(i64, i64)>>> =
        approximate_time(streams, ApproximateConfig::default().check().unwrap())
            .collect()
            .await;
    // The last set (30 / 31 ms) is never proven optimal: reported as `end`.
    assert_eq!(sets.len(), 3);
    assert!(sets.iter().all(|s| s.len() == 11));
    let s = |o: i64| stream::iter((0..3).map(move |k| Stamped::new(ms(10 * k + o), k)));
    let nine = approximate_time(
        (s(0), s(1), s(2), s(0), s(1), s(2), s(0), s(1), s(2)),
        ApproximateConfig::default().check().unwrap(),
    );
    let sets: Vec<_> = nine.collect().await;
    assert_eq!(sets.len(), 2);
    assert_eq!(sets[1].8.value, 1);
    let [a, b, c, d, e, f, g, h, i, j, k, l] = std::array::from_fn(|_| s(0));
    let twelve = (a, b, c, d, e, f, g, h, i, j, k, l);
    assert_eq!(
        exact_time(twelve, ExactConfig::default().check().unwrap())
            .count()
            .await,
        3
    );
}

/// Settings are checked where they are built; the adapters cannot fail:
/// the topic count is the inputs', and a per-topic setting for a topic the
/// inputs do not have is unused.
#[tokio::test]
async fn settings_are_checked_when_built_and_the_count_is_the_inputs() {
    assert_eq!(
        ApproximateConfig::default().queue_size(0).check(),
        Err(ConfigError::ZeroQueue)
    );
    assert!(
        ApproximateConfig::default()
            .lower_bound(5, TimeDelta::from_millis(-1))
            .check()
            .is_err()
    );
    let rate = RateConfig {
        rate_ema_alpha: 2.0,
        ..RateConfig::default()
    };
    assert!(LatestConfig::default().rate_config(rate).check().is_err());
    let s = |k: i64| stream::iter([Stamped::new(ms(0), k), Stamped::new(ms(10), k)]);
    // A lower bound for topic 5 of a two-input synchronizer: unused.
    let settings = ApproximateConfig::default()
        .lower_bound(5, TimeDelta::from_millis(5))
        .check()
        .unwrap();
    assert_eq!(settings.needed_topics(), 6);
    let sets = (s(0), s(1)).approximate_time(settings);
    assert_eq!(sets.status().held.len(), 2);
    assert_eq!(sets.count().await, 2);
    let three = vec![s(0), s(1), s(2)].exact_time(ExactSettings::default());
    assert_eq!(three.status().held.len(), 3);
    let sets: Vec<_> = three.collect().await;
    assert_eq!(sets.len(), 2);
    assert!(sets.iter().all(|set| set.len() == 3));
}

#[tokio::test]
async fn a_stream_that_ends_early_finishes_the_synchronizer() {
    // `b` ends after one message; `a` never ends: once b's message is used
    // (or dropped), no set can be formed and the stream ends.
    let a = stream::iter((0..5).map(ms)).chain(stream::pending());
    let b = stream::iter([ms(0)]);
    let mut sync = approximate_time(
        (a.boxed(), b),
        ApproximateConfig::default().check().unwrap(),
    );
    let sets: Vec<_> = (&mut sync).collect().await;
    assert_eq!(sets, vec![(ms(0), ms(0))]);
    let st = sync.status();
    assert_eq!(st.pushed, 2 * st.sets + st.dropped.total());
    assert!(st.dropped.end > 0);
}

#[tokio::test(start_paused = true)]
async fn latest_time_on_the_paused_clock() {
    let clock = TokioClock::starting_at(Timestamp::EPOCH);
    let (fast_tx, fast) = channel::<Stamped<u32>>();
    let (slow_tx, slow) = channel::<Stamped<u32>>();
    let sync = latest_time(
        (fast, slow),
        LatestConfig::default().check().unwrap(),
        clock,
    );
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let task = register_callback(sync, move |(f, s)| {
        let log = log.clone();
        async move { log.lock().unwrap().push((f.value, s.value)) }
    });
    for k in 0..40u32 {
        if k % 4 == 0 {
            slow_tx.send(Stamped::new(clock.now(), k / 4)).unwrap();
        }
        fast_tx.send(Stamped::new(clock.now(), k)).unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    drop((fast_tx, slow_tx));
    task.await.unwrap();
    let seen = seen.lock().unwrap();
    assert!(seen.len() >= 30, "{seen:?}");
    // zero-order hold: the slow member is the latest slow message
    for (f, s) in seen.iter() {
        assert_eq!(*s, f / 4);
    }
}

#[tokio::test]
async fn exact_time_drop_reports_carry_the_message() {
    let t = Timestamp::from_nanos;
    let a = stream::iter([Stamped::new(t(1), "a1"), Stamped::new(t(2), "a2")]);
    let b = stream::iter([Stamped::new(t(2), 2.0f64)]);
    let mut sync = exact_time((a, b), ExactConfig::default().check().unwrap());
    let mut drops = sync.drop_reports();
    let sets: Vec<_> = (&mut sync).collect().await;
    assert_eq!(sets.len(), 1);
    let d = drops.recv().await.unwrap();
    assert_eq!((d.topic, d.reason), (0, DropReason::Skipped));
    assert_eq!(
        *d.message.downcast::<Stamped<&str>>().unwrap(),
        Stamped::new(t(1), "a1")
    );
}

/// Polls `sets` once without a runtime (its inputs are channels that are
/// ready or pending, never timers).
fn poll_once<St: Stream + Unpin>(sets: &mut St) -> Poll<Option<St::Item>> {
    let mut cx = Context::from_waker(std::task::Waker::noop());
    Pin::new(sets).poll_next(&mut cx)
}

/// Regression: one message held forever by ExactTime (its stamp is far in
/// the future, no other topic ever matches it) used to keep an empty slot
/// alive for every later message of its topic.
#[test]
fn exact_time_storage_stays_bounded_while_a_message_is_held_forever() {
    let (a_tx, a) = futures::channel::mpsc::unbounded::<Timestamp>();
    let (b_tx, b) = futures::channel::mpsc::unbounded::<Timestamp>();
    let mut sets = exact_time(vec![a, b], ExactConfig::default().check().unwrap());
    a_tx.unbounded_send(ms(1_000_000_000)).unwrap();
    let mut emitted = 0;
    for k in 0..20_000 {
        a_tx.unbounded_send(ms(k)).unwrap();
        b_tx.unbounded_send(ms(k)).unwrap();
        while let Poll::Ready(Some(_)) = poll_once(&mut sets) {
            emitted += 1;
        }
        let held: usize = sets.status().held.iter().sum();
        assert_eq!(sets.stored(), held);
        assert!(sets.stored() <= 2, "{} stored at {k}", sets.stored());
    }
    assert_eq!(emitted, 20_000);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Over random inputs (stamps in any order, duplicates, any topic),
    /// ExactTime's stream keeps alive exactly the messages its core holds,
    /// at most `queue_size` pending stamps times the number of topics.
    #[test]
    fn exact_time_stores_at_most_its_queue(
        n in 2usize..=4,
        queue in 1usize..6,
        msgs in proptest::collection::vec((0usize..4, 0i64..40), 0..300),
    ) {
        let (txs, rxs): (Vec<_>, Vec<_>) =
            (0..n).map(|_| futures::channel::mpsc::unbounded::<Timestamp>()).unzip();
        let mut sets = exact_time(rxs, ExactConfig::default().queue_size(queue).check().unwrap());
        let mut emitted = 0u64;
        for (topic, stamp) in msgs {
            txs[topic % n].unbounded_send(Timestamp::from_nanos(stamp)).unwrap();
            while let Poll::Ready(Some(set)) = poll_once(&mut sets) {
                proptest::prop_assert!(set.iter().all(|s| *s == set[0]));
                emitted += 1;
            }
            let held: usize = sets.status().held.iter().sum();
            proptest::prop_assert_eq!(sets.stored(), held);
            proptest::prop_assert!(sets.stored() <= queue * n);
        }
        drop(txs);
        while let Poll::Ready(Some(_)) = poll_once(&mut sets) {
            emitted += 1;
        }
        let st = sets.status();
        proptest::prop_assert_eq!(sets.stored(), 0);
        // Conservation: every message in a set or dropped with a reason.
        proptest::prop_assert_eq!(st.pushed, emitted * n as u64 + st.dropped.total());
    }
}

/// The stall timeout acts on the runtime's timer: with no message at all
/// after the first, the silent topic is set aside once the timeout has
/// passed (partial mode: the held message leaves as a partial set, which
/// the typed stream reports as `stalled`), or the held messages are dropped
/// (report mode). Both status receivers see it.
#[tokio::test(start_paused = true)]
async fn stall_timeout_runs_on_the_runtime_timer() {
    for action in [StallAction::Partial, StallAction::Report] {
        let (a_tx, a) = channel::<Timestamp>();
        let (_b_tx, b) = channel::<Timestamp>();
        let stall = StallConfig {
            timeout: TimeDelta::from_millis(100),
            action,
        };
        let mut sets = approximate_time(
            (a, b),
            ApproximateConfig::default().stall(stall).check().unwrap(),
        );
        let mut drops = sets.drop_reports();
        let first = sets.status_watch();
        let second = sets.status_watch();
        let task = tokio::spawn(async move { (&mut sets).count().await });
        a_tx.send(ms(0)).unwrap();
        a_tx.send(ms(10)).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(
            drops.try_recv().is_err(),
            "{action:?}: nothing before the timeout"
        );
        assert_eq!(first.borrow().pushed, 2);
        // No further message: only the timer can act.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let mut got = Vec::new();
        while let Ok(d) = drops.try_recv() {
            assert_eq!((d.topic, d.reason), (0, DropReason::Stalled));
            got.push(d.stamp);
        }
        assert_eq!(got, vec![ms(0), ms(10)], "{action:?}");
        for rx in [&first, &second] {
            let st = rx.borrow().clone();
            assert_eq!(st.held, vec![0, 0]);
            match action {
                StallAction::Partial => {
                    assert_eq!(st.partial_sets, 2);
                    assert_eq!(st.stalled_topics, vec![1]);
                }
                StallAction::Report => {
                    assert_eq!(st.dropped.stalled, 2);
                    // Emptied and silent itself by now: both are stalled.
                    assert_eq!(st.stalled_topics, vec![0, 1]);
                }
            }
        }
        drop(a_tx);
        drop(_b_tx);
        assert_eq!(task.await.unwrap(), 0);
    }
}

/// The timer follows the newest deadline: messages that keep arriving on
/// both topics keep it from acting.
#[tokio::test(start_paused = true)]
async fn stall_timer_is_reset_by_live_topics() {
    let (a_tx, a) = channel::<Timestamp>();
    let (b_tx, b) = channel::<Timestamp>();
    let stall = StallConfig {
        timeout: TimeDelta::from_millis(30),
        action: StallAction::Report,
    };
    let mut sets = approximate_time(
        (a, b),
        ApproximateConfig::default().stall(stall).check().unwrap(),
    );
    let status = sets.status_watch();
    let task = tokio::spawn(async move { (&mut sets).count().await });
    for k in 0..50 {
        a_tx.send(ms(20 * k)).unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
        b_tx.send(ms(20 * k + 10)).unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let st = status.borrow().clone();
    assert_eq!(st.dropped.stalled, 0, "{st:?}");
    assert_eq!(st.sets, 49);
    drop((a_tx, b_tx));
    assert_eq!(task.await.unwrap(), 49);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// On the paused runtime clock, with the stall timeout acting on the
    /// timer, every message leaves the typed stream in a set or as a drop
    /// report with a reason, whatever the timing (topics falling silent,
    /// bursts, gaps longer than the timeout) and the stall action.
    #[test]
    fn stall_timer_conserves_every_message(
        steps in proptest::collection::vec((0usize..2, 0u64..60), 1..80),
        timeout_ms in 1i64..100,
        queue in 1usize..6,
        partial in proptest::bool::ANY,
    ) {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .unwrap();
        let action = if partial { StallAction::Partial } else { StallAction::Report };
        let (ids, n) = rt.block_on(async move {
            let clock = TokioClock::starting_at(Timestamp::EPOCH);
            let (a_tx, a) = channel::<Stamped<usize>>();
            let (b_tx, b) = channel::<Stamped<usize>>();
            let config = ApproximateConfig::default().queue_size(queue).stall(StallConfig {
                timeout: TimeDelta::from_millis(timeout_ms),
                action,
            }).check().unwrap();
            let mut sets = (a, b).approximate_time(config);
            let mut drops = sets.drop_reports();
            let task = tokio::spawn(async move {
                let mut ids = Vec::new();
                while let Some((x, y)) = sets.next().await {
                    ids.extend([x.value, y.value]);
                }
                ids
            });
            let n = steps.len();
            for (id, (topic, wait)) in steps.into_iter().enumerate() {
                tokio::time::sleep(Duration::from_millis(wait)).await;
                // Stamped at arrival on the runtime's clock.
                let m = Stamped::new(clock.now(), id);
                if topic == 0 { a_tx.send(m).unwrap() } else { b_tx.send(m).unwrap() }
            }
            drop((a_tx, b_tx));
            let mut ids = task.await.unwrap();
            while let Some(d) = drops.recv().await {
                let value = *d.message.downcast::<Stamped<usize>>().unwrap();
                ids.push(value.value);
            }
            (ids, n)
        });
        let mut ids = ids;
        ids.sort_unstable();
        proptest::prop_assert_eq!(ids, (0..n).collect::<Vec<_>>());
    }
}
