//! Hardware reference pulses: numbering each pulse, the pulse line, and
//! the estimates it gives while pulses are recent.

use super::fit::{Line, Point, round};
use super::{Estimator, FitMode, ReferenceOutcome};

impl Estimator {
    /// Numbers the pulse stamped `h` against the samples (by the pulse
    /// line, else by the pulses' phase on the arrival floor, else by the
    /// floor alone), rejects glitches and adds it to the pulse fit. Before
    /// the arrival fit has statistics the pulse waits (the latest one).
    pub(super) fn place_reference(&mut self, h: i64) -> ReferenceOutcome {
        let (Some(floor), true) = (
            self.fit.floor(),
            self.fit.len() >= self.cfg.tuning.min_stats_points,
        ) else {
            // Only the latest pulse waits: one it replaces is dropped, and
            // counted as rejected.
            if self.deferred_ref.replace(h).is_some() {
                self.st.references_rejected += 1;
            }
            return ReferenceOutcome::Deferred;
        };
        let p = floor.slope;
        // Without a pulse line: the first sample whose arrival floor, less
        // the known minimum latency, is not before the pulse (a tenth of a
        // period of slack for a pulse stamped a little after its sample).
        let first_after = |x: f64| (x - 0.1).ceil();
        let xf = floor.solve(h.saturating_add(self.cfg.min_latency.as_nanos()));
        // A pulse further off the pulse line than its spread allows (ten
        // standard deviations once the line has statistics, at least a
        // hundredth and at most a quarter of a period) is a glitch.
        let tolerance = if self.refs.stats_valid() {
            (10.0 * self.refs.std_r).clamp(0.01 * p, 0.25 * p)
        } else {
            0.25 * p
        };
        // A floor fit of the pulses (see `LineFit::for_pulses`) numbers
        // and judges a pulse from the middle of their spread above it (the
        // mean residual), as a least-squares fit does from its line:
        // pulses with a wide symmetric jitter lie up to half a period above
        // their floor before the fit enters least squares. Below the floor
        // no pulse lies by more than the floor's own error (one that did
        // would bend the floor down to it): there the tolerance is the mean
        // residual (at least 10⁻⁴ of a period).
        let (below, centre) = if self.refs.stats_valid() && self.refs.mode == FitMode::Hull {
            (
                self.refs.mean_r.max(1e-4 * p).min(tolerance),
                self.refs.mean_r,
            )
        } else {
            (tolerance, 0.0)
        };
        // Its place on the floor must keep the pulses' phase (up to whole
        // periods: renumberings, `follow_samples`) within six times its
        // mean deviation so far (3 % to 25 % of a period).
        let phase_tolerance = (6.0 * self.ref_dev).clamp(0.03, 0.25);
        let off_phase = |x: f64| match (xf, self.ref_phase) {
            (Some(xf), Some(phase)) => {
                let d = xf - x - phase;
                (d - d.round()).abs() > phase_tolerance
            }
            _ => false,
        };
        let line = self.pulse_line();
        let candidate = match (line, xf, self.ref_phase) {
            (Some(l), ..) => l
                .solve(h.saturating_sub(round(centre)))
                .map(f64::round)
                .filter(|x| x.abs() < 9.0e18)
                .map(|x| {
                    let r = l.residual(x as i64, h);
                    (x, r - centre > tolerance || r < -below)
                }),
            // No line yet: by the pulses' phase on the floor (a jittery
            // pulse is numbered like the ones before it), the first one by
            // the floor alone.
            (None, Some(xf), Some(phase)) => Some(((xf - phase).round(), false)),
            (None, xf, _) => xf.map(|xf| (first_after(xf), false)),
        };
        let x = match candidate {
            Some((x, misfit)) if misfit || off_phase(x) => {
                // A glitch is rejected, but `Tuning::ref_jump_run` in a row mean
                // the pulses moved (a step of their clock): the line and
                // the phase start over from the floor.
                self.ref_misfits += 1;
                if self.ref_misfits < self.cfg.tuning.ref_jump_run {
                    self.st.references_rejected += 1;
                    return ReferenceOutcome::Rejected;
                }
                self.forget_pulses();
                xf.map(first_after)
            }
            Some((x, _)) if line.is_some() => Some(self.follow_samples(x, xf)),
            other => other.map(|(x, _)| x),
        };
        self.ref_misfits = 0;
        // Numbered after the first sample whose arrival floor is not before
        // it: the pulses were numbered a sample late from a first pulse
        // stamped unusually late (a pulse's own delay can exceed the
        // samples' latency). With the right numbers no pulse lies more than
        // 0.9 of a period before its sample's floor; `Tuning::ref_jump_run` in a row
        // renumber the pulses from this one.
        let x = match (x, xf) {
            (Some(x), Some(xf)) if first_after(xf) < x => {
                self.ref_early += 1;
                if self.ref_early < self.cfg.tuning.ref_jump_run {
                    Some(x)
                } else {
                    self.forget_pulses();
                    self.st.references_renumbered += 1;
                    Some(first_after(xf))
                }
            }
            (x, _) => {
                self.ref_early = 0;
                x
            }
        };
        let n = match x {
            Some(x) if x.abs() < 9.0e18 => x as i64,
            _ => {
                self.st.references_rejected += 1;
                return ReferenceOutcome::Rejected;
            }
        };
        if !self.refs.push(
            Point {
                n,
                q: h,
                queued: false,
            },
            self.max_span,
        ) {
            self.st.references_rejected += 1;
            return ReferenceOutcome::Rejected;
        }
        if let Some(f) = floor.eval(n) {
            self.ref_offset = Some((f - h) as f64);
        }
        if let Some(d) = xf.map(|xf| xf - n as f64) {
            match self.ref_phase {
                None => self.ref_phase = Some(d),
                Some(phase) if (d - phase).abs() < 0.5 => {
                    self.ref_dev += ((d - phase).abs() - self.ref_dev) / 8.0;
                    self.ref_phase = Some(phase + (d - phase) / 8.0);
                }
                Some(_) => {}
            }
        }
        self.summarise_pulses();
        self.last_ref_n = Some(n);
        self.st.references_used += 1;
        ReferenceOutcome::Used(n)
    }

