//! Maximum-likelihood clock line for a quantised arrival clock.
//!
//! When the host stamps arrivals on a coarse tick `τ` (the TUM RGB-D rgb
//! stamps: 4 ms), the arrival `A` of a sample is the first tick at or after
//! the moment it was ready, `t + L + E`, with `t` its acquisition time on the
//! clock line, `L` a minimum latency and `E ≥ 0` a random delay. So with
//! `x = A − (line value)`, the delay lies in `(x − τ, x]`, and for an
//! exponential delay of mean `μ` the likelihood of one sample is
//!
//! ```text
//! P(x) = F(x) − F(x − τ),   F(y) = 1 − exp(−y/μ) for y > 0, else 0
//!      = 1 − exp(−x/μ)                     for 0 < x ≤ τ
//!      = exp(−x/μ)·(exp(τ/μ) − 1)          for x > τ
//! ```
//!
//! and zero for `x ≤ 0` (no sample arrives before it is ready: the floor
//! constraint of the one-way LP). `log P` is concave in `x`, hence in the
//! line's offset and slope, so a damped Newton iteration from the previous
//! solution converges to the unique maximum. With `τ → 0` this is the
//! shifted-exponential likelihood whose maximiser is the one-way LP (lower
//! hull) line; with a coarse tick it uses what the hull cannot, how often
//! each sample reached its first possible tick. Far samples contribute a
//! constant pull (`−x/μ`), so stalls weigh no more than in the LP.
//!
//! The mean `μ` is re-estimated after each fit by one EM step (the mean of
//! the conditional expectations of the delays given their intervals).
//!
//! When the sample period is nearly commensurate with the tick (30 Hz on a
//! 4 ms tick: three phases that barely move), the likelihood is nearly flat
//! along the slope; a Gaussian prior on the period around the expected one
//! (the relative tolerance of two crystals, see `Tuning::quant_prior_ppm`) keeps the
//! slope from wandering there and is outweighed by the data as the phases
//! move against the tick. A crystal further off than the prior allows (a
//! Kinect 195 ppm slow) would be held near nominal for tens of seconds: the
//! prior is dropped once the data contradict it (see
//! `Tuning::quant_prior_conflict_sd`).
//!
//! A sensor clocked from the host's timebase (a triggered camera) runs at
//! exactly its expected period on the host clock, and one whose crystal is
//! within a few ppm of it cannot be told apart from it for tens of seconds:
//! its phases barely move against the tick. Once the output is anchored
//! (below), while the data cannot tell their period from the expected one,
//! the output takes the expected period itself: its error then stays level
//! instead of carrying the slope's noise (as the one-way LP's does on such
//! a grid, whose slope is the grid's). The test is on the data's evidence,
//! not on the fitted slope the prior draws in: the slope the data would fit
//! alone (the prior's pull undone, in the Gaussian approximation: the
//! fitted deviation times `1 + σ²/σp²`) within `Tuning::quant_lock_sd` of its standard
//! deviation `σ` (from the likelihood's curvature) of the expected period.
//! So a sensor tens of ppm off is let go as soon as its data show it.
//!
//! The output is not the fitted line itself. The fit's offset is known only
//! to a fraction of the tick (tens of µs with a 4 ms tick), and it moves by
//! that much as samples come and go; an estimate that followed it would
//! carry that wander, while a constant error is only an unobservable
//! latency. So the output is anchored to its own past: it takes the fit's
//! slope (or the expected period, locked), and its offset is the fit's plus
//! the mean gap between the past outputs and the current fit at their
//! sample numbers (an exponentially weighted centroid, [`Anchor`], that
//! forgets over twice the history). The current fit is the best knowledge
//! of where the past outputs were wrong; the new output sits where they sat
//! on average, so the error stays level and the fit's offset error cancels.
//! What remains is the current slope's error times the distance to the
//! centroid, instead of the integral of every earlier slope's error that an
//! output merely holding its offset would carry. The output follows the fit
//! directly while the history is young (`Tuning::quant_anchor_min_points`) or, before
//! the anchor exists, while the fitted period is more than three prior
//! standard deviations from the expected one; the anchor is dropped after a
//! detected change ([`QuantFit::resync`]) and when the gap exceeds half a
//! tick (more than the offset's uncertainty: a change).
//!
//! Every refit costs O(history) and allocates nothing; it runs only for
//! arrival clocks detected as quantised. On a long history it runs only
//! every `len / `Tuning::quant_refit_points`` samples, so the work per update stays bounded
//! whatever the rate and the history (a 400 Hz IMU fills the default
//! 8192-point history in 20 s); the estimates in between extend the output
//! line, which moves little from one sample to the next on such a history.

