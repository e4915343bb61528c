//! A sensor whose rate wanders: a local tracker for when no line fits.
//!
//! Every other part of the estimator assumes a clock line: the sensor's
//! period is constant over the history, up to a drift of some ppm. Some
//! sensors break that. A camera with automatic exposure stretches its
//! frame period with the exposure (the live rig of `../shared/data/real`
//! wanders between 61 and 65 ms over seconds), and a spinning lidar's
//! period follows its motor. Their arrivals are close to their acquisition
//! times (the frame-to-frame jitter is a millisecond or less), but a line
//! over a 5 s history is off by tens of milliseconds, and so is every line
//! estimator (Rock's, the lower hull, Olson's): worse than the arrivals
//! themselves.
//!
//! The test. Second differences of the arrivals at lag `L`,
//! `D_L(n) = a(n+L) − 2a(n) + a(n−L)`, cancel any line. With white jitter
//! of variance `r` and a period that moves as a random walk of step
//! variance `q` (per sample),
//!
//! ```text
//! Var D_1 = q + 6r,      Var D_L = q (2L³ + L)/3 + 6r,
//! ```
//!
//! so on a line with any jitter (Gaussian, exponential, quantised) the two
//! spreads agree, while a wandering period inflates `D_L` by `L^{3/2}`.
//! Their spreads are compared over the newest [`RING`] committed samples
//! every [`CHECK_EVERY`] samples, both as root mean squares and as
//! medians (a sawtooth of delays, flat but for its wraps, has a median
//! second difference of zero; one disturbance of a jitter-free stream
//! touches `2L` differences at lag `L` but three at lag 1), leaving out
//! differences across a queued sample or a gap off its numbers (a stall's
//! edge, a loss not yet seen). The smaller of the two ratios is 1 on a
//! line; the root mean squares' stayed below 1.63 on 40 draws of each of
//! the twelve non-quantised scenario kinds (stalls, bursts, losses, a
//! period step, a wrong expected period), the medians' below 2.32 on 160;
//! it is 8-24 on the live rig's camera. At [`ENTER_RATIO`] or more on
//! [`ENTER_CHECKS`] tests in a row the stream is wandering, until the
//! ratio falls below [`LEAVE_RATIO`].
//!
//! The tracker. While wandering, the estimates come from a Kalman filter
//! on (arrival level, period) with exactly that model: the period a random
//! walk of variance `q`, the arrivals its level plus white noise of
//! variance `r`, both from the same two spreads. It is the optimal causal
//! estimator of that model: on a history that fits a line (`q → 0`) it
//! averages like a line, on a fast wander it follows the arrivals. A sample
//! later than its prediction by [`GATE_SD`] standard deviations (a stall,
//! a queued sample) is estimated at the prediction and not used; after
//! [`STEP_RUN`] samples in a row beyond the gate on the same side the
//! filter restarts at the arrival (the phase stepped: a frame longer than
//! the others). The line machinery goes on underneath (numbering, losses,
//! change detection), and takes the estimates back when the stream stops
//! wandering.
//!
//! Costs: one ring slot and a few multiplications per committed sample;
//! the test every [`CHECK_EVERY`] samples is two passes and two
//! selections over at most [`RING`] values, in a buffer allocated once.

