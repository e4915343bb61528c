//! LatestTime: zero-order-hold up-sampling as ROS 2 `message_filters`
//! (`reference/ros-message-filters.md` section 4): whenever a message of the
//! fastest ("pivot") topic arrives, the latest message of every topic is
//! emitted. Uses the receipt time, never the stamps. Unlike upstream, the
//! rate estimators are indexed by topic (ros2/message_filters#110), so
//! first arrivals in any order are handled.

use super::outbox::{Outbox, outbox_methods};
use super::{ConfigError, DropReason, SyncError, SyncStatus, check_topic};
use crate::stamped::Stamped;
use crate::time::Timestamp;

/// The rate estimator settings of one topic (ROS `setRateConfig`); defaults
/// as ROS: rate alpha 0.9, error alpha 0.3, step-change margin 10.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateConfig {
    /// Weight of the newest period in the rate average, in `[0, 1]`.
    pub rate_ema_alpha: f64,
    /// Weight of the newest deviation in the error average, in `[0, 1]`.
    pub error_ema_alpha: f64,
    /// A rate deviation beyond `margin × error` is a step change (>= 0).
    pub margin: f64,
}

impl Default for RateConfig {
    fn default() -> Self {
        RateConfig {
            rate_ema_alpha: 0.9,
            error_ema_alpha: 0.3,
            margin: 10.0,
        }
    }
}

/// Configuration of [`LatestTime`].
#[derive(Debug, Clone, PartialEq)]
pub struct LatestConfig {
    topics: usize,
    rates: Vec<(usize, RateConfig)>,
    all: RateConfig,
    report_drops: bool,
}

impl LatestConfig {
    /// `topics` topics with the default rate settings.
    pub fn new(topics: usize) -> Self {
        LatestConfig {
            topics,
            rates: Vec::new(),
            all: RateConfig::default(),
            report_drops: false,
        }
    }

    /// Rate settings for every topic.
    pub fn rate_config(mut self, c: RateConfig) -> Self {
        self.all = c;
        self
    }

    /// Rate settings of one topic.
    pub fn topic_rate_config(mut self, topic: usize, c: RateConfig) -> Self {
        self.rates.push((topic, c));
        self
    }

    /// Queue a report for every drop (they are counted either way).
    pub fn report_drops(mut self, on: bool) -> Self {
        self.report_drops = on;
        self
    }

    /// Checks every setting, as [`LatestTime::new`] does (at least one
    /// topic, rate settings finite and in range, per-topic settings for
    /// existing topics): call it where the configuration is built.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let n = self.topics;
        if n == 0 {
            return Err(ConfigError::NoTopics);
        }
        valid(&self.all)?;
        for &(topic, c) in &self.rates {
            valid(&c)?;
            if topic >= n {
                return Err(ConfigError::TopicOutOfRange { topic, topics: n });
            }
        }
        Ok(())
    }
}

impl Default for LatestConfig {
    /// The defaults of [`new`](LatestConfig::new) with no topic count: the
    /// settings of an async synchronizer, whose inputs give the count
    /// (see [`check`](LatestConfig::check)).
    fn default() -> Self {
        Self::new(0)
    }
}

impl LatestConfig {
    /// The topic count its per-topic settings need (their highest topic
    /// plus one), or its count if larger.
    fn needed_topics(&self) -> usize {
        self.rates
            .iter()
            .map(|&(topic, _)| topic.saturating_add(1))
            .fold(self.topics, usize::max)
    }
}

checked_settings!(LatestConfig, LatestSettings, LatestTime, "latest_time");

#[derive(Debug, Clone, Copy)]
struct Rate {
    cfg: RateConfig,
    prev: i64,
    hz: f64,
    error: Option<f64>,
    first: bool,
}

fn seconds(now: i64, prev: i64) -> f64 {
    (i128::from(now) - i128::from(prev)) as f64 / 1e9
}

