//! The bounded per-stream lookup buffer (a tf2-like cache of one stream).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::{Interpolate, fraction};
use crate::stamped::Stamped;
use crate::time::{TimeDelta, Timestamp};

/// What [`LookupBuffer::insert`] does with a sample older than the newest
/// one held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnOutOfOrder {
    /// Insert it at its place in time (when the buffer is full, the oldest
    /// sample is evicted to make room; a sample older than everything in a
    /// full buffer is rejected as [`RejectReason::TooOld`]).
    #[default]
    Insert,
    /// Reject it ([`RejectReason::OutOfOrder`]).
    Reject,
}

/// What [`LookupBuffer::insert`] does with a sample whose stamp equals one
/// already held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnDuplicate {
    /// The new sample replaces the held one (the latest word wins); the old
    /// one is handed back in [`Insert::Replaced`].
    #[default]
    Replace,
    /// The held sample stays; the new one is rejected
    /// ([`RejectReason::Duplicate`]).
    KeepFirst,
}

/// Why a sample was not stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RejectReason {
    /// Older than the newest sample, with [`OnOutOfOrder::Reject`].
    OutOfOrder,
    /// Same stamp as a held sample, with [`OnDuplicate::KeepFirst`].
    Duplicate,
    /// Older than every sample of a full buffer.
    TooOld,
}

/// The outcome of [`LookupBuffer::insert`]: every sample that leaves the
/// buffer (or never enters it) is handed back.
#[derive(Debug, Clone, PartialEq)]
pub enum Insert<T> {
    /// Stored; nothing left.
    Stored,
    /// Stored; the buffer was full and its oldest sample was evicted.
    Evicted(Stamped<T>),
    /// Stored in place of a held sample with the same stamp.
    Replaced(Stamped<T>),
    /// Not stored, for the given reason.
    Rejected(Stamped<T>, RejectReason),
}

/// Why a query has no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[serde(rename_all = "snake_case", tag = "error")]
pub enum LookupError {
    /// The buffer holds no sample.
    #[error("no sample in the buffer")]
    Empty,
    /// Extrapolation refused: the query is before the oldest sample.
    #[error("extrapolation refused: {query} is before the oldest sample at {oldest}")]
    BeforeOldest {
        /// The queried time.
        query: Timestamp,
        /// The oldest held stamp.
        oldest: Timestamp,
    },
    /// Extrapolation refused: the query is after the newest sample (a live
    /// consumer may wait for the next one).
    #[error("extrapolation refused: {query} is after the newest sample at {newest}")]
    AfterNewest {
        /// The queried time.
        query: Timestamp,
        /// The newest held stamp.
        newest: Timestamp,
    },
    /// The bracketing samples are further apart than the maximum gap.
    #[error("samples at {before} and {after} are further apart than {max_gap}")]
    GapTooLarge {
        /// The sample before the query.
        before: Timestamp,
        /// The sample after the query.
        after: Timestamp,
        /// The configured maximum gap.
        max_gap: TimeDelta,
    },
    /// The value at the query is NaN or infinite.
    #[error("the value between {before} and {after} is not finite")]
    NotFinite {
        /// The sample before (or at) the query.
        before: Timestamp,
        /// The sample after (or at) the query.
        after: Timestamp,
    },
}

/// Configuration of a [`LookupBuffer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferConfig {
    /// Samples held at most (at least 1); preallocated.
    pub capacity: usize,
    /// The largest distance between two bracketing samples that
    /// [`LookupBuffer::interpolate`] interpolates across (`None`: any; a
    /// negative gap refuses every bracket, exact hits still answer).
    pub max_gap: Option<TimeDelta>,
    /// Handling of samples older than the newest held one.
    pub on_out_of_order: OnOutOfOrder,
    /// Handling of samples with a stamp already held.
    pub on_duplicate: OnDuplicate,
}

impl BufferConfig {
    /// A buffer of `capacity` samples (0 is raised to 1), no gap limit,
    /// out-of-order samples inserted, duplicates replaced.
    pub fn new(capacity: usize) -> Self {
        BufferConfig {
            capacity: capacity.max(1),
            max_gap: None,
            on_out_of_order: OnOutOfOrder::default(),
            on_duplicate: OnDuplicate::default(),
        }
    }

    /// Sets the maximum bracket gap of interpolation.
    pub fn max_gap(mut self, gap: TimeDelta) -> Self {
        self.max_gap = Some(gap);
        self
    }

