//! Offline association of two recorded timestamp lists (capability 3,
//! Match): pairs of stamps, one from each list, that belong to the same
//! moment.
//!
//! * [`associate_greedy`] reproduces the TUM RGB-D benchmark's
//!   `associate.py` bit for bit: candidates are the pairs with
//!   `|a - (b + offset)| < max_difference` (strict, in `f64` exactly as the
//!   script computes it), taken greedily by `(difference, a, b)` ascending,
//!   each stamp used once, returned sorted by `(a, b)`. Pairs may cross in
//!   time, and a stamp can stay unmatched although a partner lies within
//!   reach.
//! * [`associate_optimal`] returns a maximum-cardinality matching of
//!   minimal total difference among the same candidates whose pairs never
//!   cross in time. (For this kind of candidate set an uncrossed matching is
//!   as large as any matching, so the cardinality is the true maximum.)
//!
//! Both take `f64` seconds, as the script does, and return index pairs into
//! the input slices. Stamps that are NaN or infinite are never matched (the
//! script's comparisons are false for them too).
//!
//! ```
//! use syncline_core::associate::{associate_greedy, associate_optimal};
//!
//! let rgb = [0.000, 0.033, 0.066];
//! let depth = [0.010, 0.030, 0.052];
//! // Greedy takes (0.033, 0.030) first; 0.000 and 0.010 are then paired,
//! // 0.066 gets 0.052 (14 ms < 20 ms).
//! assert_eq!(associate_greedy(&rgb, &depth, 0.0, 0.02), vec![(0, 0), (1, 1), (2, 2)]);
//! assert_eq!(associate_optimal(&rgb, &depth, 0.0, 0.02), vec![(0, 0), (1, 1), (2, 2)]);
//! ```

use std::cmp::Ordering;

/// A candidate pair: difference, then indices into the (sorted) lists.
#[cfg(test)]
#[derive(Debug, Clone, Copy)]
struct Candidate {
    diff: f64,
    a: usize,
    b: usize,
}

/// Indices of the finite stamps, sorted by stamp (ties: by index).
fn sorted_finite(stamps: &[f64]) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..stamps.len())
        .filter(|&i| stamps.get(i).is_some_and(|s| s.is_finite()))
        .collect();
    idx.sort_by(|&i, &j| stamps[i].total_cmp(&stamps[j]).then(i.cmp(&j)));
    idx
}

/// `x < limit`, false when either is NaN (as in Python).
fn below(x: f64, limit: f64) -> bool {
    x < limit
}

/// The finite stamps of both lists as sorted index lists `sa`, `sb`, and
/// every pair with `|a - (b + offset)| < max_difference`, found with a
/// sliding window over them; `a`/`b` of a candidate are positions in
/// `sa`/`sb`. Only the tests' references build the full list.
#[cfg(test)]
fn candidates(
    first: &[f64],
    second: &[f64],
    offset: f64,
    max_difference: f64,
) -> (Vec<usize>, Vec<usize>, Vec<Candidate>) {
    let (sa, sb) = (sorted_finite(first), sorted_finite(second));
    let shifted: Vec<f64> = sb.iter().map(|&j| second[j] + offset).collect();
    let mut out = Vec::new();
    let mut lo = 0;
    for (pa, &i) in sa.iter().enumerate() {
        let a = first[i];
        // `a - c` falls as `c` rises: skip the partners that are too early
        // (for this and every later `a`), then take them until one is too late.
        while shifted
            .get(lo)
            .is_some_and(|&c| !below(a - c, max_difference))
        {
            lo += 1;
        }
        for (pb, &c) in shifted.iter().enumerate().skip(lo) {
            let diff = (a - c).abs();
            if !below(diff, max_difference) {
                break;
            }
            out.push(Candidate { diff, a: pa, b: pb });
        }
    }
    (sa, sb, out)
}

