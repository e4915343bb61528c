//! ExactTime: sets of messages with exactly equal stamps, as ROS
//! `message_filters` (`reference/ros-message-filters.md` section 3), with a
//! bounded number of pending timestamps and a reason for every drop.

use std::collections::VecDeque;

use super::outbox::{Outbox, outbox_methods};
use super::{ConfigError, DropReason, SyncError, SyncStatus, check_topic};
use crate::stamped::Stamped;
use crate::time::Timestamp;

/// Configuration of [`ExactTime`]: `queue_size` pending timestamps over all
/// topics (default 10, as ROS; 0 = unbounded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExactConfig {
    topics: usize,
    queue_size: usize,
    report_drops: bool,
}

impl ExactConfig {
    /// `topics` topics, queue size 10, no drop reports.
    pub fn new(topics: usize) -> Self {
        ExactConfig {
            topics,
            queue_size: 10,
            report_drops: false,
        }
    }

    /// Pending timestamps over all topics (0 = unbounded).
    pub fn queue_size(mut self, n: usize) -> Self {
        self.queue_size = n;
        self
    }

    /// Queue a report for every drop (they are counted either way).
    pub fn report_drops(mut self, on: bool) -> Self {
        self.report_drops = on;
        self
    }

    /// Checks every setting, as [`ExactTime::new`] does (at least one
    /// topic): call it where the configuration is built.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.topics == 0 {
            return Err(ConfigError::NoTopics);
        }
        Ok(())
    }
}

impl Default for ExactConfig {
    /// The defaults of [`new`](ExactConfig::new) with no topic count: the
    /// settings of an async synchronizer, whose inputs give the count
    /// (see [`check`](ExactConfig::check)).
    fn default() -> Self {
        Self::new(0)
    }
}

impl ExactConfig {
    /// The topic count its per-topic settings need (their highest topic
    /// plus one), or its count if larger.
    fn needed_topics(&self) -> usize {
        self.topics
    }
}

checked_settings!(ExactConfig, ExactSettings, ExactTime, "exact_time");

#[derive(Debug)]
struct Tuple<M> {
    stamp: i64,
    filled: usize,
    members: Vec<Option<Stamped<M>>>,
}

/// The ROS ExactTime synchronizer.
///
/// ```
/// use syncline_core::sync::{ExactConfig, ExactTime};
/// use syncline_core::Timestamp;
///
/// let mut sync = ExactTime::new(ExactConfig::new(2)).unwrap();
/// let t = Timestamp::from_nanos;
/// sync.push(0, t(5), 'a').unwrap();
/// sync.push(1, t(4), 'x').unwrap();
/// sync.push(1, t(5), 'b').unwrap();
/// let set = sync.poll_set().unwrap();
/// assert_eq!((set.get(0).unwrap().value, set.get(1).unwrap().value), ('a', 'b'));
/// let _ = set;
/// // 'x' (stamp 4) is older than the set just emitted: dropped as skipped.
/// assert_eq!(sync.status().dropped.skipped, 1);
/// ```
#[derive(Debug)]
pub struct ExactTime<M> {
    n: usize,
    queue_size: usize,
    /// Pending tuples in ascending stamp order.
    pending: VecDeque<Tuple<M>>,
    /// Member vectors of erased tuples, reused.
    pool: Vec<Vec<Option<Stamped<M>>>>,
    last_signal: Option<Timestamp>,
    pushed: u64,
    out_of_order: u64,
    last_stamp: Vec<Option<i64>>,
    out: Outbox<M>,
}

