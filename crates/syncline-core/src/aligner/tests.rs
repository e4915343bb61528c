//! Unit tests: Rock's StreamAligner unit tests (reference page §4.1) as
//! tables, the overflow example (§3.7), bad input and the live bound.

use proptest::prelude::*;

use super::*;

/// Milliseconds to a timestamp.
fn ms(v: i64) -> Timestamp {
    Timestamp::from_nanos(v * 1_000_000)
}

fn cfg(period_ms: i64, capacity: usize, priority: i64) -> StreamConfig {
    StreamConfig::new(TimeDelta::from_millis(period_ms))
        .unwrap()
        .capacity(capacity)
        .unwrap()
        .priority(priority)
}

/// An aligner over string labels, with Rock's 2 s test timeout.
struct Rig {
    a: Aligner<&'static str>,
    s: Vec<StreamId>,
}

impl Rig {
    fn new(timeout_ms: i64, streams: &[StreamConfig]) -> Self {
        let mut a = Aligner::new(AlignerConfig {
            timeout: TimeDelta::from_millis(timeout_ms),
        });
        let s = streams.iter().map(|c| a.add_stream(*c)).collect();
        Rig { a, s }
    }

    fn push(&mut self, stream: usize, t_ms: i64, label: &'static str) {
        assert_eq!(self.a.push(self.s[stream], ms(t_ms), label), Push::Queued);
    }

    /// Pushes `(stream, time in ms, label)` rows.
    fn pushes(&mut self, rows: &[(usize, i64, &'static str)]) {
        for &(s, t, l) in rows {
            self.push(s, t, l);
        }
    }

    /// Releases one sample, like Rock's `step()`.
    fn step(&mut self) -> Option<&'static str> {
        self.a.poll_release().map(|r| r.sample.value)
    }

    /// Steps until nothing is released; returns the labels.
    fn drain(&mut self) -> Vec<&'static str> {
        std::iter::from_fn(|| self.step()).collect()
    }
}

const ORDER_PUSHES: [(usize, i64, &str); 6] = [
    (0, 1000, "a"),
    (0, 3000, "c"),
    (1, 2000, "b"),
    (1, 3000, "d"),
    (1, 4000, "f"),
    (0, 4000, "e"),
];

#[test]
fn rock_order_test() {
    let mut r = Rig::new(2000, &[cfg(2000, 4, -1), cfg(2000, 4, 1)]);
    r.pushes(&ORDER_PUSHES);
    assert_eq!(r.drain(), ["a", "b", "c", "d", "e", "f"]);
    assert_eq!(r.a.latency(), Some(TimeDelta::ZERO));
}

#[test]
fn rock_stream_enable_test() {
    let mut r = Rig::new(2000, &[cfg(1000, 4, -1), cfg(0, 4, 1)]);
    r.pushes(&[(0, 1000, "a"), (1, 2000, "b")]);
    r.a.disable_stream(r.s[1]).unwrap();
    assert_eq!(r.a.status().streams[1].state, StreamState::Disabled);
    assert_eq!(r.drain(), ["a", "b"]);
    r.push(0, 3000, "c");
    assert_eq!(r.drain(), ["c"]);
    r.push(1, 4000, "d");
    assert_eq!(r.a.status().streams[1].state, StreamState::Active);
    r.push(0, 5000, "e");
    // s2 (period 0) expects 4 s < 5 s, is active, and 5 − 4 < 2: wait.
    assert_eq!(r.drain(), ["d"]);
}

#[test]
fn rock_remove_stream() {
    let mut r = Rig::new(2000, &[cfg(2000, 4, -1), cfg(2000, 4, -1), cfg(2000, 4, 1)]);
    let (s1, s3, s2) = (r.s[0], r.s[1], r.s[2]);
    r.push(1, 1000, "a");
    for (s, t, l) in ORDER_PUSHES {
        let id = if s == 0 { s1 } else { s2 };
        assert_eq!(r.a.push(id, ms(t), l), Push::Queued);
    }
    let handed_back: Vec<_> = r.a.remove_stream(s3).unwrap().collect();
    assert_eq!(handed_back, [Stamped::new(ms(1000), "a")]);
    assert_eq!(r.drain(), ["a", "b", "c", "d", "e", "f"]);
    // The freed slot is reused, with a new generation.
    let new = r.a.add_stream(cfg(2000, 4, -1));
    assert_eq!(new.slot(), 1);
    assert_ne!(new, s3);
    // Pushing with the old handle is rejected, handed back and counted.
    assert_eq!(
        r.a.push(s3, ms(9000), "x"),
        Push::Dropped(DropReason::UnknownStream, Stamped::new(ms(9000), "x"))
    );
    assert!(r.a.remove_stream(s3).is_err());
    assert_eq!(r.a.disable_stream(s3), Err(AlignerError::UnknownStream(s3)));
    let st = r.a.status();
    assert_eq!((st.dropped_removed, st.rejected_unknown), (1, 1));
}

