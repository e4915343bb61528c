//! A sensor whose rate wanders: the forgetting of a history that no longer
//! fits one line ([`Wander::forget`]), and a local tracker for when no line
//! fits at all.
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
//! every `Tuning::wander_check_every` samples, both as root mean squares and as
//! medians (a sawtooth of delays, flat but for its wraps, has a median
//! second difference of zero; one disturbance of a jitter-free stream
//! touches `2L` differences at lag `L` but three at lag 1), leaving out
//! differences across a queued sample or a gap off its numbers (a stall's
//! edge, a loss not yet seen). The smaller of the two ratios is 1 on a
//! line; the root mean squares' stayed below 1.63 on 40 draws of each of
//! the twelve non-quantised scenario kinds (stalls, bursts, losses, a
//! period step, a wrong expected period), the medians' below 2.32 on 160;
//! it is 8-24 on the live rig's camera. A queue on a busy link has the
//! same signature (its delays move like a random walk), but its gaps
//! repeat the link's interval to the nanosecond: a stream where a share
//! `Tuning::wander_exact_share` of the differences at lag 1 lie within `Tuning::wander_exact_ns` of
//! zero is not tested. At `Tuning::wander_enter_ratio` or more on `Tuning::wander_enter_checks`
//! tests in a row (or `Tuning::wander_enter_at_once` on one) the stream is wandering,
//! until the ratio falls below `Tuning::wander_leave_ratio`.
//!
//! The tracker. While wandering, the estimates come from a Kalman filter
//! on (arrival level, period) with exactly that model: the period a random
//! walk of variance `q`, the arrivals its level plus white noise of
//! variance `r`, both from the same two spreads. It is the optimal causal
//! estimator of that model: on a history that fits a line (`q → 0`) it
//! averages like a line, on a fast wander it follows the arrivals. A sample
//! later than its prediction by `Tuning::wander_gate_sd` standard deviations (a stall,
//! a queued sample) is estimated at the prediction and not used; after
//! `Tuning::wander_step_run` samples in a row beyond the gate on the same side the
//! filter restarts at the arrival (the phase stepped: a frame longer than
//! the others). The line machinery goes on underneath (numbering, losses,
//! change detection), and takes the estimates back when the stream stops
//! wandering.
//!
//! The ring holds the committed samples since the numbering last
//! changed, not the fit's history: a detected change cuts that history,
//! and on a camera whose period keeps moving the cuts come every few
//! seconds (the live rig's at 3 and 10 s), so a ring filled from it was
//! too short to test until 10 s; fed on its own, it is tested from 6 s.
//!
//! Costs. The test runs behind a screen (see [`Wander::screen`]): running
//! mean squares of the second differences at lag 1 and (between samples
//! numbered at multiples of [`CHECKPOINT`]) at [`LAG`], taken from the
//! ring once per block of `Tuning::wander_check_every` samples (two
//! differences per sample, in one loop); per committed sample, one store
//! into the ring and a few moves. Only
//! where their ratio reaches `Tuning::wander_screen_ratio` is the test run, every
//! `Tuning::wander_check_every` samples: a few passes and at most two selections over
//! [`RING`] values, in a buffer allocated once.
//! Measured on the bench's stream (`examples/estimator_instructions.rs`):
//! about 50 instructions per update for the screen and 40 for the forget
//! test ([`Wander::forget`]) of the 1,307 `update` costs.

use super::changes::Seg;
use super::fit::Point;
use super::history::History;
use super::tuning::Tuning;