use super::fit::{Line, Point};
use super::history::History;
use super::tuning::Tuning;

/// Stage 4's view of the arrival clock: the gcd of the arrival gaps (its
/// tick, when coarse), and a host tick the arrivals lie near but not
/// exactly on (see `Estimator::note_gap` and `Estimator::soft_tick`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArrivalClock {
    /// The gcd of the arrival gaps so far (0 before the first gap).
    pub tick: i64,
    /// Arrival gaps in that gcd.
    pub gaps: u32,
    /// The gcd of the arrival gaps up to the stamps' error (see
    /// [`near_gcd`]; 0 before the first gap): the clock's resolution,
    /// which spreads the gaps whether or not the fit takes the arrivals as
    /// quantised.
    pub near_tick: i64,
    /// Arrival gaps in that gcd.
    pub near_gaps: u32,
    /// A host tick the arrivals lie near but not exactly on, and an
    /// arrival time on its grid.
    pub soft_tick: Option<(f64, i64)>,
    /// Arrivals left before the phases are tried on the host ticks (0: not
    /// waiting).
    pub soft_wait: u32,
    /// The number of the last sample before the gaps' exact gcd fell: the
    /// phases tried are those of the samples after it.
    pub soft_from: i64,
}

impl Default for ArrivalClock {
    fn default() -> Self {
        ArrivalClock {
            tick: 0,
            gaps: 0,
            near_tick: 0,
            near_gaps: 0,
            soft_tick: None,
            soft_wait: 0,
            soft_from: i64::MIN,
        }
    }
}

impl ArrivalClock {
    /// The clock's resolution in ns: the coarsest of the gaps' gcd (exact,
    /// or up to the stamps' error) and a host tick the arrivals gather on
    /// (0 before the first gap). A gap
    /// read on this clock is off the true one by less than this.
    pub fn resolution(&self) -> f64 {
        (self.tick.max(self.near_tick) as f64).max(self.soft_tick.map_or(0.0, |(tick, _)| tick))
    }

    /// Forgets the tick (a new estimator, or a restart of the fit).
    pub fn reset(&mut self) {
        *self = ArrivalClock::default();
    }
}

/// The greatest common divisor of a clock's tick `a` (0 before the first
/// gap) and an arrival gap `b`, in ns, up to the stamps' error: a stamp
/// may lie up to `Tuning::tick_stamp_error_ns` off its tick (a µs clock, an
/// `f64` of ns), so a gap of `m` ticks may miss `m` times the tick by
/// `m + 1` times that. Euclid's algorithm, where a remainder within that
/// of a multiple counts as none, while that bound is below
/// `Tuning::tick_stamp_share` of the candidate tick (a smaller candidate
/// carries no such evidence: the exact algorithm goes on, and gaps that
/// share no tick fall to a fine one).
pub(crate) fn near_gcd(a: u64, b: u64, t: &Tuning) -> u64 {
    let (mut x, mut y) = (a.max(b), a.min(b));
    while y > 0 {
        let r = x % y;
        let tol = (x / y + 1) as f64 * t.tick_stamp_error_ns;
        if tol <= t.tick_stamp_share * y as f64 && (r.min(y - r) as f64) <= tol {
            return y;
        }
        (x, y) = (y, r);
    }
    x
}