#[test]
fn rock_copy_state_test_clones_are_independent() {
    let mut reader = Rig::new(2000, &[cfg(2000, 5, -1)]);
    reader.pushes(&[(0, 10_000, "a"), (0, 11_000, "b")]);
    let mut reader2 = Rig {
        a: reader.a.clone(),
        s: reader.s.clone(),
    };
    // Nothing released yet: no latency (Rock reports 11 s against time 0).
    assert_eq!(reader.a.latency(), None);
    assert_eq!(reader.drain(), ["a", "b"]);
    assert_eq!(reader2.drain(), ["a", "b"]);
    assert_eq!(reader.a.status(), reader2.a.status());
}

#[test]
fn rock_drop_test_backward() {
    let mut r = Rig::new(2000, &[cfg(2000, 5, -1)]);
    r.pushes(&[(0, 10_000, "a"), (0, 11_000, "b")]);
    assert_eq!(
        r.a.push(r.s[0], ms(10_000), "3"),
        Push::Dropped(DropReason::Backward, Stamped::new(ms(10_000), "3"))
    );
    assert_eq!(r.drain(), ["a", "b"]);
    assert_eq!(r.a.status().streams[0].counters.dropped_backward, 1);
}

#[test]
fn rock_timeout_test() {
    let mut r = Rig::new(2000, &[cfg(2000, 5, -1), cfg(0, 5, -1)]);
    r.pushes(&[(0, 10_000, "a"), (0, 11_000, "b")]);
    assert_eq!(r.drain(), [] as [&str; 0]);
    r.push(0, 12_000, "c");
    assert_eq!(r.drain(), ["a", "b"]);
    r.push(0, 13_000, "e");
    assert_eq!(r.drain(), ["c"]);
    r.push(1, 12_500, "d");
    assert_eq!(r.drain(), ["d"]);
    r.push(1, 14_000, "f");
    assert_eq!(r.drain(), ["e", "f"]);
}

#[test]
fn rock_equal_stamps_zero_lookahead() {
    let mut r = Rig::new(2000, &[cfg(2000, 5, -1), cfg(0, 5, -1)]);
    r.pushes(&[(0, 2000, "a"), (1, 2000, "b")]);
    assert_eq!(r.drain(), ["a", "b"]);

    let mut r = Rig::new(
        2000,
        &[
            cfg(2000, 5, -1),
            cfg(0, 5, -1),
            cfg(0, 5, -1),
            cfg(0, 5, -1),
        ],
    );
    r.pushes(&[
        (3, 2000, "d"),
        (2, 2000, "c"),
        (0, 2000, "a"),
        (1, 2000, "b"),
    ]);
    assert_eq!(r.drain(), ["a", "b", "c", "d"]);
}

#[test]
fn equal_stamps_go_by_priority_then_slot() {
    let mut r = Rig::new(2000, &[cfg(0, 5, 3), cfg(0, 5, 1), cfg(0, 5, 1)]);
    r.pushes(&[
        (0, 2000, "p3"),
        (2, 2000, "p1 slot2"),
        (1, 2000, "p1 slot1"),
    ]);
    r.a.finish();
    assert_eq!(r.drain(), ["p1 slot1", "p1 slot2", "p3"]);
}

#[test]
fn rock_data_on_one_stream_and_newer_data_first() {
    let mut r = Rig::new(2000, &[cfg(2000, 5, -1), cfg(0, 5, -1)]);
    r.push(1, 1000, "a");
    assert_eq!(r.drain(), ["a"]);

    let mut r = Rig::new(2000, &[cfg(2000, 5, -1), cfg(0, 5, -1)]);
    r.push(0, 1100, "b");
    assert_eq!(r.drain(), [] as [&str; 0]);
    r.push(1, 1000, "a");
    assert_eq!(r.drain(), ["a"]);
}

