//! Async aligner tests on tokio's paused clock.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::StreamExt;
use tokio_stream::wrappers::ReceiverStream;

use super::*;
use crate::clock::TokioClock;
use crate::source::Arrived;
use syncline_core::TimeDelta;

fn ms(v: i64) -> Timestamp {
    Timestamp::from_nanos(v * 1_000_000)
}

fn config(timeout_ms: i64) -> AlignerConfig {
    AlignerConfig {
        timeout: TimeDelta::from_millis(timeout_ms),
    }
}

fn period(p_ms: i64) -> StreamConfig {
    StreamConfig::new(TimeDelta::from_millis(p_ms))
        .unwrap()
        .capacity(16)
        .unwrap()
}

#[derive(Debug, Clone, PartialEq)]
enum Msg {
    A(Stamped<u32>),
    B(Stamped<String>),
}

impl Msg {
    fn stamp(&self) -> Timestamp {
        match self {
            Msg::A(s) => s.stamp,
            Msg::B(s) => s.stamp,
        }
    }
}

/// An input we feed by hand: samples arrive when we send them.
fn input<T: Send + 'static>() -> (mpsc::Sender<Stamped<T>>, ReceiverStream<Stamped<T>>) {
    let (tx, rx) = mpsc::channel(64);
    (tx, ReceiverStream::new(rx))
}

#[tokio::test(start_paused = true)]
async fn replay_orders_heterogeneous_inputs_and_ends() {
    let a = futures::stream::iter((0..5).map(|i| Stamped::new(ms(10 * i), i as u32)));
    let b = futures::stream::iter((0..3).map(|i| Stamped::new(ms(15 * i + 1), format!("b{i}"))));
    let mut builder = AlignerBuilder::new(config(1000));
    builder.stream("a", a, period(10), Msg::A);
    builder.stream("b", b, period(15), Msg::B);
    let aligned = builder.aligned();
    let status = aligned.status_watch();
    let out: Vec<Msg> = aligned.collect().await;
    assert_eq!(out.len(), 8);
    assert!(
        out.windows(2).all(|w| w[0].stamp() <= w[1].stamp()),
        "{out:?}"
    );
    let st = status.borrow().clone();
    assert!(st.finished);
    assert_eq!(st.aligner.streams[0].counters.released, 5);
    assert_eq!(st.aligner.streams[1].counters.released, 3);
}

#[tokio::test(start_paused = true)]
async fn live_bound_releases_timeout_after_arrival_when_inputs_go_silent() {
    let clock = TokioClock::starting_at(ms(1_000));
    let (a_tx, a) = input::<u32>();
    let (_b_tx, b) = input::<String>(); // never delivers, never ends
    let mut builder = AlignerBuilder::new(config(100)).live(clock);
    builder.stream("a", a, period(10), Msg::A);
    builder.stream("b", b, period(10), Msg::B);
    let mut aligned = builder.aligned();

    tokio::time::advance(Duration::from_millis(7)).await;
    a_tx.send(Stamped::new(ms(500), 1)).await.unwrap();
    let arrived = clock.now();
    let first = aligned.next().await.unwrap();
    assert_eq!(first, Msg::A(Stamped::new(ms(500), 1)));
    // Exactly the timeout after its arrival, not earlier, not later.
    assert_eq!(
        clock.now().checked_since(arrived).unwrap(),
        TimeDelta::from_millis(100)
    );

    // Nothing queued: the aligner waits without a deadline.
    let waited = tokio::time::timeout(Duration::from_secs(3600), aligned.next()).await;
    assert!(waited.is_err());
}

/// The live bound counts from the hand-over an item carries: a sample that
/// sat 60 ms in its source's channel before the aligner read it leaves 40 ms
/// after it was read (100 ms after its hand-over); one without a carried
/// arrival, read at the same moment, waits the whole timeout from then.
#[tokio::test(start_paused = true)]
async fn live_bound_counts_from_the_hand_over_an_item_carries() {
    let clock = TokioClock::starting_at(ms(1_000));
    let (handed_tx, handed) = crate::source::source::<u32>(clock, 16);
    let (plain_tx, plain) = input::<String>();
    let (_silent_tx, silent) = input::<String>(); // holds both back
    let handed = handed.map(|a| Arrived::new(a.arrival, Stamped::new(ms(500), a.value)));
    let mut builder = AlignerBuilder::new(config(100)).live(clock);
    builder.stream("handed", handed, period(10), Msg::A);
    builder.stream("plain", plain, period(10), Msg::B);
    builder.stream("silent", silent, period(10), Msg::B);
    let mut aligned = builder.aligned();

    let handed_over = clock.now();
    handed_tx.send(7).unwrap();
    tokio::time::advance(Duration::from_millis(60)).await;
    plain_tx
        .send(Stamped::new(ms(501), "p".into()))
        .await
        .unwrap();
    let read = clock.now();
    let first = aligned.next().await.unwrap();
    assert_eq!(first, Msg::A(Stamped::new(ms(500), 7)));
    assert_eq!(
        clock.now().checked_since(handed_over).unwrap(),
        TimeDelta::from_millis(100)
    );
    let second = aligned.next().await.unwrap();
    assert_eq!(second, Msg::B(Stamped::new(ms(501), "p".into())));
    assert_eq!(
        clock.now().checked_since(read).unwrap(),
        TimeDelta::from_millis(100)
    );
}