/// Density of residual `r` (ns) above the floor for a sample on time on an
/// arrival clock of tick `tick`: the wait for the next tick, up to a whole
/// tick and about uniform (the phases go round), then the delay,
/// exponential of mean `mu` (at least `least`). Flat over the first tick,
/// then falling: a sample late by up to a tick is as likely on time as
/// right on the floor, where the exponential law of the residuals alone (a
/// mean of about half a tick) put a sample one tick of about a period late
/// after a loss (`Estimator::infer_number`).
pub(crate) fn on_time_density(r: f64, mu: f64, tick: f64, least: f64) -> f64 {
    let mu = mu.max(least);
    (-(r - tick).max(0.0) / mu).exp() / (mu + tick)
}

/// The state of the quantised-clock fit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QuantFit {
    /// The current fitted line (absolute `n0`, `q0`), if fitted.
    fitted: Option<Line>,
    /// The output line: the fit's slope, the offset anchored to the past
    /// outputs (see the module documentation).
    out: Option<Line>,
    /// The weighted centroid of the past outputs, once the output is
    /// anchored.
    anchor: Option<Anchor>,
    /// Mean of the exponential delay above the line, ns.
    mu: f64,
    /// The newest sample number of the last refit.
    refit_n: i64,
    /// History points refitted over, summed over every refit (the work
    /// done, for tests).
    work: u64,
    /// The data contradicted the prior (see `Tuning::quant_prior_conflict_sd`).
    prior_dropped: bool,
    /// The tuning values (see [`Tuning`]).
    t: Tuning,
}

/// The exponentially weighted centroid of the past outputs, relative to the
/// latest output point (`out.n0`, its value).
#[derive(Debug, Clone, Copy)]
struct Anchor {
    /// Total weight (the latest output counts 1).
    w: f64,
    /// The centroid's sample number minus the latest output's (≤ 0).
    dn: f64,
    /// The centroid's output value minus the latest output's value, ns.
    dq: f64,
}

/// Log-likelihood, gradient and Hessian of a line.
#[derive(Debug, Clone, Copy, Default)]
struct Eval {
    f: f64,
    g0: f64,
    g1: f64,
    h00: f64,
    h01: f64,
    h11: f64,
    /// Samples counted.
    m: f64,
}

/// `(log P, d log P/dx, d² log P/dx²)` of one sample at residual `x`;
/// `far` is [`far_term`]`(tau, mu)`, the same for every sample of a pass.
#[inline]
fn terms(x: f64, tau: f64, mu: f64, far: f64) -> (f64, f64, f64) {
    if x <= 0.0 {
        return (f64::NEG_INFINITY, 0.0, 0.0);
    }
    if x <= tau {
        let e = (-x / mu).exp();
        let om = -(-x / mu).exp_m1();
        if om <= 0.0 {
            return (f64::NEG_INFINITY, 0.0, 0.0);
        }
        (om.ln(), e / (mu * om), -e / (mu * mu * om * om))
    } else {
        (-x / mu + far, -1.0 / mu, 0.0)
    }
}

/// `ln(exp(τ/μ) − 1)`, the constant part of `log P` beyond one tick.
fn far_term(tau: f64, mu: f64) -> f64 {
    (tau / mu).exp_m1().ln()
}

/// How far `slope` is from the expected period `p`, in ppm of `p`.
fn ppm_off(slope: f64, p: f64) -> f64 {
    (slope - p).abs() / p * 1e6
}

/// The prior's standard deviation on the slope, ns per sample, around the
/// expected period `p`.
fn prior_sd(p: f64, ppm: f64) -> f64 {
    p * ppm * 1e-6
}

/// Iterates the non-queued points (bursts carry no delay information).
fn free(pts: &History) -> impl Iterator<Item = &Point> {
    pts.iter().filter(|p| !p.queued)
}