#[test]
fn rock_advanced_timeout() {
    let mut r = Rig::new(2000, &[cfg(1000, 5, -1), cfg(0, 5, -1)]);
    r.pushes(&[(0, 1000, "a"), (0, 1100, "b")]);
    assert_eq!(r.drain(), [] as [&str; 0]);
    r.push(0, 3100, "c");
    assert_eq!(r.drain(), ["a", "b", "c"]);
    r.push(0, 4200, "d");
    assert_eq!(r.drain(), [] as [&str; 0]);
}

#[test]
fn rock_overflow_example_drop_oldest() {
    // §3.7: timeout 100 ms; imu (10 ms, cap 4, prio 0), laser (0, cap 3,
    // prio 1), cam (50 ms, cap 4, prio −1).
    let mut a = Aligner::new(AlignerConfig {
        timeout: TimeDelta::from_millis(100),
    });
    let imu = a.add_stream(cfg(10, 4, 0));
    let laser = a.add_stream(cfg(0, 3, 1));
    let cam = a.add_stream(cfg(50, 4, -1));
    let mut evicted = Vec::new();
    let mut released = Vec::new();
    let mut run = |a: &mut Aligner<i64>, id, t| {
        if let Push::Evicted(e) = a.push(id, ms(t), t) {
            evicted.push(e.value);
        }
        while let Some(r) = a.poll_release() {
            released.push(r.sample.value);
        }
    };
    for t in (1000..=1110).step_by(10) {
        run(&mut a, imu, t);
    }
    run(&mut a, cam, 1050);
    run(&mut a, laser, 1005);
    assert_eq!(evicted, (1000..=1070).step_by(10).collect::<Vec<_>>());
    assert_eq!(released, [1005, 1050]);
    a.finish();
    let rest: Vec<_> = std::iter::from_fn(|| a.poll_release())
        .map(|r| r.sample.value)
        .collect();
    assert_eq!(rest, [1080, 1090, 1100, 1110]);
    assert_eq!(a.status().streams[0].counters.dropped_overflow, 8);
}

#[test]
fn late_counts_before_backward_and_equal_stamps_are_accepted() {
    let mut r = Rig::new(2000, &[cfg(10, 5, 0), cfg(10, 5, 0)]);
    r.pushes(&[(0, 1000, "a"), (1, 1000, "b")]);
    assert_eq!(r.drain(), ["a", "b"]);
    // Equal to the last released: accepted.
    r.push(0, 1000, "a2");
    // Older than the last released (and backward): late.
    assert!(matches!(
        r.a.push(r.s[1], ms(999), "x"),
        Push::Dropped(DropReason::Late, _)
    ));
    let st = r.a.status();
    assert_eq!(st.streams[1].counters.dropped_late, 1);
    assert_eq!(st.streams[1].counters.dropped_backward, 0);
}

#[test]
fn bad_config_is_a_typed_error() {
    let mut a: Aligner<()> = Aligner::new(AlignerConfig {
        timeout: TimeDelta::from_millis(-5),
    });
    assert_eq!(a.timeout(), TimeDelta::ZERO);
    // A stream configuration is checked when it is built.
    let lookahead = TimeDelta::from_millis(10);
    assert_eq!(
        StreamConfig::new(lookahead).and_then(|c| c.capacity(0)),
        Err(AlignerError::ZeroCapacity)
    );
    assert_eq!(
        StreamConfig::lookahead(TimeDelta::from_millis(-1)),
        Err(AlignerError::NegativePeriod(TimeDelta::from_millis(-1)))
    );
    let id = a.add_stream(cfg(10, 1, 0));
    assert!(a.set_period(id, TimeDelta::from_nanos(-1)).is_err());
    assert!(a.set_period(id, TimeDelta::ZERO).is_ok());
}

#[test]
fn zero_timeout_never_waits() {
    let mut r = Rig::new(0, &[cfg(1000, 4, 0), cfg(1000, 4, 0)]);
    r.push(0, 5000, "a");
    assert_eq!(r.drain(), ["a"]);
}

#[test]
fn capacity_one_evicts_on_every_blocked_push() {
    let mut r = Rig::new(1000, &[cfg(10, 1, 0), cfg(10, 1, 0)]);
    r.push(0, 100, "a");
    assert_eq!(
        r.a.push(r.s[0], ms(110), "b"),
        Push::Evicted(Stamped::new(ms(100), "a"))
    );
    assert_eq!(r.a.queued(), 1);
    r.a.finish();
    assert_eq!(r.drain(), ["b"]);
}

