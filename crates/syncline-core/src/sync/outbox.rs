//! The output side shared by every policy: emitted sets and drop reports
//! in emission order, lent out of reused buffers.

use std::collections::VecDeque;

use super::{DropCounts, DropReason};
use crate::stamped::Stamped;

/// One emitted set, lent by a synchronizer until the next `poll_*` call.
///
/// Member `i` belongs to topic `i`; it is `None` only in a partial set
/// (stall timeout in partial mode). Members can be read in place or moved
/// out with [`Set::take`] / [`Set::drain`].
#[derive(Debug)]
pub struct Set<'a, M> {
    seq: u64,
    members: &'a mut [Option<Stamped<M>>],
}

impl<'a, M> Set<'a, M> {
    /// The event's position among all outputs (sets and drops) of this
    /// synchronizer, from 0.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The number of topics.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Always false: a synchronizer has at least one topic.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// True when every topic has a member.
    pub fn is_complete(&self) -> bool {
        self.members.iter().all(Option::is_some)
    }

    /// The member of `topic`.
    pub fn get(&self, topic: usize) -> Option<&Stamped<M>> {
        self.members.get(topic).and_then(Option::as_ref)
    }

    /// All members in topic order.
    pub fn members(&self) -> &[Option<Stamped<M>>] {
        self.members
    }

    /// Moves the member of `topic` out.
    pub fn take(&mut self, topic: usize) -> Option<Stamped<M>> {
        self.members.get_mut(topic).and_then(Option::take)
    }

    /// Moves all members out, in topic order.
    pub fn drain(self) -> impl Iterator<Item = Option<Stamped<M>>> + 'a {
        self.members.iter_mut().map(Option::take)
    }
}

/// A message that left a synchronizer without being part of a set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped<M> {
    /// The event's position among all outputs (sets and drops), from 0.
    pub seq: u64,
    /// The message's topic.
    pub topic: usize,
    /// Why it was dropped.
    pub reason: DropReason,
    /// The message.
    pub message: Stamped<M>,
}

/// The next output of a synchronizer, in emission order.
#[derive(Debug)]
pub enum Output<'a, M> {
    /// A set was emitted.
    Set(Set<'a, M>),
    /// A message was dropped (only when drop reports are enabled).
    Dropped(Dropped<M>),
}

/// Queued outputs of one synchronizer.
#[derive(Debug)]
pub(crate) struct Outbox<M> {
    topics: usize,
    report_drops: bool,
    next_seq: u64,
    /// Sequence numbers of the queued sets; their members are in `members`,
    /// `topics` per set.
    sets: VecDeque<u64>,
    members: VecDeque<Option<Stamped<M>>>,
    drops: VecDeque<Dropped<M>>,
    /// The set currently lent out.
    current: Vec<Option<Stamped<M>>>,
    pub(crate) emitted: u64,
    pub(crate) partial: u64,
    pub(crate) dropped: DropCounts,
}

impl<M> Outbox<M> {
    pub(crate) fn new(topics: usize, report_drops: bool) -> Self {
        Outbox {
            topics,
            report_drops,
            next_seq: 0,
            sets: VecDeque::new(),
            members: VecDeque::with_capacity(topics * 4),
            drops: VecDeque::new(),
            current: Vec::with_capacity(topics),
            emitted: 0,
            partial: 0,
            dropped: DropCounts::default(),
        }
    }

    fn seq(&mut self) -> u64 {
        let s = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        s
    }

    /// Queues a set; `members` yields exactly one entry per topic.
    pub(crate) fn push_set(&mut self, members: impl Iterator<Item = Option<Stamped<M>>>) {
        let seq = self.seq();
        let before = self.members.len();
        let mut complete = true;
        for m in members.take(self.topics) {
            complete &= m.is_some();
            self.members.push_back(m);
        }
        while self.members.len() < before + self.topics {
            complete = false;
            self.members.push_back(None);
        }
        self.sets.push_back(seq);
        self.emitted += 1;
        if !complete {
            self.partial += 1;
        }
    }

