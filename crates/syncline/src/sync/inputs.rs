//! The inputs of a synchronizer stream: a tuple of 2 to 12 streams of
//! different item types, or a `Vec` of streams of one type.

use std::any::Any;
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use syncline_core::{HasStamp, Timestamp};

/// Items of one input waiting in the synchronizer, by sequence number.
///
/// Only the items present are stored, in ascending sequence order: taking
/// an item out of the middle (a set formed while an older message is still
/// held) frees its entry at once, so the storage never holds more entries
/// than the synchronizer holds messages, however long one message is held.
#[derive(Debug)]
pub struct Slots<T> {
    next: u64,
    items: VecDeque<(u64, T)>,
}

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            next: 0,
            items: VecDeque::new(),
        }
    }
}

impl<T> Slots<T> {
    /// Stores `item`; returns its sequence number.
    pub fn push(&mut self, item: T) -> u64 {
        let seq = self.next;
        self.next = self.next.wrapping_add(1);
        self.items.push_back((seq, item));
        seq
    }

    fn index(&self, seq: u64) -> Option<usize> {
        self.items.binary_search_by_key(&seq, |(s, _)| *s).ok()
    }

    /// Takes the item `seq` out.
    pub fn take(&mut self, seq: u64) -> Option<T> {
        let idx = self.index(seq)?;
        self.items.remove(idx).map(|(_, item)| item)
    }

    /// The item `seq`, left in place.
    pub fn get(&self, seq: u64) -> Option<&T> {
        self.items.get(self.index(seq)?).map(|(_, item)| item)
    }

    /// Forgets every item before `seq`.
    pub fn purge_before(&mut self, seq: u64) {
        while self.items.front().is_some_and(|(s, _)| *s < seq) {
            self.items.pop_front();
        }
    }

    /// Items stored (each one an entry: there are no empty slots).
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// The inputs of a synchronizer: implemented for tuples of 2 to 12 streams
/// (items of different types, sets are tuples) and for `Vec<S>` (any number
/// of streams of one type, sets are `Vec`s). Streams must be `Unpin`
/// (`Box::pin` one that is not); items carry their stamp ([`HasStamp`]).
pub trait SyncInputs: Unpin {
    /// One set: a tuple of items, or a `Vec`.
    type Item;
    /// Per-input storage of items held by the synchronizer.
    type Storage;
    /// A dropped message: `Box<dyn Any + Send>` for tuples (downcast with
    /// the topic's item type), the item type for `Vec`s.
    type Message;

