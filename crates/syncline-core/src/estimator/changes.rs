//! Stage 3, changes: the runs of residuals that tell a step of the clock
//! line (a period step, a step of the latency or of the sensor's clock)
//! from jitter, a stall or a draining backlog.
//!
//! The clock line is the lower envelope of the arrivals, so a sample on
//! time lies on or above it and, under one-sided delays, never far below.
//! A line that is too late shows as a few samples in a row below it; a
//! line that is too early as a long run of samples above it by a multiple
//! of the mean residual, whose odds without a change are `e^-24`. A run
//! whose residuals fall steadily from their peak is a backlog draining
//! faster than the sensor, not a change. [`Changes::observe`] is the one
//! place where a change is decided; the estimator then cuts the history
//! (see `Estimator::commit`).

use super::tuning::Tuning;

/// Where a committed sample lies against the clock line, as the change
/// detector reads it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Residuals {
    /// Residual above the live floor, ns.
    pub r: f64,
    /// Residual above the floor of the last rebuild (which the newest
    /// points have not bent), ns.
    pub below: f64,
    /// The residual the runs above the floor are judged on, in units of
    /// `unit`: `r` itself, or on a quantised clock the delay beyond one
    /// tick, in fitted delay means.
    pub x: f64,
    /// The unit of `x` (the mean residual, or 1 on a quantised clock).
    pub unit: f64,
    /// The mean residual above the floor (at least 1 ns).
    pub mu: f64,
    /// The floor's slope (the period), ns per sample.
    pub slope: f64,
    /// The residuals look exponential (the lower levels count too).
    pub exponential: bool,
}

/// The change detector's state: runs of samples above and below the clock
/// line, and the watch after a pause.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Changes {
    /// Samples in a row above the floor at each of `Tuning::above_levels`.
    above_runs: [u32; 3],
    /// The highest residual of each of those runs, and the samples since.
    above_peak: [(f64, u32); 3],
    /// Samples left after a pause in which those runs need a third of
    /// their length (the device's clock may have moved by less than the
    /// jitter).
    pause_watch: u32,
    /// Samples in a row below the floor.
    below_run: u32,
}

impl Changes {
    /// The state of a new estimator.
    #[cfg(test)]
    pub fn reset(&mut self) {
        *self = Changes::default();
    }

    /// Forgets the runs above and below the floor (after the history was
    /// cut or renumbered, or a restart: they were judged against the old
    /// line).
    pub fn forget_runs(&mut self) {
        self.above_runs = [0; 3];
        self.below_run = 0;
    }

    /// A pause verdict: for the next `samples` committed samples, the runs
    /// above the floor signal a change at `Tuning::pause_run_divisor` times
    /// shorter lengths.
    pub fn watch_pause(&mut self, samples: u32) {
        self.pause_watch = samples;
    }

    /// A sample is committed (whether or not it is observed).
    #[inline(always)]
    pub fn committed(&mut self) {
        self.pause_watch = self.pause_watch.saturating_sub(1);
    }

