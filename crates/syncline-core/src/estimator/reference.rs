//! Stage 5, hardware reference pulses: numbering each pulse, the pulse
//! line, and the estimates it gives while pulses are recent.

use super::config::{EstimatorConfig, EstimatorStatus};
use super::fit::{Line, LineFit, Point, YoungSummary, round};
use super::wander::Halves;
use super::{FitMode, ReferenceOutcome, Tuning};

/// How many pulses of a run off the line [`Pulses`] keeps to start the new
/// line with (`Tuning::ref_jump_run` is 3 by default).
const MOVED: usize = 4;

/// Stage 5: the reference pulses, their line and their place on the
/// arrival floor. Fed by [`Pulses::place`]; read by [`Pulses::estimate`]
/// and [`Pulses::offset`].
#[derive(Debug, Clone)]
pub(crate) struct Pulses {
    /// The pulse fit (see [`LineFit::for_pulses`]).
    pub refs: LineFit,
    /// A pulse that came before the arrival fit could place it (the latest).
    pub deferred: Option<i64>,
    /// The arrival floor's offset from the last pulse (the latency the
    /// estimates carry while pulses are in use).
    pub offset: Option<f64>,
    /// The last pulse's number.
    pub last_n: Option<i64>,
    /// Offset of the pulses' place on the arrival floor from their numbers.
    phase: Option<f64>,
    /// Pulses in a row whose offset jumped by whole periods.
    jumps: u32,
    /// Pulses in a row off the pulse line or off the phase.
    misfits: u32,
    /// The stamps of the newest of those (at most [`MOVED`]): the first
    /// points of the line that starts over if the run reaches
    /// `Tuning::ref_jump_run`.
    moved: [i64; MOVED],
    /// Pulses in a row numbered after the first sample whose arrival floor
    /// is not before them, or two or more before it.
    astray: u32,
    /// Mean deviation of the pulses' place on the floor from their phase,
    /// in periods.
    dev: f64,
    /// The young pulse fit's summary (see [`LineFit::young_summary`]) as
    /// of its last pulse; `None` once it has statistics.
    young: Option<YoungSummary>,
    /// The pulse line's forgetting of a rate that wanders: the test of
    /// the arrival line's (`Wander::forget`) on the pulses' history.
    halves: Halves,
}

impl Pulses {
    /// No pulse yet, for a fit of at most `cap` pulses.
    pub fn new(cap: usize, cfg: &EstimatorConfig) -> Self {
        Pulses {
            refs: LineFit::for_pulses(cap, cfg.tuning),
            deferred: None,
            offset: None,
            last_n: None,
            phase: None,
            jumps: 0,
            misfits: 0,
            moved: [0; MOVED],
            astray: 0,
            dev: cfg.tuning.ref_dev_start,
            young: None,
            halves: Halves::new(cap),
        }
    }

    /// Forgets every pulse, as in a new estimator (keeps the fit's buffers).
    #[cfg(test)]
    pub fn reset(&mut self, cfg: &EstimatorConfig) {
        self.restart(cfg);
        (self.deferred, self.jumps, self.misfits) = (None, 0, 0);
    }

    /// Forgets the pulses and their offset (a restart of the arrival fit);
    /// a deferred pulse stays.
    pub fn restart(&mut self, cfg: &EstimatorConfig) {
        self.forget(cfg);
        self.offset = None;
        self.last_n = None;
    }