impl Rate {
    /// Updates the rate with a message received at `now`; false when no
    /// time has passed (or it went backwards).
    fn compute_hz(&mut self, now: i64) -> bool {
        let period = seconds(now, self.prev);
        if period <= 0.0 {
            return false;
        }
        let inst = 1.0 / period;
        if self.first {
            self.hz = inst;
            self.first = false;
        } else {
            let dev = (self.hz - inst).abs();
            match self.error {
                None => self.error = Some(dev),
                Some(e) if dev > self.cfg.margin * e => {
                    self.hz = inst;
                    self.error = None;
                    self.prev = now;
                    return true;
                }
                Some(e) => {
                    self.error =
                        Some(self.cfg.error_ema_alpha * dev + (1.0 - self.cfg.error_ema_alpha) * e)
                }
            }
            self.hz = self.cfg.rate_ema_alpha / period + (1.0 - self.cfg.rate_ema_alpha) * self.hz;
        }
        self.prev = now;
        true
    }
}

#[derive(Debug)]
struct Held<M> {
    msg: Stamped<M>,
    used: bool,
}

/// The ROS 2 LatestTime synchronizer; messages are cloned into every set
/// they appear in.
///
/// ```
/// use syncline_core::sync::{LatestConfig, LatestTime};
/// use syncline_core::Timestamp;
///
/// let mut sync = LatestTime::new(LatestConfig::new(2)).unwrap();
/// let ms = |x: i64| Timestamp::from_nanos(x * 1_000_000);
/// // topic 0 at 50 Hz, topic 1 at 10 Hz (receipt times in ms)
/// for k in 0..=20 {
///     if k % 5 == 0 {
///         sync.push(1, ms(20 * k), k, ms(20 * k)).unwrap();
///     }
///     sync.push(0, ms(20 * k), k, ms(20 * k)).unwrap();
/// }
/// let mut n = 0;
/// while let Some(set) = sync.poll_set() {
///     assert!(set.is_complete());
///     n += 1;
/// }
/// assert!(n >= 15);
/// ```
#[derive(Debug)]
pub struct LatestTime<M> {
    n: usize,
    cfgs: Vec<RateConfig>,
    rates: Vec<Option<Rate>>,
    latest: Vec<Option<Held<M>>>,
    order: Vec<usize>,
    pushed: u64,
    out_of_order: u64,
    out: Outbox<M>,
}

fn valid(c: &RateConfig) -> Result<(), ConfigError> {
    let unit = |x: f64| (0.0..=1.0).contains(&x);
    if !unit(c.rate_ema_alpha) || !unit(c.error_ema_alpha) {
        return Err(ConfigError::Rate("alphas must be in [0, 1]"));
    }
    if !c.margin.is_finite() || c.margin < 0.0 {
        return Err(ConfigError::Rate("margin must be finite and >= 0"));
    }
    Ok(())
}