/// The TUM `associate.py` matching: greedy by smallest `|a - (b + offset)|`
/// (ties by `a`, then `b`), strict `< max_difference`, one-to-one; returns
/// `(index_in_first, index_in_second)` sorted by first stamp, then second.
///
/// Memory is linear in the lists' lengths whatever `max_difference`: the
/// candidates are not built. Each stamp of the first list offers its
/// partners one at a time, nearest first (two cursors walking away from
/// it in the sorted second list), and a heap yields the globally smallest
/// offer: the candidates come out in exactly the order the script sorts
/// them, and an offer whose partner is taken is replaced by the next one.
pub fn associate_greedy(
    first: &[f64],
    second: &[f64],
    offset: f64,
    max_difference: f64,
) -> Vec<(usize, usize)> {
    use std::collections::BinaryHeap;
    let (sa, sb) = (sorted_finite(first), sorted_finite(second));
    let shifted: Vec<f64> = sb.iter().map(|&j| second[j] + offset).collect();
    let mut cursors: Vec<Offers> = sa
        .iter()
        .map(|&i| Offers::new(first[i], &shifted))
        .collect();
    let mut heap = BinaryHeap::with_capacity(sa.len());
    for (pa, cur) in cursors.iter_mut().enumerate() {
        if let Some((diff, pb)) = cur.next(&shifted, max_difference) {
            heap.push(Offer { diff, a: pa, b: pb });
        }
    }
    let mut used_b = vec![false; sb.len()];
    let mut pairs = Vec::new();
    while let Some(Offer { a, b, .. }) = heap.pop() {
        if !used_b[b] {
            used_b[b] = true;
            pairs.push((a, b));
        } else if let Some((diff, pb)) = cursors[a].next(&shifted, max_difference) {
            heap.push(Offer { diff, a, b: pb });
        }
    }
    pairs.sort_unstable();
    pairs.into_iter().map(|(a, b)| (sa[a], sb[b])).collect()
}

/// A candidate on offer; the heap's greatest is the smallest
/// `(diff, a, b)`, the order `associate.py` sorts its candidates in.
#[derive(Debug, Clone, Copy)]
struct Offer {
    diff: f64,
    a: usize,
    b: usize,
}

impl PartialEq for Offer {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Offer {}

impl PartialOrd for Offer {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Offer {
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .diff
            .total_cmp(&self.diff)
            .then(other.a.cmp(&self.a))
            .then(other.b.cmp(&self.b))
    }
}

/// The partners of one stamp `a` in the sorted second list, by increasing
/// `(difference, position)`: the right cursor walks up from the first
/// partner `>= a`, the left one down from the last `< a`, a run of equal
/// stamps on the left given in increasing position.
#[derive(Debug, Clone, Copy)]
struct Offers {
    a: f64,
    right: usize,
    /// Positions below `left_end` on the left are not offered yet...
    left_end: usize,
    /// ...except the run being offered, `run_next..run_end`.
    run_next: usize,
    run_end: usize,
}

impl Offers {
    fn new(a: f64, shifted: &[f64]) -> Self {
        let mid = shifted.partition_point(|&c| c < a);
        Offers {
            a,
            right: mid,
            left_end: mid,
            run_next: mid,
            run_end: mid,
        }
    }

