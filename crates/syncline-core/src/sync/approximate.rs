//! ApproximateTime: the ROS `message_filters` algorithm, exactly (pivot,
//! candidate search, per-topic queue size, age penalty, maximum interval,
//! inter-message lower bounds, tie-breaking, emission timing), for any
//! number of topics, with drop reports and an optional stall timeout.
//!
//! The state follows `reference/ros-message-filters.md` section 2: per topic
//! a `deque` of held messages in arrival order and a `past` of messages
//! stepped over by the running candidate search. The candidate itself is
//! never copied: its member of topic `i` is always the first of
//! `past[i] ++ deque[i]`, so messages leave every topic in arrival order.

use std::collections::VecDeque;

use super::outbox::{Outbox, outbox_methods};
use super::{ConfigError, DropReason, SyncError, SyncStatus, check_topic};
use crate::stamped::Stamped;
use crate::time::{TimeDelta, Timestamp};

/// What the stall timeout does once a topic has been silent too long.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StallAction {
    /// Keep requiring every topic, but drop (reason `stalled`) held messages
    /// older than the timeout instead of letting them pile up.
    Report,
    /// Stop waiting for the stalled topic: form sets of the other topics
    /// (its member is `None`) until it publishes again.
    Partial,
}

/// The optional stall timeout of [`ApproximateTime`].
///
/// Time is the stamp domain: the synchronizer's clock is the newest stamp
/// pushed (or passed to [`ApproximateTime::handle_timeout`]). A topic that
/// holds nothing is *stalled* once the clock is more than `timeout` past its
/// newest stamp (past the first stamp ever pushed, if it never published).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StallConfig {
    /// How long a topic may stay silent, in stamp time.
    pub timeout: TimeDelta,
    /// What happens then.
    pub action: StallAction,
}

/// Configuration of [`ApproximateTime`]; defaults as ROS: queue size 10,
/// age penalty 0.1, no maximum interval, lower bounds 0, plus no stall
/// timeout and no drop reports.
///
/// ```
/// use syncline_core::sync::{ApproximateConfig, ApproximateTime};
/// use syncline_core::TimeDelta;
///
/// let config = ApproximateConfig::new(3)
///     .queue_size(20)
///     .age_penalty(0.0)
///     .max_interval(TimeDelta::from_millis(20))
///     .lower_bound(2, TimeDelta::from_millis(95))
///     .report_drops(true);
/// let sync: ApproximateTime<u32> = ApproximateTime::new(config).unwrap();
/// assert_eq!(sync.topics(), 3);
/// assert!(ApproximateTime::<u32>::new(ApproximateConfig::new(2).queue_size(0)).is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ApproximateConfig {
    topics: usize,
    queue_size: usize,
    age_penalty: f64,
    max_interval: Option<TimeDelta>,
    lower_bounds: Vec<(usize, TimeDelta)>,
    stall: Option<StallConfig>,
    report_drops: bool,
}

impl ApproximateConfig {
    /// `topics` topics with ROS's defaults.
    pub fn new(topics: usize) -> Self {
        ApproximateConfig {
            topics,
            queue_size: 10,
            age_penalty: 0.1,
            max_interval: None,
            lower_bounds: Vec::new(),
            stall: None,
            report_drops: false,
        }
    }

    /// Per-topic bound on held messages (>= 1).
    pub fn queue_size(mut self, n: usize) -> Self {
        self.queue_size = n;
        self
    }

    /// The age penalty (finite, >= 0).
    pub fn age_penalty(mut self, x: f64) -> Self {
        self.age_penalty = x;
        self
    }

    /// The maximum interval of a set (>= 0).
    pub fn max_interval(mut self, d: TimeDelta) -> Self {
        self.max_interval = Some(d);
        self
    }

    /// The inter-message lower bound of `topic` (>= 0).
    pub fn lower_bound(mut self, topic: usize, d: TimeDelta) -> Self {
        self.lower_bounds.push((topic, d));
        self
    }

    /// A stall timeout.
    pub fn stall(mut self, stall: StallConfig) -> Self {
        self.stall = Some(stall);
        self
    }

    /// Queue a [`Dropped`](super::Dropped) report for every drop (they are
    /// counted either way). Poll them, or they accumulate.
    pub fn report_drops(mut self, on: bool) -> Self {
        self.report_drops = on;
        self
    }