    /// Forgets the pulse line and the pulses' offset on the arrival floor
    /// (a restart, a history that mixed numberings, pulses that moved or
    /// were numbered late).
    pub(super) fn forget_pulses(&mut self) {
        self.refs.clear();
        self.ref_young = None;
        self.forget_ref_phase();
    }

    /// Forgets the pulses' offset on the arrival floor and its spread (a
    /// restart, a renumbering of the samples, or pulses that moved).
    fn forget_ref_phase(&mut self) {
        self.ref_phase = None;
        self.ref_dev = self.cfg.tuning.ref_dev_start;
        self.ref_early = 0;
    }

    /// The pulse number `x` given by the pulse line, moved by the whole
    /// periods the samples' numbering has moved against the pulses: the
    /// pulse's place on the arrival floor (`xf`, fractional) keeps a steady
    /// offset from its number until the samples are renumbered (a loss
    /// wrongly inferred or announced); when that offset has jumped by more
    /// than half a period on `Tuning::ref_jump_run` pulses in a row, the pulses are
    /// renumbered alike and the pulse line restarts.
    fn follow_samples(&mut self, x: f64, xf: Option<f64>) -> f64 {
        let Some(d) = xf.map(|xf| xf - x) else {
            return x;
        };
        let Some(phase) = self.ref_phase else {
            return x;
        };
        let jump = (d - phase).round();
        if jump == 0.0 {
            self.ref_jumps = 0;
            return x;
        }
        self.ref_jumps += 1;
        if self.ref_jumps < self.cfg.tuning.ref_jump_run {
            return x;
        }
        self.ref_jumps = 0;
        self.refs.clear();
        self.st.references_renumbered += 1;
        x + jump
    }

