//! Property tests of the synchronizers on random input: ApproximateTime's
//! published properties (each message used at most once, sets do not cross,
//! sets are contiguous, output independent of the interleaving of topics)
//! and conservation (every message in a set or dropped with a reason).

use proptest::prelude::*;

use super::*;
use crate::time::{TimeDelta, Timestamp};

/// A message: (topic, stamp, id).
type Msg = (usize, i64, usize);
/// A set's members: (id, stamp) per topic.
type SetIds = Vec<Option<(usize, i64)>>;

/// Per-topic increasing stamps, interleaved by a random per-message
/// latency (each topic stays in its own order).
fn in_order_input() -> impl Strategy<Value = (usize, Vec<Msg>)> {
    (2usize..=4).prop_flat_map(|n| {
        let topic = (0i64..20, prop::collection::vec((1i64..40, 0i64..60), 0..25));
        prop::collection::vec(topic, n).prop_map(move |topics| {
            let mut rows: Vec<(i64, usize, i64)> = Vec::new();
            for (i, (start, steps)) in topics.into_iter().enumerate() {
                let (mut stamp, mut arrival) = (start, i64::MIN);
                for (gap, latency) in steps {
                    stamp += gap;
                    arrival = arrival.max(stamp + latency);
                    rows.push((arrival, i, stamp));
                }
            }
            rows.sort_by_key(|r| r.0);
            let msgs = rows
                .into_iter()
                .enumerate()
                .map(|(id, (_, i, s))| (i, s, id))
                .collect();
            (n, msgs)
        })
    })
}

/// Anything: stamps in any order, duplicates, extreme values.
fn any_input() -> impl Strategy<Value = (usize, Vec<Msg>)> {
    (2usize..=4).prop_flat_map(|n| {
        let stamp = prop_oneof![8 => -50i64..50, 1 => any::<i64>()];
        prop::collection::vec((0..n, stamp), 0..60).prop_map(move |v| {
            let msgs = v
                .into_iter()
                .enumerate()
                .map(|(id, (i, s))| (i, s, id))
                .collect();
            (n, msgs)
        })
    })
}

/// Runs ApproximateTime; returns the sets (member ids and stamps) and the
/// dropped ids, after `finish`.
fn run(config: ApproximateConfig, msgs: &[Msg]) -> (Vec<SetIds>, Vec<usize>) {
    let mut sync = ApproximateTime::new(config).unwrap();
    let mut sets = Vec::new();
    let mut drops = Vec::new();
    let mut collect = |sync: &mut ApproximateTime<usize>| {
        while let Some(o) = sync.poll() {
            match o {
                Output::Set(set) => sets.push(
                    set.members()
                        .iter()
                        .map(|m| m.as_ref().map(|m| (m.value, m.stamp.as_nanos())))
                        .collect(),
                ),
                Output::Dropped(d) => drops.push(d.message.value),
            }
        }
    };
    for &(i, s, id) in msgs {
        sync.push(i, Timestamp::from_nanos(s), id).unwrap();
        collect(&mut sync);
    }
    sync.finish();
    collect(&mut sync);
    (sets, drops)
}