    /// Numbers the pulse stamped `h` against the samples (by the pulse
    /// line, else by the pulses' phase on the arrival floor, else by the
    /// floor alone), rejects glitches and adds it to the pulse fit. Before
    /// the arrival fit has statistics the pulse is numbered by the pulse
    /// line alone if there is one (see [`Self::place_on_line`]), else
    /// waits (the latest one).
    pub fn place(
        &mut self,
        h: i64,
        fit: &LineFit,
        cfg: &EstimatorConfig,
        max_span: i64,
        st: &mut EstimatorStatus,
    ) -> ReferenceOutcome {
        let (Some(floor), true) = (fit.floor(), fit.len() >= cfg.tuning.min_stats_points) else {
            if let Some(outcome) = self.place_on_line(h, fit, cfg, max_span, st) {
                return outcome;
            }
            // Only the latest pulse waits: one it replaces is dropped, and
            // counted as rejected.
            if self.deferred.replace(h).is_some() {
                st.references_rejected += 1;
            }
            return ReferenceOutcome::Deferred;
        };
        let p = floor.slope;
        // Without a pulse line: the first sample whose arrival floor, less
        // the known minimum latency, is not before the pulse (a tenth of a
        // period of slack for a pulse stamped a little after its sample).
        let t = cfg.tuning;
        let first_after = |x: f64| (x - t.ref_first_slack).ceil();
        let xf = floor.solve(h.saturating_add(cfg.min_latency.as_nanos()));
        // Its place on the floor must keep the pulses' phase (up to whole
        // periods: renumberings, `follow_samples`) within six times its
        // mean deviation so far (3 % to 25 % of a period).
        let phase_tolerance = (t.ref_phase_sd * self.dev).clamp(t.ref_phase_min, t.ref_phase_max);
        let off_phase = |x: f64| match (xf, self.phase) {
            (Some(xf), Some(phase)) => {
                let d = xf - x - phase;
                (d - d.round()).abs() > phase_tolerance
            }
            _ => false,
        };
        let line = self.pulse_line(fit);
        let candidate = match (line, xf, self.phase) {
            (Some(l), ..) => self.on_line(l, h, p, &t),
            // No line yet: by the pulses' phase on the floor (a jittery
            // pulse is numbered like the ones before it), the first one by
            // the floor alone.
            (None, Some(xf), Some(phase)) => Some(((xf - phase).round(), false)),
            (None, xf, _) => xf.map(|xf| (first_after(xf), false)),
        };
        // A pulse on a pulse line with statistics is judged by that line
        // alone: the arrival floor its phase is measured on moves with the
        // samples' jitter (Gaussian delays of 0.4 periods put three pulses
        // in a row off phase, and the line that followed restarted 2-4 ms
        // off: `family_draws.py --seed 11 --kinds reference`, 1114016), and
        // a renumbering of the samples is followed below
        // (`follow_samples`).
        let by_line = line.is_some() && self.refs.stats_valid();
        let mut restarted = None;
        let x = match candidate {
            Some((x, misfit)) if misfit || (!by_line && off_phase(x)) => {
                // A glitch is rejected, but `Tuning::ref_jump_run` in a row mean
                // the pulses moved (a step of their clock): the line and
                // the phase start over from the floor.
                self.misfits += 1;
                if self.misfits < cfg.tuning.ref_jump_run {
                    self.note_moved(h);
                    st.references_rejected += 1;
                    return ReferenceOutcome::Rejected;
                }
                restarted = Some(self.misfits);
                self.forget(cfg);
                xf.map(first_after)
            }
            Some((x, _)) if line.is_some() => Some(self.follow_samples(x, xf, cfg, st)),
            other => other.map(|(x, _)| x),
        };
        self.misfits = 0;
        // Numbered after the first sample whose arrival floor is not before
        // it: the pulses were numbered a sample late from a first pulse
        // stamped unusually late (a pulse's own delay can exceed the
        // samples' latency). With the right numbers no pulse lies more than
        // 0.9 of a period before its sample's floor, nor a period after it:
        // a pulse numbered two or more before the first sample whose floor
        // is not before it was matched to an older sample (the pulses
        // followed a renumbering of the samples that a later revision
        // undid: 2 periods off for the last 1,600 samples of
        // `family_draws.py --seed 23 --kinds reference --first 131
        // --draws 1`, 5.8 x Rock's RMS). `Tuning::ref_jump_run` in a row
        // renumber the pulses from this one.
        let x = match (x, xf) {
            (Some(x), Some(xf)) if first_after(xf) < x || x < first_after(xf) - 1.0 => {
                self.astray += 1;
                if self.astray < cfg.tuning.ref_jump_run {
                    Some(x)
                } else {
                    self.forget(cfg);
                    st.references_renumbered += 1;
                    Some(first_after(xf))
                }
            }
            (x, _) => {
                self.astray = 0;
                x
            }
        };
        let n = match x {
            Some(x) if x.abs() < 9.0e18 => x as i64,
            _ => {
                st.references_rejected += 1;
                return ReferenceOutcome::Rejected;
            }
        };
        if let Some(run) = restarted.filter(|_| self.refs.len() == 0) {
            self.start_with_run(run, n, h, p, max_span);
        }
        let outcome = self.add(n, h, fit, cfg, max_span, st);
        if outcome != ReferenceOutcome::Used(n) {
            return outcome;
        }
        if let Some(f) = floor.eval(n) {
            self.offset = Some((f - h) as f64);
        }
        if let Some(d) = xf.map(|xf| xf - n as f64) {
            match self.phase {
                None => self.phase = Some(d),
                Some(phase) if (d - phase).abs() < 0.5 => {
                    self.dev += ((d - phase).abs() - self.dev) / t.ref_phase_gain;
                    self.phase = Some(phase + (d - phase) / t.ref_phase_gain);
                }
                Some(_) => {}
            }
        }
        ReferenceOutcome::Used(n)
    }