/// How far the free points lie above `l` on average, beyond the lowest of
/// them (ns): the one-way LP's objective for the line moved down to touch
/// them. NaN without free points.
fn lift(pts: &History, l: &Line) -> f64 {
    let (sum, min, k) = free(pts).fold((0.0, f64::INFINITY, 0.0), |(s, m, k), p| {
        let r = l.residual(p.n, p.q);
        (s + r, m.min(r), k + 1.0)
    });
    sum / k - min
}

impl QuantFit {
    pub fn new(t: Tuning) -> Self {
        QuantFit {
            t,
            fitted: None,
            out: None,
            anchor: None,
            mu: 0.0,
            refit_n: i64::MIN,
            work: 0,
            prior_dropped: false,
        }
    }

    /// Forgets the fit and the output line.
    pub fn clear(&mut self) {
        self.fitted = None;
        self.out = None;
        self.anchor = None;
        self.prior_dropped = false;
    }

    /// Drops the anchor: the output follows the fit again until it is
    /// re-anchored (after a detected change the old outputs no longer tell
    /// where the new ones belong).
    pub fn resync(&mut self) {
        self.anchor = None;
    }

    /// The fitted line: every free sample arrives after it, by up to a
    /// tick plus its delay.
    pub fn fitted(&self) -> Option<Line> {
        self.fitted
    }

    /// The fitted mean of the exponential delay beyond the line (ns), 0
    /// before the first fit.
    pub fn delay_mean(&self) -> f64 {
        self.mu
    }

    /// The output line (the fit's slope, its offset anchored).
    pub fn line(&self) -> Option<Line> {
        self.out
    }

    /// How far sample `n` arriving at `q` lies above the fitted line, in
    /// excess of the tick `tau`, in fitted delay means: `(x − τ) / μ`. A
    /// sample's delay is at least `x − τ`, so for exponential delays this
    /// exceeds `k` with probability at most `e^−k`, whatever the phase of
    /// the sample against the tick (see `Estimator::commit`).
    pub fn excess(&self, n: i64, q: i64, tau: f64) -> Option<f64> {
        let x = self.fitted?.residual(n, q);
        let mu = self.mu.max(1e-3 * tau);
        x.is_finite().then(|| (x - tau) / mu)
    }

    /// History points refitted over so far, summed over every refit.
    #[cfg(test)]
    pub fn work(&self) -> u64 {
        self.work
    }

    /// Sets the output line at sample `n` after a refit on `n_free`
    /// samples: the fit's value plus the anchor's mean gap (the fit's value
    /// alone where there is no anchor yet or the gap exceeds half a tick),
    /// then adds the new output to the anchor.
    fn place_output(&mut self, fit: Line, n: i64, tau: f64, n_free: usize) {
        let Some(f) = fit.offset(n) else {
            self.out = None;
            self.anchor = None;
            return;
        };
        // The mean gap between the past outputs and the current fit, at the
        // anchor's centroid: its output value relative to the fit's `q0`,
        // at sample `o.n0 + dn` (`at`, relative to the fit's `n0`).
        let anchored = self.anchor.zip(self.out).and_then(|(a, o)| {
            let value = o.q0.checked_sub(fit.q0)? as f64 + o.c + a.dq;
            let at = o.n0.saturating_sub(fit.n0) as f64 + a.dn;
            let gap = value - (fit.c + fit.slope * at);
            (gap.is_finite() && gap.abs() <= 0.5 * tau).then_some((a, o.n0, value, gap))
        });
        let c = anchored.map_or(f, |(.., gap)| f + gap);
        // The new output, at (n, c), becomes the centroid's origin.
        let keep = 1.0 - 1.0 / (self.t.quant_anchor_memory * n_free.max(1) as f64);
        self.anchor = Some(match anchored {
            Some((a, n_prev, value, _)) => {
                // The new output stands for the samples since the last one
                // placed (one, unless refits are spaced out or samples lost).
                let k = n.saturating_sub(n_prev).clamp(1, i64::from(i32::MAX)) as i32;
                let w = keep.powi(k) * a.w;
                let total = w + f64::from(k);
                Anchor {
                    w: total,
                    dn: (a.dn + n_prev.saturating_sub(n) as f64) * w / total,
                    dq: (value - c) * w / total,
                }
            }
            None => Anchor {
                w: 1.0,
                dn: 0.0,
                dq: 0.0,
            },
        });
        self.out = Some(Line { n0: n, c, ..fit });
    }

