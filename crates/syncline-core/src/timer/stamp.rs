//! Message stamping after CPM Lab's `stamp_message` and `Reader`: a header
//! with the creation time and the time after which the message may be used,
//! and a reader that returns the newest sample already valid.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::time::{TimeDelta, TimeError, Timestamp};

/// When a message was created and from when on it may be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Header {
    /// When the message was created (usually the sender's tick deadline).
    pub create_stamp: Timestamp,
    /// The message may be used at or after this time, not before.
    pub valid_after: Timestamp,
}

impl Header {
    /// CPM's `stamp_message(msg, t_now, expected_delay)`: created at `now`,
    /// valid from `now + expected_delay` (the delay covers transport and
    /// processing, so every receiver switches to the message at the same
    /// time). A negative delay or an overflow is an error.
    ///
    /// ```
    /// use syncline_core::timer::Header;
    /// use syncline_core::{TimeDelta, Timestamp};
    ///
    /// let h = Header::stamp(Timestamp::from_nanos(1_000), TimeDelta::from_nanos(60)).unwrap();
    /// assert_eq!(h.valid_after, Timestamp::from_nanos(1_060));
    /// ```
    pub fn stamp(now: Timestamp, expected_delay: TimeDelta) -> Result<Self, TimeError> {
        if expected_delay.is_negative() {
            return Err(TimeError::Negative);
        }
        Ok(Header {
            create_stamp: now,
            valid_after: now.checked_add(expected_delay)?,
        })
    }
}

/// The sample a [`ValidReader`] selected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ValidSample<T> {
    /// Its header.
    pub header: Header,
    /// The value.
    pub value: T,
    /// How long it has been valid: `now - header.valid_after` (>= 0). (CPM's
    /// comment says "since creation"; its code, and this type, measure
    /// from `valid_after`.)
    pub age: TimeDelta,
}

/// Counters of a [`ValidReader`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ValidReaderStatus {
    /// Samples currently buffered.
    pub buffered: usize,
    /// Samples received.
    pub received: u64,
    /// Samples discarded because a newer valid one was selected.
    pub superseded: u64,
    /// Samples evicted because the buffer was full (the oldest go first).
    pub overflow: u64,
}

/// CPM's `Reader::get_sample(t_now)`: buffers samples and returns the one
/// with the greatest creation time among those already valid at `now`
/// (ties: the later received). Samples not yet valid stay buffered; samples
/// created before the selected one are discarded (counted as
/// `superseded`). The buffer is bounded; when full the oldest sample is
/// evicted and counted as `overflow`. Nothing is dropped silently.
///
/// ```
/// use syncline_core::timer::{Header, ValidReader};
/// use syncline_core::{TimeDelta, Timestamp};
///
/// let ts = Timestamp::from_nanos;
/// let mut r = ValidReader::with_capacity(16);
/// r.push(Header::stamp(ts(0), TimeDelta::from_nanos(10)).unwrap(), "old");
/// r.push(Header::stamp(ts(5), TimeDelta::from_nanos(100)).unwrap(), "future");
/// let s = r.newest_valid(ts(20)).unwrap();
/// assert_eq!((s.value, s.age), ("old", TimeDelta::from_nanos(10)));
/// assert_eq!(r.newest_valid(ts(105)).unwrap().value, "future");
/// ```
#[derive(Debug, Clone)]
pub struct ValidReader<T> {
    buffer: VecDeque<(Header, T)>,
    capacity: usize,
    received: u64,
    superseded: u64,
    overflow: u64,
}