    /// Starts the pulse line over with the run of `run` pulses off the old
    /// one that the pulse `n` stamped `h` ends (the `run` − 1 before it, at
    /// most [`MOVED`] − 1), each numbered back from `n` by
    /// the periods `p` between their stamps: the pulses moved together (a
    /// period step), so the new line has its slope at once. From the one
    /// pulse alone, the estimates fell back on the arrival floor, still on
    /// the period before the step: 2.3 ms off on the third sample of a
    /// 3.3 % step (`family_draws.py --seed 13 --kinds mixed --first 92
    /// --draws 1`). They stay counted as rejected.
    fn start_with_run(&mut self, run: u32, n: i64, h: i64, p: f64, max_span: i64) {
        let run = (run.saturating_sub(1) as usize).min(MOVED - 1);
        let mut last = i64::MIN;
        for &hi in &self.moved[MOVED - run..] {
            // (Only pulses of the run: a few periods before this one.)
            let back = ((h - hi) as f64 / p).round();
            if !(1.0..=(4 * MOVED) as f64).contains(&back) {
                continue;
            }
            let ni = n - back as i64;
            if ni > last
                && self.refs.push(
                    Point {
                        freed: false,
                        n: ni,
                        q: hi,
                        queued: false,
                    },
                    max_span,
                )
            {
                last = ni;
            }
        }
    }

    /// Keeps the stamp `h` of a pulse off the line (see `Pulses::moved`).
    fn note_moved(&mut self, h: i64) {
        self.moved.rotate_left(1);
        self.moved[MOVED - 1] = h;
    }

    /// The number the pulse line `l` gives the pulse stamped `h`, and
    /// whether the pulse is a glitch: further off the line than its spread
    /// allows (ten standard deviations once the line has statistics, at
    /// least a hundredth and at most a quarter of a period `p`).
    ///
    /// A floor fit of the pulses (see `LineFit::for_pulses`) numbers and
    /// judges a pulse from the middle of their spread above it (the mean
    /// residual), as a least-squares fit does from its line: pulses with a
    /// wide symmetric jitter lie up to half a period above their floor
    /// before the fit enters least squares. Below the floor no pulse lies
    /// by more than the floor's own error (one that did would bend the
    /// floor down to it): there the tolerance is the mean residual (at
    /// least 10⁻⁴ of a period).
    fn on_line(&self, l: Line, h: i64, p: f64, t: &Tuning) -> Option<(f64, bool)> {
        let tolerance = if self.refs.stats_valid() {
            (t.ref_glitch_sd * self.refs.std_r).clamp(t.ref_glitch_min * p, t.ref_glitch_max * p)
        } else {
            t.ref_glitch_max * p
        };
        let (below, centre) = if self.refs.stats_valid() && self.refs.mode == FitMode::Hull {
            (
                self.refs.mean_r.max(t.ref_below_min * p).min(tolerance),
                self.refs.mean_r,
            )
        } else {
            (tolerance, 0.0)
        };
        l.solve(h.saturating_sub(round(centre)))
            .map(f64::round)
            .filter(|x| x.abs() < 9.0e18)
            .map(|x| {
                let r = l.residual(x as i64, h);
                (x, r - centre > tolerance || r < -below)
            })
    }