    /// The log-likelihood (with the prior) of line `l` and its gradient
    /// and Hessian in (offset at `n0`, slope), in one pass.
    fn eval(
        pts: &History,
        l: &Line,
        tau: f64,
        mu: f64,
        prior: Option<(f64, f64)>,
        n0: i64,
    ) -> Eval {
        let mut e = Eval::default();
        let far = far_term(tau, mu);
        for p in free(pts) {
            let d = (p.n - n0) as f64;
            let (f, g, h) = terms(l.residual(p.n, p.q), tau, mu, far);
            if f == f64::NEG_INFINITY {
                e.f = f;
                return e;
            }
            // x = q − c − b·d: dx/dc = −1, dx/db = −d.
            e.f += f;
            e.g0 -= g;
            e.g1 -= g * d;
            e.h00 += h;
            e.h01 += h * d;
            e.h11 += h * d * d;
            e.m += 1.0;
        }
        if let Some((p, w)) = prior {
            e.f -= 0.5 * w * (l.slope - p) * (l.slope - p);
            e.g1 -= w * (l.slope - p);
            e.h11 -= w;
        }
        e
    }

    /// Refits on `pts` for an arrival tick `tau` (ns), starting from the
    /// previous line or else from `start` (any line of about the right
    /// slope); `period` is the expected period for the prior.
    pub fn refit(&mut self, pts: &History, tau: f64, start: Line, period: Option<f64>) {
        let (Some(first), Some(last)) = (pts.front(), pts.back()) else {
            self.clear();
            return;
        };
        if tau.is_nan() || tau <= 0.0 {
            self.clear();
            return;
        }
        // Bounded work per update: on a long history the line moves little
        // from one sample to the next, so it is refitted only every
        // `len / `Tuning::quant_refit_points`` samples (rounded up); the estimates in between
        // extend the output line.
        let every = pts.len().div_ceil(self.t.quant_refit_points) as i64;
        if self.fitted.is_some() && last.n.saturating_sub(self.refit_n) < every {
            return;
        }
        self.refit_n = last.n;
        self.work = self.work.saturating_add(pts.len() as u64);
        // Centre the parametrisation on the middle of the history so that
        // offset and slope are nearly uncorrelated.
        let n0 = first.n + (last.n - first.n) / 2;
        // The samples contradict a line they lie on average more than a
        // tick further above than above `start` (the floor or least
        // squares): its slope is off (a period step since it was fitted).
        // The likelihood's pull along the slope comes from the samples
        // near the line, and a line whose slope is far off has none: each
        // refit kept it, the prior holding it at the expected period (a
        // 0.8 % step of a 50 ms period on a 4 ms tick: 17 ms off within 40
        // samples; a 3.1 % step of 3.8 ms on a 4.4 ms tick, cut at once:
        // 31 ms off within 240 samples). Such a line is fitted afresh.
        let floor_lift = lift(pts, &start);
        let contradicted = |l: &Line| lift(pts, l) > floor_lift + tau;
        let kept = self
            .fitted
            .filter(|l| l.slope > 0.0 && l.slope.is_finite() && !contradicted(l));
        // A first fit starts at the expected period where there is one
        // that the samples do not contradict: the floor or least squares
        // over less than a turn of the samples' phase on the grid take
        // their slope from the grid (a 1.128 ms tick under a 1.155 ms
        // period turns every 42 samples), beyond the prior's gate, and the
        // likelihood, flat along the slope over so few samples, kept the
        // grid's slope.
        let expected = period.filter(|&p| p > 0.0 && p.is_finite() && !self.prior_dropped);
        let mut l = match (kept, expected.map(|p| Line { slope: p, ..start })) {
            (Some(l), _) => l,
            (None, Some(at_p)) if !contradicted(&at_p) => at_p,
            _ => start,
        };
        let Some(c0) = l.offset(n0) else {
            self.clear();
            return;
        };
        l = Line { n0, c: c0, ..l };
        // Feasible start: every sample strictly after the line.
        let (min_x, n_free) = free(pts).fold((f64::INFINITY, 0usize), |(m, k), p| {
            (m.min(l.residual(p.n, p.q)), k + 1)
        });
        if !min_x.is_finite() {
            self.clear();
            return;
        }
        if min_x <= 0.0 {
            l.c += min_x - 0.01 * tau;
        }
        if kept.is_none() {
            // First fit: the mean delay from the residuals above the
            // floor, less the mean quantisation (half a tick).
            let (mut sum, mut k) = (0.0f64, 0.0f64);
            for p in free(pts) {
                sum += l.residual(p.n, p.q);
                k += 1.0;
            }
            self.mu = (sum / k.max(1.0) - 0.5 * tau).max(0.05 * tau);
        }
        let rounds = if kept.is_none() { 5 } else { 1 };
        let mut slope_sd = f64::INFINITY;
        let prior = period.filter(|_| !self.prior_dropped);
        for _ in 0..rounds {
            slope_sd = self.round(pts, &mut l, tau, prior, n0, first.n, last.n);
        }
        self.fitted = (l.slope > 0.0 && l.slope.is_finite() && l.c.is_finite()).then_some(l);
        let Some(fit) = self.fitted else {
            self.clear();
            return;
        };
        // Anchor only on a slope the prior holds: the first fits, on a
        // second of samples, can be hundreds of ppm off. Once anchored, a
        // passing excursion of the fitted slope (one sample can move the
        // fit by a large part of the tick) does not unsettle the output.
        let held = period.is_some_and(|p| ppm_off(l.slope, p) < 3.0 * self.t.quant_prior_ppm);
        // Locked to the expected period: once anchored, while the data
        // cannot tell their own period from the expected one. The fitted
        // slope is the data's drawn towards the prior's centre; undone
        // (Gaussian approximation), the data's deviation is the fitted one
        // times `1 + σ²/σp²`.
        let data_off = |p: f64| match prior {
            Some(_) => {
                (fit.slope - p).abs()
                    * (1.0 + (slope_sd / prior_sd(p, self.t.quant_prior_ppm)).powi(2))
            }
            None => (fit.slope - p).abs(),
        };
        if let Some(p) = prior
            && n_free >= self.t.quant_prior_conflict_min_points
            && ppm_off(fit.slope, p) < self.t.quant_prior_gate_ppm
            && data_off(p)
                > self.t.quant_prior_conflict_sd
                    * slope_sd.hypot(prior_sd(p, self.t.quant_prior_ppm))
        {
            self.prior_dropped = true;
        }
        let lock = period.filter(|&p| {
            self.anchor.is_some()
                && ppm_off(fit.slope, p) < self.t.quant_prior_gate_ppm
                && data_off(p) < self.t.quant_lock_sd * slope_sd
        });
        if (held || self.anchor.is_some()) && n_free >= self.t.quant_anchor_min_points {
            let line = lock.map_or(fit, |p| Line { slope: p, ..fit });
            self.place_output(line, last.n, tau, n_free);
        } else {
            self.out = Some(fit);
            self.anchor = None;
        }
    }