impl<M: Clone> LatestTime<M> {
    /// A synchronizer with `config`.
    pub fn new(config: LatestConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self::build(config))
    }

    /// A synchronizer of `topics` topics (at least one) with checked
    /// `settings` ([`LatestConfig::check`]): it cannot fail, so the async
    /// adapters, which take the topic count from their inputs, cannot
    /// either. Per-topic settings for topics `>= topics` are unused.
    pub fn with_settings(topics: usize, settings: &LatestSettings) -> Self {
        let mut config = settings.config.clone();
        config.topics = topics.max(1);
        config.rates.retain(|&(topic, _)| topic < config.topics);
        Self::build(config)
    }

    fn build(config: LatestConfig) -> Self {
        let n = config.topics;
        let mut cfgs = vec![config.all; n];
        for &(topic, c) in &config.rates {
            if let Some(slot) = cfgs.get_mut(topic) {
                *slot = c;
            }
        }
        LatestTime {
            n,
            cfgs,
            rates: vec![None; n],
            latest: (0..n).map(|_| None).collect(),
            order: Vec::with_capacity(n),
            pushed: 0,
            out_of_order: 0,
            out: Outbox::new(n, config.report_drops),
        }
    }

    /// The number of topics.
    pub fn topics(&self) -> usize {
        self.n
    }

    /// Adds a message of `topic` with its `stamp`, received at `now` (the
    /// receipt clock the policy runs on). A message replaced before it was
    /// ever part of a set is dropped (`replaced`).
    pub fn push(
        &mut self,
        topic: usize,
        stamp: Timestamp,
        msg: M,
        now: Timestamp,
    ) -> Result<(), SyncError> {
        check_topic(topic, self.n)?;
        self.pushed += 1;
        let now = now.as_nanos();
        let held = Held {
            msg: Stamped::new(stamp, msg),
            used: false,
        };
        let Some(old) = self.latest[topic].replace(held) else {
            self.rates[topic] = Some(Rate {
                cfg: self.cfgs[topic],
                prev: now,
                hz: 0.0,
                error: None,
                first: true,
            });
            return Ok(());
        };
        if old.msg.stamp > stamp {
            self.out_of_order += 1;
        }
        if !old.used {
            self.out.push_drop(topic, DropReason::Replaced, old.msg);
        }
        let updated = self.rates[topic]
            .as_mut()
            .is_some_and(|r| r.compute_hz(now));
        if updated && self.find_pivot(now) == Some(topic) && self.latest.iter().all(Option::is_some)
        {
            self.out.push_set(self.latest.iter_mut().map(|h| {
                h.as_mut().map(|h| {
                    h.used = true;
                    h.msg.clone()
                })
            }));
        }
        Ok(())
    }

    fn find_pivot(&mut self, now: i64) -> Option<usize> {
        self.order.clear();
        self.order
            .extend((0..self.n).filter(|&i| self.rates[i].is_some()));
        let hz = |i: usize| self.rates[i].map_or(0.0, |r| r.hz);
        // Stable: equal rates keep the lower index first.
        self.order.sort_by(|&a, &b| {
            hz(b)
                .partial_cmp(&hz(a))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        for &p in &self.order {
            let Some(r) = self.rates[p] else { continue };
            let period = seconds(now, r.prev);
            if period == 0.0 {
                if r.hz > 0.0 {
                    return Some(p);
                }
                continue;
            }
            if r.error
                .is_some_and(|e| r.hz - 1.0 / period > r.cfg.margin * e)
            {
                continue;
            }
            if r.hz > 0.0 {
                return Some(p);
            }
        }
        None
    }

    outbox_methods!();

    /// Messages of `topic` currently held.
    pub fn held_of(&self, topic: usize) -> usize {
        self.latest
            .get(topic)
            .map_or(0, |h| usize::from(h.is_some()))
    }

    /// The end of the input: the latest messages never part of a set are
    /// dropped with reason [`DropReason::End`].
    pub fn finish(&mut self) {
        for (i, h) in self.latest.iter_mut().enumerate() {
            if let Some(h) = h.take()
                && !h.used
            {
                self.out.push_drop(i, DropReason::End, h.msg);
            }
        }
    }

    /// Counters: messages pushed, sets, drops by reason, held per topic.
    pub fn status(&self) -> SyncStatus {
        SyncStatus {
            policy: "latest".into(),
            pushed: self.pushed,
            sets: self.out.emitted,
            partial_sets: self.out.partial,
            dropped: self.out.dropped,
            held: self
                .latest
                .iter()
                .map(|h| usize::from(h.is_some()))
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

    /// One upstream test scenario: per iteration, the adds `(topic, data)`
    /// at `idx * 20 ms`; returns after each iteration the set count and
    /// the last set's data.
    fn scenario(
        iterations: usize,
        adds: impl Fn(usize) -> Vec<(usize, usize)>,
    ) -> Vec<(usize, Option<Vec<usize>>)> {
        let mut s = LatestTime::new(LatestConfig::new(3)).unwrap();
        let mut count = 0;
        let mut last = None;
        let mut log = Vec::new();
        for idx in 0..iterations {
            let now = Timestamp::from_nanos(idx as i64 * 20_000_000);
            for (topic, data) in adds(idx) {
                s.push(topic, now, data, now).unwrap();
                while let Some(set) = s.poll_set() {
                    count += 1;
                    last = Some(set.members().iter().flatten().map(|m| m.value).collect());
                }
            }
            log.push((count, last.clone()));
        }
        log
    }

    #[test]
    fn upstream_leading() {
        let log = scenario(8, |idx| {
            let mut v = Vec::new();
            if idx % 2 == 0 {
                v.push((1, idx / 2));
            }
            if idx % 4 == 0 {
                v.push((2, idx / 4));
            }
            v.push((0, idx));
            v
        });
        assert_eq!(log[0].0, 0);
        for (idx, (count, last)) in log.iter().enumerate().skip(1) {
            assert_eq!(*count, idx);
            assert_eq!(last.clone().unwrap(), vec![idx, idx / 2, idx / 4]);
        }
    }

    #[test]
    fn upstream_trailing() {
        let log = scenario(8, |idx| {
            let mut v = Vec::new();
            if idx % 2 == 1 {
                v.push((1, (idx - 1) / 2));
            }
            if idx % 4 == 3 {
                v.push((2, (idx - 3) / 4));
            }
            v.push((0, idx));
            v
        });
        for (idx, (count, last)) in log.iter().enumerate() {
            if idx <= 2 {
                assert_eq!(*count, 0);
            } else {
                assert_eq!(*count, idx - 2);
                assert_eq!(
                    last.clone().unwrap(),
                    vec![idx, (idx - 1) / 2, (idx - 3) / 4]
                );
            }
        }
    }

    #[test]
    fn upstream_change_rate_leading() {
        let log = scenario(12, |idx| {
            let mut v = Vec::new();
            if idx % 2 == 0 {
                v.push((1, idx / 2));
            }
            if idx % 4 == 0 {
                v.push((2, idx / 4));
            }
            if idx < 4 || idx % 3 == 0 {
                v.push((0, idx));
            }
            v
        });
        for (idx, (count, last)) in log.iter().enumerate().skip(1) {
            let last = last.clone().unwrap();
            match idx {
                1..=3 => {
                    assert_eq!(*count, idx);
                    assert_eq!(last, vec![idx, idx / 2, idx / 4]);
                }
                4..=5 => {
                    assert_eq!(*count, (idx + 2) / 2);
                    assert_eq!(last, vec![3, 1, 0]);
                }
                _ => {
                    assert_eq!(*count, (idx + 2) / 2, "idx {idx}");
                    assert_eq!(last[1..], [idx / 2, (idx - 2) / 4], "idx {idx}");
                }
            }
        }
    }

    #[test]
    fn upstream_change_rate_trailing() {
        let log = scenario(12, |idx| {
            let mut v = Vec::new();
            if idx % 2 == 1 {
                v.push((1, (idx - 1) / 2));
            }
            if idx % 4 == 3 {
                v.push((2, (idx - 3) / 4));
            }
            if idx < 4 || idx % 3 == 1 {
                v.push((0, idx));
            }
            v
        });
        for (idx, (count, last)) in log.iter().enumerate().skip(3) {
            let last = last.clone().unwrap();
            match idx {
                3..=4 => {
                    assert_eq!(*count, idx - 2);
                    assert_eq!(last, vec![idx, (idx - 1) / 2, (idx - 3) / 4]);
                }
                5..=6 => {
                    assert_eq!(*count, 2);
                    assert_eq!(last, vec![4, 1, 0]);
                }
                _ => {
                    assert_eq!(*count, (idx - 1) / 2, "idx {idx}");
                    assert_eq!(last[1..], [(idx - 1) / 2, (idx - 5) / 4], "idx {idx}");
                }
            }
        }
    }

    #[test]
    fn first_arrivals_in_any_order_and_drops() {
        // Topic 2 sends twice before topic 1 ever arrives: upstream indexes
        // out of bounds here.
        let mut s = LatestTime::new(LatestConfig::new(3).report_drops(true)).unwrap();
        let t = |ms: i64| Timestamp::from_nanos(ms * 1_000_000);
        s.push(2, t(0), 0, t(0)).unwrap();
        s.push(2, t(10), 1, t(10)).unwrap();
        s.push(0, t(10), 2, t(10)).unwrap();
        s.push(1, t(15), 3, t(15)).unwrap();
        assert_eq!(s.poll_drop().unwrap().reason, DropReason::Replaced);
        for k in 2..10 {
            s.push(2, t(10 * k), 10 + k, t(10 * k)).unwrap();
        }
        assert!(s.poll_set().is_some());
        s.finish();
        let st = s.status();
        assert!(st.sets > 0);
        assert!(s.push(3, t(0), 0, t(0)).is_err());
        let bad = RateConfig {
            rate_ema_alpha: 2.0,
            ..RateConfig::default()
        };
        assert!(LatestTime::<()>::new(LatestConfig::new(2).rate_config(bad)).is_err());
        assert!(
            LatestTime::<()>::new(LatestConfig::new(2).topic_rate_config(5, RateConfig::default()))
                .is_err()
        );
    }
}