    /// The line through the pulses (two or more), with the
    /// precision-weighted mean of the pulse fit's slope and the arrival
    /// fit's (see [`Self::mixed_slope`]). Its level: once the pulse fit has
    /// statistics, its own line (floor or least squares, whichever their
    /// jitter asks for) at the pulses' mean number; before that, the floor
    /// of the mixed slope under all but an eighth of the pulses (see
    /// [`Self::summarise_pulses`]). While the arrival fit is young the
    /// pulses' own line stands.
    fn pulse_line(&self) -> Option<Line> {
        if self.refs.len() < 2 {
            return None;
        }
        let own = self.refs.own_line()?;
        let line = match self.ref_young {
            Some(y) => {
                let Some(slope) = self.mixed_slope(own.slope, y.precision) else {
                    return Some(own);
                };
                Line {
                    n0: y.first.n,
                    q0: y.first.q,
                    c: y.level_dq - slope * y.mean_dn,
                    slope,
                }
            }
            None => {
                let wp = self.refs.slope_precision().unwrap_or(f64::INFINITY);
                let Some(slope) = self.mixed_slope(own.slope, wp) else {
                    return Some(own);
                };
                let pivot = self.refs.centroid_n()?;
                Line {
                    c: own.c + (own.slope - slope) * (pivot - own.n0 as f64),
                    slope,
                    ..own
                }
            }
        };
        Some(if line.c.is_finite() && line.slope.is_finite() {
            line
        } else {
            own
        })
    }

    /// The precision-weighted mean of a pulse slope (precision `wp`, see
    /// [`LineFit::slope_precision`](super::fit::LineFit::slope_precision)) and the arrival fit's, once the arrival
    /// fit has statistics. Both measure the sensor's period on the host
    /// clock: sparse pulses (a 1 Hz PPS on a 100 Hz stream) far worse than
    /// the samples' arrivals, while a pulse on every sample with a small
    /// jitter outweighs them.
    fn mixed_slope(&self, pulses: f64, wp: f64) -> Option<f64> {
        let wa = self
            .fit
            .slope_precision()
            .filter(|w| w.is_finite() && *w > 0.0)?;
        let arrival = self.fit.active().filter(|l| l.slope > 0.0)?.slope;
        Some(if wp.is_finite() {
            (wa * arrival + wp * pulses) / (wa + wp)
        } else {
            pulses
        })
    }

    /// Sums up the young pulse fit after a change of its points (at most
    /// once per pulse; see [`LineFit::young_summary`](super::fit::LineFit::young_summary)). Its level is the
    /// floor of the mixed slope under all but an eighth of the pulses
    /// ([`LineFit::low_level`](super::fit::LineFit::low_level)): with one-sided pulse jitter (a pulse
    /// stamped by an interrupt handler) that is the level the floor takes
    /// once the pulse fit has statistics, without the tilt of a floor edge
    /// through two of a handful of pulses; with a wide symmetric jitter it
    /// sinks less with each new low pulse than the lowest one does, and a
    /// glitch below the pulses does not pull it down.
    pub(super) fn summarise_pulses(&mut self) {
        let own = self.refs.own_line().map(|l| l.slope);
        self.ref_young = self
            .refs
            .young_summary(|wp| own.map(|s| self.mixed_slope(s, wp).unwrap_or(s)));
    }

    /// The reference line's value at `n`, while references are recent.
    pub(super) fn reference_estimate(&self, n: i64, q: i64, period: Option<f64>) -> Option<i64> {
        if self.refs.len() < 2 {
            return None;
        }
        let last = self.last_ref_n?;
        let p = period?;
        let recent = (n.saturating_sub(last) as f64) * p <= self.cfg.window.as_nanos() as f64;
        if !recent {
            return None;
        }
        let v = self.pulse_line()?.eval(n)?;
        // A pulse cannot follow its sample's arrival: if it would, the
        // pulses are matched to the wrong samples; use the arrivals.
        (v <= q.saturating_add((0.25 * p) as i64)).then_some(v)
    }
}