    /// Checks every setting, as [`ApproximateTime::new`] does: call it
    /// where the configuration is built (from a parameter file, say) to
    /// report a bad setting there. A configuration that passes is accepted
    /// by `new`.
    ///
    /// ```
    /// use syncline_core::sync::{ApproximateConfig, ConfigError};
    /// use syncline_core::TimeDelta;
    ///
    /// assert!(ApproximateConfig::new(2).validate().is_ok());
    /// let bad = ApproximateConfig::new(2).lower_bound(2, TimeDelta::from_millis(5));
    /// assert_eq!(bad.validate(), Err(ConfigError::TopicOutOfRange { topic: 2, topics: 2 }));
    /// ```
    pub fn validate(&self) -> Result<(), ConfigError> {
        let n = self.topics;
        if n == 0 {
            return Err(ConfigError::NoTopics);
        }
        if self.queue_size == 0 {
            return Err(ConfigError::ZeroQueue);
        }
        if !self.age_penalty.is_finite() || self.age_penalty < 0.0 {
            return Err(ConfigError::AgePenalty(self.age_penalty));
        }
        if self.max_interval.is_some_and(TimeDelta::is_negative) {
            return Err(ConfigError::Negative {
                what: "max interval",
            });
        }
        for &(topic, d) in &self.lower_bounds {
            if d.is_negative() {
                return Err(ConfigError::Negative {
                    what: "inter-message lower bound",
                });
            }
            if topic >= n {
                return Err(ConfigError::TopicOutOfRange { topic, topics: n });
            }
        }
        if let Some(s) = self.stall
            && s.timeout.is_negative()
        {
            return Err(ConfigError::Negative {
                what: "stall timeout",
            });
        }
        Ok(())
    }
}

impl Default for ApproximateConfig {
    /// The defaults of [`new`](ApproximateConfig::new) with no topic count: the
    /// settings of an async synchronizer, whose inputs give the count
    /// (see [`check`](ApproximateConfig::check)).
    fn default() -> Self {
        Self::new(0)
    }
}

impl ApproximateConfig {
    /// The topic count its per-topic settings need (their highest topic
    /// plus one), or its count if larger.
    fn needed_topics(&self) -> usize {
        self.lower_bounds
            .iter()
            .map(|&(topic, _)| topic.saturating_add(1))
            .fold(self.topics, usize::max)
    }
}

checked_settings!(
    ApproximateConfig,
    ApproximateSettings,
    ApproximateTime,
    "approximate_time"
);

/// `trunc(d × (1 + age_penalty))` as rclcpp computes it: `1 + age_penalty`
/// as an `f64` is `mantissa × 2^exp`; the product is rounded to a 64-bit
/// significand (x86-64 `long double`, round half to even), then truncated
/// toward zero.
#[derive(Debug, Clone, Copy)]
struct Scale {
    mantissa: u128,
    exp: i32,
}

impl Scale {
    fn new(age_penalty: f64) -> Self {
        let f = 1.0 + age_penalty;
        let bits = f.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let frac = u128::from(bits & ((1u64 << 52) - 1));
        // f >= 1 and finite: always a normal number.
        Scale {
            mantissa: frac | (1u128 << 52),
            exp: biased - 1075,
        }
    }

    fn apply(self, d: i128) -> i128 {
        let saturated = if d < 0 { i128::MIN } else { i128::MAX };
        // |d| < 2^65 (a difference of two i64) and mantissa < 2^53: no overflow.
        let Some(p) = d.unsigned_abs().checked_mul(self.mantissa) else {
            return saturated;
        };
        let (q, shift) = round_to_64_bits(p);
        let exp = shift + self.exp;
        let magnitude = if exp >= 0 {
            match q.checked_shl(exp as u32).filter(|m| m >> exp == q) {
                Some(m) => m,
                None => return saturated,
            }
        } else if exp <= -128 {
            0
        } else {
            q >> -exp
        };
        let magnitude = i128::try_from(magnitude).unwrap_or(i128::MAX);
        if d < 0 { -magnitude } else { magnitude }
    }
}