    /// A pulse while the arrival fit is too young to place it (a change
    /// just cut its history): numbered by the pulse line alone, judged as
    /// on it ([`Self::on_line`]), and added to the pulse fit, so that the
    /// pulses go on locking the estimates while the arrivals' line is
    /// learned again. A deferral there left the estimates on a pulse line
    /// of the few pulses since a period step for as long as the arrival
    /// fit took to reach its statistics: 0.3 ms off after 20 samples of a
    /// 3.3 % step (`family_draws.py --seed 13 --kinds mixed --first 92
    /// --draws 1`: 3.0 x Rock's RMS). `None` without a pulse line (the
    /// pulse then waits).
    fn place_on_line(
        &mut self,
        h: i64,
        fit: &LineFit,
        cfg: &EstimatorConfig,
        max_span: i64,
        st: &mut EstimatorStatus,
    ) -> Option<ReferenceOutcome> {
        let l = self.pulse_line(fit)?;
        let p = l.slope;
        if !(p > 0.0 && p.is_finite()) {
            return None;
        }
        let (x, misfit) = self.on_line(l, h, p, &cfg.tuning)?;
        let n = x as i64;
        if misfit {
            // A run of misfits: the pulses moved; the line starts over
            // from the arrival floor once there is one.
            self.misfits += 1;
            if self.misfits >= cfg.tuning.ref_jump_run {
                self.forget(cfg);
                return None;
            }
            self.note_moved(h);
            st.references_rejected += 1;
            return Some(ReferenceOutcome::Rejected);
        }
        self.misfits = 0;
        Some(self.add(n, h, fit, cfg, max_span, st))
    }

    /// Adds pulse `n` stamped `h` to the pulse fit (and forgets the older
    /// half of a history that bends), once numbered.
    fn add(
        &mut self,
        n: i64,
        h: i64,
        fit: &LineFit,
        cfg: &EstimatorConfig,
        max_span: i64,
        st: &mut EstimatorStatus,
    ) -> ReferenceOutcome {
        if !self.refs.push(
            Point {
                freed: false,
                n,
                q: h,
                queued: false,
            },
            max_span,
        ) {
            st.references_rejected += 1;
            return ReferenceOutcome::Rejected;
        }
        // A rate that wanders bends the pulses' history as it does the
        // arrivals': the older half of a history whose halves' slopes
        // differ beyond their jitter is forgotten. Pulses jitter far less
        // than arrivals, so theirs shows a wander the arrivals' cannot
        // (a 63 ppm wander over 165 s under pulses of 17 us: the pulse
        // line over 33 s was 10 x Rock's RMS, `family_draws.py --seed 13
        // --kinds mixed --first 65 --draws 1`).
        let p = fit.floor().map_or(0.0, |f| f.slope);
        let p = if p > 0.0 {
            p
        } else {
            self.refs.own_line().map_or(0.0, |l| l.slope)
        };
        if let Some(keep) = self.halves.forget(
            self.refs.history_log(),
            p,
            cfg.window.as_nanos(),
            &cfg.tuning,
        ) {
            self.refs.forget_oldest(keep);
        }
        self.summarise(fit);
        self.last_n = Some(n);
        st.references_used += 1;
        ReferenceOutcome::Used(n)
    }

    /// Forgets the pulse line and the pulses' offset on the arrival floor
    /// (a restart, a history that mixed numberings, pulses that moved or
    /// were numbered late).
    pub fn forget(&mut self, cfg: &EstimatorConfig) {
        self.refs.clear();
        self.halves = self.halves.cleared();
        self.young = None;
        self.forget_phase(cfg);
    }

    /// Forgets the pulses' offset on the arrival floor and its spread (a
    /// restart, a renumbering of the samples, or pulses that moved).
    fn forget_phase(&mut self, cfg: &EstimatorConfig) {
        self.phase = None;
        self.dev = cfg.tuning.ref_dev_start;
        self.astray = 0;
    }

    /// The pulse number `x` given by the pulse line, moved by the whole
    /// periods the samples' numbering has moved against the pulses: the
    /// pulse's place on the arrival floor (`xf`, fractional) keeps a steady
    /// offset from its number until the samples are renumbered (a loss
    /// wrongly inferred or announced); when that offset has jumped by more
    /// than half a period on `Tuning::ref_jump_run` pulses in a row, the pulses are
    /// renumbered alike and the pulse line restarts.
    fn follow_samples(
        &mut self,
        x: f64,
        xf: Option<f64>,
        cfg: &EstimatorConfig,
        st: &mut EstimatorStatus,
    ) -> f64 {
        let Some(d) = xf.map(|xf| xf - x) else {
            return x;
        };
        let Some(phase) = self.phase else {
            return x;
        };
        let jump = (d - phase).round();
        if jump == 0.0 {
            self.jumps = 0;
            return x;
        }
        self.jumps += 1;
        if self.jumps < cfg.tuning.ref_jump_run {
            return x;
        }
        self.jumps = 0;
        self.refs.clear();
        self.halves = self.halves.cleared();
        st.references_renumbered += 1;
        x + jump
    }

