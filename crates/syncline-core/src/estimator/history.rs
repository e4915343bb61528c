//! The clock line's history: a bounded queue of points, oldest first, in
//! one buffer reserved at construction, that can be put back as it was at
//! a mark.
//!
//! The points held are one contiguous run of slots. Dropping points from
//! the front (or all of them) only moves the run's start; a point is
//! appended after the run's end; when the end reaches the buffer's end,
//! the run is moved to the front (amortised O(1): the buffer holds twice
//! the capacity). So the points dropped since a mark stay in their slots,
//! and putting the history back is two indices (see
//! `Estimator::watch_drain`): while a mark is set, the marked run's slots
//! are never written. An append writes after the current end, which never
//! moves back; a change of points in place (a renumbering) first moves
//! the current run to fresh slots if it shares any with the marked one.

use std::ops::{Bound, Index, RangeBounds};

use super::DRAIN_WATCH;
use super::fit::Point;

/// A bounded queue of points, oldest first, that can be put back as it
/// was at a mark (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct History {
    /// The slots written so far (`buf.len()` grows up to `slots`).
    buf: Vec<Point>,
    /// The slots reserved: twice the capacity, and room for the appends
    /// of a drain watch.
    slots: usize,
    /// The first point's slot and the number of points.
    head: usize,
    len: usize,
    /// The run of slots at the mark (start, length), kept intact while set.
    mark: Option<(usize, usize)>,
    /// Points appended so far: the newest point is the `appended`-th (see
    /// [`Self::end`]).
    appended: u64,
    /// Changes other than appending and dropping the oldest points (see
    /// [`Self::epoch`]).
    epoch: u64,
}

impl PartialEq for History {
    /// The same points in the same order.
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Index<usize> for History {
    type Output = Point;

    fn index(&self, i: usize) -> &Point {
        &self.as_slice()[i]
    }
}

impl<'a> IntoIterator for &'a History {
    type Item = &'a Point;
    type IntoIter = std::slice::Iter<'a, Point>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl History {
    /// A history for `cap` points; reserves its slots once.
    pub fn with_capacity(cap: usize) -> Self {
        let slots = cap
            .saturating_mul(2)
            .saturating_add(2 * DRAIN_WATCH + 2)
            .max(16);
        History {
            buf: Vec::with_capacity(slots),
            slots,
            head: 0,
            len: 0,
            mark: None,
            appended: 0,
            epoch: 0,
        }
    }

    /// How many points were ever appended: the newest point held is the
    /// `end() - 1`-th, the oldest the `end() - len()`-th. While the
    /// [`Self::epoch`] stays, the point with a given count stays the same,
    /// so sums over the points can be kept by their counts.
    #[inline]
    pub fn end(&self) -> u64 {
        self.appended
    }

    /// Counts the changes that are neither an append nor a drop of the
    /// oldest points: a change in place, a drop elsewhere, an undo.
    #[inline]
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Points held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no point is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The points, oldest first.
    #[inline]
    pub fn as_slice(&self) -> &[Point] {
        &self.buf[self.head..self.head + self.len]
    }

    /// The points, oldest first.
    #[inline]
    pub fn iter(&self) -> std::slice::Iter<'_, Point> {
        self.as_slice().iter()
    }