/// Committed samples the test looks at (about 8 s of a 16 Hz camera).
pub(crate) const RING: usize = 128;
/// The longer lag of the test, in samples.
const LAG: usize = 16;
/// `(2L³ + L)/3`: `Var D_L` per unit of the period's step variance.
const LAG_GAIN: f64 = ((2 * LAG * LAG * LAG + LAG) as f64) / 3.0;
/// Committed samples between two tests.
const CHECK_EVERY: u32 = 32;
/// Second differences needed at each lag for a test.
const MIN_D1: usize = 64;
/// (see [`MIN_D1`]).
const MIN_DL: usize = 48;
/// The stream wanders once the ratio of the spreads reaches this on
/// [`ENTER_CHECKS`] tests in a row...
const ENTER_RATIO: f64 = 3.0;
/// (see [`ENTER_RATIO`]).
const ENTER_CHECKS: u32 = 2;
/// ... and no longer once it falls below this.
const LEAVE_RATIO: f64 = 2.0;
/// The smallest jitter spread the test believes, as a fraction of the
/// period: hardware stamps have none, and the ratio of two zeros says
/// nothing.
const FLOOR_FRAC: f64 = 1e-4;
/// A gap between two committed samples further than this (in periods)
/// from their numbers' distance keeps the second differences across it
/// out of the test.
const GAP_TOL: f64 = 0.5;
/// Median absolute value to standard deviation (Gaussian).
const MAD_SD: f64 = 1.0 / 0.674_5;
/// A sample later than its prediction by this many standard deviations of
/// the prediction is not used (a stall or a queued sample).
const GATE_SD: f64 = 4.0;
/// Samples in a row beyond the gate on the same side (later, or earlier,
/// than the prediction) after which the filter restarts at the arrival:
/// the clock's phase stepped (a frame longer than the others), which a
/// stall does not do for two samples with a period between them.
const STEP_RUN: u32 = 2;
/// A gap of more numbers than this restarts the filter.
const MAX_STEPS: i64 = 64;

/// The Kalman filter's state: the arrival level at sample `n` (as `at +
/// off`, ns), the period (ns) and their covariance.
#[derive(Debug, Clone, Copy)]
struct Kf {
    n: i64,
    at: i64,
    off: f64,
    period: f64,
    /// Covariance: level, level × period, period.
    c: [f64; 3],
    /// Samples in a row beyond the gate: later (positive) or earlier
    /// (negative) than the prediction.
    run: i32,
}

impl Kf {
    fn start(n: i64, q: i64, period: f64, r: f64) -> Self {
        let sp = 0.01 * period;
        Kf {
            n,
            at: q,
            off: 0.0,
            period,
            c: [r, 0.0, sp * sp],
            run: 0,
        }
    }

    /// The prediction for sample `n`: (level offset from `at`, covariance),
    /// or `None` for a number not after the state's or too far ahead.
    fn predict(&self, n: i64, q_var: f64) -> Option<(f64, [f64; 3])> {
        let k = n
            .checked_sub(self.n)
            .filter(|k| (1..=MAX_STEPS).contains(k))?;
        let (mut off, mut c) = (self.off, self.c);
        for _ in 0..k {
            // The period steps first, then the level moves by it.
            off += self.period;
            c = [
                c[0] + 2.0 * c[1] + c[2] + q_var,
                c[1] + c[2] + q_var,
                c[2] + q_var,
            ];
        }
        Some((off, c))
    }
}

/// The wander test and the local tracker (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct Wander {
    /// The newest committed samples: number, arrival, queued.
    ring: Vec<(i64, i64, bool)>,
    head: usize,
    since_check: u32,
    /// The second differences of a test (allocated once).
    scratch: Vec<f64>,
    /// The stream wanders: the estimates are the tracker's.
    pub active: bool,
    /// Tests in a row at or above [`ENTER_RATIO`].
    above: u32,
    /// Jitter variance and the period's step variance, ns².
    r: f64,
    q: f64,
    kf: Option<Kf>,
}

impl Wander {
    pub fn new() -> Self {
        Wander {
            ring: Vec::with_capacity(RING),
            head: 0,
            since_check: 0,
            scratch: Vec::with_capacity(RING),
            active: false,
            above: 0,
            r: 0.0,
            q: 0.0,
            kf: None,
        }
    }

    /// Forgets the samples and the tracker (the numbering changed, or the
    /// fit restarted).
    pub fn clear(&mut self) {
        self.ring.clear();
        self.head = 0;
        self.since_check = 0;
        self.active = false;
        self.above = 0;
        self.kf = None;
    }