    /// Takes in a free (not queued) committed sample with valid residual
    /// statistics; returns whether the line changed.
    #[inline(always)]
    pub fn observe(&mut self, s: Residuals, t: &Tuning) -> bool {
        let Residuals {
            r,
            below,
            x,
            unit,
            mu,
            slope,
            exponential,
        } = s;
        if below < -t.below_factor * mu {
            self.below_run += 1;
        } else {
            self.below_run = 0;
        }
        // A jump of more than half a period above a run's peak (another
        // stall) starts the run over.
        let jump = 0.5 * slope;
        for (i, &(factor, _)) in t.above_levels.iter().enumerate() {
            let (run, peak) = (&mut self.above_runs[i], &mut self.above_peak[i]);
            if x > factor * unit {
                if *run == 0 || r > peak.0 + jump {
                    (*run, *peak) = (1, (r, 0));
                } else {
                    *run = run.saturating_add(1);
                    *peak = if r >= peak.0 {
                        (r, 0)
                    } else {
                        (peak.0, peak.1.saturating_add(1))
                    };
                }
            } else {
                *run = 0;
            }
        }
        // A run whose residuals fell from its peak by `Tuning::drain_fall`
        // of a period per sample since (and by more than the jitter could)
        // is a backlog draining at the link's rate: each sample as late as
        // the one before, less what the link gains on the sensor. Not a
        // step of the line.
        let draining = |i: usize| {
            let (top, since) = self.above_peak[i];
            top - r >= (t.drain_fall * slope * f64::from(since)).max(t.drain_jitter * mu)
        };
        // After a pause the device's clock may have moved by less than the
        // jitter: the odds of each run without a change are then e^−8, not
        // e^−24, over the few samples watched.
        // (No division on the steady path: only a pause watch shortens.)
        let needed = |i: usize| match self.pause_watch {
            0 => t.above_levels[i].1,
            _ => t.above_levels[i].1 / t.pause_run_divisor,
        };
        let reached = |i: usize| self.above_runs[i] >= needed(i) && !draining(i);
        let above = reached(0) || ((reached(1) || reached(2)) && exponential);
        above || self.below_run >= t.below_run
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sample `r` ns above the floor (the same on the rebuilt floor), a
    /// mean residual of 100 ns, a 10 ms period.
    fn at(r: f64, exponential: bool) -> Residuals {
        Residuals {
            r,
            below: r,
            x: r,
            unit: 100.0,
            mu: 100.0,
            slope: 1e7,
            exponential,
        }
    }

    /// How many samples at `r` until a change is signalled (None within 1000).
    fn samples_to_change(c: &mut Changes, r: f64, exponential: bool) -> Option<u32> {
        let t = Tuning::default();
        (1..=1000).find(|_| c.observe(at(r, exponential), &t))
    }

    #[test]
    fn jitter_is_no_change() {
        let t = Tuning::default();
        let mut c = Changes::default();
        // Residuals cycling through 0..2 means: below every level's run.
        for k in 0..10_000 {
            let r = f64::from(k % 7) * 30.0;
            assert!(!c.observe(at(r, true), &t), "sample {k}");
        }
    }

    #[test]
    fn a_step_up_is_a_change_after_its_level_run() {
        let t = Tuning::default();
        let (high, run) = t.above_levels[0];
        let mut c = Changes::default();
        // Above the highest level: detected after that level's run.
        assert_eq!(
            samples_to_change(&mut c, (high + 0.5) * 100.0, false),
            Some(run)
        );
        // Above the lower levels only: detected only on exponential-like
        // residuals, after the second level's run.
        let (mid, run1) = t.above_levels[1];
        let mut c = Changes::default();
        assert_eq!(samples_to_change(&mut c, (mid + 0.5) * 100.0, false), None);
        let mut c = Changes::default();
        assert_eq!(
            samples_to_change(&mut c, (mid + 0.5) * 100.0, true),
            Some(run1)
        );
    }

    #[test]
    fn a_run_below_the_floor_is_a_change() {
        let t = Tuning::default();
        let mut c = Changes::default();
        let below = -(t.below_factor + 0.5) * 100.0;
        assert_eq!(samples_to_change(&mut c, below, false), Some(t.below_run));
        // A sample back on the floor ends the run.
        let mut c = Changes::default();
        for _ in 1..t.below_run {
            assert!(!c.observe(at(below, false), &t));
        }
        assert!(!c.observe(at(0.0, false), &t));
        assert!(!c.observe(at(below, false), &t));
    }

    #[test]
    fn a_draining_backlog_is_no_change() {
        let t = Tuning::default();
        let mut c = Changes::default();
        // Late by three periods, each sample 10 % of a period less late
        // (a link 10 % faster than the sensor): never a change.
        for k in 0..25 {
            let r = 3e7 - f64::from(k) * 1e6;
            assert!(!c.observe(at(r, true), &t), "sample {k}");
        }
    }

    #[test]
    fn after_a_pause_the_runs_are_shorter_and_forget_runs_clears() {
        let t = Tuning::default();
        let (high, run) = t.above_levels[0];
        let r = (high + 0.5) * 100.0;
        let mut c = Changes::default();
        c.watch_pause(t.pause_watch);
        assert_eq!(
            samples_to_change(&mut c, r, false),
            Some(run / t.pause_run_divisor)
        );
        // The watch runs out with the committed samples.
        let mut c = Changes::default();
        c.watch_pause(2);
        c.committed();
        c.committed();
        assert_eq!(samples_to_change(&mut c, r, false), Some(run));
        // Forgetting the runs starts them over; reset clears everything.
        let mut c = Changes::default();
        for _ in 1..run {
            assert!(!c.observe(at(r, false), &t));
        }
        c.forget_runs();
        assert_eq!(samples_to_change(&mut c, r, false), Some(run));
        c.watch_pause(5);
        c.reset();
        assert_eq!(c.pause_watch, 0);
    }
}