    /// The number of inputs.
    fn count(&self) -> usize;
    /// Empty storage for these inputs.
    fn storage(&self) -> Self::Storage;
    /// Polls input `i`; a ready item is stored and its stamp and sequence
    /// number returned.
    fn poll_input(
        &mut self,
        i: usize,
        storage: &mut Self::Storage,
        cx: &mut Context<'_>,
    ) -> Poll<Option<(Timestamp, u64)>>;
    /// Takes the members `seqs` (one per input) out of the storage.
    fn take_set(storage: &mut Self::Storage, seqs: &[u64]) -> Option<Self::Item>;
    /// Takes one message of input `i` out, for a drop report.
    fn take_message(storage: &mut Self::Storage, i: usize, seq: u64) -> Option<Self::Message>;
    /// Forgets the messages of input `i` before `seq`.
    fn purge_before(storage: &mut Self::Storage, i: usize, seq: u64);
    /// Items stored over all inputs (what the synchronizer keeps alive).
    fn stored(storage: &Self::Storage) -> usize;
}

/// Inputs whose items can be cloned: needed by LatestTime, which emits the
/// same message in several sets.
pub trait CloneInputs: SyncInputs {
    /// Clones the members `seqs` out of the storage.
    fn clone_set(storage: &Self::Storage, seqs: &[u64]) -> Option<Self::Item>;
}

fn poll_one<S: Stream + Unpin>(
    s: &mut S,
    slots: &mut Slots<S::Item>,
    cx: &mut Context<'_>,
) -> Poll<Option<(Timestamp, u64)>>
where
    S::Item: HasStamp,
{
    Pin::new(s).poll_next(cx).map(|o| {
        o.map(|item| {
            let stamp = item.stamp();
            (stamp, slots.push(item))
        })
    })
}

macro_rules! tuple_inputs {
    ($n:literal; $(($i:tt, $S:ident)),+) => {
        impl<$($S),+> SyncInputs for ($($S,)+)
        where
            $($S: Stream + Unpin, $S::Item: HasStamp + Send + 'static,)+
        {
            type Item = ($($S::Item,)+);
            type Storage = ($(Slots<$S::Item>,)+);
            type Message = Box<dyn Any + Send>;

            fn count(&self) -> usize {
                $n
            }

            fn storage(&self) -> Self::Storage {
                Default::default()
            }

            fn poll_input(
                &mut self,
                i: usize,
                storage: &mut Self::Storage,
                cx: &mut Context<'_>,
            ) -> Poll<Option<(Timestamp, u64)>> {
                match i {
                    $($i => poll_one(&mut self.$i, &mut storage.$i, cx),)+
                    _ => Poll::Ready(None),
                }
            }

            fn take_set(storage: &mut Self::Storage, seqs: &[u64]) -> Option<Self::Item> {
                // Check first, so that nothing is taken from an incomplete set.
                if $(storage.$i.get(*seqs.get($i)?).is_none())||+ {
                    return None;
                }
                Some(($(storage.$i.take(*seqs.get($i)?)?,)+))
            }

            fn take_message(
                storage: &mut Self::Storage,
                i: usize,
                seq: u64,
            ) -> Option<Self::Message> {
                match i {
                    $($i => storage.$i.take(seq).map(|m| Box::new(m) as Box<dyn Any + Send>),)+
                    _ => None,
                }
            }

            fn purge_before(storage: &mut Self::Storage, i: usize, seq: u64) {
                match i {
                    $($i => storage.$i.purge_before(seq),)+
                    _ => {}
                }
            }

            fn stored(storage: &Self::Storage) -> usize {
                0 $(+ storage.$i.len())+
            }
        }

        impl<$($S),+> CloneInputs for ($($S,)+)
        where
            $($S: Stream + Unpin, $S::Item: HasStamp + Clone + Send + 'static,)+
        {
            fn clone_set(storage: &Self::Storage, seqs: &[u64]) -> Option<Self::Item> {
                Some(($(storage.$i.get(*seqs.get($i)?)?.clone(),)+))
            }
        }
    };
}

tuple_inputs!(2; (0, S0), (1, S1));
tuple_inputs!(3; (0, S0), (1, S1), (2, S2));
tuple_inputs!(4; (0, S0), (1, S1), (2, S2), (3, S3));
tuple_inputs!(5; (0, S0), (1, S1), (2, S2), (3, S3), (4, S4));
tuple_inputs!(6; (0, S0), (1, S1), (2, S2), (3, S3), (4, S4), (5, S5));
tuple_inputs!(7; (0, S0), (1, S1), (2, S2), (3, S3), (4, S4), (5, S5), (6, S6));
tuple_inputs!(8; (0, S0), (1, S1), (2, S2), (3, S3), (4, S4), (5, S5), (6, S6), (7, S7));
tuple_inputs!(9; (0, S0), (1, S1), (2, S2), (3, S3), (4, S4), (5, S5), (6, S6), (7, S7), (8, S8));
tuple_inputs!(10; (0, S0), (1, S1), (2, S2), (3, S3), (4, S4), (5, S5), (6, S6), (7, S7), (8, S8), (9, S9));
tuple_inputs!(11; (0, S0), (1, S1), (2, S2), (3, S3), (4, S4), (5, S5), (6, S6), (7, S7), (8, S8), (9, S9), (10, S10));
tuple_inputs!(12; (0, S0), (1, S1), (2, S2), (3, S3), (4, S4), (5, S5), (6, S6), (7, S7), (8, S8), (9, S9), (10, S10), (11, S11));

impl<S> SyncInputs for Vec<S>
where
    S: Stream + Unpin,
    S::Item: HasStamp,
{
    type Item = Vec<S::Item>;
    type Storage = Vec<Slots<S::Item>>;
    type Message = S::Item;

    fn count(&self) -> usize {
        self.len()
    }

    fn storage(&self) -> Self::Storage {
        self.iter().map(|_| Slots::default()).collect()
    }

    fn poll_input(
        &mut self,
        i: usize,
        storage: &mut Self::Storage,
        cx: &mut Context<'_>,
    ) -> Poll<Option<(Timestamp, u64)>> {
        match (self.get_mut(i), storage.get_mut(i)) {
            (Some(s), Some(slots)) => poll_one(s, slots, cx),
            _ => Poll::Ready(None),
        }
    }

    fn take_set(storage: &mut Self::Storage, seqs: &[u64]) -> Option<Self::Item> {
        if seqs.len() != storage.len() || storage.iter().zip(seqs).any(|(s, &q)| s.get(q).is_none())
        {
            return None;
        }
        storage
            .iter_mut()
            .zip(seqs)
            .map(|(s, &q)| s.take(q))
            .collect()
    }

    fn take_message(storage: &mut Self::Storage, i: usize, seq: u64) -> Option<Self::Message> {
        storage.get_mut(i)?.take(seq)
    }

    fn purge_before(storage: &mut Self::Storage, i: usize, seq: u64) {
        if let Some(s) = storage.get_mut(i) {
            s.purge_before(seq);
        }
    }

    fn stored(storage: &Self::Storage) -> usize {
        storage.iter().map(Slots::len).sum()
    }
}

impl<S> CloneInputs for Vec<S>
where
    S: Stream + Unpin,
    S::Item: HasStamp + Clone,
{
    fn clone_set(storage: &Self::Storage, seqs: &[u64]) -> Option<Self::Item> {
        if seqs.len() != storage.len() {
            return None;
        }
        storage
            .iter()
            .zip(seqs)
            .map(|(s, &q)| s.get(q).cloned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_take_get_purge() {
        let mut s = Slots::default();
        let a = s.push('a');
        let b = s.push('b');
        let c = s.push('c');
        assert_eq!(s.get(b), Some(&'b'));
        assert_eq!(s.take(b), Some('b'));
        assert_eq!(s.take(b), None);
        assert_eq!(s.len(), 2);
        assert_eq!(s.take(a), Some('a'));
        assert_eq!(s.get(c), Some(&'c'));
        s.purge_before(c + 1);
        assert!(s.is_empty());
        assert_eq!(s.take(99), None);
        assert_eq!(s.push('d'), c + 1);
    }

    #[test]
    fn an_item_held_at_the_front_keeps_no_empty_slots_behind_it() {
        let mut s = Slots::default();
        let held = s.push(0u32);
        for k in 1..1000 {
            let seq = s.push(k);
            assert_eq!(s.take(seq), Some(k));
            // Entries, not just items: no empty slot stays behind `held`.
            assert_eq!(s.items.len(), 1);
        }
        assert_eq!(s.take(held), Some(0));
        assert!(s.is_empty());
    }
}