    /// The ring's samples, oldest first.
    fn ordered(&self) -> impl Iterator<Item = &(i64, i64, bool)> {
        let (new, old) = self.ring.split_at(self.head.min(self.ring.len()));
        old.iter().chain(new)
    }

    /// A committed sample. Returns whether a test is due (call
    /// [`Self::check`] with the fit's period).
    pub fn push(&mut self, n: i64, q: i64, queued: bool) -> bool {
        if !self.ring.is_empty() {
            let (m, a, _) = self.newest();
            if n <= m || q < a {
                self.clear();
            }
        }
        if self.ring.len() < RING {
            self.ring.push((n, q, queued));
            self.head = self.ring.len() % RING;
        } else {
            self.ring[self.head] = (n, q, queued);
            self.head = (self.head + 1) % RING;
        }
        if self.active {
            self.track(n, q, queued);
        }
        self.since_check += 1;
        if self.since_check >= CHECK_EVERY && self.ring.len() == RING {
            self.since_check = 0;
            true
        } else {
            false
        }
    }

    fn newest(&self) -> (i64, i64, bool) {
        let i = if self.ring.len() < RING {
            self.ring.len() - 1
        } else {
            (self.head + RING - 1) % RING
        };
        self.ring[i]
    }

    /// Root mean square of the second differences at `lag` over the ring
    /// (points `lag` numbers apart, the first not queued, and no gap
    /// between them queued or off its numbers by [`GAP_TOL`] of a period:
    /// a stall's edge, or a loss the numbering has not seen yet), or
    /// `None` with fewer than `min`.
    fn spread(&mut self, lag: usize, min: usize, period: f64) -> Option<(f64, f64)> {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let at = |i: usize| self.ring[(self.head + i) % RING];
        // `bad[i]`: the gaps up to point `i` that break a difference.
        let mut bad = [0u16; RING];
        for i in 1..RING {
            let (a, b) = (at(i - 1), at(i));
            let off = (b.1 - a.1) as f64 - (b.0 - a.0) as f64 * period;
            bad[i] = bad[i - 1] + u16::from(off.abs() > GAP_TOL * period || b.2);
        }
        let lag_n = lag as i64;
        let mut sum = 0.0f64;
        for i in lag..RING - lag {
            let (a, b, c) = (at(i - lag), at(i), at(i + lag));
            if b.0 - a.0 == lag_n && c.0 - b.0 == lag_n && bad[i + lag] == bad[i - lag] && !a.2 {
                let d = (c.1 - b.1) as f64 - (b.1 - a.1) as f64;
                sum += d * d;
                buf.push(d.abs());
            }
        }
        let k = buf.len();
        let m = (k >= min).then(|| {
            let (_, med, _) = buf.select_nth_unstable_by(k / 2, f64::total_cmp);
            ((sum / k as f64).sqrt(), *med * MAD_SD)
        });
        self.scratch = buf;
        m
    }

    /// The test (see the module documentation); starts or stops the
    /// tracker. `period` is the fit's, `None` where the estimates have a
    /// better source (hardware references) or no period is known.
    pub fn check(&mut self, period: Option<f64>) {
        let Some(period) = period.filter(|&p| p > 0.0 && p.is_finite()) else {
            self.active = false;
            self.kf = None;
            return;
        };
        let (Some(s1), Some(sl)) = (
            self.spread(1, MIN_D1, period),
            self.spread(LAG, MIN_DL, period),
        ) else {
            return;
        };
        let floor = FLOOR_FRAC * period;
        // Both spreads must say so: the root mean squares (a sawtooth of
        // delays, flat but for its wraps, has a median second difference
        // of zero) and the medians (one disturbance of an otherwise
        // jitter-free stream touches `2L` differences at lag `L` but three
        // at lag 1).
        let ratio = (sl.0 / s1.0.max(floor)).min(sl.1 / s1.1.max(floor));
        let (s1, sl) = (s1.0, sl.0);
        let was = self.active;
        self.above = if ratio >= ENTER_RATIO {
            self.above.saturating_add(1)
        } else {
            0
        };
        self.active = if was {
            ratio >= LEAVE_RATIO
        } else {
            self.above >= ENTER_CHECKS
        };
        if !self.active {
            self.kf = None;
            return;
        }
        self.q = ((sl * sl - s1 * s1) / (LAG_GAIN - 1.0)).max(0.0);
        self.r = ((s1 * s1 - self.q) / 6.0).max(floor * floor);
        if !was || self.kf.is_none() {
            self.start_from_ring(period);
        }
    }