#[tokio::test(start_paused = true)]
async fn live_flow_uses_sample_time_and_one_timer_per_deadline() {
    let clock = TokioClock::starting_at(ms(0));
    let (a_tx, a) = input::<u32>();
    let (b_tx, b) = input::<String>();
    let mut builder = AlignerBuilder::new(config(100)).live(clock);
    builder.stream("a", a, period(10), Msg::A);
    builder.stream("b", b, period(10), Msg::B);
    let mut aligned = builder.aligned();
    // b's sample is later in stamp but arrives first: it must wait for a.
    b_tx.send(Stamped::new(ms(20), "b".into())).await.unwrap();
    a_tx.send(Stamped::new(ms(10), 1)).await.unwrap();
    tokio::time::advance(Duration::from_millis(1)).await;
    let t0 = clock.now();
    assert_eq!(aligned.next().await.unwrap().stamp(), ms(10));
    // b at 20 is released once a promises nothing earlier (10 + 10 >= 20).
    assert_eq!(aligned.next().await.unwrap().stamp(), ms(20));
    assert_eq!(
        clock.now(),
        t0,
        "released by the lookahead rule, no waiting"
    );
    drop(a_tx);
    drop(b_tx);
    assert!(aligned.next().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn late_samples_are_dropped_counted_and_the_stream_goes_on() {
    let clock = TokioClock::starting_at(ms(0));
    let (a_tx, a) = input::<u32>();
    let (b_tx, b) = input::<String>();
    let mut builder = AlignerBuilder::new(config(50)).live(clock);
    builder.stream("a", a, period(10), Msg::A);
    builder.stream("b", b, period(10), Msg::B);
    let mut aligned = builder.aligned();
    a_tx.send(Stamped::new(ms(100), 1)).await.unwrap();
    assert_eq!(aligned.next().await.unwrap().stamp(), ms(100)); // after 50 ms
    b_tx.send(Stamped::new(ms(90), "late".into()))
        .await
        .unwrap();
    a_tx.send(Stamped::new(ms(110), 2)).await.unwrap();
    drop((a_tx, b_tx));
    let rest: Vec<_> = aligned.by_ref().collect().await;
    assert_eq!(rest, [Msg::A(Stamped::new(ms(110), 2))]);
    let st = aligned.status();
    assert_eq!(st.aligner.streams[1].counters.dropped_late, 1);
}

/// An input of `n` samples that counts how many were taken from it.
fn counted(n: u32, taken: Arc<AtomicUsize>) -> impl Stream<Item = Stamped<u32>> + Send {
    futures::stream::iter(0..n).map(move |i| {
        taken.fetch_add(1, Ordering::SeqCst);
        Stamped::new(ms(i64::from(i)), i)
    })
}

#[tokio::test(start_paused = true)]
async fn fan_out_backpressure_bounds_memory() {
    let taken = Arc::new(AtomicUsize::new(0));
    let mut builder = FanOutBuilder::new(config(1000));
    let mut rx = builder.channel(
        "a",
        counted(1000, taken.clone()),
        period(1).capacity(4).unwrap(),
        2,
    );
    let fan = builder.build();
    let status = fan.status_watch();
    let driver = tokio::spawn(fan);
    tokio::time::sleep(Duration::from_millis(10)).await;
    // The consumer has not read: the channel (2) is full, one release is in
    // flight and the core holds at most its capacity: the input is not drained.
    let before = taken.load(Ordering::SeqCst);
    assert!(before <= 2 + 1 + 4 + 1, "took {before}");
    // Now consume everything, in order.
    let mut seen = 0;
    while let Some(s) = rx.recv().await {
        assert_eq!(s.value, seen);
        seen += 1;
    }
    assert_eq!(seen, 1000);
    let st = driver.await.unwrap().unwrap();
    assert!(st.finished);
    assert_eq!(st.aligner.streams[0].counters.released, 1000);
    assert_eq!(status.borrow().aligner.streams[0].counters.released, 1000);
}

#[tokio::test(start_paused = true)]
async fn fan_out_reports_a_gone_consumer_and_keeps_serving_the_others() {
    let mut builder = FanOutBuilder::new(config(1000));
    let a = futures::stream::iter((0..10).map(|i| Stamped::new(ms(2 * i), i as u32)));
    let b = futures::stream::iter((0..10).map(|i| Stamped::new(ms(2 * i + 1), i.to_string())));
    let mut rx_a = builder.channel("a", a, period(2), 4);
    let rx_b = builder.channel("b", b, period(2), 4);
    drop(rx_b);
    let driver = tokio::spawn(builder.build());
    let mut got = Vec::new();
    while let Some(s) = rx_a.recv().await {
        got.push(s.value);
    }
    assert_eq!(got, (0..10).collect::<Vec<u32>>());
    let st = driver.await.unwrap().unwrap();
    assert!(st.lanes[1].consumer_gone);
    assert_eq!(st.lanes[1].undelivered, 10);
    assert!(!st.lanes[0].consumer_gone);
}

#[tokio::test(start_paused = true)]
async fn fan_out_ends_with_an_error_when_every_consumer_is_gone() {
    let mut builder = FanOutBuilder::new(config(1000));
    let a = futures::stream::iter((0..10).map(|i| Stamped::new(ms(i), i as u32)));
    drop(builder.channel("a", a, period(1), 1));
    let r = builder.build().await;
    match r {
        Err(FanOutError::AllConsumersGone(st)) => {
            assert!(st.lanes[0].consumer_gone);
            assert_eq!(st.lanes[0].undelivered, 1);
        }
        other => panic!("expected AllConsumersGone, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn fan_out_live_bound_with_a_silent_input() {
    let clock = TokioClock::starting_at(ms(0));
    let (a_tx, a) = input::<u32>();
    let (_b_tx, b) = input::<String>();
    let mut builder = FanOutBuilder::new(config(200)).live(clock);
    let mut rx_a = builder.channel("a", a, period(10), 8);
    let _rx_b = builder.channel("b", b, period(10), 8);
    let fan = builder.build();
    let mut status = fan.status_watch();
    tokio::spawn(fan);
    for i in 0..3 {
        a_tx.send(Stamped::new(ms(1000 + 10 * i), i as u32))
            .await
            .unwrap();
        // Let the driver take it now (arrival = now), then let time pass.
        tokio::task::yield_now().await;
        tokio::time::advance(Duration::from_millis(50)).await;
    }
    for i in 0..3 {
        let s = rx_a.recv().await.unwrap();
        assert_eq!(s.value, i);
        // Sample i arrived at 50·i ms and left 200 ms later.
        assert_eq!(clock.now(), ms(50 * i64::from(i) + 200));
    }
    // The status is observable while the driver runs (b never ends).
    tokio::task::yield_now().await;
    let st = status.borrow_and_update().clone();
    assert!(!st.finished);
    assert_eq!(st.aligner.streams[0].counters.released, 3);
    assert_eq!(st.aligner.streams[1].counters.received, 0);
}

#[tokio::test(start_paused = true)]
async fn bad_stream_config_is_refused_when_built() {
    assert_eq!(period(1).capacity(0), Err(AlignerError::ZeroCapacity));
    assert_eq!(
        StreamConfig::new(TimeDelta::from_nanos(-1)),
        Err(AlignerError::NegativePeriod(TimeDelta::from_nanos(-1)))
    );
    let builder = AlignerBuilder::<Msg>::new(config(10));
    let mut out = builder.aligned();
    assert!(out.next().await.is_none());
}

#[tokio::test(start_paused = true)]
async fn run_time_control_disable_timeout_and_remove() {
    let clock = TokioClock::starting_at(ms(0));
    let (a_tx, a) = input::<u32>();
    let (_b_tx, b) = input::<String>(); // silent
    let (c_tx, c) = input::<u32>();
    let mut builder = AlignerBuilder::new(config(1000)).live(clock);
    builder.stream("a", a, period(10), Msg::A);
    let b_id = builder.stream("b", b, period(10), Msg::B);
    let c_id = builder.stream("c", c, period(10), Msg::A);
    let mut aligned = builder.aligned();
    assert_eq!(aligned.stream_id("b"), Some(b_id));
    assert_eq!(aligned.stream_id("zz"), None);
    let control = aligned.control();

    // c delivers one sample, then a; b (silent) holds both back.
    c_tx.send(Stamped::new(ms(5_000), 9)).await.unwrap();
    a_tx.send(Stamped::new(ms(5_010), 1)).await.unwrap();
    let waited = tokio::time::timeout(Duration::from_millis(500), aligned.next()).await;
    assert!(waited.is_err(), "b still holds back");
    // Remove c (its queued sample is dropped and counted) and disable b:
    // a's sample goes at once, long before the 1 s bound.
    control.remove(c_id).unwrap();
    control.disable(b_id).unwrap();
    let t0 = clock.now();
    assert_eq!(
        aligned.next().await,
        Some(Msg::A(Stamped::new(ms(5_010), 1)))
    );
    assert_eq!(clock.now(), t0);
    let st = aligned.status();
    assert_eq!(st.aligner.dropped_removed, 1);
    assert_eq!(st.aligner.streams.len(), 2);

    // Enable b again and shorten the timeout: the next sample waits 200 ms.
    control.enable(b_id).unwrap();
    control.set_timeout(TimeDelta::from_millis(200)).unwrap();
    assert!(
        control
            .set_period(b_id, TimeDelta::from_millis(-1))
            .is_err()
    );
    control.set_priority(b_id, 3).unwrap();
    control.end(c_id).unwrap(); // removed: ignored, logged
    a_tx.send(Stamped::new(ms(5_020), 2)).await.unwrap();
    tokio::task::yield_now().await;
    let arrived = clock.now();
    assert_eq!(
        aligned.next().await,
        Some(Msg::A(Stamped::new(ms(5_020), 2)))
    );
    assert_eq!(
        clock.now().checked_since(arrived).unwrap(),
        TimeDelta::from_millis(200)
    );
    assert_eq!(aligned.status().aligner.streams[1].priority, 3);
    drop(aligned);
    assert_eq!(control.disable(b_id), Err(ControlError::Gone));
}

proptest::proptest! {
    /// Replay with period-0 lookahead (no promise beyond "not earlier than
    /// my last sample") and room for everything: whatever the interleaving
    /// of the inputs, nothing is dropped and the output is globally sorted.
    #[test]
    fn replay_orders_any_interleaving_without_drops(
        streams in proptest::collection::vec(
            proptest::collection::vec(0i64..1_000, 0..40), 1..5),
    ) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let total: usize = streams.iter().map(Vec::len).sum();
        let out = rt.block_on(async {
            let mut b = AlignerBuilder::new(config(i64::MAX / 2_000_000));
            for (k, mut stamps) in streams.into_iter().enumerate() {
                stamps.sort_unstable();
                let input = futures::stream::iter(
                    stamps.into_iter().map(move |t| Stamped::new(Timestamp::from_nanos(t), k)),
                );
                let cfg = StreamConfig::new(TimeDelta::ZERO).unwrap().capacity(64).unwrap();
                b.stream(&format!("s{k}"), input, cfg, |s| s);
            }
            b.aligned().collect::<Vec<Stamped<usize>>>().await
        });
        proptest::prop_assert_eq!(out.len(), total);
        proptest::prop_assert!(out.windows(2).all(|w| w[0].stamp <= w[1].stamp));
    }
}

proptest::proptest! {
    /// Replay of periodic inputs of very different rates (each with its
    /// period as lookahead) and a timeout of at least twice the longest
    /// period: the inputs are read in step in sample time (a batch of one
    /// input ends half a timeout past the last release), so the timeout
    /// never releases a sample before an earlier one of a slower-read
    /// input came in: nothing is dropped, the output is globally sorted.
    #[test]
    fn replay_reads_inputs_of_different_rates_in_step(
        inputs in proptest::collection::vec((1i64..50, 0i64..1_000, 0usize..400), 1..5),
        timeout_factor in 2i64..6,
    ) {
        let longest = inputs.iter().map(|i| i.0).max().unwrap_or(1);
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let total: usize = inputs.iter().map(|i| i.2).sum();
        let (out, status) = rt.block_on(async {
            let mut b = AlignerBuilder::new(config(timeout_factor * longest));
            for (k, &(p, phase, n)) in inputs.iter().enumerate() {
                let input = futures::stream::iter((0..n).map(move |i| {
                    // Far from the epoch, as real stamps are.
                    let t = ms(1_000_000 + i as i64 * p) + TimeDelta::from_micros(phase);
                    Stamped::new(t, k)
                }));
                let cfg = StreamConfig::lookahead(TimeDelta::from_millis(p)).unwrap();
                b.stream(&format!("s{k}"), input, cfg, |s| s);
            }
            let mut aligned = b.aligned();
            let mut out = Vec::new();
            while let Some(s) = aligned.next().await {
                out.push(s);
            }
            (out, aligned.status())
        });
        let dropped: Vec<_> = status.aligner.streams.iter().map(|s| s.counters).collect();
        proptest::prop_assert_eq!(out.len(), total, "{:?}", dropped);
        proptest::prop_assert!(out.windows(2).all(|w| w[0].stamp <= w[1].stamp));
    }
}
