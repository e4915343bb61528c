//! Lost messages from the publishers' sequence numbers, as rmw_zenoh
//! counts them: every publisher numbers its messages from 1; a gap in
//! those numbers is a message that never arrived. A message that arrives
//! after a later one fills its gap again, so only what never came counts.
//!
//! Memory is bounded: each publisher keeps a window of the 64 newest
//! numbers, and at most [`LossTracker::MAX_PUBLISHERS`] publishers are
//! tracked (the one heard from least recently makes room, and is counted).

use std::collections::BTreeMap;

use crate::attachment::Gid;

/// What one message's number says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqVerdict {
    /// The publisher's first message seen (numbers before it are not
    /// counted: the subscription may have started late).
    First,
    /// The number after the previous one.
    Next,
    /// This many numbers were skipped before this one.
    Gap(u64),
    /// An earlier number that had been counted as lost: it came late.
    Late,
    /// A number already received (or too old to tell).
    Duplicate,
}

/// Per publisher counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct PublisherCounts {
    /// Messages received.
    pub received: u64,
    /// Numbers skipped and never received (so far).
    pub lost: u64,
    /// Messages that came after a later one.
    pub late: u64,
    /// Numbers received twice, or older than the window.
    pub duplicates: u64,
}

#[derive(Debug, Clone)]
struct Publisher {
    newest: i64,
    /// Bit `i`: number `newest - i` was received.
    window: u64,
    counts: PublisherCounts,
    heard: u64,
}

/// Counts lost, late and duplicated messages per publisher.
#[derive(Debug, Clone, Default)]
pub struct LossTracker {
    publishers: BTreeMap<Gid, Publisher>,
    clock: u64,
    forgotten: u64,
}

impl LossTracker {
    /// The most publishers tracked at once.
    pub const MAX_PUBLISHERS: usize = 1024;

    /// A tracker with no publisher.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes in one message's publisher and number.
    pub fn observe(&mut self, gid: Gid, seq: i64) -> SeqVerdict {
        self.clock += 1;
        let clock = self.clock;
        if !self.publishers.contains_key(&gid) && self.publishers.len() >= Self::MAX_PUBLISHERS {
            let oldest = self
                .publishers
                .iter()
                .min_by_key(|(_, p)| p.heard)
                .map(|(g, _)| *g);
            if let Some(oldest) = oldest {
                self.publishers.remove(&oldest);
                self.forgotten += 1;
            }
        }
        let p = self.publishers.entry(gid).or_insert(Publisher {
            newest: seq,
            window: 0,
            counts: PublisherCounts::default(),
            heard: clock,
        });
        p.heard = clock;
        let verdict = if p.window == 0 {
            p.window = 1;
            SeqVerdict::First
        } else if seq > p.newest {
            let skipped = (seq - p.newest - 1) as u64;
            p.window = p.window.checked_shl((seq - p.newest) as u32).unwrap_or(0) | 1;
            p.newest = seq;
            p.counts.lost += skipped;
            if skipped == 0 {
                SeqVerdict::Next
            } else {
                SeqVerdict::Gap(skipped)
            }
        } else {
            let age = p.newest.abs_diff(seq);
            let bit = 1u64.checked_shl(age as u32).unwrap_or(0);
            if bit == 0 || p.window & bit != 0 {
                SeqVerdict::Duplicate
            } else {
                p.window |= bit;
                p.counts.lost = p.counts.lost.saturating_sub(1);
                SeqVerdict::Late
            }
        };
        match verdict {
            SeqVerdict::Duplicate => p.counts.duplicates += 1,
            SeqVerdict::Late => {
                p.counts.late += 1;
                p.counts.received += 1;
            }
            _ => p.counts.received += 1,
        }
        verdict
    }

    /// The counts of every publisher tracked.
    pub fn publishers(&self) -> impl Iterator<Item = (&Gid, &PublisherCounts)> {
        self.publishers.iter().map(|(g, p)| (g, &p.counts))
    }

    /// Messages lost over all publishers tracked.
    pub fn lost(&self) -> u64 {
        self.publishers.values().map(|p| p.counts.lost).sum()
    }

    /// Publishers no longer tracked to make room for others.
    pub fn forgotten(&self) -> u64 {
        self.forgotten
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn gaps_late_and_duplicates() {
        let mut t = LossTracker::new();
        let g = Gid([1; 16]);
        assert_eq!(t.observe(g, 5), SeqVerdict::First);
        assert_eq!(t.observe(g, 6), SeqVerdict::Next);
        assert_eq!(t.observe(g, 9), SeqVerdict::Gap(2));
        assert_eq!(t.lost(), 2);
        assert_eq!(t.observe(g, 7), SeqVerdict::Late);
        assert_eq!(t.observe(g, 7), SeqVerdict::Duplicate);
        assert_eq!(t.lost(), 1);
        assert_eq!(t.observe(g, 1000), SeqVerdict::Gap(990));
        assert_eq!(
            t.observe(g, 8),
            SeqVerdict::Duplicate,
            "older than the window"
        );
        assert_eq!(t.observe(Gid([2; 16]), 1), SeqVerdict::First);
        assert_eq!(t.lost(), 991);
    }

    proptest! {
        /// Numbers 1..=n of one publisher, some never sent, the others
        /// delivered in a locally shuffled order: the lost count is the
        /// number never sent after the first one received, whenever every
        /// late message is within the window.
        #[test]
        fn lost_counts_what_never_came(
            n in 1usize..300,
            drop in proptest::collection::vec(any::<bool>(), 300),
            swaps in proptest::collection::vec((0usize..300, 1usize..8), 0..40),
        ) {
            let sent: Vec<i64> = (1..=n as i64).filter(|&k| !drop[k as usize - 1] || k == 1).collect();
            let mut order = sent.clone();
            for (at, by) in swaps {
                if at + by < order.len() && at > 0 {
                    order.swap(at, at + by);
                }
            }
            let mut t = LossTracker::new();
            let g = Gid([7; 16]);
            for &k in &order {
                t.observe(g, k);
            }
            let newest = *sent.last().unwrap();
            prop_assert_eq!(t.lost(), (newest - sent.len() as i64) as u64);
            let (_, counts) = t.publishers().next().unwrap();
            prop_assert_eq!(counts.received, sent.len() as u64);
            prop_assert_eq!(counts.duplicates, 0);
        }
    }

    #[test]
    fn publishers_are_bounded() {
        let mut t = LossTracker::new();
        for i in 0..(LossTracker::MAX_PUBLISHERS + 10) {
            let mut gid = [0u8; 16];
            gid[..8].copy_from_slice(&(i as u64).to_le_bytes());
            t.observe(Gid(gid), 1);
        }
        assert_eq!(t.publishers().count(), LossTracker::MAX_PUBLISHERS);
        assert_eq!(t.forgotten(), 10);
    }
}