#[test]
fn a_silent_stream_holds_back_until_the_timeout_then_hour_jumps_flush() {
    let hour = 3_600_000;
    let mut r = Rig::new(200, &[cfg(10, 64, 0), cfg(100, 64, 0)]);
    r.push(0, 1000, "a");
    r.push(0, 1100, "b");
    assert_eq!(r.drain(), [] as [&str; 0]);
    // A jump of hours reaches the timeout at once: the lag of released time
    // behind pushed time stays >= the timeout until the jump is released.
    r.push(0, 1000 + 2 * hour, "jump");
    assert_eq!(r.drain(), ["a", "b", "jump"]);
    // Then the silent stream holds back again, within the timeout.
    r.push(0, 1000 + 2 * hour + 100, "after");
    assert_eq!(r.drain(), [] as [&str; 0]);
    assert_eq!(r.a.status().forward_jumps, 1);
    // A jump backwards by hours is a clock step, not hours of late drops:
    // what was queued before it goes out first, then the aligner starts
    // again from the stepped time (the silent stream holds back again).
    assert_eq!(r.a.push(r.s[0], ms(1000), "stepped"), Push::Queued);
    assert_eq!(r.a.status().clock_steps_backward, 1);
    assert_eq!(r.drain(), ["after"]);
    assert_eq!(r.a.push(r.s[0], ms(1010), "next"), Push::Queued);
    assert_eq!(r.a.push(r.s[1], ms(1005), "other"), Push::Queued);
    assert_eq!(r.drain(), ["stepped", "other", "next"]);
    let status = r.a.status();
    assert_eq!(status.streams[0].counters.dropped_late, 0);
    assert_eq!(status.streams[0].counters.released, 6);
}

#[test]
fn a_late_sample_within_the_step_threshold_is_late() {
    // Threshold max(2 · 200 ms, 1 s) = 1 s.
    let mut r = Rig::new(200, &[cfg(10, 64, 0)]);
    r.push(0, 5000, "a");
    assert_eq!(r.drain(), ["a"]);
    assert!(matches!(
        r.a.push(r.s[0], ms(4001), "late"),
        Push::Dropped(DropReason::Late, _)
    ));
    assert_eq!(r.a.status().clock_steps_backward, 0);
    assert_eq!(r.a.push(r.s[0], ms(3999), "step"), Push::Queued);
    assert_eq!(r.a.status().clock_steps_backward, 1);
}

#[test]
fn capacity_is_derived_from_the_timeout_and_the_lookahead() {
    let timeout = TimeDelta::from_millis(100);
    let ms = TimeDelta::from_millis;
    assert_eq!(StreamConfig::new(ms(1)).unwrap().capacity_for(timeout), 200);
    assert_eq!(StreamConfig::new(ms(10)).unwrap().capacity_for(timeout), 64);
    assert_eq!(
        StreamConfig::new(TimeDelta::ZERO)
            .unwrap()
            .capacity_for(timeout),
        64
    );
    assert_eq!(
        StreamConfig::new(ms(1))
            .unwrap()
            .capacity(5)
            .unwrap()
            .capacity_for(timeout),
        5
    );
    assert_eq!(
        StreamConfig::new(TimeDelta::from_nanos(1))
            .unwrap()
            .capacity_for(TimeDelta::MAX),
        StreamConfig::MAX_DERIVED_CAPACITY
    );
    // A 1 kHz input with a silent peer: the timeout releases it before its
    // queue is full, nothing overflows.
    let mut a = Aligner::new(AlignerConfig { timeout });
    let fast = a.add_stream(StreamConfig::new(ms(1)).unwrap());
    let _silent = a.add_stream(StreamConfig::new(ms(1000)).unwrap());
    for k in 0..5_000i64 {
        let _ = a.push(
            fast,
            Timestamp::from_nanos(10_000_000_000 + k * 1_000_000),
            k,
        );
        while a.poll_release().is_some() {}
    }
    let s = a.status();
    assert_eq!(s.streams[0].capacity, 200);
    assert_eq!(s.streams[0].counters.dropped_overflow, 0);
}