/// `p` rounded to 64 significant bits, half to even: `(q, s)` with
/// `p ≈ q × 2^s`.
fn round_to_64_bits(p: u128) -> (u128, i32) {
    let bits = 128 - p.leading_zeros();
    if bits <= 64 {
        return (p, 0);
    }
    let s = bits - 64;
    let q = p >> s;
    let rem = p & ((1u128 << s) - 1);
    let half = 1u128 << (s - 1);
    let up = rem > half || (rem == half && q & 1 == 1);
    (q + u128::from(up), s as i32)
}

/// The ROS ApproximateTime synchronizer over `topics` topics carrying
/// messages of type `M`.
///
/// ```
/// use syncline_core::sync::{ApproximateConfig, ApproximateTime};
/// use syncline_core::Timestamp;
///
/// // The upstream ImperfectMatch test: two topics, stamps in seconds.
/// let mut sync = ApproximateTime::new(ApproximateConfig::new(2)).unwrap();
/// let s = |x: i64| Timestamp::from_nanos(x * 1_000_000_000);
/// let mut sets = Vec::new();
/// for (id, (topic, stamp)) in [(0, 0), (1, 1), (0, 2), (0, 3), (1, 5), (0, 6), (1, 7)]
///     .into_iter()
///     .enumerate()
/// {
///     sync.push(topic, s(stamp), id).unwrap();
///     while let Some(set) = sync.poll_set() {
///         let ids: Vec<usize> = set.members().iter().flatten().map(|m| m.value).collect();
///         sets.push((id, ids));
///     }
/// }
/// assert_eq!(sets, vec![(2, vec![0, 1]), (5, vec![5, 4])]);
/// ```
#[derive(Debug)]
pub struct ApproximateTime<M> {
    n: usize,
    queue_size: usize,
    scale: Scale,
    max_interval: Option<i128>,
    lower_bound: Vec<i128>,
    stall: Option<(i128, StallAction)>,
    deque: Vec<VecDeque<Stamped<M>>>,
    past: Vec<VecDeque<Stamped<M>>>,
    active: Vec<bool>,
    n_active: usize,
    num_non_empty: usize,
    pivot: Option<usize>,
    pivot_time: i128,
    cand_start: i128,
    cand_end: i128,
    has_dropped: Vec<bool>,
    moves: Vec<usize>,
    vt: Vec<i128>,
    last_stamp: Vec<Option<i64>>,
    clock: Option<i64>,
    first_stamp: Option<i64>,
    pushed: u64,
    out_of_order: u64,
    out: Outbox<M>,
}

/// Index and value of the earliest (ties: lowest index) and latest (ties:
/// highest index) of the values `f(i)` for the active topics.
fn extremes(
    active: &[bool],
    mut f: impl FnMut(usize) -> i128,
) -> Option<((usize, i128), (usize, i128))> {
    let mut best: Option<((usize, i128), (usize, i128))> = None;
    for (i, _) in active.iter().enumerate().filter(|(_, a)| **a) {
        let t = f(i);
        best = Some(match best {
            None => ((i, t), (i, t)),
            Some((s, e)) => (
                if t < s.1 { (i, t) } else { s },
                if t >= e.1 { (i, t) } else { e },
            ),
        });
    }
    best
}