    fn next(&mut self, shifted: &[f64], max_difference: f64) -> Option<(f64, usize)> {
        if self.run_next == self.run_end && self.left_end > 0 {
            // Open the next run of equal stamps on the left.
            let v = shifted[self.left_end - 1];
            let start = shifted[..self.left_end].partition_point(|&c| c < v);
            self.run_next = start;
            self.run_end = self.left_end;
            self.left_end = start;
        }
        let left = (self.run_next < self.run_end)
            .then(|| ((self.a - shifted[self.run_next]).abs(), self.run_next))
            .filter(|&(d, _)| below(d, max_difference));
        let right = shifted
            .get(self.right)
            .map(|&c| ((self.a - c).abs(), self.right))
            .filter(|&(d, _)| below(d, max_difference));
        match (left, right) {
            (Some(l), Some(r)) if r.0.total_cmp(&l.0) == Ordering::Less => {
                self.right += 1;
                Some(r)
            }
            (Some(l), _) => {
                self.run_next += 1;
                Some(l)
            }
            (None, Some(r)) => {
                self.right += 1;
                Some(r)
            }
            (None, None) => None,
        }
    }
}

/// The TUM matching from every candidate, sorted: the reference the
/// streaming [`associate_greedy`] is tested against.
#[cfg(test)]
fn associate_greedy_all_candidates(
    first: &[f64],
    second: &[f64],
    offset: f64,
    max_difference: f64,
) -> Vec<(usize, usize)> {
    let (sa, sb, mut cands) = candidates(first, second, offset, max_difference);
    // Positions in the sorted lists order like the stamps themselves.
    cands.sort_by(|x, y| {
        x.diff
            .total_cmp(&y.diff)
            .then(x.a.cmp(&y.a))
            .then(x.b.cmp(&y.b))
    });
    let (mut used_a, mut used_b) = (vec![false; sa.len()], vec![false; sb.len()]);
    let mut pairs = Vec::new();
    for c in cands {
        if let (Some(ua), Some(ub)) = (used_a.get_mut(c.a), used_b.get_mut(c.b))
            && !*ua
            && !*ub
        {
            *ua = true;
            *ub = true;
            pairs.push((c.a, c.b));
        }
    }
    pairs.sort_unstable();
    pairs.into_iter().map(|(a, b)| (sa[a], sb[b])).collect()
}

/// A DP value: more pairs first, then a smaller total difference.
#[derive(Debug, Clone, Copy)]
struct Score {
    count: u64,
    cost: f64,
    /// The last pair of this matching (a node in [`Chains`]; `NONE`: none).
    last: usize,
}

/// No node.
const NONE: usize = usize::MAX;

impl Score {
    const EMPTY: Score = Score {
        count: 0,
        cost: 0.0,
        last: NONE,
    };

    fn better_than(&self, other: &Score) -> bool {
        match self.count.cmp(&other.count) {
            Ordering::Greater => true,
            Ordering::Less => false,
            Ordering::Equal => self.cost < other.cost,
        }
    }
}

/// One pair of a matching that is still in reach: positions in the sorted
/// lists, the pair before it, and how many references keep it alive.
#[derive(Debug, Clone, Copy)]
struct Node {
    a: usize,
    b: usize,
    prev: usize,
    refs: u32,
}

/// The matchings the dynamic programme still refers to, as linked pairs
/// that share their common beginnings. A pair is kept only while a prefix
/// best, the overall best or a later pair refers to it, so memory follows
/// the matchings in reach, not the candidate pairs seen.
#[derive(Debug, Default)]
struct Chains {
    nodes: Vec<Node>,
    free: Vec<usize>,
    live: usize,
    peak: usize,
}

impl Chains {
    fn push(&mut self, a: usize, b: usize, prev: usize) -> usize {
        self.retain(prev);
        let node = Node {
            a,
            b,
            prev,
            refs: 0,
        };
        self.live += 1;
        self.peak = self.peak.max(self.live);
        match self.free.pop() {
            Some(k) => {
                self.nodes[k] = node;
                k
            }
            None => {
                self.nodes.push(node);
                self.nodes.len() - 1
            }
        }
    }

    fn retain(&mut self, k: usize) {
        if let Some(n) = self.nodes.get_mut(k) {
            n.refs += 1;
        }
    }

    /// Drops one reference to `k`, freeing it (and what only it kept) at 0.
    fn release(&mut self, mut k: usize) {
        while let Some(n) = self.nodes.get_mut(k) {
            n.refs -= 1;
            if n.refs > 0 {
                return;
            }
            self.free.push(k);
            self.live -= 1;
            k = n.prev;
        }
    }
}

/// A Fenwick tree of prefix maxima over the second list's positions.
struct PrefixBest(Vec<Score>);

impl PrefixBest {
    /// The best score among entries at positions `< end`.
    fn query(&self, mut end: usize) -> Score {
        let mut best = Score::EMPTY;
        while end > 0 {
            if let Some(s) = self.0.get(end)
                && s.better_than(&best)
            {
                best = *s;
            }
            end &= end - 1;
        }
        best
    }

