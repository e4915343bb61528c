use super::*;
use crate::sync::Output;

/// Runs `input` (topic, stamp in seconds) and returns every set as
/// (trigger index, member stamps in seconds).
fn run(config: ApproximateConfig, input: &[(usize, i64)]) -> Vec<(usize, Vec<i64>)> {
    let mut sync = ApproximateTime::new(config).unwrap();
    let mut sets = Vec::new();
    for (k, &(topic, s)) in input.iter().enumerate() {
        sync.push(topic, Timestamp::from_nanos(s * 1_000_000_000), k)
            .unwrap();
        while let Some(set) = sync.poll_set() {
            let stamps = set
                .members()
                .iter()
                .map(|m| m.as_ref().unwrap().stamp.as_nanos() / 1_000_000_000)
                .collect();
            sets.push((k, stamps));
        }
    }
    sets
}

fn two() -> ApproximateConfig {
    ApproximateConfig::new(2)
}

const PERFECT: &[(usize, i64)] = &[(0, 0), (1, 1), (0, 3), (1, 4), (0, 6), (1, 7)];
const DROPPED: &[(usize, i64)] = &[
    (0, 0),
    (1, 1),
    (1, 3),
    (0, 4),
    (1, 7),
    (0, 8),
    (0, 10),
    (1, 11),
    (0, 13),
    (1, 14),
];

#[test]
fn upstream_exact_and_perfect_match() {
    let exact = [(0, 0), (1, 0), (0, 3), (1, 3), (0, 6), (1, 6)];
    assert_eq!(
        run(two(), &exact),
        vec![(1, vec![0, 0]), (3, vec![3, 3]), (5, vec![6, 6])]
    );
    assert_eq!(run(two(), PERFECT), vec![(2, vec![0, 1]), (4, vec![3, 4])]);
}

#[test]
fn upstream_imperfect_match_and_acceleration() {
    let imperfect = [(0, 0), (1, 1), (0, 2), (0, 3), (1, 5), (0, 6), (1, 7)];
    assert_eq!(
        run(two(), &imperfect),
        vec![(2, vec![0, 1]), (5, vec![6, 5])]
    );
    let accel = [(0, 0), (1, 7), (0, 12), (1, 15), (0, 17), (1, 18)];
    assert_eq!(
        run(two(), &accel),
        vec![(2, vec![12, 7]), (5, vec![17, 18])]
    );
}

#[test]
fn upstream_dropped_messages_queue_1_and_2() {
    assert_eq!(
        run(two().queue_size(1), DROPPED),
        vec![(4, vec![4, 3]), (8, vec![10, 11])]
    );
    assert_eq!(
        run(two().queue_size(2), DROPPED),
        vec![
            (3, vec![0, 1]),
            (4, vec![4, 3]),
            (7, vec![8, 7]),
            (8, vec![10, 11])
        ]
    );
}

#[test]
fn upstream_long_queue_and_double_publish() {
    let mut long: Vec<(usize, i64)> = (0..=8).map(|s| (0, s)).collect();
    long.extend([(1, 3), (0, 9), (0, 10), (0, 11), (0, 12), (1, 10), (0, 13)]);
    assert_eq!(run(two().queue_size(5), &long), vec![(14, vec![10, 10])]);
    let double = [(0, 0), (1, 1), (1, 3), (0, 3)];
    assert_eq!(run(two(), &double), vec![(3, vec![0, 1]), (3, vec![3, 3])]);
}

#[test]
fn upstream_four_topics_and_early_publish() {
    let four = [
        (0, 0),
        (1, 1),
        (2, 2),
        (3, 3),
        (0, 5),
        (3, 5),
        (1, 6),
        (2, 6),
        (0, 8),
        (1, 9),
        (2, 10),
        (3, 11),
        (0, 10),
        (0, 13),
        (1, 14),
    ];
    assert_eq!(
        run(ApproximateConfig::new(4), &four),
        vec![
            (6, vec![0, 1, 2, 3]),
            (8, vec![5, 6, 6, 5]),
            (14, vec![10, 9, 10, 11])
        ]
    );
    let early = [(0, 0), (1, 1), (2, 2), (3, 3), (0, 7)];
    assert_eq!(
        run(ApproximateConfig::new(4), &early),
        vec![(4, vec![0, 1, 2, 3])]
    );
}

#[test]
fn upstream_rate_bounds_publish_earlier() {
    let s = |x: f64| TimeDelta::from_secs_f64(x).unwrap();
    assert_eq!(
        run(two().lower_bound(0, s(1.5)), PERFECT),
        vec![(2, vec![0, 1]), (4, vec![3, 4])]
    );
    let early = vec![(1, vec![0, 1]), (3, vec![3, 4]), (5, vec![6, 7])];
    assert_eq!(run(two().lower_bound(0, s(2.0)), PERFECT), early);
    assert_eq!(
        run(two().lower_bound(0, s(2.0)).lower_bound(1, s(2.0)), PERFECT),
        early
    );
}