impl<M> ApproximateTime<M> {
    /// A synchronizer with `config`; a typed error for a bad setting
    /// (no topics, queue size 0, negative or non-finite values, a lower
    /// bound for a topic that does not exist).
    pub fn new(config: ApproximateConfig) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Self::build(config))
    }

    /// A synchronizer of `topics` topics (at least one) with checked
    /// `settings` ([`ApproximateConfig::check`]): it cannot fail, so the async
    /// adapters, which take the topic count from their inputs, cannot
    /// either. Per-topic settings for topics `>= topics` are unused.
    pub fn with_settings(topics: usize, settings: &ApproximateSettings) -> Self {
        let mut config = settings.config.clone();
        config.topics = topics.max(1);
        config
            .lower_bounds
            .retain(|&(topic, _)| topic < config.topics);
        Self::build(config)
    }

    fn build(config: ApproximateConfig) -> Self {
        let n = config.topics;
        let mut lower_bound = vec![0i128; n];
        for &(topic, d) in &config.lower_bounds {
            if let Some(lb) = lower_bound.get_mut(topic) {
                *lb = i128::from(d.as_nanos());
            }
        }
        let cap = config.queue_size.saturating_add(1).min(1024);
        ApproximateTime {
            n,
            queue_size: config.queue_size,
            scale: Scale::new(config.age_penalty),
            max_interval: config.max_interval.map(|d| i128::from(d.as_nanos())),
            lower_bound,
            stall: config
                .stall
                .map(|s| (i128::from(s.timeout.as_nanos()), s.action)),
            deque: (0..n).map(|_| VecDeque::with_capacity(cap)).collect(),
            past: (0..n).map(|_| VecDeque::with_capacity(cap)).collect(),
            active: vec![true; n],
            n_active: n,
            num_non_empty: 0,
            pivot: None,
            pivot_time: 0,
            cand_start: 0,
            cand_end: 0,
            has_dropped: vec![false; n],
            moves: vec![0; n],
            vt: vec![0; n],
            last_stamp: vec![None; n],
            clock: None,
            first_stamp: None,
            pushed: 0,
            out_of_order: 0,
            out: Outbox::new(n, config.report_drops),
        }
    }

    /// The number of topics.
    pub fn topics(&self) -> usize {
        self.n
    }

    /// Adds a message of `topic` (0-based) with its `stamp`, in arrival
    /// order. Sets it completes (possibly several) and drops it causes are
    /// queued: poll them until `None`. An unknown topic is a typed error and
    /// the message is not taken.
    pub fn push(&mut self, topic: usize, stamp: Timestamp, msg: M) -> Result<(), SyncError> {
        check_topic(topic, self.n)?;
        let t = stamp.as_nanos();
        self.pushed += 1;
        if self.last_stamp[topic].is_some_and(|last| t < last) {
            self.out_of_order += 1;
        }
        self.last_stamp[topic] = Some(self.last_stamp[topic].map_or(t, |l| l.max(t)));
        self.first_stamp.get_or_insert(t);
        self.advance_clock(t);
        if !self.active[topic] {
            self.active[topic] = true;
            self.n_active += 1;
            self.reset_search();
        }
        self.stall_check(Some(topic));

        let i = topic;
        self.deque[i].push_back(Stamped::new(stamp, msg));
        if self.deque[i].len() == 1 {
            self.num_non_empty += 1;
            if self.num_non_empty == self.n_active {
                self.process();
            }
        }
        if self.deque[i].len() + self.past[i].len() > self.queue_size {
            self.recover_all();
            if let Some(m) = self.deque[i].pop_front() {
                self.out.push_drop(i, DropReason::Overflow, m);
            }
            self.recount();
            self.has_dropped[i] = true;
            if self.pivot.take().is_some() {
                self.process();
            }
        }
        Ok(())
    }

    outbox_methods!();

    /// Messages of `topic` currently held.
    pub fn held_of(&self, topic: usize) -> usize {
        self.deque.get(topic).map_or(0, VecDeque::len)
            + self.past.get(topic).map_or(0, VecDeque::len)
    }

    /// The end of the input: every message still held is dropped with
    /// reason [`DropReason::End`] (topic by topic, in arrival order).
    pub fn finish(&mut self) {
        self.reset_search();
        for (i, dq) in self.deque.iter_mut().enumerate() {
            for m in dq.drain(..) {
                self.out.push_drop(i, DropReason::End, m);
            }
        }
        self.num_non_empty = 0;
    }

    /// Advances the stall clock (stamp domain) without a message, e.g. from
    /// a timer; only meaningful with a stall timeout.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.advance_clock(now.as_nanos());
        self.stall_check(None);
    }

    /// The stamp-domain instant at which the stall timeout would next act,
    /// if one is configured and something is held: in partial mode, when
    /// the first silent topic is set aside; in report mode, when a topic is
    /// stalled *and* the oldest held message is older than the timeout.
    /// Once [`handle_timeout`](Self::handle_timeout) has been called at
    /// that instant, the next one is later (a timer driven by it never
    /// spins).
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let (timeout, action) = self.stall?;
        if self.held_total() == 0 {
            return None;
        }
        let stall_at = (0..self.n)
            .filter(|&k| self.active[k] && self.deque[k].is_empty() && self.past[k].is_empty())
            .filter_map(|k| self.last_stamp[k].or(self.first_stamp))
            .map(|since| i128::from(since) + timeout + 1)
            .min()?;
        let at = match action {
            StallAction::Partial => stall_at,
            StallAction::Report => {
                let oldest = (0..self.n)
                    .filter_map(|j| self.past[j].front().or(self.deque[j].front()))
                    .map(|m| i128::from(m.stamp.as_nanos()))
                    .min()?;
                stall_at.max(oldest + timeout + 1)
            }
        };
        Some(Timestamp::from_nanos(
            at.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
        ))
    }

    /// Counters: messages pushed, sets, drops by reason, held per topic.
    pub fn status(&self) -> SyncStatus {
        SyncStatus {
            policy: "approximate".into(),
            pushed: self.pushed,
            sets: self.out.emitted,
            partial_sets: self.out.partial,
            dropped: self.out.dropped,
            held: (0..self.n)
                .map(|i| self.deque[i].len() + self.past[i].len())
                .collect(),
            out_of_order: self.out_of_order,
            stalled_topics: (0..self.n).filter(|&k| self.is_stalled(k)).collect(),
            topics: Vec::new(),
        }
    }

    fn held_total(&self) -> usize {
        self.deque.iter().chain(&self.past).map(VecDeque::len).sum()
    }

    fn advance_clock(&mut self, t: i64) {
        self.clock = Some(self.clock.map_or(t, |c| c.max(t)));
    }

    /// Whether topic `k` is silent beyond the stall timeout (partial mode:
    /// whether it has been set aside).
    fn is_stalled(&self, k: usize) -> bool {
        let Some((timeout, action)) = self.stall else {
            return false;
        };
        if action == StallAction::Partial && !self.active[k] {
            return true;
        }
        let (Some(clock), Some(since)) = (self.clock, self.last_stamp[k].or(self.first_stamp))
        else {
            return false;
        };
        self.active[k]
            && self.deque[k].is_empty()
            && self.past[k].is_empty()
            && i128::from(clock) - i128::from(since) > timeout
    }

    /// Applies the stall timeout at the current clock; `skip` is the topic
    /// being pushed to, which is never stalled.
    fn stall_check(&mut self, skip: Option<usize>) {
        let Some((timeout, action)) = self.stall else {
            return;
        };
        let Some(clock) = self.clock else { return };
        let stalled = |s: &Self, k: usize| Some(k) != skip && s.active[k] && s.is_stalled(k);
        match action {
            StallAction::Partial => {
                // Sets formed without the stalled topics may empty another
                // silent topic, stalled too by now: repeat until none is
                // left (at most once per topic), so that the next deadline
                // is in the future.
                loop {
                    let mut changed = false;
                    for k in 0..self.n {
                        if stalled(self, k) {
                            self.active[k] = false;
                            self.n_active -= 1;
                            changed = true;
                        }
                    }
                    if !changed {
                        break;
                    }
                    self.reset_search();
                    self.process();
                }
            }
            StallAction::Report => {
                if !(0..self.n).any(|k| stalled(self, k)) {
                    return;
                }
                let old =
                    |m: &Stamped<M>| i128::from(clock) - i128::from(m.stamp.as_nanos()) > timeout;
                let any_old = (0..self.n).any(|j| {
                    self.past[j]
                        .front()
                        .or(self.deque[j].front())
                        .is_some_and(old)
                });
                if !any_old {
                    return;
                }
                self.reset_search();
                for j in 0..self.n {
                    while self.deque[j].front().is_some_and(old) {
                        if let Some(m) = self.deque[j].pop_front() {
                            self.out.push_drop(j, DropReason::Stalled, m);
                        }
                    }
                }
                self.recount();
            }
        }
    }

    /// Abandons the candidate search in progress (as ROS does on overflow).
    fn reset_search(&mut self) {
        self.recover_all();
        self.pivot = None;
    }

    fn recount(&mut self) {
        self.num_non_empty = (0..self.n)
            .filter(|&i| self.active[i] && !self.deque[i].is_empty())
            .count();
    }

    fn front_stamp(&self, i: usize) -> i128 {
        self.deque[i]
            .front()
            .map_or(0, |m| i128::from(m.stamp.as_nanos()))
    }

    fn step_over(&mut self, i: usize) {
        if let Some(m) = self.deque[i].pop_front() {
            self.past[i].push_back(m);
            if self.deque[i].is_empty() {
                self.num_non_empty -= 1;
            }
        }
    }

    fn delete_front(&mut self, i: usize, reason: DropReason) {
        if let Some(m) = self.deque[i].pop_front() {
            self.out.push_drop(i, reason, m);
            if self.deque[i].is_empty() {
                self.num_non_empty -= 1;
            }
        }
    }

    fn recover_all(&mut self) {
        for (dq, past) in self.deque.iter_mut().zip(&mut self.past) {
            while let Some(m) = past.pop_back() {
                dq.push_front(m);
            }
        }
        self.recount();
    }

    fn make_candidate(&mut self, start: i128, end: i128) {
        for (i, past) in self.past.iter_mut().enumerate() {
            for m in past.drain(..) {
                self.out.push_drop(i, DropReason::Skipped, m);
            }
        }
        self.cand_start = start;
        self.cand_end = end;
    }

    fn publish(&mut self) {
        let (deque, past, active) = (&mut self.deque, &mut self.past, &self.active);
        self.out.push_set((0..self.n).map(|i| {
            if !active[i] {
                return None;
            }
            while let Some(m) = past[i].pop_back() {
                deque[i].push_front(m);
            }
            deque[i].pop_front()
        }));
        self.pivot = None;
        self.recount();
    }

    fn scaled(&self, d: i128) -> i128 {
        self.scale.apply(d)
    }

    fn process(&mut self) {
        while self.n_active > 0 && self.num_non_empty == self.n_active {
            let Some(((s_i, s_t), (e_i, e_t))) = extremes(&self.active, |i| self.front_stamp(i))
            else {
                return;
            };
            for (j, hd) in self.has_dropped.iter_mut().enumerate() {
                if j != e_i {
                    *hd = false;
                }
            }
            let pivot = match self.pivot {
                None => {
                    if self.max_interval.is_some_and(|mi| e_t - s_t > mi) {
                        self.delete_front(s_i, DropReason::Interval);
                        continue;
                    }
                    // ROS's rule: the end topic overflowed, so a better
                    // candidate may have been lost; delete the start and
                    // try again. With a single active topic (partial stall
                    // mode) start and end are the same message, a set by
                    // itself: deleting it would lose every later message of
                    // that topic, since the flag only clears when another
                    // topic becomes the end.
                    if self.has_dropped[e_i] && s_i != e_i {
                        self.delete_front(s_i, DropReason::Skipped);
                        continue;
                    }
                    self.make_candidate(s_t, e_t);
                    self.pivot = Some(e_i);
                    self.pivot_time = e_t;
                    self.step_over(s_i);
                    e_i
                }
                Some(p) => {
                    if self.scaled(e_t - self.cand_end) < s_t - self.cand_start {
                        self.make_candidate(s_t, e_t);
                    }
                    self.step_over(s_i);
                    p
                }
            };
            if s_i == pivot || self.scaled(e_t - self.cand_end) >= self.pivot_time - self.cand_start
            {
                self.publish();
                continue;
            }
            if self.num_non_empty < self.n_active {
                self.virtual_search();
            }
        }
    }

    /// Phase 3: proves the candidate optimal with the lower bounds of the
    /// topics that have run dry, or undoes its moves and waits for data.
    fn virtual_search(&mut self) {
        self.moves.fill(0);
        loop {
            for j in 0..self.n {
                self.vt[j] = match (self.deque[j].front(), self.past[j].back()) {
                    (Some(m), _) => i128::from(m.stamp.as_nanos()),
                    (None, Some(p)) => {
                        (i128::from(p.stamp.as_nanos()) + self.lower_bound[j]).max(self.pivot_time)
                    }
                    (None, None) => self.pivot_time,
                };
            }
            let Some(((vs_i, vs_t), (_, ve_t))) = extremes(&self.active, |j| self.vt[j]) else {
                return;
            };
            let grown = self.scaled(ve_t - self.cand_end);
            if grown >= self.pivot_time - self.cand_start {
                self.publish();
                return;
            }
            if grown < vs_t - self.cand_start || self.deque[vs_i].is_empty() {
                for j in 0..self.n {
                    for _ in 0..self.moves[j] {
                        if let Some(m) = self.past[j].pop_back() {
                            self.deque[j].push_front(m);
                        }
                    }
                }
                self.recount();
                return;
            }
            self.step_over(vs_i);
            self.moves[vs_i] += 1;
        }
    }
}

#[cfg(test)]
mod tests;