/// Committed samples the test looks at (about 8 s of a 16 Hz camera).
pub(crate) const RING: usize = 128;
/// The longer lag of the test, in samples.
const LAG: usize = 16;
/// `(2L³ + L)/3`: `Var D_L` per unit of the period's step variance.
const LAG_GAIN: f64 = ((2 * LAG * LAG * LAG + LAG) as f64) / 3.0;
/// Median absolute value to standard deviation (Gaussian).
const MAD_SD: f64 = 1.0 / 0.674_5;

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
    fn predict(&self, n: i64, q_var: f64, max_steps: i64) -> Option<(f64, [f64; 3])> {
        let k = n
            .checked_sub(self.n)
            .filter(|k| (1..=max_steps).contains(k))?;
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
    /// The newest committed samples since the last clear (`count % RING`
    /// is the next slot; [`RING`] of them, in place).
    ring: [Point; RING],
    /// Samples written into the ring since the last clear.
    count: usize,
    /// The ring samples before this count are in the screen's sums (see
    /// [`Wander::screen`]).
    screened: usize,
    since_check: u32,
    /// The last samples whose numbers are multiples of [`CHECKPOINT`]
    /// (the screen's differences at lag [`LAG`]), oldest first.
    marks: [(i64, i64); MARKS],
    /// The screen: running means of the squared second differences at
    /// lags 1 and [`LAG`] (infinite before the first block), how many
    /// blocks of `Tuning::wander_check_every` samples went in, and the current block's
    /// sums and counts.
    e1: f64,
    el: f64,
    blocks: u32,
    block: (f64, f64, u32, u32),
    /// The second differences of a test's medians (allocated once).
    scratch: Vec<f64>,
    /// The stream wanders: the estimates are the tracker's.
    pub active: bool,
    /// Tests in a row at or above `Tuning::wander_enter_ratio`.
    above: u32,
    /// Jitter variance and the period's step variance, ns².
    r: f64,
    q: f64,
    kf: Option<Kf>,
    /// The test of the line's history for a bend ([`Wander::forget`]).
    halves: Halves,
    /// The tuning values (see [`Tuning`]).
    t: Tuning,
}

/// `v.min(clip)` for a `v` that is not NaN (a square of a difference of
/// integers), without `f64::min`'s handling of a NaN `v`.
#[inline(always)]
fn clipped(v: f64, clip: f64) -> f64 {
    if v > clip { clip } else { v }
}

/// The screen takes its differences at lag [`LAG`] between samples whose
/// numbers are multiples of this...
const CHECKPOINT: i64 = 8;
const _: () = assert!(CHECKPOINT.count_ones() == 1, "the screen masks by it");
/// ... of which it keeps this many.
const MARKS: usize = (2 * LAG as i64 / CHECKPOINT) as usize + 1;
/// A ring slot never written.
const NONE: Point = Point {
    freed: false,
    n: i64::MIN,
    q: 0,
    queued: false,
};

impl Wander {
    /// The stage for a line's history of at most `cap` points.
    pub fn new(t: Tuning, cap: usize) -> Self {
        Wander {
            scratch: Vec::with_capacity(RING),
            halves: Halves::new(cap),
            ..Wander::empty(t)
        }
    }

    /// The state after a clear, without the buffers.
    fn empty(t: Tuning) -> Self {
        Wander {
            t,
            ring: [NONE; RING],
            count: 0,
            screened: 0,
            since_check: 0,
            marks: [(i64::MIN, 0); MARKS],
            e1: f64::INFINITY,
            el: f64::INFINITY,
            blocks: 0,
            block: (0.0, 0.0, 0, 0),
            scratch: Vec::new(),
            active: false,
            above: 0,
            r: 0.0,
            q: 0.0,
            kf: None,
            halves: Halves::default(),
        }
    }

    /// Forgets the samples and the tracker (the numbering changed, or the
    /// fit restarted); keeps the buffers.
    pub fn clear(&mut self) {
        *self = Wander {
            ring: self.ring,
            scratch: std::mem::take(&mut self.scratch),
            halves: self.halves.cleared(),
            ..Wander::empty(self.t)
        };
    }

    /// The sample written `i`-th into the ring since the last clear (one
    /// still in it).
    #[inline(always)]
    fn at(&self, i: usize) -> Point {
        self.ring[i % RING]
    }

    /// The second difference at `lag` ending at ring sample `i`, if its
    /// points are `lag` numbers apart and neither end is queued.
    #[inline(always)]
    fn difference(&self, i: usize, lag: usize) -> Option<f64> {
        let (a, b, c) = (self.at(i - 2 * lag), self.at(i - lag), self.at(i));
        let lag_n = lag as i64;
        (b.n.wrapping_sub(a.n) == lag_n
            && c.n.wrapping_sub(b.n) == lag_n
            && !(a.queued || c.queued))
            .then(|| (c.q - b.q) as f64 - (b.q - a.q) as f64)
    }