    /// Records `score` at position `pos`; `make` creates its node the first
    /// time it is stored. The scores it replaces release their nodes.
    fn update(
        &mut self,
        pos: usize,
        mut score: Score,
        chains: &mut Chains,
        mut make: impl FnMut(&mut Chains) -> usize,
    ) -> Score {
        let mut i = pos + 1;
        while let Some(s) = self.0.get_mut(i) {
            if score.better_than(s) {
                if score.last == NONE {
                    score.last = make(chains);
                }
                chains.retain(score.last);
                chains.release(s.last);
                *s = score;
            }
            i += i & i.wrapping_neg();
        }
        score
    }
}

/// What [`associate_optimal_counted`] did: how many candidate pairs it
/// considered and at most how many it held at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OptimalStats {
    /// Candidate pairs (`|a - (b + offset)| < max_difference`) considered.
    pub candidates: u64,
    /// The most pairs held at once: those of the matchings still in reach
    /// and those of the stamp being considered.
    pub peak_held: usize,
}

/// A maximum matching of minimal total `|a - (b + offset)|` among the pairs
/// with difference `< max_difference`, whose pairs never cross in time
/// (`a1 < a2` implies `b1 < b2`); sorted by first stamp. Runs in
/// `O(C log M)` for `C` candidate pairs (a dynamic programme over the two
/// sorted lists, kept as prefix maxima).
///
/// The candidates are streamed, one stamp of the first list at a time, and
/// only the pairs of the matchings still in reach are kept (see
/// [`associate_optimal_counted`]): memory does not grow with
/// `max_difference`.
pub fn associate_optimal(
    first: &[f64],
    second: &[f64],
    offset: f64,
    max_difference: f64,
) -> Vec<(usize, usize)> {
    associate_optimal_counted(first, second, offset, max_difference).0
}

/// [`associate_optimal`], also telling how many candidate pairs were
/// considered and how many pairs were held at most.
pub fn associate_optimal_counted(
    first: &[f64],
    second: &[f64],
    offset: f64,
    max_difference: f64,
) -> (Vec<(usize, usize)>, OptimalStats) {
    let (sa, sb) = (sorted_finite(first), sorted_finite(second));
    let shifted: Vec<f64> = sb.iter().map(|&j| second[j] + offset).collect();
    let mut tree = PrefixBest(vec![Score::EMPTY; sb.len() + 1]);
    let mut chains = Chains::default();
    let mut stats = OptimalStats::default();
    let mut best = Score::EMPTY;
    // One stamp's options: (position in the second list, score without its
    // node, the node before it).
    let mut row: Vec<(usize, Score, usize)> = Vec::new();
    let mut lo = 0;
    for (pa, &i) in sa.iter().enumerate() {
        let a = first[i];
        // The partners of `a` form a window of the sorted second list that
        // only moves up with `a` (as in `candidates`).
        while shifted
            .get(lo)
            .is_some_and(|&c| !below(a - c, max_difference))
        {
            lo += 1;
        }
        // All of one `a`'s options read the state before that `a`...
        row.clear();
        for (pb, &c) in shifted.iter().enumerate().skip(lo) {
            let diff = (a - c).abs();
            if !below(diff, max_difference) {
                break;
            }
            let before = tree.query(pb);
            // Kept alive until the row is recorded: the row's own updates
            // may replace the prefix best it extends.
            chains.retain(before.last);
            let s = Score {
                count: before.count + 1,
                cost: before.cost + diff,
                last: NONE,
            };
            row.push((pb, s, before.last));
        }
        stats.candidates += row.len() as u64;
        stats.peak_held = stats.peak_held.max(chains.live + row.len());
        // ...and are recorded together, so `a` is used at most once.
        for &(pb, s, prev) in &row {
            let mut s = tree.update(pb, s, &mut chains, |ch| ch.push(pa, pb, prev));
            if s.better_than(&best) {
                if s.last == NONE {
                    s.last = chains.push(pa, pb, prev);
                }
                chains.retain(s.last);
                chains.release(best.last);
                best = s;
            }
        }
        for &(_, _, prev) in &row {
            chains.release(prev);
        }
    }
    stats.peak_held = stats.peak_held.max(chains.peak);
    let mut pairs = Vec::with_capacity(best.count as usize);
    let mut k = best.last;
    while let Some(n) = chains.nodes.get(k) {
        pairs.push((sa[n.a], sb[n.b]));
        k = n.prev;
    }
    pairs.reverse();
    (pairs, stats)
}

