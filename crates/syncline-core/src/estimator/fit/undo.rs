//! Putting a fit's points back as they were at a mark (see
//! `Estimator::watch_drain`): the history keeps the marked points in their
//! slots (`History::mark`), and the fit's sums, hull and statistics,
//! which depend on the points alone, are taken again over them. Nothing is
//! copied and nothing allocated.

use super::LineFit;

impl LineFit {
    /// Marks the history: its points are kept in their slots until
    /// [`Self::put_back`] or [`Self::unmark`].
    pub fn mark(&mut self) {
        self.pts.mark();
    }

    /// Forgets the mark (its points will not be put back).
    pub fn unmark(&mut self) {
        self.pts.unmark();
    }

    /// Puts back the points held at the [mark](Self::mark) (those added
    /// since are dropped, those dropped since return) and rebuilds the fit
    /// over them: the hull, the sums and the residual statistics, as a
    /// rebuild at the mark would have found them. The running state (the
    /// mode, the gaps' spread, the output's level) stays as it is now; a
    /// clear since the mark is undone. False, and nothing changes, without
    /// a mark. O(points), at a rare event.
    pub fn put_back(&mut self) -> bool {
        if !self.pts.undo() {
            return false;
        }
        self.restarted = false;
        self.rebuild_renumbered();
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LineFit, Point};
    use crate::estimator::Tuning;

    /// After any appends (rebuilds, trims and a clear among them),
    /// `put_back` gives back the points of the mark, and the hull and
    /// floor a fit of those points has.
    #[test]
    fn put_back_gives_the_marked_points_their_fit() {
        for extra in [1usize, 5, 17, 40, 64] {
            let mut f = LineFit::new(64, Tuning::default());
            let at = |n: i64| 1_000 * n + (n * 7919) % 300;
            let pt = |n: i64, q: i64, queued: bool| Point {
                freed: false,
                n,
                q,
                queued,
            };
            let mut fresh = LineFit::new(64, Tuning::default());
            for n in 0..50 {
                f.push(pt(n, at(n), false), 40_000);
                fresh.push(pt(n, at(n), false), 40_000);
            }
            f.mark();
            for n in 50..50 + extra as i64 {
                f.push(pt(n, at(n) - 200, n % 3 == 0), 40_000);
                if n == 60 {
                    f.clear();
                }
            }
            assert!(f.put_back());
            fresh.rebuild_renumbered();
            assert_eq!(f.pts, fresh.pts);
            assert_eq!(f.hull, fresh.hull);
            assert_eq!(f.floor(), fresh.floor());
            assert_eq!(f.stats_valid(), fresh.stats_valid());
            assert!(!f.put_back());
        }
    }
}