    /// A committed sample. Feeds the ring, and the tracker while in use.
    /// Returns whether a test ([`Wander::check`]) is due: every
    /// `Tuning::wander_check_every` samples, while the screen's ratio is at
    /// least `Tuning::wander_screen_ratio` or the tracker is in use. On a
    /// stream that fits a line this is all the cost per sample: a store and
    /// a few moves; the screen takes the block's samples from the ring at
    /// the block's end ([`Wander::screen`]).
    #[inline(always)]
    pub fn push(&mut self, p: Point) -> bool {
        self.ring[self.count % RING] = p;
        self.count += 1;
        if self.active {
            self.track(p);
        }
        self.since_check += 1;
        if self.since_check < self.t.wander_check_every {
            // (A block longer than the ring holds: screened before its
            // oldest samples are overwritten.)
            if self.count - self.screened >= RING - 2 {
                self.screen();
            }
            return false;
        }
        self.end_block()
    }

    /// Feeds the screen the ring's samples since the last call: mean
    /// squares of the second differences at lag 1 (every sample) and at
    /// [`LAG`] (between samples numbered at multiples of [`CHECKPOINT`]);
    /// a stall's edge inflates both alike, which only keeps the test from
    /// running, and a square beyond `Tuning::wander_screen_clip` times its
    /// running mean counts as that much. A lag-1 difference ends at a free
    /// sample numbered right after the one before it, itself numbered right
    /// after a free one. Taken once per block, in order: the same sums as
    /// sample by sample (the running means change only at a block's end).
    #[inline(never)]
    fn screen(&mut self) {
        let lag = LAG as i64;
        let (from, to) = (self.screened, self.count);
        // The two samples before each one, carried along; before the first
        // since the clear a queued `NONE`, which no difference uses (the
        // queued flag stands for `i >= 2`: at `i` < 2, `a` is such a one).
        let before = Point {
            queued: true,
            ..NONE
        };
        let mut a = if from >= 2 { self.at(from - 2) } else { before };
        let mut b = if from >= 1 { self.at(from - 1) } else { before };
        // The clips are fixed within a block (the means change at its end).
        let (clip1, clipl) = (
            self.t.wander_screen_clip * self.e1,
            self.t.wander_screen_clip * self.el,
        );
        let (mut s1, mut sl, mut k1, mut kl) = self.block;
        for i in from..to {
            let c = self.at(i);
            if !c.queued && !a.queued && c.n.wrapping_sub(b.n) == 1 && b.n.wrapping_sub(a.n) == 1 {
                let d = (c.q - b.q) as f64 - (b.q - a.q) as f64;
                s1 += clipped(d * d, clip1);
                k1 += 1;
            }
            // (`n & (CHECKPOINT - 1)` is `n.rem_euclid(CHECKPOINT)`: a
            // power of two.)
            if c.n & (CHECKPOINT - 1) == 0 && !c.queued {
                self.marks.copy_within(1.., 0);
                self.marks[MARKS - 1] = (c.n, c.q);
                let (m0, m1) = (self.marks[0], self.marks[MARKS / 2]);
                if c.n.wrapping_sub(m1.0) == lag && m1.0.wrapping_sub(m0.0) == lag {
                    let d = (c.q - m1.1) as f64 - (m1.1 - m0.1) as f64;
                    sl += clipped(d * d, clipl);
                    kl += 1;
                }
            }
            (a, b) = (b, c);
        }
        self.block = (s1, sl, k1, kl);
        self.screened = to;
    }