/// Every output of `input` (topic, stamp in ns), then `finish`, as text.
fn events(config: ApproximateConfig, input: &[(usize, i64)]) -> Vec<String> {
    let mut sync = ApproximateTime::new(config.report_drops(true)).unwrap();
    let mut events = Vec::new();
    let mut collect = |sync: &mut ApproximateTime<usize>| {
        while let Some(out) = sync.poll() {
            events.push(match out {
                Output::Set(set) => {
                    let ids: Vec<_> = set.members().iter().flatten().map(|m| m.value).collect();
                    format!("set {ids:?}")
                }
                Output::Dropped(d) => format!("drop {} {}", d.message.value, d.reason.as_str()),
            });
        }
    };
    for (k, &(topic, s)) in input.iter().enumerate() {
        sync.push(topic, Timestamp::from_nanos(s), k).unwrap();
        collect(&mut sync);
    }
    sync.finish();
    collect(&mut sync);
    events
}

#[test]
fn max_interval_rejects_wide_sets_and_reports_them() {
    let input = [(0, 0), (1, 5), (0, 6), (1, 7)];
    let events = events(two().max_interval(TimeDelta::from_secs(2)), &input);
    // With at most 2 ns, the head 0@0 cannot start a set with 1@5.
    let tight = self::events(two().max_interval(TimeDelta::from_nanos(2)), &input);
    assert_eq!(events, vec!["drop 0 skipped", "set [2, 1]", "drop 3 end"]);
    assert_eq!(tight, vec!["drop 0 interval", "set [2, 1]", "drop 3 end"]);
}

#[test]
fn drop_reasons_skipped_overflow_end_and_conservation() {
    // ImperfectMatch drops 0@2 and 0@3 (skipped) and leaves 1@7 (end).
    let input = [(0, 0), (1, 1), (0, 2), (0, 3), (1, 5), (0, 6), (1, 7)];
    let mut sync = ApproximateTime::new(two().queue_size(10).report_drops(true)).unwrap();
    let mut drops = Vec::new();
    for (k, &(topic, s)) in input.iter().enumerate() {
        sync.push(topic, Timestamp::from_nanos(s), k).unwrap();
        while sync.poll_set().is_some() {}
    }
    sync.finish();
    while let Some(d) = sync.poll_drop() {
        drops.push((d.message.value, d.reason));
    }
    assert_eq!(
        drops,
        vec![
            (2, DropReason::Skipped),
            (3, DropReason::Skipped),
            (6, DropReason::End)
        ]
    );
    let st = sync.status();
    assert_eq!(st.pushed, 7);
    assert_eq!(st.sets * 2 + st.dropped.total(), 7);
    assert_eq!(st.held, vec![0, 0]);

    // Queue 1: 0@0 overflows when 0@... no, 1@1 is replaced by 1@3.
    let mut sync = ApproximateTime::new(two().queue_size(1).report_drops(true)).unwrap();
    for (k, &(topic, s)) in DROPPED.iter().enumerate().take(3) {
        sync.push(topic, Timestamp::from_nanos(s), k).unwrap();
    }
    while sync.poll_set().is_some() {}
    let d = sync.poll_drop().unwrap();
    assert_eq!(
        (d.message.value, d.reason, d.topic),
        (1, DropReason::Overflow, 1)
    );
}

#[test]
fn bad_input_is_defined() {
    assert_eq!(
        ApproximateTime::<()>::new(two().queue_size(0)).unwrap_err(),
        ConfigError::ZeroQueue
    );
    assert_eq!(
        ApproximateTime::<()>::new(ApproximateConfig::new(0)).unwrap_err(),
        ConfigError::NoTopics
    );
    for bad in [-0.1, f64::NAN, f64::INFINITY] {
        assert!(ApproximateTime::<()>::new(two().age_penalty(bad)).is_err());
    }
    assert!(ApproximateTime::<()>::new(two().max_interval(TimeDelta::from_nanos(-1))).is_err());
    assert!(ApproximateTime::<()>::new(two().lower_bound(2, TimeDelta::ZERO)).is_err());
    assert!(ApproximateTime::<()>::new(two().lower_bound(0, TimeDelta::from_nanos(-1))).is_err());

    let mut sync = ApproximateTime::new(two()).unwrap();
    assert_eq!(
        sync.push(2, Timestamp::EPOCH, ()),
        Err(SyncError::UnknownTopic {
            topic: 2,
            topics: 2
        })
    );
    assert_eq!(sync.status().pushed, 0);
    // Identical stamps everywhere: every pair is an exact match.
    for _ in 0..3 {
        sync.push(0, Timestamp::EPOCH, ()).unwrap();
        sync.push(1, Timestamp::EPOCH, ()).unwrap();
    }
    let mut n = 0;
    while sync.poll_set().is_some() {
        n += 1;
    }
    assert_eq!(n, 3);
    // Extreme stamps: differences beyond i64 do not overflow.
    let mut sync = ApproximateTime::new(two().age_penalty(1e300)).unwrap();
    sync.push(0, Timestamp::MIN, 0).unwrap();
    sync.push(1, Timestamp::MAX, 1).unwrap();
    sync.push(0, Timestamp::MAX, 2).unwrap();
    sync.push(1, Timestamp::MIN, 3).unwrap();
    assert_eq!(sync.status().out_of_order, 1);
    while sync.poll_set().is_some() {}
}