/// The optimal matching from the full candidate list, as it was computed
/// before the candidates were streamed: the reference
/// [`associate_optimal`] is tested against.
#[cfg(test)]
fn associate_optimal_all_candidates(
    first: &[f64],
    second: &[f64],
    offset: f64,
    max_difference: f64,
) -> Vec<(usize, usize)> {
    #[derive(Clone, Copy)]
    struct Best {
        count: u64,
        cost: f64,
        last: usize,
    }
    let better = |x: &Best, y: &Best| match x.count.cmp(&y.count) {
        Ordering::Greater => true,
        Ordering::Less => false,
        Ordering::Equal => x.cost < y.cost,
    };
    let empty = Best {
        count: 0,
        cost: 0.0,
        last: usize::MAX,
    };
    let (sa, sb, cands) = candidates(first, second, offset, max_difference);
    let mut tree = vec![empty; sb.len() + 1];
    let mut prev = vec![usize::MAX; cands.len()];
    let mut best = empty;
    let mut row_start = 0;
    while row_start < cands.len() {
        let a = cands[row_start].a;
        let row_end = cands[row_start..]
            .iter()
            .position(|c| c.a != a)
            .map_or(cands.len(), |n| row_start + n);
        let scores: Vec<(usize, Best)> = (row_start..row_end)
            .map(|k| {
                let c = cands[k];
                let mut before = empty;
                let mut end = c.b;
                while end > 0 {
                    if better(&tree[end], &before) {
                        before = tree[end];
                    }
                    end &= end - 1;
                }
                prev[k] = before.last;
                let s = Best {
                    count: before.count + 1,
                    cost: before.cost + c.diff,
                    last: k,
                };
                (c.b, s)
            })
            .collect();
        for (b, s) in scores {
            let mut i = b + 1;
            while i < tree.len() {
                if better(&s, &tree[i]) {
                    tree[i] = s;
                }
                i += i & i.wrapping_neg();
            }
            if better(&s, &best) {
                best = s;
            }
        }
        row_start = row_end;
    }
    let mut pairs = Vec::new();
    let mut k = best.last;
    while let Some(c) = cands.get(k) {
        pairs.push((sa[c.a], sb[c.b]));
        k = prev[k];
    }
    pairs.reverse();
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn total(first: &[f64], second: &[f64], offset: f64, pairs: &[(usize, usize)]) -> f64 {
        pairs
            .iter()
            .map(|&(i, j)| (first[i] - (second[j] + offset)).abs())
            .sum()
    }

    #[test]
    fn greedy_quirks() {
        // Strict threshold.
        assert!(associate_greedy(&[0.0], &[0.5], 0.0, 0.5).is_empty());
        // Offset is added to the second list.
        assert_eq!(associate_greedy(&[1.0], &[0.0], 1.0, 0.1), vec![(0, 0)]);
        // Ties by difference go to the smaller a, then the smaller b.
        assert_eq!(
            associate_greedy(&[1.0, 3.0], &[2.0], 0.0, 1.5),
            vec![(0, 0)]
        );
        // Greedy loses a pair that a better matching keeps.
        let a = [0.0, 1.0];
        let b = [0.9, 1.8];
        assert_eq!(associate_greedy(&a, &b, 0.0, 1.0), vec![(1, 0)]);
        assert_eq!(associate_optimal(&a, &b, 0.0, 1.0), vec![(0, 0), (1, 1)]);
        // Non-finite stamps never match; output indices refer to the input.
        let a = [f64::NAN, 5.0, f64::INFINITY, 2.0];
        let b = [2.01, f64::NEG_INFINITY, 5.02];
        assert_eq!(associate_greedy(&a, &b, 0.0, 0.05), vec![(3, 0), (1, 2)]);
        assert_eq!(associate_optimal(&a, &b, 0.0, 0.05), vec![(3, 0), (1, 2)]);
        assert!(associate_greedy(&[1.0], &[1.0], 0.0, f64::NAN).is_empty());
        assert!(associate_optimal(&[], &[1.0], 0.0, 1.0).is_empty());
    }

    #[test]
    fn greedy_can_cross_optimal_never_does() {
        // Greedy takes (1.0, 1.05) first (0.05), then (1.2, 0.9) (0.3 < 0.35).
        let a = [1.0, 1.2];
        let b = [0.9, 1.05];
        let g = associate_greedy(&a, &b, 0.0, 0.35);
        assert_eq!(g, vec![(0, 1), (1, 0)]);
        let o = associate_optimal(&a, &b, 0.0, 0.35);
        assert_eq!(o, vec![(0, 0), (1, 1)]);
    }

    /// All matchings (any crossing) by brute force: (max cardinality, min cost).
    fn brute(a: &[f64], b: &[f64], d: f64) -> (usize, f64) {
        fn go(i: usize, a: &[f64], b: &[f64], d: f64, used: &mut [bool]) -> (usize, f64) {
            if i == a.len() {
                return (0, 0.0);
            }
            let mut best = go(i + 1, a, b, d, used);
            for j in 0..b.len() {
                let diff = (a[i] - b[j]).abs();
                if !used[j] && diff < d {
                    used[j] = true;
                    let (n, c) = go(i + 1, a, b, d, used);
                    used[j] = false;
                    let cand = (n + 1, c + diff);
                    if cand.0 > best.0 || (cand.0 == best.0 && cand.1 < best.1) {
                        best = cand;
                    }
                }
            }
            best
        }
        go(0, a, b, d, &mut vec![false; b.len()])
    }

    /// Stamps on a 1/64 grid: differences are exact, so ties are real ties.
    fn stamps(n: usize) -> impl Strategy<Value = Vec<f64>> {
        proptest::collection::vec((0u32..200).prop_map(|k| k as f64 / 64.0), 0..n)
    }

    proptest! {
        #[test]
        fn optimal_is_max_non_crossing_and_cheapest(
            a in stamps(6), b in stamps(6), d in (1u32..64).prop_map(|k| k as f64 / 64.0),
        ) {
            let o = associate_optimal(&a, &b, 0.0, d);
            let g = associate_greedy(&a, &b, 0.0, d);
            for &(i, j) in o.iter().chain(&g) {
                prop_assert!((a[i] - b[j]).abs() < d);
            }
            for w in o.windows(2) {
                let ((i1, j1), (i2, j2)) = (w[0], w[1]);
                prop_assert!(a[i1] <= a[i2] && b[j1] <= b[j2]);
                prop_assert!(i1 != i2 && j1 != j2);
            }
            let (n, cost) = brute(&a, &b, d);
            prop_assert_eq!(o.len(), n);
            prop_assert!((total(&a, &b, 0.0, &o) - cost).abs() < 1e-9);
            prop_assert!(g.len() <= o.len());
            if g.len() == o.len() {
                prop_assert!(total(&a, &b, 0.0, &o) <= total(&a, &b, 0.0, &g) + 1e-9);
            }
        }

        #[test]
        fn optimal_matches_the_quadratic_dp(
            a in stamps(60), b in stamps(60), d in (1u32..128).prop_map(|k| k as f64 / 64.0),
        ) {
            // The textbook O(N·M) table over the sorted lists: (pairs, cost).
            let mut sa = a.clone(); sa.sort_by(f64::total_cmp);
            let mut sb = b.clone(); sb.sort_by(f64::total_cmp);
            let better = |x: (usize, f64), y: (usize, f64)| x.0 > y.0 || (x.0 == y.0 && x.1 < y.1);
            let mut f = vec![vec![(0usize, 0.0f64); sb.len() + 1]; sa.len() + 1];
            for i in 1..=sa.len() {
                for j in 1..=sb.len() {
                    let mut best = f[i - 1][j];
                    if better(f[i][j - 1], best) { best = f[i][j - 1]; }
                    let diff = (sa[i - 1] - sb[j - 1]).abs();
                    let with = (f[i - 1][j - 1].0 + 1, f[i - 1][j - 1].1 + diff);
                    if diff < d && better(with, best) { best = with; }
                    f[i][j] = best;
                }
            }
            let (n, cost) = f[sa.len()][sb.len()];
            let o = associate_optimal(&a, &b, 0.0, d);
            prop_assert_eq!(o.len(), n);
            prop_assert!((total(&a, &b, 0.0, &o) - cost).abs() < 1e-9);
        }

        #[test]
        fn greedy_matches_the_quadratic_reference(
            a in stamps(12), b in stamps(12),
            d in (1u32..64).prop_map(|k| k as f64 / 64.0),
            off in (-32i32..32).prop_map(|k| k as f64 / 64.0),
        ) {
            // associate.py on dict keys: unique stamps.
            let mut a = a; a.sort_by(f64::total_cmp); a.dedup();
            let mut b = b; b.sort_by(f64::total_cmp); b.dedup();
            let mut cands = Vec::new();
            for &x in &a {
                for &y in &b {
                    let diff = (x - (y + off)).abs();
                    if diff < d {
                        cands.push((diff, x, y));
                    }
                }
            }
            cands.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.total_cmp(&q.1)).then(p.2.total_cmp(&q.2)));
            let (mut ua, mut ub, mut want) = (Vec::new(), Vec::new(), Vec::new());
            for (_, x, y) in cands {
                if !ua.contains(&x) && !ub.contains(&y) {
                    ua.push(x);
                    ub.push(y);
                    want.push((x, y));
                }
            }
            want.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.total_cmp(&q.1)));
            let got: Vec<(f64, f64)> = associate_greedy(&a, &b, off, d)
                .into_iter().map(|(i, j)| (a[i], b[j])).collect();
            prop_assert_eq!(got, want);
        }

        #[test]
        fn streaming_matches_the_full_candidate_list(
            a in prop::collection::vec((0u32..40).prop_map(|k| k as f64 / 8.0), 0..40),
            b in prop::collection::vec((0u32..40).prop_map(|k| k as f64 / 8.0), 0..40),
            d in (1u32..200).prop_map(|k| k as f64 / 16.0),
            off in (-16i32..16).prop_map(|k| k as f64 / 8.0),
            odd in prop::collection::vec(prop::sample::select(vec![f64::NAN, f64::INFINITY, -0.0, 1e300]), 0..3),
        ) {
            // Both methods, streamed, give what the list of every candidate
            // gives: duplicates, ties, huge windows, NaN and infinities
            // included, and either list first.
            let mut b = b;
            b.extend(odd);
            let (got, stats) = associate_optimal_counted(&a, &b, off, d);
            prop_assert_eq!(&got, &associate_optimal_all_candidates(&a, &b, off, d));
            let (_, _, cands) = candidates(&a, &b, off, d);
            prop_assert_eq!(stats.candidates, cands.len() as u64);
            for (x, y, off) in [(&a, &b, off), (&b, &a, -off)] {
                prop_assert_eq!(
                    associate_optimal(x, y, off, d),
                    associate_optimal_all_candidates(x, y, off, d)
                );
                prop_assert_eq!(
                    associate_greedy(x, y, off, d),
                    associate_greedy_all_candidates(x, y, off, d)
                );
            }
        }
    }

    #[test]
    fn optimal_holds_few_pairs_whatever_the_window() {
        // Two 20,000-stamp lists, 1 s apart with jitter, and a window of
        // ±1000 s: about 40 million candidate pairs, which the list-building
        // version held all at once (about 1.3 GB).
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut jitter = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 1000) as f64 / 4000.0
        };
        let n = 20_000;
        let a: Vec<f64> = (0..n).map(|k| 1e9 + k as f64 + jitter()).collect();
        let b: Vec<f64> = (0..n).map(|k| 1e9 + k as f64 + jitter()).collect();
        let (pairs, stats) = associate_optimal_counted(&a, &b, 0.0, 1000.0);
        assert_eq!(pairs.len(), n);
        assert!(pairs.iter().all(|&(i, j)| i == j), "the nearest partners");
        assert!(stats.candidates > 39_000_000, "{stats:?}");
        assert!(stats.peak_held <= 4 * (2 * n), "{stats:?}");
    }
}