    /// Every `Tuning::wander_check_every` samples: the block's means into the screen's
    /// running ones, and whether a test is due.
    #[inline(never)]
    fn end_block(&mut self) -> bool {
        self.screen();
        self.since_check = 0;
        // The block's means into the running ones (memory: two blocks).
        let (s1, sl, k1, kl) = std::mem::take(&mut self.block);
        if k1 > 0 && kl > 0 {
            self.blocks = self.blocks.saturating_add(1);
            let (m1, ml) = (s1 / f64::from(k1), sl / f64::from(kl));
            if self.blocks == 1 {
                (self.e1, self.el) = (m1, ml);
            } else {
                let w = 1.0 / f64::from(self.blocks.min(self.t.wander_screen_blocks));
                self.e1 += w * (m1 - self.e1);
                self.el += w * (ml - self.el);
            }
        }
        let screened = self.blocks >= 2
            && self.el >= self.t.wander_screen_ratio * self.t.wander_screen_ratio * self.e1;
        let due = screened || self.active;
        if !due {
            self.above = 0;
        }
        due
    }

    /// The ring's samples a test looks at: the index of the oldest (since
    /// the last clear) and how many.
    fn span(&self) -> (usize, usize) {
        let len = self.count.min(RING);
        (self.count - len, len)
    }

    /// Marks the gaps that break a second difference: `bad[i]` counts
    /// those up to ring point `i` (oldest first), a gap being one into a
    /// queued sample or off its numbers by `Tuning::wander_gap_tol` of a period (a
    /// stall's edge, or a loss the numbering has not seen yet).
    fn bad_gaps(&self, period: f64) -> [u16; RING] {
        let (first, len) = self.span();
        let mut bad = [0u16; RING];
        for i in 1..len {
            let (a, b) = (self.at(first + i - 1), self.at(first + i));
            let off = (b.q - a.q) as f64 - (b.n - a.n) as f64 * period;
            bad[i] = bad[i - 1] + u16::from(off.abs() > self.t.wander_gap_tol * period || b.queued);
        }
        bad
    }

    /// The ring's second differences at `lag` (points `lag` numbers
    /// apart, the first not queued, no bad gap between them), each passed
    /// to `f`; returns how many.
    fn each_difference(&self, lag: usize, bad: &[u16; RING], mut f: impl FnMut(f64)) -> usize {
        let (first, len) = self.span();
        let mut k = 0;
        for i in lag..len.saturating_sub(lag) {
            if bad[i + lag] == bad[i - lag]
                && let Some(d) = self.difference(first + i + lag, lag)
            {
                f(d);
                k += 1;
            }
        }
        k
    }

    /// Root mean square of the ring's second differences at `lag` and the
    /// share of them within `Tuning::wander_exact_ns` of zero, or `None` with fewer
    /// than `min` differences.
    fn rms(&self, lag: usize, min: usize, bad: &[u16; RING]) -> Option<(f64, f64)> {
        let (mut sum, mut exact) = (0.0f64, 0usize);
        let k = self.each_difference(lag, bad, |d| {
            sum += d * d;
            exact += usize::from(d.abs() <= self.t.wander_exact_ns);
        });
        (k >= min).then(|| ((sum / k as f64).sqrt(), exact as f64 / k as f64))
    }