#[test]
fn extreme_stamps_never_overflow() {
    let mut a = Aligner::new(AlignerConfig {
        timeout: TimeDelta::MAX,
    });
    let s0 = a.add_stream(StreamConfig::new(TimeDelta::MAX).unwrap());
    let s1 = a.add_stream(StreamConfig::new(TimeDelta::MAX).unwrap());
    assert_eq!(a.push(s0, Timestamp::MIN, 0), Push::Queued);
    assert_eq!(a.push(s1, Timestamp::MAX, 1), Push::Queued);
    let out: Vec<_> = std::iter::from_fn(|| a.poll_release()).collect();
    assert_eq!(out.len(), 2);
    assert_eq!(a.latency(), Some(TimeDelta::ZERO));
    assert_eq!(a.push(s0, Timestamp::MAX, 2), Push::Queued);
    a.handle_timeout(Timestamp::MAX);
    a.handle_timeout(Timestamp::MIN);
    assert!(a.poll_timeout().is_none());
    let _ = a.status();
}

#[test]
fn wall_clock_bound_releases_after_arrival_plus_timeout() {
    let mut a = Aligner::new(AlignerConfig {
        timeout: TimeDelta::from_millis(100),
    });
    let imu = a.add_stream(cfg(10, 8, 0));
    let _silent = a.add_stream(cfg(10, 8, 0));
    assert_eq!(a.push_arrived(imu, ms(1000), "a", ms(5000)), Push::Queued);
    assert_eq!(a.push_arrived(imu, ms(1010), "b", ms(5020)), Push::Queued);
    assert!(a.poll_release().is_none());
    assert_eq!(a.poll_timeout(), Some(ms(5100)));
    a.handle_timeout(ms(5099));
    assert!(a.poll_release().is_none());
    a.handle_timeout(ms(5100));
    assert_eq!(a.poll_release().map(|r| r.sample.value), Some("a"));
    assert!(a.poll_release().is_none());
    assert_eq!(a.poll_timeout(), Some(ms(5120)));
    a.handle_timeout(ms(6000));
    assert_eq!(a.poll_release().map(|r| r.sample.value), Some("b"));
    assert_eq!(a.poll_timeout(), None);
    // Samples without an arrival time are released with those ahead of them
    // only; they set no deadline.
    assert_eq!(a.push(imu, ms(1020), "c"), Push::Queued);
    assert_eq!(a.poll_timeout(), None);
}

#[test]
fn earlier_arrivals_are_raised_to_the_previous_one() {
    let mut a = Aligner::new(AlignerConfig {
        timeout: TimeDelta::from_millis(100),
    });
    let s = a.add_stream(cfg(10, 8, 0));
    let _silent = a.add_stream(cfg(10, 8, 0));
    let _ = a.push_arrived(s, ms(1), 'a', ms(500));
    a.handle_timeout(ms(600));
    assert!(a.poll_release().is_some());
    let _ = a.push_arrived(s, ms(2), 'b', ms(100));
    assert_eq!(a.poll_timeout(), Some(ms(600)));
}

#[test]
fn ended_streams_do_not_block_even_after_a_straggler() {
    let mut r = Rig::new(1000, &[cfg(10, 8, 0), cfg(10, 8, 0)]);
    r.a.end_stream(r.s[1]).unwrap();
    r.push(1, 5, "straggler");
    r.push(0, 100, "a");
    assert_eq!(r.drain(), ["straggler", "a"]);
    assert_eq!(r.a.status().streams[1].state, StreamState::Ended);
    r.a.enable_stream(r.s[1]).unwrap();
    r.push(0, 200, "b");
    assert_eq!(r.drain(), [] as [&str; 0]);
}

#[test]
fn run_time_period_and_timeout_changes() {
    let mut r = Rig::new(1000, &[cfg(10, 8, 0), cfg(10, 8, 0)]);
    r.pushes(&[(0, 100, "a"), (1, 100, "b"), (0, 150, "c")]);
    assert_eq!(r.drain(), ["a", "b"]);
    r.a.set_period(r.s[1], TimeDelta::from_millis(100)).unwrap();
    assert_eq!(r.drain(), ["c"]);
    r.push(0, 160, "d");
    r.push(0, 400, "e");
    assert_eq!(r.drain(), ["d"]);
    r.a.set_timeout(TimeDelta::from_millis(100));
    assert_eq!(r.drain(), ["e"]);
    r.a.set_priority(r.s[1], -5).unwrap();
    assert_eq!(r.a.status().streams[1].priority, -5);
}