impl<M> ExactTime<M> {
    /// A synchronizer with `config` (at least one topic).
    pub fn new(config: ExactConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self::build(config))
    }

    /// A synchronizer of `topics` topics (at least one) with checked
    /// `settings` ([`ExactConfig::check`]): it cannot fail, so the async
    /// adapters, which take the topic count from their inputs, cannot
    /// either. Per-topic settings for topics `>= topics` are unused.
    pub fn with_settings(topics: usize, settings: &ExactSettings) -> Self {
        let mut config = settings.config.clone();
        config.topics = topics.max(1);
        Self::build(config)
    }

    fn build(config: ExactConfig) -> Self {
        ExactTime {
            n: config.topics,
            queue_size: config.queue_size,
            pending: VecDeque::new(),
            pool: Vec::new(),
            last_signal: None,
            pushed: 0,
            out_of_order: 0,
            last_stamp: vec![None; config.topics],
            out: Outbox::new(config.topics, config.report_drops),
        }
    }

    /// The number of topics.
    pub fn topics(&self) -> usize {
        self.n
    }

    /// The stamp of the last emitted set.
    pub fn last_signal_time(&self) -> Option<Timestamp> {
        self.last_signal
    }

    /// Adds a message; a set is emitted as soon as every topic has a
    /// message with this stamp. An earlier message of the same topic with
    /// the same stamp is dropped (`replaced`); after a set, every pending
    /// older stamp is dropped (`skipped`); beyond `queue_size` pending
    /// stamps the oldest are dropped (`overflow`).
    pub fn push(&mut self, topic: usize, stamp: Timestamp, msg: M) -> Result<(), SyncError> {
        check_topic(topic, self.n)?;
        self.pushed += 1;
        let t = stamp.as_nanos();
        if self.last_stamp[topic].is_some_and(|l| t < l) {
            self.out_of_order += 1;
        }
        self.last_stamp[topic] = Some(t);
        let pos = self.pending.partition_point(|p| p.stamp < t);
        if self.pending.get(pos).is_none_or(|p| p.stamp != t) {
            let mut members = self.pool.pop().unwrap_or_default();
            members.clear();
            members.resize_with(self.n, || None);
            self.pending.insert(
                pos,
                Tuple {
                    stamp: t,
                    filled: 0,
                    members,
                },
            );
        }
        let Some(tuple) = self.pending.get_mut(pos) else {
            return Ok(());
        };
        match tuple.members[topic].replace(Stamped::new(stamp, msg)) {
            Some(old) => self.out.push_drop(topic, DropReason::Replaced, old),
            None => tuple.filled += 1,
        }
        if tuple.filled == self.n {
            if let Some(mut done) = self.pending.remove(pos) {
                self.out.push_set(done.members.drain(..));
                self.pool.push(done.members);
            }
            self.last_signal = Some(stamp);
            for _ in 0..pos {
                self.erase_oldest(DropReason::Skipped);
            }
        }
        if self.queue_size > 0 {
            while self.pending.len() > self.queue_size {
                self.erase_oldest(DropReason::Overflow);
            }
        }
        Ok(())
    }

    fn erase_oldest(&mut self, reason: DropReason) {
        if let Some(mut tuple) = self.pending.pop_front() {
            for (i, m) in tuple.members.drain(..).enumerate() {
                if let Some(m) = m {
                    self.out.push_drop(i, reason, m);
                }
            }
            self.pool.push(tuple.members);
        }
    }

    outbox_methods!();

    /// Messages of `topic` currently held.
    pub fn held_of(&self, topic: usize) -> usize {
        self.pending
            .iter()
            .filter(|p| p.members.get(topic).is_some_and(Option::is_some))
            .count()
    }

    /// The end of the input: every pending message is dropped with reason
    /// [`DropReason::End`], oldest stamp first.
    pub fn finish(&mut self) {
        while !self.pending.is_empty() {
            self.erase_oldest(DropReason::End);
        }
    }

    /// Counters: messages pushed, sets, drops by reason, held per topic.
    pub fn status(&self) -> SyncStatus {
        SyncStatus {
            policy: "exact".into(),
            pushed: self.pushed,
            sets: self.out.emitted,
            partial_sets: self.out.partial,
            dropped: self.out.dropped,
            held: (0..self.n)
                .map(|i| {
                    self.pending
                        .iter()
                        .filter(|p| p.members[i].is_some())
                        .count()
                })
                .collect(),
            out_of_order: self.out_of_order,
            stalled_topics: Vec::new(),
            topics: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t0() -> Timestamp {
        Timestamp::EPOCH
    }
    fn t1() -> Timestamp {
        Timestamp::from_nanos(100_000_000)
    }

    fn drain_drops<M>(s: &mut ExactTime<M>) -> Vec<(usize, DropReason)> {
        std::iter::from_fn(|| s.poll_drop())
            .map(|d| (d.topic, d.reason))
            .collect()
    }

    #[test]
    fn upstream_multiple_times() {
        let mut s = ExactTime::new(ExactConfig::new(3).queue_size(2).report_drops(true)).unwrap();
        s.push(0, t0(), 0).unwrap();
        s.push(1, t1(), 1).unwrap();
        s.push(0, t1(), 2).unwrap();
        assert!(s.poll_set().is_none());
        assert!(drain_drops(&mut s).is_empty());
        s.push(2, t1(), 3).unwrap();
        let set = s.poll_set().unwrap();
        let ids: Vec<i32> = set.members().iter().flatten().map(|m| m.value).collect();
        assert_eq!(ids, vec![2, 1, 3]);
        assert_eq!(drain_drops(&mut s), vec![(0, DropReason::Skipped)]);
        assert_eq!(s.last_signal_time(), Some(t1()));
    }

    #[test]
    fn upstream_queue_size_and_replacement() {
        let mut s = ExactTime::new(ExactConfig::new(3).queue_size(1).report_drops(true)).unwrap();
        s.push(0, t0(), 0).unwrap();
        s.push(1, t0(), 1).unwrap();
        assert!(drain_drops(&mut s).is_empty());
        s.push(1, t1(), 2).unwrap();
        // the tuple (T0, T0, -) overflows
        assert_eq!(
            drain_drops(&mut s),
            vec![(0, DropReason::Overflow), (1, DropReason::Overflow)]
        );
        s.push(1, t0(), 3).unwrap();
        assert_eq!(drain_drops(&mut s), vec![(1, DropReason::Overflow)]);
        s.push(2, t0(), 4).unwrap();
        assert_eq!(drain_drops(&mut s), vec![(2, DropReason::Overflow)]);
        assert!(s.poll_set().is_none());
        s.push(2, t1(), 5).unwrap();
        s.push(2, t1(), 6).unwrap();
        assert_eq!(drain_drops(&mut s), vec![(2, DropReason::Replaced)]);
        s.finish();
        assert_eq!(
            drain_drops(&mut s),
            vec![(1, DropReason::End), (2, DropReason::End)]
        );
        let st = s.status();
        assert_eq!(st.pushed, st.dropped.total());
    }

    #[test]
    fn immediate_for_any_topic_count_and_unbounded_queue() {
        for n in 2..=12 {
            let mut s = ExactTime::new(ExactConfig::new(n).queue_size(1)).unwrap();
            for k in 0..n {
                assert!(s.poll_set().is_none());
                s.push(k, t0(), k).unwrap();
            }
            assert!(s.poll_set().unwrap().is_complete());
        }
        let mut s = ExactTime::new(ExactConfig::new(2).queue_size(0)).unwrap();
        for k in 0..100 {
            s.push(0, Timestamp::from_nanos(k), ()).unwrap();
        }
        assert_eq!(s.status().held, vec![100, 0]);
        assert!(s.push(5, t0(), ()).is_err());
        assert!(ExactTime::<()>::new(ExactConfig::new(0)).is_err());
    }

    #[test]
    fn late_messages_open_new_tuples() {
        let mut s = ExactTime::new(ExactConfig::new(2)).unwrap();
        s.push(0, t1(), ()).unwrap();
        s.push(1, t1(), ()).unwrap();
        assert!(s.poll_set().is_some());
        s.push(0, t0(), ()).unwrap();
        s.push(1, t0(), ()).unwrap();
        assert!(s.poll_set().is_some());
        assert_eq!(s.status().out_of_order, 2);
    }
}