    /// Median absolute second difference at `lag` in the ring, scaled to
    /// a standard deviation (called after [`Self::rms`] found some).
    fn median(&mut self, lag: usize, bad: &[u16; RING]) -> f64 {
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        self.each_difference(lag, bad, |d| buf.push(d.abs()));
        let mid = buf.len() / 2;
        let m = *buf.select_nth_unstable_by(mid, f64::total_cmp).1;
        self.scratch = buf;
        m * MAD_SD
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
        if self.count < self.t.wander_ring_min {
            return;
        }
        let bad = self.bad_gaps(period);
        let (Some((s1, exact)), Some((sl, _))) = (
            self.rms(1, self.t.wander_min_d1, &bad),
            self.rms(LAG, self.t.wander_min_dl, &bad),
        ) else {
            return;
        };
        // Gaps repeated to the nanosecond: the arrivals are paced by a
        // link draining a queue (or an exact clock), not by a sensor whose
        // frames wander; such a queue wanders on its own.
        if exact >= self.t.wander_exact_share {
            self.active = false;
            self.above = 0;
            self.kf = None;
            return;
        }
        let floor = self.t.wander_floor_frac * period;
        let was = self.active;
        let wanted = if was {
            self.t.wander_leave_ratio
        } else {
            self.t.wander_enter_ratio
        };
        // Both spreads must say so: the root mean squares (a sawtooth of
        // delays, flat but for its wraps, has a median second difference
        // of zero) and the medians (one disturbance of an otherwise
        // jitter-free stream touches `2L` differences at lag `L` but three
        // at lag 1). The medians are taken only where the root mean
        // squares pass.
        let mut ratio = sl / s1.max(floor);
        if ratio >= wanted {
            let (m1, ml) = (self.median(1, &bad), self.median(LAG, &bad));
            ratio = ratio.min(ml / m1.max(floor));
        }
        self.above = if ratio >= self.t.wander_enter_ratio {
            self.above.saturating_add(1)
        } else {
            0
        };
        self.active = if was {
            ratio >= self.t.wander_leave_ratio
        } else {
            self.above >= self.t.wander_enter_checks || ratio >= self.t.wander_enter_at_once
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
        let (first, len) = self.span();
        let p0 = self.at(first);
        self.kf = Some(Kf::start(p0.n, p0.q, period, self.r));
        for i in first + 1..first + len {
            self.track(self.at(i));
        }
    }

    /// The filter's verdict on sample `n` arriving at `q`: the prediction
    /// (level offset from `at`, covariance), the innovation, and the run
    /// of samples beyond the gate it makes (see [`Kf::run`]).
    fn verdict(&self, kf: &Kf, n: i64, q: i64) -> Option<(f64, [f64; 3], f64, i32)> {
        let (off, c) = kf.predict(n, self.q, self.t.wander_max_steps)?;
        let y = q.checked_sub(kf.at)? as f64;
        let gate = self.t.wander_gate_sd * (c[0] + self.r).sqrt();
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

    /// Feeds a committed sample to the filter (kept out of line: the hot
    /// path only tests whether the tracker is in use).
    #[inline(never)]
    fn track(&mut self, Point { n, q, queued, .. }: Point) {
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
        if run.unsigned_abs() >= self.t.wander_step_run {
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
    /// late beyond the gate. Never more than `Tuning::wander_gate_sd` jitter deviations
    /// after the arrival. `None` when not wandering.
    #[inline(always)]
    pub fn estimate(&self, n: i64, q: i64) -> Option<i64> {
        if self.active {
            self.estimate_active(n, q)
        } else {
            None
        }
    }

    /// [`Self::estimate`] while the tracker is in use (kept out of line:
    /// the estimator's hot path only tests the flag).
    #[inline(never)]
    fn estimate_active(&self, n: i64, q: i64) -> Option<i64> {
        let kf = self.kf.as_ref()?;
        let (off, c, nu, run) = self.verdict(kf, n, q)?;
        if run.unsigned_abs() >= self.t.wander_step_run {
            // The filter restarts here (see `track`).
            return Some(q);
        }
        let v = if run > 0 {
            off
        } else {
            off + c[0] / (c[0] + self.r) * nu
        };
        let e = kf.at.checked_add(v.round() as i64)?;
        Some(e.min(q.saturating_add((self.t.wander_gate_sd * self.r.sqrt()) as i64)))
    }
}

impl Wander {
    /// The forgetting of a rate that wanders slower than the history
    /// spans: every quarter of the history, or sixteenth near the
    /// threshold ([`forget_every`]), the free samples of the
    /// line's history `h` (oldest first) are split into an older and a
    /// newer half, each fitted by least squares, and their slopes
    /// compared. Without a change of rate the two differ by the jitter
    /// alone, a t statistic of about `len − 4` degrees of freedom; at
    /// `Tuning::forget_t` or more the arrivals no longer fit one line over
    /// the history (a crystal's rate wandering with temperature), and the
    /// older half is forgotten. Returns how many of the newest points to
    /// keep: never fewer than span `min_span` ns (the configured window)
    /// nor `Tuning::forget_min_points`. Histories with more than a share
    /// `Tuning::step_queued_share` of queued samples (packets, a USB
    /// adapter's timer) are not tested: the phase of their packets drifts,
    /// and with it the free samples' delays.
    ///
    /// The history then holds about the span over which the rate's drift
    /// stays within the jitter, as a line must: a longer one bends the
    /// estimates by the rate's curvature, a shorter one lets the jitter
    /// through. The halves' sums are merged from sums kept by blocks of
    /// the history's points ([`Blocks`]): each point is added once, and a
    /// test merges a block's sums instead of visiting its points.
    #[inline(always)]
    pub fn forget(&mut self, h: &History, period: f64, min_span: i64) -> Option<usize> {
        self.halves.forget(h, period, min_span, &self.t)
    }
}

/// The halves' slope test of a line's history ([`Wander::forget`]), kept
/// apart so that the pulse line (`Pulses`) forgets a wandering rate
/// alike: its state between tests and the history's sums.
#[derive(Debug, Clone, Default)]
pub(crate) struct Halves {
    /// Points appended since the last test.
    since: u32,
    /// Whether the last test came near its threshold (see
    /// [`forget_every`]).
    near: bool,
    /// The least-squares sums of the history, by blocks (allocated once).
    sums: Blocks,
}

impl Halves {
    /// Room for the sums of a history of `cap` points.
    pub fn new(cap: usize) -> Self {
        Halves {
            sums: Blocks::new(cap),
            ..Halves::default()
        }
    }

    /// The state of a new test, with the sums' buffer.
    pub fn cleared(&mut self) -> Self {
        Halves {
            sums: std::mem::take(&mut self.sums),
            ..Halves::default()
        }
    }

    /// Called once per point appended to the history `h`: when due, the
    /// test of [`Wander::forget`], and how many of the newest points to
    /// keep if the history bends.
    #[inline(always)]
    pub fn forget(&mut self, h: &History, period: f64, min_span: i64, t: &Tuning) -> Option<usize> {
        self.since = self.since.saturating_add(1);
        if self.since < forget_every(h.len(), self.near, t) || t.forget_t <= 0.0 {
            return None;
        }
        self.since = 0;
        self.test(h, period, min_span, t)
    }

    /// The test of [`Self::forget`], when due (kept out of line).
    #[inline(never)]
    fn test(&mut self, h: &History, period: f64, min_span: i64, t: &Tuning) -> Option<usize> {
        self.near = false;
        let pts = h.as_slice();
        let len = pts.len();
        let keep = len / 2;
        let last = *pts.last()?;
        let first_kept = *pts.get(len - keep)?;
        if keep < t.forget_min_points
            || last.q.saturating_sub(first_kept.q) < min_span
            || !(period > 0.0 && period.is_finite())
        {
            return None;
        }
        self.sums.catch_up(h, period);
        let split = h.end() - keep as u64;
        let (newer, queued_newer) = self.sums.sum(h, split, h.end());
        let (older, queued_older) = self.sums.sum(h, h.end() - len as u64, split);
        let queued = queued_newer + queued_older;
        if queued as f64 > t.step_queued_share * len as f64 || newer.k < 3.0 || older.k < 3.0 {
            return None;
        }
        let (b1, c1, e1) = newer.fit();
        let (b0, c0, e0) = older.fit();
        let s2 = (e1 + e0) / (newer.k + older.k - 4.0);
        let se = (s2 * (1.0 / c1 + 1.0 / c0)).sqrt();
        let d = (b1 - b0).abs();
        self.near = d > t.forget_near * t.forget_t * se;
        (d.is_finite() && d > t.forget_t * se && d > 0.0).then_some(keep)
    }
}

/// Committed samples between two tests of a history of `len` points for
/// a bend ([`Wander::forget`], `LineFit::band_bends`): a quarter of it,
/// or a sixteenth where the last test's statistic reached
/// `Tuning::forget_near` of its threshold (`near`), never fewer than
/// `Tuning::forget_every`. A rate's bend grows with the square of the
/// history's span, so a statistic halfway to its threshold crosses it
/// within about the next quarter: tested a quarter later, the history
/// had grown by a quarter and its bend by half past what the threshold
/// allows (on wandering draw 1310049, from 18 to 24 s and 24 to 33 s
/// while the estimates were 0.1-0.3 ms early). Far from it, a quarter
/// keeps the tests' cost low (the band's test is a pass over half the
/// history).
pub(crate) fn forget_every(len: usize, near: bool, t: &Tuning) -> u32 {
    let share = if near { 16 } else { 4 };
    ((len / share) as u32).max(t.forget_every)
}

/// Points per block of [`Blocks`].
const BLOCK: u64 = 32;

/// The least-squares sums of a line's history (`Wander::forget`), kept by
/// blocks of [`BLOCK`] points by their counts in the history
/// ([`History::end`]): the points `BLOCK·b .. BLOCK·(b + 1)` in the
/// block `b`, taken in once all of them are appended. A sum over a run of
/// the history merges the blocks inside it and visits the points at its
/// ends. The free points' `y` is taken less a reference slope, set when
/// the sums start, which keeps the sums small (the fitted slopes are
/// relative to it). A history changed otherwise than by appending and
/// dropping its oldest points (its [`History::epoch`]), or a period that
/// left the reference slope by more than [`REF_SLOPE_TOL`], starts the
/// sums over.
#[derive(Debug, Clone, Default)]
pub(crate) struct Blocks {
    /// The history's epoch the sums hold for.
    epoch: u64,
    /// Every block before count `next` is taken in (a multiple of
    /// [`BLOCK`]).
    next: u64,
    slope_ref: f64,
    /// Block `b` at slot `b % len`, with its number (`u64::MAX`: none).
    sums: Vec<(u64, Part)>,
}

/// The share of the reference slope by which the period may move before
/// the block sums start over (their `y` would grow with the difference).
const REF_SLOPE_TOL: f64 = 1e-3;

/// The least-squares sums of a run of the history's points, relative to
/// its first point `(n0, q0)`, and the queued points among them (left out
/// of the sums).
#[derive(Debug, Clone, Copy, Default)]
struct Part {
    seg: Seg,
    n0: i64,
    q0: i64,
    queued: u32,
    started: bool,
}

impl Part {
    /// Adds a point.
    #[inline(always)]
    fn add(&mut self, p: &Point, slope_ref: f64) {
        if !self.started {
            (self.n0, self.q0, self.started) = (p.n, p.q, true);
        }
        if p.queued {
            self.queued += 1;
            return;
        }
        let x = (p.n - self.n0) as f64;
        self.seg.add(x, (p.q - self.q0) as f64 - slope_ref * x);
    }

    /// Adds the sums of the run `o`, which follows this one.
    #[inline(always)]
    fn merge(&mut self, o: &Part, slope_ref: f64) {
        if !self.started {
            *self = *o;
            return;
        }
        let dx = (o.n0 - self.n0) as f64;
        let dy = (o.q0 - self.q0) as f64 - slope_ref * dx;
        self.seg.merge(&o.seg, dx, dy);
        self.queued += o.queued;
    }
}

impl Blocks {
    /// Room for the blocks of a history of `cap` points.
    fn new(cap: usize) -> Self {
        Blocks {
            epoch: u64::MAX,
            next: 0,
            slope_ref: 0.0,
            sums: vec![(u64::MAX, Part::default()); cap / BLOCK as usize + 2],
        }
    }

    /// Takes in the blocks appended to `h` since the last call (or all of
    /// them, after a change of the history or of the period).
    fn catch_up(&mut self, h: &History, period: f64) {
        if self.epoch != h.epoch() || (period / self.slope_ref - 1.0).abs() > REF_SLOPE_TOL {
            self.epoch = h.epoch();
            self.slope_ref = period;
            self.next = 0;
            for s in &mut self.sums {
                s.0 = u64::MAX;
            }
        }
        let slots = self.sums.len() as u64;
        if slots == 0 {
            return;
        }
        let pts = h.as_slice();
        let front = h.end() - pts.len() as u64;
        let mut b = self.next.max(front).div_ceil(BLOCK);
        while (b + 1) * BLOCK <= h.end() {
            let at = (b * BLOCK - front) as usize;
            let mut part = Part::default();
            for p in &pts[at..at + BLOCK as usize] {
                part.add(p, self.slope_ref);
            }
            self.sums[(b % slots) as usize] = (b, part);
            b += 1;
        }
        self.next = self.next.max(b * BLOCK);
    }

    /// The sums over the points counted `from .. to` in `h` (held in it),
    /// and how many of them are queued.
    fn sum(&self, h: &History, from: u64, to: u64) -> (Seg, u32) {
        let pts = h.as_slice();
        let front = h.end() - pts.len() as u64;
        let point = |i: u64| &pts[(i - front) as usize];
        let mut acc = Part::default();
        let mut i = from;
        while i < to {
            let b = i / BLOCK;
            let stored = self
                .sums
                .get((b % self.sums.len().max(1) as u64) as usize)
                .filter(|s| s.0 == b && i == b * BLOCK && i + BLOCK <= to);
            if let Some((_, part)) = stored {
                acc.merge(part, self.slope_ref);
                i += BLOCK;
            } else {
                acc.add(point(i), self.slope_ref);
                i += 1;
            }
        }
        (acc.seg, acc.queued)
    }
}

#[cfg(test)]
mod tests {
    use super::{Blocks, Part};
    use crate::estimator::changes::Seg;
    use crate::estimator::fit::Point;
    use crate::estimator::history::History;
    use proptest::prelude::*;

    /// A change of the history: an append (`n` steps of 1-3, a delay, queued
    /// or not), a drop of the oldest points, a change in place, a mark or an
    /// undo, a clear.
    #[derive(Debug, Clone)]
    enum Op {
        Push(i64, i64, bool),
        Drop(usize),
        Flip(usize),
        Mark,
        Undo,
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            20 => (1i64..4, 0i64..3_000_000, prop::bool::weighted(0.1))
                .prop_map(|(s, d, q)| Op::Push(s, d, q)),
            3 => (1usize..50).prop_map(Op::Drop),
            1 => (0usize..200).prop_map(Op::Flip),
            1 => Just(Op::Mark),
            1 => Just(Op::Undo),
            1 => Just(Op::Clear),
        ]
    }

    /// The sums over `pts` as `Wander::forget` took them before the
    /// blocks: one point at a time.
    fn direct(pts: &[Point], slope: f64) -> (Seg, u32) {
        let mut part = Part::default();
        for p in pts {
            part.add(p, slope);
        }
        (part.seg, part.queued)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-7 * (1.0 + a.abs().max(b.abs()))
    }

    proptest! {
        /// Whatever happens to the history, the sums merged from the
        /// blocks fit the two halves as the sums of their points do.
        #[test]
        fn block_sums_are_the_points_sums(
            ops in prop::collection::vec(op(), 1..600),
            period in 1_000_000f64..20_000_000.0,
        ) {
            let mut h = History::with_capacity(256);
            let mut blocks = Blocks::new(256);
            let mut n = 0i64;
            for op in ops {
                match op {
                    Op::Push(step, delay, queued) => {
                        n += step;
                        h.push_back(Point { freed: false, n, q: (n as f64 * period) as i64 + delay, queued });
                        if h.len() > 256 {
                            h.pop_front();
                        }
                    }
                    Op::Drop(k) => h.drain(..k.min(h.len())),
                    Op::Flip(i) => {
                        if let Some(p) = h.range_mut(i..=i).next() {
                            p.queued = !p.queued;
                        }
                    }
                    Op::Mark => h.mark(),
                    Op::Undo => {
                        h.undo();
                    }
                    Op::Clear => h.clear(),
                }
                blocks.catch_up(&h, period);
                let (len, end) = (h.len() as u64, h.end());
                for split in [end - len, end - len / 2, end - len / 3, end] {
                    let at = (split - (end - len)) as usize;
                    for (from, to, pts) in [
                        (end - len, split, &h.as_slice()[..at]),
                        (split, end, &h.as_slice()[at..]),
                    ] {
                        let (seg, queued) = blocks.sum(&h, from, to);
                        let (want, want_queued) = direct(pts, period);
                        prop_assert_eq!(queued, want_queued);
                        prop_assert_eq!(seg.k, want.k);
                        if want.k >= 3.0 {
                            let (b, c, e) = seg.fit();
                            let (wb, wc, we) = want.fit();
                            prop_assert!(close(b, wb) && close(c, wc) && close(e, we),
                                "{:?} against {:?}", (b, c, e), (wb, wc, we));
                        }
                    }
                }
            }
        }
    }
}