#[test]
fn status_serializes() {
    let mut r = Rig::new(1000, &[cfg(10, 8, 0)]);
    r.push(0, 100, "a");
    let v = serde_json::to_value(r.a.status()).unwrap();
    assert_eq!(v["streams"][0]["received"], 1);
    assert_eq!(v["streams"][0]["queued"], 1);
    assert_eq!(v["streams"][0]["state"], "active");
    assert_eq!(v["latest_time"], 100_000_000);
}

/// An operation of the random scripts of the property tests.
#[derive(Debug, Clone)]
enum Op {
    Push {
        stream: usize,
        stamp: i64,
        arrival: Option<i64>,
    },
    Wall(i64),
    Disable(usize),
    Enable(usize),
    End(usize),
    Remove(usize),
    Add {
        period: i64,
        capacity: usize,
        priority: i64,
    },
    Period(usize, i64),
    Timeout(i64),
    Finish,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        20 => (0usize..5, 0i64..2_000, proptest::option::of(0i64..4_000))
            .prop_map(|(stream, stamp, arrival)| Op::Push { stream, stamp, arrival }),
        3 => (0i64..5_000).prop_map(Op::Wall),
        1 => (0usize..5).prop_map(Op::Disable),
        1 => (0usize..5).prop_map(Op::Enable),
        1 => (0usize..5).prop_map(Op::End),
        1 => (0usize..5).prop_map(Op::Remove),
        1 => (0i64..100, 1usize..6, -2i64..3)
            .prop_map(|(period, capacity, priority)| Op::Add { period, capacity, priority }),
        1 => (0usize..5, -10i64..100).prop_map(|(s, p)| Op::Period(s, p)),
        1 => (-10i64..500).prop_map(Op::Timeout),
        1 => Just(Op::Finish),
    ]
}

proptest! {
    /// Every pushed sample is released exactly once or handed back with a
    /// reason; counters agree; releases never go back in time; after
    /// `finish` nothing stays queued.
    #[test]
    fn conservation_and_order(ops in proptest::collection::vec(op(), 0..300)) {
        let mut a: Aligner<u64> = Aligner::new(AlignerConfig { timeout: TimeDelta::from_nanos(50) });
        let mut ids: Vec<StreamId> = (0..3)
            .map(|i| a.add_stream(StreamConfig::new(TimeDelta::from_nanos(10 * i)).unwrap().capacity(3).unwrap()))
            .collect();
        let mut outcome: Vec<Option<&'static str>> = Vec::new();
        let mut last_release: Option<Timestamp> = None;
        let mark = |outcome: &mut Vec<Option<&'static str>>, id: u64, what| {
            let slot = &mut outcome[id as usize];
            prop_assert!(slot.is_none(), "sample {} left twice", id);
            *slot = Some(what);
            Ok(())
        };
        for op in ops {
            match op {
                Op::Push { stream, stamp, arrival } => {
                    let id = outcome.len() as u64;
                    outcome.push(None);
                    let sid = ids.get(stream).copied().unwrap_or(StreamId { slot: 99, generation: 0 });
                    let stamp = Timestamp::from_nanos(stamp);
                    let r = match arrival {
                        Some(t) => a.push_arrived(sid, stamp, id, Timestamp::from_nanos(t)),
                        None => a.push(sid, stamp, id),
                    };
                    match r {
                        Push::Queued => {}
                        Push::Evicted(e) => mark(&mut outcome, e.value, "overflow")?,
                        Push::Dropped(reason, s) => {
                            prop_assert_eq!(s.value, id);
                            mark(&mut outcome, id, reason.as_str())?;
                        }
                    }
                }
                Op::Wall(t) => a.handle_timeout(Timestamp::from_nanos(t)),
                Op::Disable(s) => { let _ = ids.get(s).map(|&i| a.disable_stream(i)); }
                Op::Enable(s) => { let _ = ids.get(s).map(|&i| a.enable_stream(i)); }
                Op::End(s) => { let _ = ids.get(s).map(|&i| a.end_stream(i)); }
                Op::Remove(s) => {
                    if let Some(&i) = ids.get(s)
                        && let Ok(back) = a.remove_stream(i)
                    {
                        for e in back.collect::<Vec<_>>() {
                            mark(&mut outcome, e.value, "removed")?;
                        }
                    }
                }
                Op::Add { period, capacity, priority } => {
                    let c = StreamConfig::new(TimeDelta::from_nanos(period)).unwrap().capacity(capacity).unwrap().priority(priority);
                    ids.push(a.add_stream(c));
                }
                Op::Period(s, p) => {
                    if let Some(&i) = ids.get(s) {
                        let registered = a.status().streams.iter().any(|st| st.id == i);
                        prop_assert_eq!(a.set_period(i, TimeDelta::from_nanos(p)).is_ok(), p >= 0 && registered);
                    }
                }
                Op::Timeout(t) => a.set_timeout(TimeDelta::from_nanos(t)),
                Op::Finish => a.finish(),
            }
            while let Some(r) = a.poll_release() {
                prop_assert!(last_release.is_none_or(|l| l <= r.sample.stamp), "release went back in time");
                last_release = Some(r.sample.stamp);
                mark(&mut outcome, r.sample.value, "released")?;
            }
        }
        let st = a.status();
        let queued = outcome.iter().filter(|o| o.is_none()).count();
        prop_assert_eq!(queued, a.queued());
        prop_assert_eq!(st.streams.iter().map(|s| s.queued).sum::<usize>(), a.queued());
        let count = |what: &str| outcome.iter().filter(|o| **o == Some(what)).count() as u64;
        prop_assert_eq!(st.dropped_removed, count("removed"));
        prop_assert_eq!(st.rejected_unknown, count("unknown_stream"));
        for s in &st.streams {
            let c = s.counters;
            prop_assert_eq!(c.received, c.released + c.dropped_late + c.dropped_backward + c.dropped_overflow + s.queued as u64);
        }
        a.finish();
        while let Some(r) = a.poll_release() {
            prop_assert!(last_release.is_none_or(|l| l <= r.sample.stamp));
            last_release = Some(r.sample.stamp);
            mark(&mut outcome, r.sample.value, "released")?;
        }
        prop_assert!(outcome.iter().all(|o| o.is_some()));
        prop_assert_eq!(a.queued(), 0);
    }
}