#[test]
fn out_of_order_within_a_topic_is_kept_not_sorted() {
    // 0@5 then 0@1: deques are arrival-ordered, so 0@5 is the head.
    let got = run(two(), &[(0, 5), (0, 1), (1, 5)]);
    assert_eq!(got, vec![(2, vec![5, 5])]);
}

#[test]
fn silent_topic_blocks_until_overflow() {
    let mut sync = ApproximateTime::new(two().queue_size(3).report_drops(true)).unwrap();
    for k in 0..10 {
        sync.push(0, Timestamp::from_nanos(k), k).unwrap();
    }
    assert!(sync.poll_set().is_none());
    assert_eq!(sync.status().dropped.overflow, 7);
    assert_eq!(sync.status().held, vec![3, 0]);
}

#[test]
fn stall_partial_emits_sets_without_the_silent_topic() {
    let stall = StallConfig {
        timeout: TimeDelta::from_nanos(25),
        action: StallAction::Partial,
    };
    let mut sync = ApproximateTime::new(two().stall(stall).report_drops(true)).unwrap();
    let mut sets = Vec::new();
    for k in 0..6i64 {
        sync.push(0, Timestamp::from_nanos(k * 10), k).unwrap();
        while let Some(set) = sync.poll_set() {
            sets.push(
                set.members()
                    .iter()
                    .map(|m| m.as_ref().map(|m| m.value))
                    .collect::<Vec<_>>(),
            );
        }
    }
    assert_eq!(sync.status().stalled_topics, vec![1]);
    assert!(sets.iter().all(|s| s[1].is_none()));
    assert_eq!(sets.first(), Some(&vec![Some(0), None]));
    // Topic 1 comes back: full sets again.
    sync.push(1, Timestamp::from_nanos(60), 100).unwrap();
    sync.push(0, Timestamp::from_nanos(60), 6).unwrap();
    let set = sync.poll_set().unwrap();
    assert!(set.is_complete());
    assert!(sync.status().stalled_topics.is_empty());
    assert!(sync.status().partial_sets >= 3);
}

/// Regression: a topic that overflowed once, and is then the only active
/// topic (the other stalled, partial mode), used to lose every later
/// message as `skipped` (its overflow flag was never cleared).
#[test]
fn stall_partial_after_an_overflow_on_the_only_active_topic_still_forms_sets() {
    let stall = StallConfig {
        timeout: TimeDelta::from_nanos(100),
        action: StallAction::Partial,
    };
    let run = |queue: usize| {
        let config = two().queue_size(queue).stall(stall).report_drops(true);
        let mut sync = ApproximateTime::new(config).unwrap();
        let (mut sets, mut drops) = (Vec::new(), Vec::new());
        for (id, t) in [0i64, 10, 200, 210, 220].into_iter().enumerate() {
            sync.push(0, Timestamp::from_nanos(t), id).unwrap();
            while let Some(out) = sync.poll() {
                match out {
                    Output::Set(set) => sets.push(set.get(0).map(|m| m.value)),
                    Output::Dropped(d) => drops.push((d.message.value, d.reason)),
                }
            }
        }
        (sets, drops)
    };
    // Queue 1: the message at 0 makes room for the one at 10 (overflow);
    // every other message is a (partial) set.
    let (sets, drops) = run(1);
    assert_eq!(sets, vec![Some(1), Some(2), Some(3), Some(4)]);
    assert_eq!(drops, vec![(0, DropReason::Overflow)]);
    // Queue 10: nothing overflows, all five are sets.
    let (sets, drops) = run(10);
    assert_eq!(sets.len(), 5);
    assert!(drops.is_empty());
}