impl<T: Clone> ValidReader<T> {
    /// A reader holding at most `capacity` samples (at least 1).
    pub fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        ValidReader {
            buffer: VecDeque::with_capacity(capacity),
            capacity,
            received: 0,
            superseded: 0,
            overflow: 0,
        }
    }

    /// Buffers a received sample; returns the evicted oldest sample when the
    /// buffer was full.
    pub fn push(&mut self, header: Header, value: T) -> Option<(Header, T)> {
        self.received = self.received.saturating_add(1);
        let evicted = if self.buffer.len() >= self.capacity {
            self.overflow = self.overflow.saturating_add(1);
            self.buffer.pop_front()
        } else {
            None
        };
        self.buffer.push_back((header, value));
        evicted
    }

    /// The newest sample valid at `now` (`valid_after <= now`), or `None`
    /// when no buffered sample is valid yet (CPM returns a default sample
    /// with `create_stamp = 0` instead).
    pub fn newest_valid(&mut self, now: Timestamp) -> Option<ValidSample<T>> {
        let mut best: Option<usize> = None;
        for (i, (h, _)) in self.buffer.iter().enumerate() {
            if h.valid_after > now {
                continue;
            }
            let newer = best
                .and_then(|b| self.buffer.get(b))
                .is_none_or(|(bh, _)| h.create_stamp >= bh.create_stamp);
            if newer {
                best = Some(i);
            }
        }
        let (header, value) = self.buffer.get(best?)?.clone();
        let before = self.buffer.len();
        self.buffer
            .retain(|(h, _)| h.create_stamp >= header.create_stamp);
        let removed = (before - self.buffer.len()) as u64;
        self.superseded = self.superseded.saturating_add(removed);
        let age = now
            .checked_since(header.valid_after)
            .unwrap_or(TimeDelta::MAX);
        Some(ValidSample { header, value, age })
    }

    /// The counters.
    pub fn status(&self) -> ValidReaderStatus {
        ValidReaderStatus {
            buffered: self.buffer.len(),
            received: self.received,
            superseded: self.superseded,
            overflow: self.overflow,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ts(n: i64) -> Timestamp {
        Timestamp::from_nanos(n)
    }

    fn h(create: i64, valid: i64) -> Header {
        Header {
            create_stamp: ts(create),
            valid_after: ts(valid),
        }
    }

    #[test]
    fn stamp_rejects_negative_delay_and_overflow() {
        assert_eq!(
            Header::stamp(ts(0), TimeDelta::from_nanos(-1)),
            Err(TimeError::Negative)
        );
        assert_eq!(
            Header::stamp(Timestamp::MAX, TimeDelta::from_nanos(1)),
            Err(TimeError::Overflow)
        );
    }

    #[test]
    fn ties_go_to_the_later_received_and_older_are_superseded() {
        let mut r = ValidReader::with_capacity(8);
        r.push(h(1, 1), 'a');
        r.push(h(3, 3), 'b');
        r.push(h(3, 3), 'c');
        r.push(h(2, 9), 'd'); // older creation, not valid yet
        let s = r.newest_valid(ts(5)).unwrap();
        assert_eq!(s.value, 'c');
        assert_eq!(s.age, TimeDelta::from_nanos(2));
        // 'a' and 'd' (created before 3) are superseded; 'b' and 'c' stay.
        assert_eq!(r.status().superseded, 2);
        assert_eq!(r.status().buffered, 2);
        assert_eq!(r.newest_valid(ts(0)), None);
    }

    #[test]
    fn overflow_evicts_the_oldest_and_counts() {
        let mut r = ValidReader::with_capacity(2);
        assert!(r.push(h(1, 1), 1).is_none());
        assert!(r.push(h(2, 2), 2).is_none());
        assert_eq!(r.push(h(3, 3), 3), Some((h(1, 1), 1)));
        assert_eq!(r.status().overflow, 1);
    }

    proptest! {
        /// The selected sample is valid, and no valid buffered sample was
        /// created later; every sample is counted exactly once.
        #[test]
        fn selection_and_conservation(
            samples in proptest::collection::vec((0i64..100, 0i64..50), 0..40),
            queries in proptest::collection::vec(0i64..200, 1..10),
        ) {
            let mut r = ValidReader::with_capacity(16);
            let mut evicted = 0u64;
            for (i, (c, d)) in samples.iter().enumerate() {
                evicted += u64::from(r.push(h(*c, c + d), i).is_some());
            }
            for q in queries {
                let valid_max = r.buffer.iter()
                    .filter(|(hd, _)| hd.valid_after <= ts(q))
                    .map(|(hd, _)| hd.create_stamp)
                    .max();
                let got = r.newest_valid(ts(q));
                prop_assert_eq!(got.as_ref().map(|s| s.header.create_stamp), valid_max);
                if let Some(s) = got {
                    prop_assert!(s.header.valid_after <= ts(q));
                    prop_assert!(!s.age.is_negative());
                }
            }
            let st = r.status();
            prop_assert_eq!(st.overflow, evicted);
            prop_assert_eq!(st.received, samples.len() as u64);
            prop_assert_eq!(st.buffered as u64 + st.superseded + st.overflow, st.received);
        }
    }
}