    /// The line through the pulses (two or more), with the
    /// precision-weighted mean of the pulse fit's slope and the arrival
    /// fit's (see [`Self::mixed_slope`]). Its level: once the pulse fit has
    /// statistics, its own line (floor or least squares, whichever their
    /// jitter asks for) at the pulses' mean number; before that, the floor
    /// of the mixed slope under all but an eighth of the pulses (see
    /// [`Self::summarise`]). While the arrival fit is young the
    /// pulses' own line stands.
    fn pulse_line(&self, fit: &LineFit) -> Option<Line> {
        if self.refs.len() < 2 {
            return None;
        }
        let own = self.refs.own_line()?;
        let line = match self.young {
            Some(y) => {
                let Some(slope) = self.mixed_slope(fit, own.slope, y.precision) else {
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
                let Some(slope) = self.mixed_slope(fit, own.slope, wp) else {
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
    /// fit has statistics, while the two agree (`Tuning::ref_mix_sd`).
    /// Both measure the sensor's period on the host clock: sparse pulses
    /// (a 1 Hz PPS on a 100 Hz stream) far worse than the samples'
    /// arrivals, while a pulse on every sample with a small jitter
    /// outweighs them.
    fn mixed_slope(&self, fit: &LineFit, pulses: f64, wp: f64) -> Option<f64> {
        let wa = fit
            .slope_precision()
            .filter(|w| w.is_finite() && *w > 0.0)?;
        let arrival = fit.active().filter(|l| l.slope > 0.0)?.slope;
        // Two slopes further apart than their errors allow measure two
        // periods: the arrival line still on the one before a step the
        // pulses already follow. The pulses' own then stands.
        let apart =
            (arrival - pulses).abs() * (wa * wp / (wa + wp)).sqrt() > self.refs.t.ref_mix_sd;
        Some(if wp.is_finite() && !apart {
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
    pub fn summarise(&mut self, fit: &LineFit) {
        let own = self.refs.own_line().map(|l| l.slope);
        self.young = self
            .refs
            .young_summary(|wp| own.map(|s| self.mixed_slope(fit, s, wp).unwrap_or(s)));
    }

    /// The reference line's value at `n`, while references are recent.
    pub fn estimate(
        &self,
        fit: &LineFit,
        cfg: &EstimatorConfig,
        n: i64,
        q: i64,
        period: Option<f64>,
    ) -> Option<i64> {
        if self.refs.len() < 2 {
            return None;
        }
        let last = self.last_n?;
        let p = period?;
        let recent = (n.saturating_sub(last) as f64) * p <= cfg.window.as_nanos() as f64;
        if !recent {
            return None;
        }
        let v = self.pulse_line(fit)?.eval(n)?;
        // A pulse cannot follow its sample's arrival: if it would, the
        // pulses are matched to the wrong samples; use the arrivals.
        (v <= q.saturating_add((cfg.tuning.ref_after_arrival * p) as i64)).then_some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::Pulses;
    use crate::TimeDelta;
    use crate::estimator::fit::{LineFit, Point};
    use crate::estimator::{Estimator, EstimatorConfig, EstimatorStatus, ReferenceOutcome};

    /// The tests' period and first acquisition (ns).
    const P: i64 = 10_000_000;
    const T0: i64 = 1_000_000_000_000;

    /// A 5 s window at period [`P`], a fresh status, and an empty stage.
    fn stage() -> (EstimatorConfig, EstimatorStatus, Pulses) {
        let cfg =
            EstimatorConfig::new(TimeDelta::from_secs(5)).with_period(TimeDelta::from_nanos(P));
        let st = Estimator::new(cfg).unwrap().status();
        let pulses = Pulses::new(256, &cfg);
        (cfg, st, pulses)
    }

    /// Adds samples `ns` arriving at `q(n)` to `fit`.
    fn push_samples(fit: &mut LineFit, ns: std::ops::Range<i64>, q: impl Fn(i64) -> i64) {
        for n in ns {
            let point = Point {
                freed: false,
                n,
                q: q(n),
                queued: false,
            };
            assert!(fit.push(point, i64::MAX));
        }
    }

    /// A pulse waits for the arrival fit; then each is numbered against
    /// the samples, their line gives the estimates and the latency, and
    /// a reset forgets them.
    #[test]
    fn the_pulse_stage_numbers_pulses_gives_their_line_and_resets() {
        let (p, t0) = (P, T0);
        let (cfg, mut st, mut pulses) = stage();
        let mut fit = LineFit::new(256, cfg.tuning);
        let place = |pulses: &mut Pulses, fit: &LineFit, st: &mut _, h| {
            pulses.place(h, fit, &cfg, i64::MAX, st)
        };
        assert_eq!(
            place(&mut pulses, &fit, &mut st, t0),
            ReferenceOutcome::Deferred
        );
        assert_eq!(pulses.deferred, Some(t0));
        // Samples 1 ms (plus up to 4 us) after their acquisition; pulses
        // 30 us after it.
        push_samples(&mut fit, 0..100, |n| {
            t0 + n * p + 1_000_000 + (n * 7919 % 5) * 1_000
        });
        for n in 10..20 {
            let h = t0 + n * p + 30_000;
            assert_eq!(
                place(&mut pulses, &fit, &mut st, h),
                ReferenceOutcome::Used(n)
            );
        }
        assert_eq!(st.references_used, 10);
        let at = |pulses: &Pulses, n: i64| {
            pulses.estimate(&fit, &cfg, n, t0 + n * p + 1_000_000, Some(p as f64))
        };
        let e = at(&pulses, 25).expect("the pulse line gives the estimate");
        assert!((e - (t0 + 25 * p + 30_000)).abs() < 5_000, "{e}");
        // The floor lies about 0.97 ms after the pulses.
        let offset = pulses.offset.expect("a latency from the pulses");
        assert!((offset - 970_000.0).abs() < 5_000.0, "{offset}");
        pulses.reset(&cfg);
        assert_eq!(at(&pulses, 25), None);
        assert_eq!(
            (pulses.offset, pulses.last_n, pulses.deferred),
            (None, None, None)
        );
        assert_eq!(pulses.refs.len(), 0);
    }

    /// Pulses matched to samples two numbers before theirs are renumbered
    /// to the first sample whose floor is not before them. The arrival
    /// floor here moves up by 0.3 of a period at a time (samples numbered
    /// anew), too little for the pulses' phase on it to jump
    /// (`follow_samples`), which follows it instead: after two periods the
    /// pulse line still numbers each pulse as before, two before the
    /// sample it was stamped for. Three such pulses in a row renumber the
    /// pulses (`Tuning::ref_jump_run`).
    #[test]
    fn pulses_two_numbers_behind_their_samples_are_renumbered() {
        let (p, t0) = (P, T0);
        let (cfg, mut st, mut pulses) = stage();
        // Samples 1 ms after their acquisition, numbered `shift` periods on.
        let fit_at = |shift: f64| {
            let mut fit = LineFit::new(256, cfg.tuning);
            push_samples(&mut fit, 0..400, |n| {
                t0 + n * p + 1_000_000 - (shift * p as f64) as i64
            });
            fit
        };
        let mut k = 0;
        let mut last = None;
        for step in 0..=7 {
            let shift = 0.3 * f64::from(step);
            let fit = fit_at(shift);
            // (The first 40 pulses give the pulse line its statistics: it
            // then numbers them alone.)
            for _ in 0..if step == 0 { 40 } else { 10 } {
                let h = t0 + k * p + 30_000;
                last = Some((shift, pulses.place(h, &fit, &cfg, i64::MAX, &mut st)));
                k += 1;
            }
        }
        // Shifted by 2.1 periods: the pulse of acquisition k - 1 belongs to
        // the sample numbered k + 1 (its floor 0.97 ms after the pulse is
        // now 0.1 period before it, within the slack).
        assert_eq!(last, Some((2.1, ReferenceOutcome::Used(k + 1))));
        assert!(st.references_renumbered >= 1, "{st:?}");
    }
}