#[test]
fn stall_report_drops_old_messages() {
    let stall = StallConfig {
        timeout: TimeDelta::from_nanos(25),
        action: StallAction::Report,
    };
    let mut sync = ApproximateTime::new(two().stall(stall).report_drops(true)).unwrap();
    for k in 0..6i64 {
        sync.push(0, Timestamp::from_nanos(k * 10), k).unwrap();
    }
    assert!(sync.poll_set().is_none());
    let mut stalled = Vec::new();
    while let Some(d) = sync.poll_drop() {
        assert_eq!(d.reason, DropReason::Stalled);
        stalled.push(d.message.value);
    }
    // At clock 50, messages older than 25 ns (0, 10, 20) are gone.
    assert_eq!(stalled, vec![0, 1, 2]);
    assert_eq!(sync.status().stalled_topics, vec![1]);
    // The next drop: message 3 (stamp 30) once the clock passes 55.
    assert_eq!(sync.poll_timeout(), Some(Timestamp::from_nanos(56)));
    sync.handle_timeout(Timestamp::from_nanos(55));
    assert!(sync.poll_drop().is_none());
    sync.handle_timeout(Timestamp::from_nanos(56));
    assert_eq!(sync.poll_drop().map(|d| d.message.value), Some(3));
    assert_eq!(sync.poll_timeout(), Some(Timestamp::from_nanos(66)));
    sync.handle_timeout(Timestamp::from_nanos(1000));
    assert_eq!(sync.status().dropped.stalled, 6);
}

#[test]
fn scale_truncates_toward_zero_exactly() {
    let s = Scale::new(0.1);
    assert_eq!(s.apply(10), 11);
    assert_eq!(s.apply(1), 1);
    assert_eq!(s.apply(-10), -11);
    assert_eq!(s.apply(0), 0);
    assert_eq!(Scale::new(0.0).apply(-7), -7);
    assert_eq!(Scale::new(0.5).apply(3), 4);
    assert_eq!(Scale::new(0.5).apply(-3), -4);
    // 1.1 in binary is slightly above 1.1: 1e9 * 1.1 truncates to 1.1e9.
    assert_eq!(s.apply(1_000_000_000), 1_100_000_000);
    assert_eq!(Scale::new(1e300).apply(1), i128::MAX);
}

/// rclcpp multiplies a `Duration` by a `double` in x86-64 `long double`
/// (64-bit significand) before truncating: 1125899906842619 × 1.1 is
/// 2^-51 below 1238489897526881, which that product rounds up to.
#[test]
fn scale_rounds_the_product_to_a_64_bit_significand() {
    let s = Scale::new(0.1);
    assert_eq!(s.apply(1_125_899_906_842_619), 1_238_489_897_526_881);
    assert_eq!(s.apply(-1_125_899_906_842_619), -1_238_489_897_526_881);
    // Products that need at most 64 significant bits are exact.
    assert_eq!(s.apply(1_000_000_000), 1_100_000_000);
}

/// Minimal input found by differential testing against the upstream
/// policy: with an exact product the later a1 wrongly beats a0.
#[test]
fn candidate_comparison_uses_the_long_double_product() {
    let (a0, b0) = (0, 1_238_489_897_526_881);
    let a1 = b0 + 1_125_899_906_842_619;
    let mut sync = ApproximateTime::new(two()).unwrap();
    for (k, (topic, s)) in [(0, a0), (1, b0), (0, a1)].into_iter().enumerate() {
        sync.push(topic, Timestamp::from_nanos(s), k).unwrap();
    }
    let set = sync.poll_set().unwrap();
    let ids: Vec<_> = set
        .members()
        .iter()
        .map(|m| m.as_ref().unwrap().value)
        .collect();
    assert_eq!(ids, [0, 1]);
    assert!(sync.poll_set().is_none());
}

proptest::proptest! {
    /// The rounded product never goes below the exact truncation, exceeds
    /// it by at most 1 (the 64-bit significand only rounds up to the next
    /// integer), and equals it when the exact product fits in 64 bits.
    /// Products stay below 2^63 (rclcpp throws beyond `i64`).
    #[test]
    fn scale_stays_within_one_of_the_exact_product(
        d in -(1i64 << 61)..(1i64 << 61),
        penalty in proptest::prop_oneof![
            proptest::prelude::Just(0.1),
            proptest::prelude::Just(0.5),
            0.0f64..3.0,
        ],
    ) {
        let s = Scale::new(penalty);
        let d = i128::from(d);
        let exact = (d.unsigned_abs() * s.mantissa) >> (-s.exp) as u32;
        let got = s.apply(d).unsigned_abs();
        proptest::prop_assert!(exact <= got && got <= exact + 1);
        if (d.unsigned_abs() * s.mantissa).leading_zeros() >= 64 {
            proptest::prop_assert_eq!(got, exact);
        }
        proptest::prop_assert_eq!(s.apply(-d), -s.apply(d));
    }
}