    /// Counts a drop and queues its report when reports are enabled.
    pub(crate) fn push_drop(&mut self, topic: usize, reason: DropReason, message: Stamped<M>) {
        self.dropped.add(reason);
        if self.report_drops {
            let seq = self.seq();
            self.drops.push_back(Dropped {
                seq,
                topic,
                reason,
                message,
            });
        }
    }

    pub(crate) fn poll_set(&mut self) -> Option<Set<'_, M>> {
        let seq = self.sets.pop_front()?;
        self.current.clear();
        let n = self.topics.min(self.members.len());
        self.current.extend(self.members.drain(..n));
        Some(Set {
            seq,
            members: &mut self.current,
        })
    }

    pub(crate) fn poll_drop(&mut self) -> Option<Dropped<M>> {
        self.drops.pop_front()
    }

    pub(crate) fn poll(&mut self) -> Option<Output<'_, M>> {
        match (self.sets.front(), self.drops.front()) {
            (Some(s), Some(d)) if d.seq < *s => self.poll_drop().map(Output::Dropped),
            (Some(_), _) => self.poll_set().map(Output::Set),
            (None, Some(_)) => self.poll_drop().map(Output::Dropped),
            (None, None) => None,
        }
    }
}

/// The shared polling methods of the three policies, delegating to their
/// `out: Outbox<M>` field.
macro_rules! outbox_methods {
    () => {
        /// The next emitted set, in emission order; call until `None` after
        /// every `push`. The set borrows a reused buffer.
        pub fn poll_set(&mut self) -> Option<$crate::sync::Set<'_, M>> {
            self.out.poll_set()
        }

        /// The next drop report, in emission order (only when drop reports
        /// are enabled in the configuration; drops are always counted in
        /// the status).
        pub fn poll_drop(&mut self) -> Option<$crate::sync::Dropped<M>> {
            self.out.poll_drop()
        }

        /// The next output, sets and drop reports merged in the order they
        /// happened.
        pub fn poll(&mut self) -> Option<$crate::sync::Output<'_, M>> {
            self.out.poll()
        }
    };
}
pub(crate) use outbox_methods;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    fn member(x: u32) -> Option<Stamped<u32>> {
        Some(Stamped::new(Timestamp::from_nanos(i64::from(x)), x))
    }

    #[test]
    fn sets_and_drops_come_out_in_emission_order() {
        let mut out = Outbox::new(2, true);
        out.push_drop(1, DropReason::Skipped, Stamped::new(Timestamp::EPOCH, 9));
        out.push_set([member(1), member(2)].into_iter());
        out.push_set([member(3)].into_iter());
        out.push_drop(0, DropReason::End, Stamped::new(Timestamp::EPOCH, 8));
        match out.poll() {
            Some(Output::Dropped(d)) => assert_eq!((d.seq, d.message.value), (0, 9)),
            other => panic!("{other:?}"),
        }
        let Some(Output::Set(mut set)) = out.poll() else {
            panic!("a set")
        };
        assert_eq!((set.seq(), set.len(), set.is_complete()), (1, 2, true));
        assert_eq!(set.get(1).map(|m| m.value), Some(2));
        assert_eq!(set.take(0).map(|m| m.value), Some(1));
        assert!(set.get(0).is_none());
        // A short set is padded: partial.
        let set = out.poll_set().unwrap();
        assert!(!set.is_complete());
        let drained: Vec<_> = set.drain().map(|m| m.map(|m| m.value)).collect();
        assert_eq!(drained, vec![Some(3), None]);
        assert_eq!(out.poll_drop().map(|d| d.reason), Some(DropReason::End));
        assert!(out.poll().is_none());
        assert_eq!((out.emitted, out.partial, out.dropped.total()), (2, 1, 2));
    }

    #[test]
    fn without_reports_drops_are_only_counted() {
        let mut out = Outbox::new(1, false);
        out.push_drop(0, DropReason::Overflow, Stamped::new(Timestamp::EPOCH, ()));
        assert!(out.poll().is_none());
        assert_eq!(out.dropped.overflow, 1);
    }
}