/// The scan's packed order saturates at `(Timestamp::MAX, i64::MAX)`: such
/// heads are still found, in slot order, after every earlier one.
#[test]
fn heads_at_the_top_of_the_order_are_released_in_slot_order() {
    let mut a = Aligner::new(AlignerConfig {
        timeout: TimeDelta::ZERO,
    });
    let top = |a: &mut Aligner<u8>| {
        a.add_stream(
            StreamConfig::new(TimeDelta::ZERO)
                .unwrap()
                .priority(i64::MAX),
        )
    };
    let (s0, s1) = (top(&mut a), top(&mut a));
    let s2 = a.add_stream(
        StreamConfig::new(TimeDelta::ZERO)
            .unwrap()
            .priority(i64::MIN),
    );
    assert_eq!(a.push(s1, Timestamp::MAX, 1), Push::Queued);
    assert_eq!(a.push(s0, Timestamp::MAX, 0), Push::Queued);
    assert_eq!(a.push(s2, Timestamp::MAX, 2), Push::Queued);
    assert_eq!(a.queued(), 3);
    a.finish();
    let out: Vec<_> = std::iter::from_fn(|| a.poll_release())
        .map(|r| (r.stream, r.sample.value))
        .collect();
    assert_eq!(out, [(s2, 2), (s0, 0), (s1, 1)]);
    assert_eq!(a.queued(), 0);
    assert!(a.poll_release().is_none());
}

#[test]
fn room_and_lag_reached_for_batching_shells() {
    let mut r = Rig::new(100, &[cfg(10, 3, 0), cfg(10, 4, 0)]);
    let (a, b) = (r.s[0], r.s[1]);
    assert_eq!((r.a.room(a), r.a.room(b)), (3, 4));
    // Before the first release nothing bounds the lag.
    assert!(r.a.lag_reached());
    r.pushes(&[(0, 0, "a0"), (0, 10, "a1"), (1, 5, "b0")]);
    assert_eq!((r.a.room(a), r.a.room(b)), (1, 3));
    assert_eq!(r.step(), Some("a0"));
    assert_eq!(r.a.room(a), 2);
    // Newest 10 ms, last released 0: 10 ms < 100 ms.
    assert!(!r.a.lag_reached());
    r.push(1, 99, "b1");
    assert!(!r.a.lag_reached());
    r.push(1, 100, "b2");
    assert!(r.a.lag_reached());
    // A removed stream has no room.
    let _ = r.a.remove_stream(b).unwrap();
    assert_eq!(r.a.room(b), 0);
}