fn member_ids(sets: &[SetIds]) -> Vec<usize> {
    sets.iter().flatten().flatten().map(|m| m.0).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn approximate_published_properties((n, msgs) in in_order_input(), ap in 0.0f64..1.0) {
        // A queue longer than the input: no overflow.
        let config = ApproximateConfig::new(n).queue_size(100).age_penalty(ap);
        let (sets, _) = run(config, &msgs);
        // 1. each message at most once
        let mut ids = member_ids(&sets);
        let total = ids.len();
        ids.sort_unstable();
        ids.dedup();
        prop_assert_eq!(ids.len(), total);
        for w in sets.windows(2) {
            let (a, b) = (&w[0], &w[1]);
            // 2. sets do not cross: per topic, later members are not older
            for i in 0..n {
                prop_assert!(a[i].unwrap().1 <= b[i].unwrap().1);
            }
            // 3. contiguous: some topic has no message strictly between
            // the two sets' members, so the dropped ones cannot form a set
            let gap_free = (0..n).any(|i| {
                let (lo, hi) = (a[i].unwrap().1, b[i].unwrap().1);
                !msgs.iter().any(|&(t, s, _)| t == i && lo < s && s < hi)
            });
            prop_assert!(gap_free, "sets {:?} {:?}", a, b);
        }
    }

    #[test]
    fn approximate_output_independent_of_interleaving((n, msgs) in in_order_input()) {
        let config = || ApproximateConfig::new(n).queue_size(100);
        let (sets, _) = run(config(), &msgs);
        // The same per-topic sequences, topic by topic (another interleaving).
        let mut by_topic = msgs.clone();
        by_topic.sort_by_key(|m| m.0);
        let (other, _) = run(config(), &by_topic);
        // Sets still unproven at the end of input may differ: the shorter
        // output is a prefix of the longer.
        let k = sets.len().min(other.len());
        prop_assert_eq!(&sets[..k], &other[..k]);
    }

    #[test]
    fn approximate_conserves_every_message(
        (n, msgs) in any_input(),
        q in 1usize..5,
        ap in 0.0f64..2.0,
        max in prop::option::of(0i64..40),
        lb in 0i64..30,
        stall in prop::option::of((0i64..60, any::<bool>())),
    ) {
        let mut config = ApproximateConfig::new(n)
            .queue_size(q)
            .age_penalty(ap)
            .lower_bound(0, TimeDelta::from_nanos(lb))
            .report_drops(true);
        if let Some(m) = max {
            config = config.max_interval(TimeDelta::from_nanos(m));
        }
        if let Some((t, partial)) = stall {
            let action = if partial { StallAction::Partial } else { StallAction::Report };
            config = config.stall(StallConfig { timeout: TimeDelta::from_nanos(t), action });
        }
        let (sets, drops) = run(config, &msgs);
        let mut all = member_ids(&sets);
        all.extend(drops);
        all.sort_unstable();
        prop_assert_eq!(all, (0..msgs.len()).collect::<Vec<_>>());
    }

    #[test]
    fn partial_stall_with_one_live_topic_emits_every_message_it_keeps(
        n in 2usize..=4,
        topic in 0usize..4,
        gaps in prop::collection::vec(0i64..80, 1..60),
        q in 1usize..5,
        timeout in 0i64..100,
    ) {
        // Only `topic` ever publishes; the others stall. Every message is
        // then in a (partial) set or dropped as overflow (queue full before
        // the stall timeout set the silent topics aside) or end: none is
        // skipped, since a lone topic has nothing to be matched against.
        let topic = topic % n;
        let config = ApproximateConfig::new(n)
            .queue_size(q)
            .report_drops(true)
            .stall(StallConfig {
                timeout: TimeDelta::from_nanos(timeout),
                action: StallAction::Partial,
            });
        let mut stamp = 0;
        let msgs: Vec<Msg> = gaps
            .iter()
            .enumerate()
            .map(|(id, g)| {
                stamp += g;
                (topic, stamp, id)
            })
            .collect();
        let mut sync = ApproximateTime::new(config).unwrap();
        let (mut in_sets, mut dropped) = (Vec::new(), Vec::new());
        let mut collect = |sync: &mut ApproximateTime<usize>| {
            while let Some(o) = sync.poll() {
                match o {
                    Output::Set(set) => in_sets.extend(set.get(topic).map(|m| m.value)),
                    Output::Dropped(d) => dropped.push((d.message.value, d.reason)),
                }
            }
        };
        for &(i, s, id) in &msgs {
            sync.push(i, Timestamp::from_nanos(s), id).unwrap();
            collect(&mut sync);
        }
        sync.finish();
        collect(&mut sync);
        for (id, reason) in &dropped {
            prop_assert!(
                matches!(reason, DropReason::Overflow | DropReason::End),
                "message {} dropped as {:?}", id, reason
            );
        }
        // Once the silent topics are set aside (the clock more than the
        // timeout past the first stamp), nothing is held back.
        if stamp - msgs[0].1 > timeout {
            prop_assert!(dropped.iter().all(|d| d.1 != DropReason::End));
        }
        let mut all: Vec<usize> = in_sets.iter().copied().chain(dropped.iter().map(|d| d.0)).collect();
        all.sort_unstable();
        prop_assert_eq!(all, (0..msgs.len()).collect::<Vec<_>>());
    }

    #[test]
    fn stall_timeout_deadlines_always_move_forward(
        (n, msgs) in in_order_input(),
        timeout in 0i64..50,
        partial in any::<bool>(),
    ) {
        // A timer that sleeps until poll_timeout and calls handle_timeout
        // then never spins: the next deadline is later, or there is none.
        let action = if partial { StallAction::Partial } else { StallAction::Report };
        let config = ApproximateConfig::new(n)
            .queue_size(100)
            .stall(StallConfig { timeout: TimeDelta::from_nanos(timeout), action });
        let mut sync = ApproximateTime::new(config).unwrap();
        let fire = |sync: &mut ApproximateTime<usize>| -> Result<(), TestCaseError> {
            for _ in 0..1000 {
                let Some(at) = sync.poll_timeout() else { return Ok(()) };
                sync.handle_timeout(at);
                while sync.poll().is_some() {}
                if let Some(next) = sync.poll_timeout() {
                    prop_assert!(next > at, "{:?} then {:?}", at, next);
                }
                if at.as_nanos() > 10_000 { return Ok(()); }
            }
            Ok(())
        };
        for &(i, s, id) in &msgs {
            sync.push(i, Timestamp::from_nanos(s), id).unwrap();
            while sync.poll().is_some() {}
            if id % 3 == 0 {
                fire(&mut sync)?;
            }
        }
        fire(&mut sync)?;
        // With every silent topic's deadline passed, nothing is held back
        // in partial mode.
        if partial {
            prop_assert!(sync.poll_timeout().is_none());
        }
    }

    #[test]
    fn exact_conserves_and_matches_equal_stamps((n, msgs) in any_input(), q in 0usize..6) {
        let mut sync = ExactTime::new(ExactConfig::new(n).queue_size(q).report_drops(true)).unwrap();
        let mut seen = Vec::new();
        for &(i, s, id) in &msgs {
            sync.push(i, Timestamp::from_nanos(s), id).unwrap();
            while let Some(set) = sync.poll_set() {
                let stamps: Vec<_> = set.members().iter().flatten().map(|m| m.stamp).collect();
                prop_assert_eq!(stamps.len(), n);
                prop_assert!(stamps.iter().all(|s| *s == stamps[0]));
                seen.extend(set.members().iter().flatten().map(|m| m.value));
            }
            if q > 0 {
                prop_assert!(sync.status().held.iter().max().copied().unwrap_or(0) <= q);
            }
        }
        sync.finish();
        seen.extend(std::iter::from_fn(|| sync.poll_drop()).map(|d| d.message.value));
        seen.sort_unstable();
        prop_assert_eq!(seen, (0..msgs.len()).collect::<Vec<_>>());
    }

    #[test]
    fn latest_every_message_in_a_set_or_dropped((n, msgs) in any_input()) {
        let mut sync = LatestTime::new(LatestConfig::new(n).report_drops(true)).unwrap();
        let mut seen = Vec::new();
        for &(i, s, id) in &msgs {
            // receipt clock: the row index in ms, never going backwards
            let now = Timestamp::from_nanos(id as i64 * 1_000_000);
            sync.push(i, Timestamp::from_nanos(s), id, now).unwrap();
            while let Some(set) = sync.poll_set() {
                prop_assert!(set.is_complete());
                seen.extend(set.members().iter().flatten().map(|m| m.value));
            }
        }
        sync.finish();
        seen.extend(std::iter::from_fn(|| sync.poll_drop()).map(|d| d.message.value));
        seen.sort_unstable();
        seen.dedup();
        prop_assert_eq!(seen, (0..msgs.len()).collect::<Vec<_>>());
    }
}