    /// One round: Newton on the line at the current mean delay, then one EM
    /// step for the mean delay. Returns the slope's standard deviation from
    /// the curvature of the data's log-likelihood at the line found (the
    /// prior's curvature taken out; infinite where it is flat).
    #[allow(clippy::too_many_arguments)]
    fn round(
        &mut self,
        pts: &History,
        l: &mut Line,
        tau: f64,
        period: Option<f64>,
        n0: i64,
        first_n: i64,
        last_n: i64,
    ) -> f64 {
        let mu = self.mu.max(1e-3 * tau);
        let prior = period.and_then(|p| {
            (p > 0.0 && ppm_off(l.slope, p) < self.t.quant_prior_gate_ppm)
                .then(|| (p, 1.0 / prior_sd(p, self.t.quant_prior_ppm).powi(2)))
        });
        let span = ((last_n - first_n) as f64).max(1.0);
        let mut at = Self::eval(pts, l, tau, mu, prior, n0);
        for _ in 0..self.t.quant_max_newton {
            let Eval {
                f: f0,
                g0,
                g1,
                h00,
                h01,
                h11,
                m,
            } = at;
            // A little curvature keeps the step finite where only far
            // samples (linear terms) remain.
            let h00 = h00 - 1e-6 * m / (mu * mu);
            let h11 = h11 - 1e-6 * m * span * span / (mu * mu);
            let det = h00 * h11 - h01 * h01;
            if !f0.is_finite() || det.is_nan() || det <= 0.0 {
                break;
            }
            let dc = -(h11 * g0 - h01 * g1) / det;
            let db = -(h00 * g1 - h01 * g0) / det;
            let mut step = 1.0;
            let mut moved = false;
            while step > 1e-4 {
                let cand = Line {
                    c: l.c + step * dc,
                    slope: l.slope + step * db,
                    ..*l
                };
                let e = Self::eval(pts, &cand, tau, mu, prior, n0);
                if e.f >= f0 {
                    *l = cand;
                    at = e;
                    moved = true;
                    break;
                }
                step *= 0.5;
            }
            if !moved || (step * dc).abs() + (step * db * span).abs() < self.t.quant_newton_tol_ns {
                break;
            }
        }
        // One EM step for the mean delay: E[delay | it lies in (x − τ, x]].
        let (mut s, mut k) = (0.0, 0.0);
        for p in free(pts) {
            let x = l.residual(p.n, p.q);
            if x.is_nan() || x <= 0.0 {
                continue;
            }
            let lo = (x - tau).max(0.0);
            // exp(−0/μ) is exactly 1: most samples lie within a tick.
            let el = if lo > 0.0 { (-lo / mu).exp() } else { 1.0 };
            let eh = (-x / mu).exp();
            s += if el - eh > 1e-300 {
                mu + (lo * el - x * eh) / (el - eh)
            } else {
                lo
            };
            k += 1.0;
        }
        if k > 0.0 && s.is_finite() {
            self.mu = (s / k).clamp(1e-3 * tau, 1e3 * tau);
        }
        // The inverse of the data's information matrix, slope entry.
        let h11 = at.h11 + prior.map_or(0.0, |(_, w)| w);
        let det = at.h00 * h11 - at.h01 * at.h01;
        let var = -at.h00 / det;
        if at.f.is_finite() && det > 0.0 && var > 0.0 {
            var.sqrt()
        } else {
            f64::INFINITY
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Estimator, EstimatorConfig};
    use super::ArrivalClock;
    use crate::{TimeDelta, Timestamp};

    #[test]
    fn the_arrival_clock_stage_finds_a_coarse_tick_and_resets() {
        let cfg = EstimatorConfig::new(TimeDelta::from_secs(5))
            .with_period(TimeDelta::from_micros(2_500));
        let mut e = Estimator::new(cfg).unwrap();
        let t0 = 1_700_000_000_000_000_000i64;
        // A 400 Hz sensor read on a 1 ms host clock: arrivals on its grid.
        for k in 0..200i64 {
            let ready = t0 + k * 2_500_000 + 300_000;
            let q = (ready / 1_000_000 + 1) * 1_000_000;
            e.update(Timestamp::from_nanos(q)).unwrap();
        }
        assert_eq!(e.clock.tick, 1_000_000);
        assert_eq!(e.status().arrival_tick_ns, Some(1_000_000));
        e.clock.reset();
        assert_eq!(e.clock.tick, 0);
        assert_eq!(e.clock.soft_from, ArrivalClock::default().soft_from);
    }
}