    /// Runs a fresh filter over the ring's samples.
    fn start_from_ring(&mut self, period: f64) {
        let Some(&(n0, q0, _)) = self.ordered().next() else {
            return;
        };
        self.kf = Some(Kf::start(n0, q0, period, self.r));
        for i in 1..self.ring.len() {
            let (n, q, queued) = self.ring[(self.head + i) % self.ring.len()];
            self.track(n, q, queued);
        }
    }

    /// The filter's verdict on sample `n` arriving at `q`: the prediction
    /// (level offset from `at`, covariance), the innovation, and the run
    /// of samples beyond the gate it makes (see [`Kf::run`]).
    fn verdict(&self, kf: &Kf, n: i64, q: i64) -> Option<(f64, [f64; 3], f64, i32)> {
        let (off, c) = kf.predict(n, self.q)?;
        let y = q.checked_sub(kf.at)? as f64;
        let gate = GATE_SD * (c[0] + self.r).sqrt();
        let nu = y - off;
        let run = if nu > gate {
            kf.run.max(0) + 1
        } else if nu < -gate {
            kf.run.min(0) - 1
        } else {
            0
        };
        Some((off, c, nu, run))
    }

    /// Feeds a committed sample to the filter.
    fn track(&mut self, n: i64, q: i64, queued: bool) {
        let Some(mut kf) = self.kf else {
            return;
        };
        let Some((off, c, nu, run)) = self.verdict(&kf, n, q) else {
            // A gap too long to bridge: start again here.
            self.kf = Some(Kf::start(n, q, kf.period, self.r));
            return;
        };
        if queued {
            return;
        }
        if run.unsigned_abs() >= STEP_RUN {
            self.kf = Some(Kf::start(n, q, kf.period, self.r));
            return;
        }
        kf.run = run;
        if run > 0 {
            // Late beyond the gate: a stall, or the first sample after a
            // step of the phase. Not used.
            self.kf = Some(kf);
            return;
        }
        let s = c[0] + self.r;
        let (k0, k1) = (c[0] / s, c[1] / s);
        kf.off = off + k0 * nu;
        kf.period += k1 * nu;
        kf.c = [c[0] - k0 * c[0], c[1] - k0 * c[1], c[2] - k1 * c[1]];
        kf.n = n;
        // Keep the offset small: move the integer part into `at`.
        let shift = kf.off.round();
        if shift.abs() >= 1.0
            && let Some(at) = kf.at.checked_add(shift as i64)
        {
            kf.at = at;
            kf.off -= shift;
        }
        self.kf = Some(kf);
    }

    /// The tracker's estimate for sample `n` arriving at `q` while the
    /// stream wanders: the filtered level, or the prediction for a sample
    /// late beyond the gate. Never more than [`GATE_SD`] jitter deviations
    /// after the arrival. `None` when not wandering.
    #[inline]
    pub fn estimate(&self, n: i64, q: i64) -> Option<i64> {
        if !self.active {
            return None;
        }
        let kf = self.kf.as_ref()?;
        let (off, c, nu, run) = self.verdict(kf, n, q)?;
        if run.unsigned_abs() >= STEP_RUN {
            // The filter restarts here (see `track`).
            return Some(q);
        }
        let v = if run > 0 {
            off
        } else {
            off + c[0] / (c[0] + self.r) * nu
        };
        let e = kf.at.checked_add(v.round() as i64)?;
        Some(e.min(q.saturating_add((GATE_SD * self.r.sqrt()) as i64)))
    }
}