    /// The points in `range` (of positions, oldest first).
    pub fn range(&self, range: impl RangeBounds<usize>) -> std::slice::Iter<'_, Point> {
        let (a, b) = self.bounds(range);
        self.as_slice()[a..b].iter()
    }

    /// The points in `range`, to change in place.
    pub fn range_mut(&mut self, range: impl RangeBounds<usize>) -> std::slice::IterMut<'_, Point> {
        let (a, b) = self.bounds(range);
        self.points_mut()[a..b].iter_mut()
    }

    /// Every point, to change in place.
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Point> {
        self.points_mut().iter_mut()
    }

    /// The oldest point.
    #[inline]
    pub fn front(&self) -> Option<&Point> {
        self.as_slice().first()
    }

    /// The newest point.
    #[inline]
    pub fn back(&self) -> Option<&Point> {
        // One bounds check, not the slice's two.
        let i = (self.head + self.len).checked_sub(1)?;
        if self.len == 0 {
            return None;
        }
        self.buf.get(i)
    }

    /// The point at position `i` (oldest first).
    pub fn get(&self, i: usize) -> Option<&Point> {
        self.as_slice().get(i)
    }

    /// Appends a point.
    #[inline]
    pub fn push_back(&mut self, p: Point) {
        let mut end = self.head + self.len;
        if end >= self.slots {
            self.compact();
            end = self.head + self.len;
        }
        if let Some(slot) = self.buf.get_mut(end) {
            *slot = p;
        } else {
            // The slots are reserved: no allocation, unless a marked run
            // fills them (not in the estimator's use, see `with_capacity`).
            self.buf.push(p);
            self.slots = self.slots.max(self.buf.len());
        }
        self.len += 1;
        self.appended += 1;
    }

    /// Appends points.
    #[cfg(test)]
    pub fn extend(&mut self, pts: impl IntoIterator<Item = Point>) {
        for p in pts {
            self.push_back(p);
        }
    }

    /// Drops the oldest point.
    pub fn pop_front(&mut self) -> Option<Point> {
        let p = self.front().copied()?;
        self.head += 1;
        self.len -= 1;
        Some(p)
    }

    /// Drops the points in `range`, which must start at the oldest (as
    /// the fit drops them); any other range is dropped by moving the
    /// points before it.
    pub fn drain(&mut self, range: impl RangeBounds<usize>) {
        let (a, b) = self.bounds(range);
        if a > 0 {
            // Never in the fit's use: the points before the range move up
            // to it (in fresh slots if they are marked).
            self.points_mut().copy_within(..a, b - a);
        }
        self.head += b - a;
        self.len -= b - a;
    }

    /// Drops every point.
    pub fn clear(&mut self) {
        self.head += self.len;
        self.len = 0;
        if self.mark.is_none() {
            self.head = 0;
        }
    }

    /// Marks the points held: until [`Self::unmark`] or [`Self::undo`],
    /// their slots are not written.
    pub fn mark(&mut self) {
        self.mark = Some((self.head, self.len));
    }

    /// Forgets the mark.
    pub fn unmark(&mut self) {
        self.mark = None;
    }

    /// Puts back the points held at the mark, and forgets it; false (and
    /// nothing changes) without a mark.
    pub fn undo(&mut self) -> bool {
        let Some((head, len)) = self.mark.take() else {
            return false;
        };
        (self.head, self.len) = (head, len);
        self.epoch += 1;
        true
    }

    /// The positions `range` covers, clamped to the points held.
    fn bounds(&self, range: impl RangeBounds<usize>) -> (usize, usize) {
        let a = match range.start_bound() {
            Bound::Included(&a) => a,
            Bound::Excluded(&a) => a.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let b = match range.end_bound() {
            Bound::Included(&b) => b.saturating_add(1),
            Bound::Excluded(&b) => b,
            Bound::Unbounded => self.len,
        };
        let b = b.min(self.len);
        (a.min(b), b)
    }

    /// The points, to change in place: first moved to fresh slots if they
    /// share any with the marked run.
    fn points_mut(&mut self) -> &mut [Point] {
        self.epoch += 1;
        if let Some((m, ml)) = self.mark
            && self.head < m + ml
            && m < self.head + self.len
        {
            let len = self.len;
            if self.head + 2 * len > self.slots {
                self.compact();
            }
            // Fresh slots after the end (which only moves forward while a
            // mark is set), the run copied there.
            let end = self.head + len;
            for i in 0..len {
                let p = self.buf[self.head + i];
                match self.buf.get_mut(end + i) {
                    Some(slot) => *slot = p,
                    None => self.buf.push(p),
                }
            }
            self.slots = self.slots.max(self.buf.len());
            self.head = end;
        }
        let (head, len) = (self.head, self.len);
        &mut self.buf[head..head + len]
    }

    /// Moves the slots in use (the marked run's too) to the front.
    #[cold]
    fn compact(&mut self) {
        let end = self.head + self.len;
        let from = self.mark.map_or(self.head, |(m, _)| m.min(self.head));
        self.buf.copy_within(from..end, 0);
        self.head -= from;
        if let Some((m, _)) = self.mark.as_mut() {
            *m -= from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::History;
    use crate::estimator::fit::Point;

    fn pt(n: i64) -> Point {
        Point {
            freed: false,
            n,
            q: 10 * n,
            queued: false,
        }
    }

    fn numbers(h: &History) -> Vec<i64> {
        h.iter().map(|p| p.n).collect()
    }

    /// A history behaves as a queue across many wraps of its slots.
    #[test]
    fn a_history_is_a_queue() {
        let mut h = History::with_capacity(8);
        let mut model = std::collections::VecDeque::new();
        for n in 0..1000 {
            h.push_back(pt(n));
            model.push_back(pt(n));
            if h.len() > 8 {
                let k = (n % 5) as usize;
                h.drain(..k.min(h.len()));
                model.drain(..k.min(model.len()));
            }
            if n % 97 == 0 {
                h.clear();
                model.clear();
            }
            assert!(h.iter().eq(model.iter()));
        }
        assert!(h.buf.capacity() <= h.slots);
    }

    /// Whatever happens after a mark (appends, drops, a clear, a change in
    /// place, many moves of the slots), `undo` puts the marked points back.
    #[test]
    fn undo_puts_back_the_marked_points() {
        for start in 0..40 {
            let mut h = History::with_capacity(16);
            for n in 0..start {
                h.push_back(pt(n));
                if h.len() > 16 {
                    h.pop_front();
                }
            }
            let before = numbers(&h);
            h.mark();
            for k in 0..2 * crate::estimator::DRAIN_WATCH as i64 {
                h.push_back(pt(start + k));
                match k % 7 {
                    0 => h.clear(),
                    3 => h.drain(..h.len().min(3)),
                    5 => {
                        for p in h.iter_mut() {
                            p.n += 1000;
                        }
                    }
                    _ => {}
                }
            }
            assert!(h.undo());
            assert_eq!(numbers(&h), before);
            assert!(!h.undo());
        }
    }
}
