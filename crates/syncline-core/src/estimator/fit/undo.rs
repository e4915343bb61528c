//! Putting a fit back as it was at a mark, without a copy of its history
//! (see `Estimator::watch_drain`): the fit's scalar state is copied at the
//! mark (its buffers left out, so nothing is allocated), the history keeps
//! the marked points in their slots ([`History::mark`]), and the lower
//! hull, which depends on the points alone, is taken again over them.

use super::super::history::History;
use super::{LineFit, hull_push_to};

impl LineFit {
    /// Marks the history: its points are kept in their slots until
    /// [`Self::undo`] or [`Self::unmark`].
    pub fn mark(&mut self) {
        self.pts.mark();
    }

    /// The fit's state without its buffers (no allocation), for
    /// [`Self::undo`].
    pub fn shell(&self) -> LineFit {
        LineFit {
            pts: History::default(),
            hull: Vec::new(),
            spare: Vec::new(),
            scratch: Vec::new(),
            ..*self
        }
    }

    /// Forgets the mark (the state taken with it will not be put back).
    pub fn unmark(&mut self) {
        self.pts.unmark();
    }

    /// Puts the fit back as `shell` (from [`Self::shell`], at the
    /// [mark](Self::mark)) was, keeping
    /// this fit's buffers; false, and nothing changes, without a mark.
    /// O(points) for the hull, at a rare event.
    pub fn undo(&mut self, shell: &LineFit) -> bool {
        if !self.pts.undo() {
            return false;
        }
        *self = LineFit {
            pts: std::mem::take(&mut self.pts),
            hull: std::mem::take(&mut self.hull),
            spare: std::mem::take(&mut self.spare),
            scratch: std::mem::take(&mut self.scratch),
            ..*shell
        };
        // The lower hull of the points (the same vertices however it was
        // built, see `LineFit::rebuild`), relative to the anchor.
        self.hull.clear();
        self.hull_kept = 0;
        let (n0, q0) = (self.anchor_n, self.anchor_q);
        for p in self.pts.iter() {
            hull_push_to(
                &mut self.hull,
                p.n.saturating_sub(n0),
                p.q.saturating_sub(q0),
            );
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LineFit, Point};
    use crate::estimator::Tuning;

    /// After any appends (rebuilds, trims and a clear among them), `undo`
    /// gives back the fit of the mark: the same points, hull and lines.
    #[test]
    fn undo_puts_the_fit_back() {
        for extra in [1usize, 5, 17, 40, 64] {
            let mut f = LineFit::new(64, Tuning::default());
            let at = |n: i64| 1_000 * n + (n * 7919) % 300;
            for n in 0..50 {
                f.push(
                    Point {
                        n,
                        q: at(n),
                        queued: false,
                    },
                    40_000,
                );
            }
            let (pts, hull, floor) = (f.pts.clone(), f.hull.clone(), f.floor());
            f.mark();
            let shell = f.shell();
            for n in 50..50 + extra as i64 {
                f.push(
                    Point {
                        n,
                        q: at(n) - 200,
                        queued: n % 3 == 0,
                    },
                    40_000,
                );
                if n == 60 {
                    f.clear();
                }
            }
            assert!(f.undo(&shell));
            assert_eq!(f.pts, pts);
            assert_eq!(f.hull, hull);
            assert_eq!(f.floor(), floor);
            assert!(!f.undo(&shell));
        }
    }
}