    /// Sets the handling of out-of-order samples.
    pub fn on_out_of_order(mut self, policy: OnOutOfOrder) -> Self {
        self.on_out_of_order = policy;
        self
    }

    /// Sets the handling of duplicate stamps.
    pub fn on_duplicate(mut self, policy: OnDuplicate) -> Self {
        self.on_duplicate = policy;
        self
    }
}

/// Counters and extent of a [`LookupBuffer`] (cheap; serialisable).
///
/// Conservation: `inserted == len + evicted + replaced`, and every call of
/// [`LookupBuffer::insert`] counts once in `inserted` or in a `rejected_*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BufferStatus {
    /// Samples held now.
    pub len: usize,
    /// Samples held at most.
    pub capacity: usize,
    /// The oldest held stamp.
    pub oldest: Option<Timestamp>,
    /// The newest held stamp.
    pub newest: Option<Timestamp>,
    /// Samples stored.
    pub inserted: u64,
    /// Samples evicted (full buffer, [`LookupBuffer::prune_before`], clear).
    pub evicted: u64,
    /// Samples replaced by a later one with the same stamp.
    pub replaced: u64,
    /// Samples rejected as out of order.
    pub rejected_out_of_order: u64,
    /// Samples rejected as duplicates.
    pub rejected_duplicate: u64,
    /// Samples rejected as older than a full buffer.
    pub rejected_too_old: u64,
}

/// A bounded, time-ordered buffer of one stream's samples, queried at
/// arbitrary times: the sample at or before / at or after a time, the
/// nearest one, and the value interpolated between the two bracketing
/// samples.
///
/// The ring is allocated once (`capacity` samples); inserting never
/// allocates. Stamps held are strictly increasing. Queries outside the held
/// span are refused with [`LookupError::BeforeOldest`] /
/// [`LookupError::AfterNewest`] rather than extrapolated.
///
/// ```
/// use syncline_core::interp::{BufferConfig, Insert, LookupBuffer, LookupError};
/// use syncline_core::{TimeDelta, Timestamp};
///
/// let t = Timestamp::from_nanos;
/// let mut imu = LookupBuffer::new(BufferConfig::new(2).max_gap(TimeDelta::from_nanos(100)));
/// assert_eq!(imu.insert(t(0), [0.0, 1.0]), Insert::Stored);
/// assert_eq!(imu.insert(t(100), [1.0, 3.0]), Insert::Stored);
/// assert_eq!(imu.interpolate(t(25)), Ok([0.25, 1.5]));
/// assert_eq!(imu.nearest(t(70)).map(|s| s.stamp), Some(t(100)));
/// // Full: the oldest sample is evicted, and the old time is no longer known.
/// assert!(matches!(imu.insert(t(300), [0.0, 0.0]), Insert::Evicted(_)));
/// assert!(matches!(imu.interpolate(t(50)), Err(LookupError::BeforeOldest { .. })));
/// assert!(matches!(imu.interpolate(t(200)), Err(LookupError::GapTooLarge { .. })));
/// ```
#[derive(Debug, Clone)]
pub struct LookupBuffer<T> {
    buf: VecDeque<Stamped<T>>,
    config: BufferConfig,
    status: BufferStatus,
}

impl<T> LookupBuffer<T> {
    /// An empty buffer with room for `config.capacity` samples.
    pub fn new(config: BufferConfig) -> Self {
        let config = BufferConfig {
            capacity: config.capacity.max(1),
            ..config
        };
        LookupBuffer {
            buf: VecDeque::with_capacity(config.capacity),
            status: BufferStatus {
                capacity: config.capacity,
                ..BufferStatus::default()
            },
            config,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &BufferConfig {
        &self.config
    }

    /// Inserts a sample; see [`OnOutOfOrder`] and [`OnDuplicate`] for
    /// samples that are not the newest. Whatever leaves is handed back.
    pub fn insert(&mut self, stamp: Timestamp, value: T) -> Insert<T> {
        let sample = Stamped::new(stamp, value);
        let newer = self.buf.back().is_none_or(|s| s.stamp < stamp);
        let idx = if newer {
            self.buf.len()
        } else {
            self.buf.partition_point(|s| s.stamp < stamp)
        };
        if let Some(held) = self.buf.get_mut(idx)
            && held.stamp == stamp
        {
            return match self.config.on_duplicate {
                OnDuplicate::Replace => {
                    self.status.inserted += 1;
                    self.status.replaced += 1;
                    Insert::Replaced(std::mem::replace(held, sample))
                }
                OnDuplicate::KeepFirst => {
                    self.status.rejected_duplicate += 1;
                    Insert::Rejected(sample, RejectReason::Duplicate)
                }
            };
        }
        if !newer && self.config.on_out_of_order == OnOutOfOrder::Reject {
            self.status.rejected_out_of_order += 1;
            return Insert::Rejected(sample, RejectReason::OutOfOrder);
        }
        let outcome = if self.buf.len() < self.config.capacity {
            self.buf.insert(idx, sample);
            Insert::Stored
        } else if idx == 0 {
            self.status.rejected_too_old += 1;
            return Insert::Rejected(sample, RejectReason::TooOld);
        } else {
            let evicted = self.buf.pop_front();
            self.buf.insert(idx - 1, sample);
            self.status.evicted += 1;
            match evicted {
                Some(old) => Insert::Evicted(old),
                None => Insert::Stored,
            }
        };
        self.status.inserted += 1;
        outcome
    }

    /// Removes every sample stamped strictly before `t` (counted as
    /// evicted); returns how many.
    pub fn prune_before(&mut self, t: Timestamp) -> usize {
        let n = self.buf.partition_point(|s| s.stamp < t);
        self.buf.drain(..n);
        self.status.evicted += n as u64;
        n
    }

    /// Removes every sample (counted as evicted).
    pub fn clear(&mut self) {
        self.status.evicted += self.buf.len() as u64;
        self.buf.clear();
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.buf.len()
    }

    /// True when no sample is held.
    pub fn is_empty(&self) -> bool {
        self.buf.is_empty()
    }

    /// The held samples, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Stamped<T>> + ExactSizeIterator {
        self.buf.iter()
    }

    /// The oldest held sample.
    pub fn oldest(&self) -> Option<&Stamped<T>> {
        self.buf.front()
    }

    /// The newest held sample.
    pub fn newest(&self) -> Option<&Stamped<T>> {
        self.buf.back()
    }

    /// The latest sample stamped at or before `t`.
    pub fn at_or_before(&self, t: Timestamp) -> Option<&Stamped<T>> {
        let idx = self.buf.partition_point(|s| s.stamp <= t);
        idx.checked_sub(1).and_then(|i| self.buf.get(i))
    }

    /// The earliest sample stamped at or after `t`.
    pub fn at_or_after(&self, t: Timestamp) -> Option<&Stamped<T>> {
        self.buf.get(self.buf.partition_point(|s| s.stamp < t))
    }

    /// The sample closest to `t` (on a tie, the earlier one).
    pub fn nearest(&self, t: Timestamp) -> Option<&Stamped<T>> {
        match (self.at_or_before(t), self.at_or_after(t)) {
            (Some(a), Some(b)) => {
                if t.nanos_since_wide(a.stamp) <= b.stamp.nanos_since_wide(t) {
                    Some(a)
                } else {
                    Some(b)
                }
            }
            (a, b) => a.or(b),
        }
    }

    /// The two samples around `t`: `(before, after)` with
    /// `before.stamp <= t <= after.stamp`; both are the same sample when one
    /// is stamped exactly `t`. Outside the held span: an extrapolation error.
    pub fn bracket(&self, t: Timestamp) -> Result<(&Stamped<T>, &Stamped<T>), LookupError> {
        let (Some(oldest), Some(newest)) = (self.buf.front(), self.buf.back()) else {
            return Err(LookupError::Empty);
        };
        if t < oldest.stamp {
            return Err(LookupError::BeforeOldest {
                query: t,
                oldest: oldest.stamp,
            });
        }
        if t > newest.stamp {
            return Err(LookupError::AfterNewest {
                query: t,
                newest: newest.stamp,
            });
        }
        let idx = self.buf.partition_point(|s| s.stamp < t);
        let after = self.buf.get(idx).ok_or(LookupError::Empty)?;
        if after.stamp == t {
            return Ok((after, after));
        }
        let before = idx
            .checked_sub(1)
            .and_then(|i| self.buf.get(i))
            .ok_or(LookupError::Empty)?;
        Ok((before, after))
    }

    /// The value at `t`, interpolated between the bracketing samples (the
    /// held value itself on an exact hit). Refuses extrapolation, brackets
    /// wider than the configured maximum gap, and non-finite results.
    pub fn interpolate(&self, t: Timestamp) -> Result<T, LookupError>
    where
        T: Interpolate + Clone,
    {
        let (a, b) = self.bracket(t)?;
        let value = if a.stamp == b.stamp {
            a.value.clone()
        } else {
            if let Some(max_gap) = self.config.max_gap
                && b.stamp.nanos_since_wide(a.stamp) > max_gap.as_nanos() as i128
            {
                return Err(LookupError::GapTooLarge {
                    before: a.stamp,
                    after: b.stamp,
                    max_gap,
                });
            }
            let f = fraction(a.stamp.as_nanos(), t.as_nanos(), b.stamp.as_nanos());
            a.value.interpolate(&b.value, f)
        };
        if value.is_finite() {
            Ok(value)
        } else {
            Err(LookupError::NotFinite {
                before: a.stamp,
                after: b.stamp,
            })
        }
    }

    /// Counters and extent.
    pub fn status(&self) -> BufferStatus {
        BufferStatus {
            len: self.buf.len(),
            oldest: self.buf.front().map(|s| s.stamp),
            newest: self.buf.back().map(|s| s.stamp),
            ..self.status
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(n: i64) -> Timestamp {
        Timestamp::from_nanos(n)
    }

    fn stamps<T>(b: &LookupBuffer<T>) -> Vec<i64> {
        b.iter().map(|s| s.stamp.as_nanos()).collect()
    }

    #[test]
    fn out_of_order_and_duplicates() {
        let mut b = LookupBuffer::new(BufferConfig::new(3));
        assert_eq!(b.insert(t(10), 1.0), Insert::Stored);
        assert_eq!(b.insert(t(30), 3.0), Insert::Stored);
        assert_eq!(b.insert(t(20), 2.0), Insert::Stored);
        assert_eq!(stamps(&b), [10, 20, 30]);
        assert_eq!(
            b.insert(t(20), 5.0),
            Insert::Replaced(Stamped::new(t(20), 2.0))
        );
        assert_eq!(
            b.insert(t(5), 0.0),
            Insert::Rejected(Stamped::new(t(5), 0.0), RejectReason::TooOld)
        );
        assert_eq!(
            b.insert(t(15), 1.5),
            Insert::Evicted(Stamped::new(t(10), 1.0))
        );
        assert_eq!(stamps(&b), [15, 20, 30]);

        let mut strict = LookupBuffer::new(
            BufferConfig::new(3)
                .on_out_of_order(OnOutOfOrder::Reject)
                .on_duplicate(OnDuplicate::KeepFirst),
        );
        strict.insert(t(10), 1.0);
        assert!(matches!(
            strict.insert(t(10), 2.0),
            Insert::Rejected(_, RejectReason::Duplicate)
        ));
        assert!(matches!(
            strict.insert(t(9), 2.0),
            Insert::Rejected(_, RejectReason::OutOfOrder)
        ));
        let s = strict.status();
        assert_eq!((s.rejected_duplicate, s.rejected_out_of_order), (1, 1));
        assert_eq!(strict.interpolate(t(10)), Ok(1.0));
    }

    #[test]
    fn queries_and_errors() {
        let mut b = LookupBuffer::new(BufferConfig::new(0).max_gap(TimeDelta::from_nanos(10)));
        assert_eq!(b.config().capacity, 1);
        assert_eq!(b.interpolate(t(0)), Err(LookupError::Empty));
        let mut b2 = LookupBuffer::new(BufferConfig::new(4).max_gap(TimeDelta::from_nanos(10)));
        b.insert(t(0), 0.0);
        assert_eq!(b.interpolate(t(0)), Ok(0.0));
        for (s, v) in [(0, 0.0), (10, 1.0), (30, f64::NAN), (40, 1.0)] {
            b2.insert(t(s), v);
        }
        assert_eq!(b2.at_or_before(t(15)).map(|s| s.stamp), Some(t(10)));
        assert_eq!(b2.at_or_after(t(15)).map(|s| s.stamp), Some(t(30)));
        assert_eq!(b2.at_or_before(t(-1)), None);
        assert_eq!(b2.at_or_after(t(41)), None);
        assert_eq!(b2.nearest(t(5)).map(|s| s.stamp), Some(t(0)));
        assert_eq!(b2.nearest(t(99)).map(|s| s.stamp), Some(t(40)));
        assert_eq!(b2.interpolate(t(5)), Ok(0.5));
        assert_eq!(
            b2.interpolate(t(-1)),
            Err(LookupError::BeforeOldest {
                query: t(-1),
                oldest: t(0)
            })
        );
        assert_eq!(
            b2.interpolate(t(41)),
            Err(LookupError::AfterNewest {
                query: t(41),
                newest: t(40)
            })
        );
        assert!(matches!(
            b2.interpolate(t(20)),
            Err(LookupError::GapTooLarge { .. })
        ));
        assert_eq!(
            b2.interpolate(t(35)),
            Err(LookupError::NotFinite {
                before: t(30),
                after: t(40)
            })
        );
        assert_eq!(
            b2.interpolate(t(30)),
            Err(LookupError::NotFinite {
                before: t(30),
                after: t(30)
            })
        );
        assert_eq!(b2.prune_before(t(30)), 2);
        assert_eq!(stamps(&b2), [30, 40]);
        b2.clear();
        assert_eq!(b2.status().evicted, 4);
        let json = serde_json::to_string(&LookupError::Empty).unwrap();
        assert_eq!(json, r#"{"error":"empty"}"#);
    }

    #[test]
    fn extreme_stamps_do_not_overflow() {
        let mut b = LookupBuffer::new(BufferConfig::new(4).max_gap(TimeDelta::MAX));
        b.insert(Timestamp::MIN, 0.0);
        b.insert(Timestamp::MAX, 1.0);
        assert!(matches!(
            b.interpolate(t(0)),
            Err(LookupError::GapTooLarge { .. })
        ));
        let mut b = LookupBuffer::new(BufferConfig::new(4));
        b.insert(Timestamp::MIN, 0.0);
        b.insert(Timestamp::MAX, 1.0);
        assert_eq!(b.interpolate(t(0)), Ok(0.5));
    }

    proptest! {
        #[test]
        fn bounded_sorted_and_conserving(
            cap in 1usize..8,
            reject in any::<bool>(),
            keep_first in any::<bool>(),
            input in proptest::collection::vec((0i64..50, -10.0f64..10.0), 0..60),
        ) {
            let cfg = BufferConfig::new(cap)
                .on_out_of_order(if reject { OnOutOfOrder::Reject } else { OnOutOfOrder::Insert })
                .on_duplicate(if keep_first { OnDuplicate::KeepFirst } else { OnDuplicate::Replace });
            let mut b = LookupBuffer::new(cfg);
            let mut handed_back = 0u64;
            for (n, &(s, v)) in input.iter().enumerate() {
                if !matches!(b.insert(t(s), v), Insert::Stored) {
                    handed_back += 1;
                }
                prop_assert!(b.len() <= cap);
                let st = stamps(&b);
                prop_assert!(st.windows(2).all(|w| w[0] < w[1]));
                let s = b.status();
                prop_assert_eq!(s.inserted, (s.len as u64) + s.evicted + s.replaced);
                let rejected = s.rejected_duplicate + s.rejected_out_of_order + s.rejected_too_old;
                prop_assert_eq!(s.inserted + rejected, n as u64 + 1);
                prop_assert_eq!(handed_back, s.evicted + s.replaced + rejected);
            }
        }

        #[test]
        fn interpolation_stays_between_brackets(
            input in proptest::collection::vec((0i64..1000, -10.0f64..10.0), 1..30),
            q in -10i64..1010,
        ) {
            let mut b = LookupBuffer::new(BufferConfig::new(64));
            for &(s, v) in &input {
                b.insert(t(s), v);
            }
            match b.interpolate(t(q)) {
                Ok(v) => {
                    let (x, y) = b.bracket(t(q)).unwrap();
                    prop_assert!(x.stamp <= t(q) && t(q) <= y.stamp);
                    prop_assert!(v >= x.value.min(y.value) && v <= x.value.max(y.value));
                }
                Err(LookupError::BeforeOldest { oldest, .. }) => prop_assert!(t(q) < oldest),
                Err(LookupError::AfterNewest { newest, .. }) => prop_assert!(t(q) > newest),
                Err(e) => prop_assert!(false, "unexpected {e:?}"),
            }
        }
    }
}
