//! Timestamp estimation: from the times samples *arrive* to the times they
//! were *acquired*, with zero added latency.
//!
//! [`Estimator`] is a sans-IO state machine. Feed it each sample's arrival
//! time ([`Estimator::update`]), optionally the device's sample counter
//! ([`Estimator::update_with_index`]), announced losses
//! ([`Estimator::update_loss`]) and hardware reference pulses
//! ([`Estimator::update_reference`]); every update returns the estimate for
//! that sample at once.
//!
//! Method (see `docs/stamp.md`): each sample gets a sample number `n`
//! (inferred from the arrival times, the counter or announced losses; a
//! loss is told from a delay by the evidence of earlier, resolved cases and
//! confirmed by the next sample). The arrival times are fitted against `n`
//! with the lower convex hull (one-way LP line: exact for one-sided delays,
//! stalls and bursts), with least squares when the residuals show
//! symmetric noise, or by maximum likelihood on the tick intervals when the
//! arrival clock is quantised. The history grows while the data fit one
//! line and is cut after a detected change (period step, clock step).
//!
//! ```
//! use syncline_core::estimator::{Estimator, EstimatorConfig};
//! use syncline_core::{TimeDelta, Timestamp};
//!
//! let config = EstimatorConfig::new(TimeDelta::from_secs(5))
//!     .with_period(TimeDelta::from_millis(10));
//! let mut est = Estimator::new(config).unwrap();
//! let t0 = 1_700_000_000_000_000_000i64;
//! for k in 0..100i64 {
//!     // 1 ms latency, plus 2 ms extra on every fifth sample.
//!     let delay = if k % 5 == 0 { 3_000_000 } else { 1_000_000 };
//!     let arrival = Timestamp::from_nanos(t0 + k * 10_000_000 + delay);
//!     let e = est.update(arrival).unwrap();
//!     if k > 10 {
//!         // The delays are removed: the estimate sits on the 1 ms floor.
//!         assert!((e.stamp.as_nanos() - (t0 + k * 10_000_000 + 1_000_000)).abs() < 1_000);
//!     }
//! }
//! assert_eq!(est.status().samples, 100);
//! ```

mod fit;
mod quant;

use serde::{Deserialize, Serialize};

pub use fit::FitMode;
use fit::{Line, LineFit, MIN_STATS_POINTS, Point, YoungSummary, round};

use crate::{TimeDelta, Timestamp};

/// The largest ring buffer (keeps every relative coordinate and sum in
/// range whatever `max_samples` says).
const MAX_CAPACITY: usize = 1 << 20;
/// Samples before the measured slope replaces the expected period.
const YOUNG: usize = 32;
/// Young samples from which the configured period's line is checked
/// against the samples: used only while their mean residual above it is at
/// most `YOUNG_RATIO ×` their mean residual above the floor plus
/// `YOUNG_SLACK` of a period (see `Estimator::young_fits`).
const YOUNG_CHECK: usize = 5;
const YOUNG_RATIO: f64 = 3.0;
const YOUNG_SLACK: f64 = 0.02;
/// A floor flatter than this fraction of the young samples' mean spacing
/// is not held against the configured period (see `Estimator::young_fits`).
const YOUNG_FLAT: f64 = 0.5;
/// Arrival gaps whose median is checked against the configured period,
/// and the factor by which it must exceed it to drop the configured period
/// (see `Estimator::check_expected`).
const FIRST_GAPS: usize = 8;
const PERIOD_CONTRADICTED: f64 = 1.5;
/// Device counter steps in a row sharing a divisor above 1 before it is
/// taken for the counter's stride (see `Estimator::note_counter_step`).
const STRIDE_RUN: u32 = 16;
/// Numbering steps in a row sharing a divisor above 1 before the samples
/// are renumbered (see `Estimator::renumber_steps`).
const RENUMBER_RUN: u32 = 64;
/// Samples kept after a detected change (period step, clock step).
const KEEP_AFTER_CHANGE: usize = 12;
/// Pulses in a row whose place on the arrival floor jumped by whole periods
/// before the pulses are renumbered to follow the samples, or that lie off
/// the pulse line by more than a quarter period before the line starts over
/// (fewer are rejected as glitches).
const REF_JUMP_RUN: u32 = 3;
/// The pulses' phase deviation assumed before any is measured (in periods:
/// a phase tolerance of a quarter period).
const REF_DEV_START: f64 = 0.25 / 6.0;
/// Runs of free (not queued) samples whose residuals all lie above the
/// floor by `factor ×` the mean residual signal that the line is too early
/// (a step up of the latency or of the sensor clock): `(factor, run)`. For
/// exponential delays each run has the same odds without a change,
/// `e^(−factor·run) = e^(−24)` per start, and a step of `factor ×` the mean
/// makes it certain. The first holds in every mode; the smaller steps only
/// while the residuals look exponential ([`LineFit::exponential_like`]:
/// under symmetric jitter or a quantised clock's grid, low residuals are
/// rarer and long runs above half the mean are common).
const ABOVE_LEVELS: [(f64, u32); 3] = [(2.0, 12), (1.0, 24), (0.5, 48)];
/// Consecutive samples below the floor by `BELOW_FACTOR ×` the mean
/// residual signal that the line is too late.
const BELOW_RUN: u32 = 4;
const BELOW_FACTOR: f64 = 0.5;
/// The fall of the residuals per sample, in periods, over a run above the
/// floor from which the run is a draining backlog, not a change (see
/// `Estimator::commit`).
const DRAIN_FALL: f64 = 0.05;
/// The fall from the run's peak must also exceed this many mean residuals.
const DRAIN_JITTER: f64 = 4.0;
/// A sample arriving within this fraction of a period after its
/// predecessor was queued behind it (FIFO burst after a stall).
const QUEUED: f64 = 0.1;
/// A sample within half a period of its predecessor and late on the floor
/// by this many mean residuals was queued too (see `Estimator::late_behind`).
const QUEUED_LATE: f64 = 4.0;
/// Arrivals in a row before the last accepted one, each at or after the
/// one before it, that are taken for a step back of the host clock (the
/// fit restarts at the new time) rather than for bad stamps (rejected). A
/// single stamp far ahead (a corrupt one) is then followed by at most
/// `BACK_RUN − 1` rejections, not by a stream rejected until the clock
/// catches up with it.
const BACK_RUN: u32 = 3;
/// Announced losses must show up as a gap within this many updates.
const ANNOUNCE_TIMEOUT: u32 = 10;
/// Stall delays are modelled as spread over this many periods.
const STALL_SPREAD: f64 = 10.0;
/// How much sooner than a period after a pending sample, in standard
/// deviations of the residuals, the next one may come for a pause.
const PAUSE_EARLY: f64 = 3.0;
/// Arrivals watched after a pause verdict for a draining backlog (see
/// `Estimator::watch_drain`).
const DRAIN_WATCH: usize = 32;
/// How far, in standard deviations of the difference of two residuals,
/// the arrivals after a pause verdict must fall behind one period each
/// before they are taken for a backlog drained faster than the sensor.
const DRAIN_CONFIRM: f64 = 4.0;
/// Arrivals watched after a loss verdict for a backlog drained by a slow
/// link (see `Estimator::watch_loss`).
const LOSS_WATCH: u32 = 32;
/// Samples after a pause over which a step of the line is looked for with
/// runs `PAUSE_RUN_DIVISOR` times shorter (see `Estimator::commit`).
const PAUSE_WATCH: u32 = 48;
const PAUSE_RUN_DIVISOR: u32 = 3;
/// Pseudo-counts of the loss / delay evidence: without evidence, a gap is
/// a delay (sensors mostly do not lose samples); one confirmed loss is
/// enough to turn well-fitting gaps into losses.
const PRIOR_LOSS: f64 = 0.001;
const PRIOR_DELAY: f64 = 5.0;
/// Evidence is halved when it exceeds this, so it follows changes.
const EVIDENCE_CAP: f64 = 64.0;

/// The odds of a loss against a delay that loss threshold `k` asks for
/// before a late sample is numbered after a loss: `2^(k − 2)` (1 at the
/// default 2; 0 for `k = 0`, infinite from `k = 1026` on).
fn loss_odds(k: u32) -> f64 {
    match k {
        0 => 0.0,
        k => f64::from(2u32).powi(i32::try_from(k.min(1100)).unwrap_or(1100) - 2),
    }
}

/// Errors of the estimator: bad configuration, or an input it rejects
/// (the rejection is also counted in the status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EstimatorError {
    /// The window must be positive.
    #[error("the estimation window must be positive, got {0} ns")]
    NonPositiveWindow(i64),
    /// The expected period must be positive.
    #[error("the expected period must be positive, got {0} ns")]
    NonPositivePeriod(i64),
    /// The window must be longer than the expected period: every arrival
    /// gap longer than the window restarts the fit, so a shorter window
    /// would hold one sample at a time.
    #[error("the estimation window ({window} ns) must be longer than the period ({period} ns)")]
    WindowNotAbovePeriod {
        /// The configured window.
        window: i64,
        /// The configured period.
        period: i64,
    },
    /// The minimum latency must not be negative.
    #[error("the minimum latency must not be negative, got {0} ns")]
    NegativeLatency(i64),
    /// The counter width must be 1..=64 bits.
    #[error("the counter width must be 1..=64 bits, got {0}")]
    CounterBits(u32),
    /// The history factor must be at least 1.
    #[error("the history factor must be at least 1")]
    HistoryFactor,
    /// An arrival earlier than the previous one (rejected and counted; the
    /// fits and the numbering are unchanged, but a third such arrival in a
    /// row is taken for a step back of the clock and restarts the fit).
    #[error("arrival {arrival} ns is before the previous arrival {previous} ns")]
    Backwards {
        /// The rejected arrival time.
        arrival: i64,
        /// The previous accepted arrival time.
        previous: i64,
    },
}

/// Configuration of an [`Estimator`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EstimatorConfig {
    /// Base estimation window. The history may grow to `history_factor ×
    /// window` while the data fit one clock line; it is cut after a detected
    /// change. A gap in the arrivals longer than the window restarts the fit.
    pub window: TimeDelta,
    /// Expected period, used until the estimator has measured its own. If
    /// the median of the first arrival gaps is 1.5 × it or more (a rate
    /// set up twice too high), the median replaces it and the fit starts
    /// over.
    pub period: Option<TimeDelta>,
    /// Loss threshold `K`: how much evidence a late sample needs before it
    /// is numbered as the first after a loss (rather than a delayed
    /// sample) *at once*, in its zero-latency estimate. A gap that fits a
    /// whole number of lost periods is a loss when the odds of a loss
    /// against a delay reach `2^(K − 2)`: the odds are the likelihood ratio
    /// of the sample's residual (jitter-like after a loss, spread over many
    /// periods after a stall) times the ratio of earlier gaps confirmed as
    /// losses and as delays. So `0` declares a loss whenever the gap fits
    /// one, `1` at odds of ½, the default `2` at even odds, each step up
    /// doubles the evidence needed, and `u32::MAX` never infers losses from
    /// arrival times (only from counters and announcements). For any
    /// `K < u32::MAX` the next sample confirms or corrects the numbering
    /// (and the evidence) the same way, so `K` trades only the immediate
    /// estimate of the first sample after an ambiguous gap: low `K` favours
    /// streams that lose samples, high `K` streams that stall. Before the
    /// fit has residual statistics (its first 24 samples) there are no odds:
    /// a gap within a quarter period of whole periods is a loss for every
    /// `K < u32::MAX`.
    pub loss_threshold: u32,
    /// Known minimum latency between acquisition and arrival, subtracted
    /// from every estimate (its whole periods also place hardware references).
    pub min_latency: TimeDelta,
    /// Width of the device sample counter in bits (wrap-around), 1..=64;
    /// `None` (default) infers it: when the counter goes down, it wrapped at
    /// the power of two above the largest value seen.
    pub counter_bits: Option<u32>,
    /// The longest history, as a multiple of `window` (default 8).
    pub history_factor: u32,
    /// The most samples held (ring buffer capacity, default 8192, at most
    /// 2^20).
    pub max_samples: usize,
}

impl EstimatorConfig {
    /// Defaults with the given base window.
    pub fn new(window: TimeDelta) -> Self {
        EstimatorConfig {
            window,
            period: None,
            loss_threshold: 2,
            min_latency: TimeDelta::ZERO,
            counter_bits: None,
            history_factor: 8,
            max_samples: 8192,
        }
    }

    /// Sets the expected period.
    pub fn with_period(mut self, period: TimeDelta) -> Self {
        self.period = Some(period);
        self
    }

    /// Sets the loss threshold.
    pub fn with_loss_threshold(mut self, k: u32) -> Self {
        self.loss_threshold = k;
        self
    }

    /// Sets the known minimum latency.
    pub fn with_min_latency(mut self, latency: TimeDelta) -> Self {
        self.min_latency = latency;
        self
    }

    /// Sets the counter width in bits.
    pub fn with_counter_bits(mut self, bits: u32) -> Self {
        self.counter_bits = Some(bits);
        self
    }

    fn validate(&self) -> Result<(), EstimatorError> {
        if !self.window.is_positive() {
            return Err(EstimatorError::NonPositiveWindow(self.window.as_nanos()));
        }
        if let Some(p) = self.period
            && !p.is_positive()
        {
            return Err(EstimatorError::NonPositivePeriod(p.as_nanos()));
        }
        if let Some(p) = self.period
            && self.window <= p
        {
            return Err(EstimatorError::WindowNotAbovePeriod {
                window: self.window.as_nanos(),
                period: p.as_nanos(),
            });
        }
        if self.min_latency.is_negative() {
            return Err(EstimatorError::NegativeLatency(self.min_latency.as_nanos()));
        }
        if let Some(bits) = self.counter_bits
            && !(1..=64).contains(&bits)
        {
            return Err(EstimatorError::CounterBits(bits));
        }
        if self.history_factor == 0 {
            return Err(EstimatorError::HistoryFactor);
        }
        Ok(())
    }
}

/// The estimate for one sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Estimate {
    /// Estimated acquisition time.
    pub stamp: Timestamp,
    /// The sample number assigned on arrival (0 for the first). Later
    /// arrivals may revise it in the fit (an ambiguous gap judged a delay
    /// after all by the next arrival, or a few arrivals on by a backlog
    /// draining behind it, see `watch_loss` and `watch_drain` in the
    /// source), so a later sample can repeat a number already returned; a
    /// gap in the numbers is a count of lost samples, except across a
    /// restart or where a sensor that halved its rate was renumbered.
    pub sample: i64,
    /// Samples judged lost right before this one when it was estimated.
    pub lost_before: u64,
}

/// What happened to a hardware reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceOutcome {
    /// Matched to sample number `.0` and used.
    Used(i64),
    /// Kept until the estimator has enough samples to place it.
    Deferred,
    /// Not usable (duplicate or out of order); counted.
    Rejected,
}

/// The estimator's state as a value (cheap, always available).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EstimatorStatus {
    /// Current period estimate in ns (`None` before one exists).
    pub period_ns: Option<f64>,
    /// Latency subtracted from the arrival floor: the configured minimum,
    /// or the one measured from hardware references.
    pub latency_ns: i64,
    /// Sample updates accepted.
    pub samples: u64,
    /// Losses inferred from arrival times.
    pub losses_detected: u64,
    /// Losses announced with `update_loss`.
    pub losses_announced: u64,
    /// Announced losses not seen as a gap in time (timed out).
    pub losses_rejected: u64,
    /// Losses counted from device counter gaps.
    pub losses_from_index: u64,
    /// Gaps of a period or more judged delays (stalls), not losses.
    pub delays_detected: u64,
    /// Arrivals rejected for going backwards.
    pub rejected_backwards: u64,
    /// Counter values ignored (repeat, or a jump the arrival times contradict).
    pub index_anomalies: u64,
    /// Hardware references received / used / rejected.
    pub references: u64,
    /// References matched to a sample and used.
    pub references_used: u64,
    /// References rejected.
    pub references_rejected: u64,
    /// Times the pulses were renumbered: to follow a renumbering of the
    /// samples, or because they had been numbered a sample late (see
    /// `docs/stamp.md`).
    pub references_renumbered: u64,
    /// Samples in the history.
    pub window_fill: usize,
    /// Capacity of the history.
    pub window_capacity: usize,
    /// Time spanned by the history, ns.
    pub history_ns: i64,
    /// Standard deviation of the arrival jitter above the floor, ns.
    pub jitter_ns: Option<f64>,
    /// The fit in use.
    pub mode: FitMode,
    /// The arrival clock's tick when it is coarse enough to matter
    /// (quantised arrivals: the `quantised` fit mode is used).
    pub arrival_tick_ns: Option<i64>,
    /// Changes detected (the history was cut).
    pub changes_detected: u64,
    /// Restarts of the fit: after gaps longer than the window, a step back
    /// of the arrival clock (three arrivals in a row before the last
    /// accepted one), a device that paused and went on on a new phase of
    /// its clock, or a configured period the first gaps contradict.
    pub restarts: u64,
    /// The last estimate.
    pub last_estimate: Option<Timestamp>,
}

/// A sample whose number may still be revised by the next arrival.
#[derive(Debug, Clone, Copy)]
struct Pending {
    point: Point,
    /// The two readings of an ambiguous gap.
    alt: Option<Ambiguous>,
    /// Part of a draining backlog (see [`Estimator::watch_drain`]): numbered,
    /// but kept out of the fit.
    drained: bool,
}

/// A loss verdict that the arrivals after it may still overturn (see
/// [`Estimator::watch_loss`]).
#[derive(Debug, Clone, Copy)]
struct LossWatch {
    /// The judged sample's number on the loss reading.
    lost: i64,
    /// The samples that reading takes for lost.
    m: i64,
    /// Arrivals left to watch.
    left: u32,
    /// Armed by a next sample a period or more after the judged one (not
    /// queued behind it, but possibly stalled on its own): only the
    /// arrivals after it are watched, and only one half a period before
    /// the floor overturns.
    strong: bool,
    /// The arrival that gave the verdict.
    by: i64,
}

/// Steps in a row (of sample numbers or of a device counter) that share a
/// divisor above 1: a sensor that halved its rate, a counter of stride 2.
#[derive(Debug, Clone, Copy, Default)]
struct DivisorRun {
    /// Their greatest common divisor (0 before the first step).
    gcd: u64,
    /// How many steps in a row.
    len: u32,
    /// Their sum.
    sum: u64,
}

impl DivisorRun {
    /// Adds a step; one that shares no divisor above 1 with the run ends
    /// it (and starts none).
    #[cold]
    fn push(&mut self, step: u64) {
        let g = gcd(self.gcd, step);
        if g >= 2 {
            (self.gcd, self.len, self.sum) = (g, self.len + 1, self.sum.saturating_add(step));
        } else {
            *self = DivisorRun::default();
        }
    }
}

/// Greatest common divisor (`gcd(a, 0) = a`).
fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// What the sample after an ambiguous gap says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// The samples in the gap were lost.
    Lost,
    /// The sample was delayed.
    Delayed,
    /// Undecided (the next sample is late itself): the number given on
    /// arrival stays.
    Open,
    /// The device paused: the samples in the gap were lost, though not by
    /// the process the loss evidence measures.
    Paused,
    /// The device paused and its clock started over on a new phase.
    Restarted,
}

/// An ambiguous gap: the sample is either delayed or the first after losses.
#[derive(Debug, Clone, Copy)]
struct Ambiguous {
    /// The sample's number if it was delayed.
    delayed: i64,
    /// Its number if the samples in between were lost.
    lost: i64,
    /// The odds of the loss against the delay on arrival (before the loss
    /// threshold); infinite where the arrival alone decides.
    odds: f64,
    /// The lost reading is whole wraps of the device counter more than its
    /// step: decided by the next sample alone (on time for it, or queued).
    wraps: bool,
}

/// A pause verdict that the arrivals after it may still overturn (see
/// [`Estimator::watch_drain`]).
#[derive(Debug, Clone)]
struct DrainWatch {
    /// The estimator as the verdict found it (the judged sample pending,
    /// the arrival that judged it not yet numbered).
    before: Estimator,
    /// The judged sample's arrival (the first after the gap).
    first: i64,
    period: f64,
    /// The deficit on one period per sample, in ns, from which the
    /// arrivals are a drain.
    confirm: f64,
    /// The arrivals since the judged one, the judging one first.
    arrivals: [i64; DRAIN_WATCH],
    len: usize,
}

/// The timestamp estimator. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Estimator {
    cfg: EstimatorConfig,
    max_span: i64,
    fit: LineFit,
    refs: LineFit,
    pending: Option<Pending>,
    last_arrival: Option<i64>,
    /// Rejected backwards arrivals in a row, and the latest of them.
    back_run: u32,
    back_last: i64,
    last_n: Option<i64>,
    next_start: i64,
    learned_period: Option<f64>,
    /// The expected period: the configured one, or the median of the first
    /// gaps if they contradict it (see [`Self::check_expected`]).
    expected: Option<f64>,
    /// The first arrival gaps (see [`Self::check_expected`]).
    first_gaps: [i64; FIRST_GAPS],
    first_gap_count: usize,
    ev_loss: f64,
    ev_stall: f64,
    /// Samples lost in the gaps counted in `ev_loss` (scaled alike).
    ev_lost: f64,
    announced: u64,
    announce_age: u32,
    /// Announced losses that showed up as gaps, and those that did not
    /// (scaled like the evidence): how far the driver's word is trusted.
    ann_used: f64,
    ann_false: f64,
    last_index: Option<u64>,
    /// The number of the sample that carried `last_index`.
    last_index_n: Option<i64>,
    max_index: u64,
    /// The counter's step per sample: 1, or the stride learned from its
    /// steps (a counter of bytes, or one shared by two channels, counts by
    /// 2; see [`Self::note_counter_step`]).
    counter_stride: u64,
    /// Counter steps in a row sharing a divisor above 1 (see
    /// [`Self::note_counter_step`]).
    stride_run: DivisorRun,
    /// Counter steps in a row that were not multiples of the stride.
    stride_misses: u32,
    tick: i64,
    gaps: u32,
    /// Committed numbering steps in a row that share a divisor above 1
    /// (see [`Self::renumber_steps`]).
    step_run: DivisorRun,
    /// The number of the last committed point (any value before the first).
    committed_n: i64,
    above_runs: [u32; 3],
    /// The highest residual of each of those runs, and the samples since.
    above_peak: [(f64, u32); 3],
    /// Samples left after a pause in which those runs need a third of
    /// their length (the device's clock may have moved by less than the
    /// jitter).
    pause_watch: u32,
    below_run: u32,
    deferred_ref: Option<i64>,
    /// The running-minimum anchor of the young fit, and whether the fit
    /// has matured.
    young_anchor: Option<Point>,
    matured: bool,
    ref_offset: Option<f64>,
    last_ref_n: Option<i64>,
    /// Offset of the pulses' place on the arrival floor from their numbers.
    ref_phase: Option<f64>,
    /// Pulses in a row whose offset jumped by whole periods.
    ref_jumps: u32,
    /// Pulses in a row off the pulse line or off the phase.
    ref_misfits: u32,
    /// Pulses in a row numbered after the first sample whose arrival floor
    /// is not before them.
    ref_early: u32,
    /// Mean deviation of the pulses' place on the floor from their phase,
    /// in periods.
    ref_dev: f64,
    /// The young pulse fit's summary (see [`LineFit::young_summary`]) as
    /// of its last pulse; `None` once it has statistics.
    ref_young: Option<YoungSummary>,
    /// A pause verdict under watch (see [`Self::watch_drain`]).
    drain_watch: Option<Box<DrainWatch>>,
    /// A loss verdict under watch (see [`Self::watch_loss`]).
    loss_watch: Option<LossWatch>,
    /// A backlog is draining: samples arriving less than a period after
    /// their predecessor and still late are queued (see
    /// [`Self::watch_drain`]).
    draining: bool,
    /// The next verdict is a delay (set by a replay after a drain).
    force_delayed: bool,
    st: EstimatorStatus,
}

impl Estimator {
    /// A new estimator; fails on an invalid configuration (zero or negative
    /// window or period, negative latency, bad counter width).
    pub fn new(cfg: EstimatorConfig) -> Result<Self, EstimatorError> {
        cfg.validate()?;
        let w = cfg.window.as_nanos();
        let max_span = w.saturating_mul(i64::from(cfg.history_factor));
        let cap = match cfg.period {
            // Room for twice the longest history: the history is trimmed by
            // age at rebuilds (every half history), not by capacity.
            Some(p) => {
                let span = usize::try_from(max_span / p.as_nanos()).unwrap_or(usize::MAX);
                span.saturating_mul(2).saturating_add(64)
            }
            None => usize::MAX,
        }
        .min(cfg.max_samples)
        .clamp(16, MAX_CAPACITY);
        let mut fit = LineFit::new(cap);
        fit.prior_period = cfg.period.map(|p| p.as_nanos() as f64);
        let refs = LineFit::for_pulses(cap);
        let st = EstimatorStatus {
            period_ns: cfg.period.map(|p| p.as_nanos() as f64),
            latency_ns: cfg.min_latency.as_nanos(),
            samples: 0,
            losses_detected: 0,
            losses_announced: 0,
            losses_rejected: 0,
            losses_from_index: 0,
            delays_detected: 0,
            rejected_backwards: 0,
            index_anomalies: 0,
            references: 0,
            references_used: 0,
            references_rejected: 0,
            references_renumbered: 0,
            window_fill: 0,
            window_capacity: fit.capacity(),
            history_ns: 0,
            jitter_ns: None,
            mode: FitMode::Hull,
            arrival_tick_ns: None,
            changes_detected: 0,
            restarts: 0,
            last_estimate: None,
        };
        Ok(Estimator {
            cfg,
            max_span,
            fit,
            refs,
            pending: None,
            last_arrival: None,
            back_run: 0,
            back_last: 0,
            last_n: None,
            next_start: 0,
            learned_period: None,
            expected: cfg.period.map(|p| p.as_nanos() as f64),
            first_gaps: [0; FIRST_GAPS],
            first_gap_count: 0,
            ev_loss: 0.0,
            ev_stall: 0.0,
            ev_lost: 0.0,
            announced: 0,
            announce_age: 0,
            ann_used: 0.0,
            ann_false: 0.0,
            last_index: None,
            last_index_n: None,
            max_index: 0,
            counter_stride: 1,
            stride_run: DivisorRun::default(),
            stride_misses: 0,
            tick: 0,
            gaps: 0,
            step_run: DivisorRun::default(),
            committed_n: 0,
            above_runs: [0; 3],
            above_peak: [(0.0, 0); 3],
            pause_watch: 0,
            below_run: 0,
            deferred_ref: None,
            young_anchor: None,
            matured: false,
            ref_offset: None,
            last_ref_n: None,
            ref_phase: None,
            ref_jumps: 0,
            ref_misfits: 0,
            ref_early: 0,
            ref_dev: REF_DEV_START,
            ref_young: None,
            drain_watch: None,
            loss_watch: None,
            draining: false,
            force_delayed: false,
            st,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &EstimatorConfig {
        &self.cfg
    }

    /// Clears all state (counters included); keeps the configuration.
    pub fn reset(&mut self) {
        if let Ok(fresh) = Estimator::new(self.cfg) {
            *self = fresh;
        }
    }

    /// The current period estimate, if any.
    pub fn period(&self) -> Option<TimeDelta> {
        self.period_f()
            .map(|p| TimeDelta::from_nanos(p.round() as i64))
    }

    /// A sample arrived at `arrival`: returns its estimated acquisition time.
    ///
    /// An arrival before the previous one is rejected with
    /// [`EstimatorError::Backwards`] (counted; fits and numbering unchanged), unless it is
    /// the third such arrival in a row, each at or after the one before:
    /// the host clock stepped back, and the fit restarts there (counted in
    /// `restarts`, like a gap longer than the window).
    pub fn update(&mut self, arrival: Timestamp) -> Result<Estimate, EstimatorError> {
        self.update_inner(arrival.as_nanos(), None)
    }

    /// A sample with the device's sample counter `index` (wrapping at
    /// `counter_bits`) arrived. Counter gaps are losses; a repeated counter
    /// or a jump the arrival times contradict is counted as an anomaly and
    /// the sample is numbered from its arrival time instead.
    pub fn update_with_index(
        &mut self,
        arrival: Timestamp,
        index: u64,
    ) -> Result<Estimate, EstimatorError> {
        self.update_inner(arrival.as_nanos(), Some(index))
    }

    /// The driver announced one lost sample. It must show up as a gap
    /// within the next 10 updates, else it is counted as rejected. An
    /// announcement right after the sample that ended the gap (a driver
    /// that finds the loss in that sample's counter) numbers that sample
    /// after the loss, if its gap fits. A gap is numbered from an
    /// announcement when the sample is on time for it as often as the
    /// driver's announcements have proven right (see `announcement_fits`).
    pub fn update_loss(&mut self) {
        self.drain_watch = None;
        self.loss_watch = None;
        self.announced = self.announced.saturating_add(1);
        self.announce_age = 0;
        self.st.losses_announced += 1;
        self.announce_late();
    }

    /// An announcement after the sample that ends its gap: the pending
    /// sample, numbered as delayed, is renumbered after the loss (or its
    /// loss numbering is confirmed), if the gap fits.
    #[cold]
    fn announce_late(&mut self) {
        let Some(pd) = self.pending else {
            return;
        };
        let (Some(alt), Some(p)) = (pd.alt, self.period_f()) else {
            return;
        };
        let m = (alt.lost - alt.delayed) as u64;
        if self.announced < m {
            return;
        }
        if pd.point.n == alt.delayed {
            let r = self.floor_residual(alt.lost, pd.point.q, Some(p));
            if !r.is_some_and(|r| self.announcement_fits(r, r + m as f64 * p, p)) {
                return;
            }
            self.last_n = Some(alt.lost);
        }
        self.use_announcements(m);
        self.pending = Some(Pending {
            point: Point {
                n: alt.lost,
                ..pd.point
            },
            alt: None,
            drained: pd.drained,
        });
    }

    /// Whether a sample whose residual on the floor is `r_lost` when
    /// numbered after the announced losses (`r_delayed` when not) is taken
    /// for the first after them: the odds are at least even. They are the
    /// driver's record of right against false announcements (Laplace's
    /// rule) times the density of each residual: on time (the jitter) or,
    /// at the rate stalls have been seen, stalled. Before the fit's
    /// residuals are known, the announcement alone decides.
    #[cold]
    fn announcement_fits(&self, r_lost: f64, r_delayed: f64, p: f64) -> bool {
        if !self.fit.stats_valid() {
            return true;
        }
        let record = (self.ann_used + 1.0) / (self.ann_false + 1.0);
        let rate = (self.ev_stall + 1.0) / (self.fit.len() as f64 + 2.0);
        let density =
            |r: f64| (1.0 - rate) * self.on_time_density(r, p) + rate / (STALL_SPREAD * p);
        record * density(r_lost) >= density(r_delayed)
    }

    /// `m` announced losses showed up as a gap: they are used up (and are
    /// no evidence for unannounced gaps: a driver that announces its
    /// losses leaves the others to stalls).
    fn use_announcements(&mut self, m: u64) {
        self.announced -= m.min(self.announced);
        self.announce_age = 0;
        self.ann_used += m as f64;
        self.cap_announcements();
    }

    fn cap_evidence(&mut self) {
        if self.ev_loss + self.ev_stall > EVIDENCE_CAP {
            self.ev_loss *= 0.5;
            self.ev_lost *= 0.5;
            self.ev_stall *= 0.5;
        }
    }

    fn cap_announcements(&mut self) {
        if self.ann_used + self.ann_false > EVIDENCE_CAP {
            self.ann_used *= 0.5;
            self.ann_false *= 0.5;
        }
    }

    /// A hardware reference pulse stamped `hw` (host clock) at a sample's
    /// acquisition. References lock the estimates to the pulses. A reference
    /// before the estimator can place it is kept (the latest one) and used
    /// once possible.
    pub fn update_reference(&mut self, hw: Timestamp) -> ReferenceOutcome {
        self.drain_watch = None;
        self.loss_watch = None;
        self.st.references += 1;
        self.place_reference(hw.as_nanos())
    }

    /// The status (cheap; available before any sample).
    pub fn status(&self) -> EstimatorStatus {
        let mut st = self.st.clone();
        st.period_ns = self.period_f();
        st.window_fill = self.fit.len();
        st.history_ns = match (self.fit.first(), self.fit.last()) {
            (Some(a), Some(b)) => b.q.saturating_sub(a.q),
            _ => 0,
        };
        st.jitter_ns = self.fit.stats_valid().then_some(self.fit.std_r);
        st.mode = self.fit.mode;
        st.arrival_tick_ns = self.fit.quantised_tick.map(|_| self.tick);
        st.latency_ns = match self.ref_offset {
            Some(o) => o.round() as i64,
            None => self.cfg.min_latency.as_nanos(),
        };
        st
    }

    #[inline]
    fn period_f(&self) -> Option<f64> {
        if let Some(l) = self.young_line() {
            return Some(l.slope);
        }
        if self.fit.len() >= 3
            && let Some(f) = self.fit.active()
            && f.slope > 0.0
        {
            return Some(f.slope);
        }
        self.learned_period.or(self.expected)
    }

    fn update_inner(&mut self, q: i64, index: Option<u64>) -> Result<Estimate, EstimatorError> {
        if self.drain_watch.is_some()
            && let Some(e) = self.watch_drain(q, index)
        {
            return e;
        }
        // The time since the previous arrival (none after a step back).
        let mut since_last = self.last_arrival.map(|last| q.saturating_sub(last));
        if let (Some(last), Some(gap)) = (self.last_arrival, since_last) {
            if q < last {
                let run = if self.back_run > 0 && q >= self.back_last {
                    self.back_run + 1
                } else {
                    1
                };
                (self.back_run, self.back_last) = (run, q);
                if run < BACK_RUN {
                    self.st.rejected_backwards += 1;
                    return Err(EstimatorError::Backwards {
                        arrival: q,
                        previous: last,
                    });
                }
                // The host clock stepped back: the rejected arrivals were
                // samples too, so this one follows them in the numbering;
                // there is no gap to the previous arrival to judge.
                self.restart(i64::from(run));
                self.last_arrival = None;
                since_last = None;
            } else if gap > self.cfg.window.as_nanos() {
                let by_gap = self.gap_periods(gap);
                match index.and_then(|i| self.counter_periods(i, by_gap)) {
                    // A counter too wide to have wrapped in the gap numbers
                    // the sample: the fits hold (a stall ends in a burst
                    // the fit knows how to take).
                    Some((_, false)) => {}
                    Some((periods, true)) => {
                        self.st.losses_from_index += periods.unsigned_abs() - 1;
                        self.restart(periods);
                    }
                    None => self.restart(by_gap),
                }
            }
        }
        self.back_run = 0;
        if let Some(e) = self.duplicate(q, index) {
            return Ok(e);
        }
        if self.first_gap_count < FIRST_GAPS
            && self.expected.is_some()
            && let Some(gap) = since_last
        {
            self.check_expected(gap);
        }
        if self.announced > 0 {
            self.announce_age += 1;
            if self.announce_age > ANNOUNCE_TIMEOUT {
                self.st.losses_rejected += self.announced;
                self.ann_false += self.announced as f64;
                self.announced = 0;
                self.cap_announcements();
            }
        }
        self.number_and_estimate(q, index, since_last)
    }

    /// The part of [`Self::update_inner`] from the pending sample's verdict
    /// on (where a replay after a drain starts, see [`Self::watch_drain`]).
    #[inline(always)]
    fn number_and_estimate(
        &mut self,
        q: i64,
        index: Option<u64>,
        since_last: Option<i64>,
    ) -> Result<Estimate, EstimatorError> {
        if let Some(p) = self.pending.take() {
            self.resolve_and_commit(p, q);
            if self.step_run.len >= RENUMBER_RUN {
                self.renumber_steps();
            }
        }
        if self.loss_watch.is_some() {
            self.watch_loss(q, index, since_last);
        }
        let period = self.period_f();
        // A sample queued right behind its predecessor (a burst after a
        // stall) is never the first after a loss: it was already waiting.
        // Its delay says nothing of the line (left out of the fits' levels
        // and of the change runs).
        let (queued, late_behind) = match (since_last, period) {
            (Some(gap), Some(p)) => {
                let gap = gap as f64;
                (
                    gap < QUEUED * p || (self.draining && self.still_draining(q, gap, p)),
                    gap < 0.5 * p && self.late_behind(q),
                )
            }
            _ => (false, false),
        };
        self.draining &= queued;
        let (n, lost, alt) = self.infer_number(q, index, period, queued);
        let queued = queued || (late_behind && n == self.last_n.map_or(n, |l| l.saturating_add(1)));
        if index.is_some() {
            self.last_index_n = Some(n);
        }
        if let Some(gap) = since_last {
            self.note_gap(gap, period);
        }
        let stamp = self.estimate_at(n, q, period);
        self.pending = Some(Pending {
            point: Point { n, q, queued },
            alt,
            drained: self.draining,
        });
        self.last_arrival = Some(q);
        self.last_n = Some(n);
        self.st.samples += 1;
        self.st.last_estimate = Some(stamp);
        Ok(Estimate {
            stamp,
            sample: n,
            lost_before: lost,
        })
    }

    /// After [`RENUMBER_RUN`] steps in a row that share a divisor `g ≥ 2`
    /// (a sensor that halved its rate: every gap one lost sample; from a
    /// single loss to the next, a run this long is not chance), the run's
    /// points are renumbered `g` times closer: the period becomes `g` times
    /// the old one and the run's losses are withdrawn (those left, of
    /// steps longer than `g`, are the loss evidence). The history is cut to
    /// the run (counted in `changes_detected`). The estimates do not move
    /// (each point keeps its time); the status says what the sensor does.
    /// Not with a device counter (whose stride is learned from its own
    /// steps, see [`Self::index_delta`]), pulses or pending announcements,
    /// whose numbers would have to follow.
    #[cold]
    fn renumber_steps(&mut self) {
        let DivisorRun { gcd, len, sum } = std::mem::take(&mut self.step_run);
        let Ok(g) = i64::try_from(gcd) else {
            return;
        };
        if self.last_index.is_some() || self.st.references > 0 || self.announced > 0 {
            return;
        }
        let (Some(last_n), Some(last)) = (self.last_n, self.fit.last()) else {
            return;
        };
        if last_n.saturating_sub(last.n) % g != 0 {
            return;
        }
        self.fit.keep_last(len as usize + 1);
        // Towards the last number: the numbers go on increasing.
        self.fit.renumber(g, last_n);
        let artefacts = sum - sum / gcd;
        self.st.losses_detected = self.st.losses_detected.saturating_sub(artefacts);
        // The losses left after renumbering (taken as single ones) are the
        // evidence now.
        let left = (sum / gcd).saturating_sub(u64::from(len)) as f64;
        (self.ev_loss, self.ev_lost) = (left, left);
        self.cap_evidence();
        self.fit.prior_period = self.fit.prior_period.map(|p| p * g as f64);
        self.expected = self.expected.map(|p| p * g as f64);
        self.forget_change_runs();
        self.st.changes_detected += 1;
    }

    /// Records one of the first [`FIRST_GAPS`] arrival gaps; with all of
    /// them, replaces the configured period by their median if that exceeds
    /// it by [`PERIOD_CONTRADICTED`] ×. A period configured too short by
    /// half (a 50 Hz sensor set up as 100 Hz) makes every gap look like one
    /// lost sample, and a gap a little longer than a loss's tolerance like
    /// a delay: the numbering would mix both for the whole run. Half the
    /// samples lost from the start is far less likely than a wrong
    /// setting. The fit then starts over with the median as the expected
    /// period (checked by the young fit like a configured one, and without
    /// the quantised fit's prior), and the losses and delays counted so far
    /// are withdrawn.
    #[cold]
    fn check_expected(&mut self, gap: i64) {
        self.first_gaps[self.first_gap_count] = gap;
        self.first_gap_count += 1;
        if self.first_gap_count < FIRST_GAPS {
            return;
        }
        let mut g = self.first_gaps;
        g.sort_unstable();
        let median = (g[FIRST_GAPS / 2 - 1] as f64 + g[FIRST_GAPS / 2] as f64) / 2.0;
        let Some(p) = self.expected.filter(|&p| median > PERIOD_CONTRADICTED * p) else {
            return;
        };
        // A whole multiple of the configured period (a rate set up in the
        // wrong unit or twice too high) is kept exact.
        let k = (median / p).round();
        let period = if (median - k * p).abs() <= 0.05 * median {
            k * p
        } else {
            median
        };
        self.restart(1);
        self.learned_period = None;
        self.expected = Some(period);
        self.fit.prior_period = None;
        // The losses and delays seen with it go with it.
        self.st.losses_detected = 0;
        self.st.delays_detected = 0;
        (self.ev_loss, self.ev_lost, self.ev_stall) = (0.0, 0.0, 0.0);
    }

    /// Whether a sample arriving within half a period of its predecessor
    /// is late on the floor (numbered next) by more than
    /// [`QUEUED_LATE`] × the mean residual: queued behind it, if numbered
    /// next. At kilohertz rates a driver drains its FIFO 20-60 µs per
    /// sample, more than [`QUEUED`] of the period; the lateness tells those
    /// bursts from jitter (an on-time sample after a late one is close to
    /// the floor). The numbering does not take it for queued (the
    /// predecessor may be the one misnumbered).
    #[cold]
    fn late_behind(&self, q: i64) -> bool {
        if !self.fit.stats_valid() {
            return false;
        }
        match (self.fit.floor(), self.last_n) {
            (Some(f), Some(n)) => {
                f.residual(n.saturating_add(1), q) > QUEUED_LATE * self.fit.mean_r.max(1.0)
            }
            _ => false,
        }
    }

    /// The whole periods in an arrival gap (at least 1).
    fn gap_periods(&self, gap: i64) -> i64 {
        match self.period_f() {
            Some(p) => ((gap as f64 / p).round() as i64).clamp(1, 1 << 40),
            None => 1,
        }
    }

    /// A gap longer than the window or a step back of the clock: forget the
    /// fits, keep the period and continue the numbering `periods` samples
    /// on.
    fn restart(&mut self, periods: i64) {
        if let Some(p) = self.period_f() {
            self.learned_period = Some(p);
        }
        self.next_start = self
            .last_n
            .map_or(0, |n| n.saturating_add(periods))
            .min(i64::MAX / 2);
        self.pending = None;
        self.loss_watch = None;
        self.last_n = None;
        self.young_anchor = None;
        self.matured = false;
        self.fit.clear();
        self.forget_pulses();
        self.ref_offset = None;
        self.last_ref_n = None;
        self.forget_change_runs();
        self.tick = 0;
        self.gaps = 0;
        self.step_run = DivisorRun::default();
        self.st.restarts += 1;
    }

    /// The floor line (or, with a single point, the expected period from it).
    fn floor_line(&self, period: Option<f64>) -> Option<Line> {
        if let Some(l) = self.young_line() {
            return Some(l);
        }
        if self.fit.len() >= 2
            && let Some(f) = self.fit.floor()
            && f.slope > 0.0
        {
            return Some(f);
        }
        let (pt, p) = (self.fit.last()?, period?);
        Some(Line {
            n0: pt.n,
            q0: pt.q,
            c: 0.0,
            slope: p,
        })
    }

    /// Before the fit has matured (fewer than `YOUNG` samples since the
    /// start or a restart) and with an expected period: the lowest line of
    /// that slope under all samples (a running minimum, like Rock and
    /// Olson), steadier than a slope measured from a handful of samples.
    /// Not once the samples contradict a configured period (see
    /// [`Self::young_fits`]); a period learned before a restart is trusted.
    #[inline]
    fn young_line(&self) -> Option<Line> {
        let line = self.running_minimum()?;
        (self.learned_period.is_some() || self.young_fits(&line)).then_some(line)
    }

    /// The young line whether or not the samples agree with its slope.
    #[inline]
    fn running_minimum(&self) -> Option<Line> {
        if self.matured {
            return None;
        }
        let p = self.learned_period.or(self.expected)?;
        let a = self.young_anchor?;
        Some(Line {
            n0: a.n,
            q0: a.q,
            c: 0.0,
            slope: p,
        })
    }

    /// Whether the samples so far agree with the young line's slope: from
    /// [`YOUNG_CHECK`] samples on, their mean residual above it is at most
    /// [`YOUNG_RATIO`] × (plus [`YOUNG_SLACK`] of a period) their mean
    /// residual above the floor, the lowest line of any slope. A
    /// period too short leaves the running minimum at its first sample and
    /// every later estimate falls behind by the error per period (3 s
    /// after 31 samples of a 1 Hz stream configured 10 % short); a period
    /// too long drags it to the newest arrival.
    #[cold]
    fn young_fits(&self, young: &Line) -> bool {
        if self.fit.len() < YOUNG_CHECK {
            return true;
        }
        let Some(floor) = self.fit.floor().filter(|f| f.slope > 0.0) else {
            return true;
        };
        // A floor flatter than a queued sample's gap lies on a start-up
        // burst (late samples drained together), and so does one much
        // flatter than the samples' mean spacing (the on-time samples after
        // the burst far above it): no evidence of another period. A period
        // wrong by any factor leaves the floor at the samples' own spacing;
        // one more than ten times too long is kept for the young samples,
        // and its line, anchored at the newest arrival, returns the
        // arrivals (the naive error, the jitter).
        let spacing = match (self.fit.first(), self.fit.last()) {
            (Some(a), Some(b)) if b.n > a.n => (b.q - a.q) as f64 / (b.n - a.n) as f64,
            _ => 0.0,
        };
        if floor.slope < QUEUED * young.slope || floor.slope < YOUNG_FLAT * spacing {
            return true;
        }
        let (ry, rf) = self.fit.points().fold((0.0, 0.0), |(ry, rf), p| {
            (ry + young.residual(p.n, p.q), rf + floor.residual(p.n, p.q))
        });
        let k = self.fit.len() as f64;
        ry / k <= YOUNG_RATIO * rf / k + YOUNG_SLACK * young.slope
    }

    /// `q` minus where the floor puts sample `n`.
    #[inline(always)]
    fn floor_residual(&self, n: i64, q: i64, period: Option<f64>) -> Option<f64> {
        let r = self.floor_line(period)?.residual(n, q);
        r.is_finite().then_some(r)
    }

    #[inline(always)]
    fn infer_number(
        &mut self,
        q: i64,
        index: Option<u64>,
        period: Option<f64>,
        queued: bool,
    ) -> (i64, u64, Option<Ambiguous>) {
        let had_index = self.last_index.is_some();
        let index_delta = index.and_then(|i| self.index_delta(i));
        let Some(prev) = self.last_n else {
            return (self.next_start, 0, None);
        };
        let base = prev.saturating_add(1);
        let r0 = self.floor_residual(base, q, period);
        let (m_max, r_m) = match (r0, period) {
            // A queued sample was waiting behind a stall: late by it, not
            // by losses, unless the driver announced some.
            (Some(r0), Some(p)) if r0 > 0.95 * p && (!queued || self.announced > 0) => {
                let max_gap = (self.cfg.window.as_nanos() as f64 / p).max(1.0);
                let m = ((r0 + 0.05 * p) / p).floor().min(max_gap);
                (m as i64, r0 - m * p)
            }
            _ => (0, 0.0),
        };
        if let Some(d) = index_delta {
            // Samples without a counter since the last one with it were
            // numbered already: the counter's step covers them too.
            let since = self.last_index_n.map_or(0, |l| prev.saturating_sub(l));
            let m = d.saturating_sub(1).saturating_sub(since);
            let fits = match (r0, period) {
                (Some(r0), Some(p)) => r0 - m as f64 * p >= -0.5 * p,
                _ => true,
            };
            if m >= 0 && fits {
                self.st.losses_from_index += m as u64;
                // The driver's announcements of these losses are used up.
                self.announced -= self.announced.min(m as u64);
                let n = base.saturating_add(m);
                let wraps = (m_max - m >= 2)
                    .then(|| self.counter_wraps(n, m_max - m, index))
                    .flatten();
                return (n, m as u64, wraps);
            }
            self.st.index_anomalies += 1;
        } else if index.is_some() && had_index {
            self.st.index_anomalies += 1;
        }
        if m_max == 0 {
            return (base, 0, None);
        }
        let p = period.unwrap_or(1.0);
        if self.announced > 0 {
            let m = self.announced.min(m_max as u64);
            let r = r_m + (m_max - m as i64) as f64 * p;
            if self.announcement_fits(r, r + m as f64 * p, p) {
                self.use_announcements(m);
                return (base.saturating_add(m as i64), m, None);
            }
        }
        if queued {
            return (base, 0, None);
        }
        if !self.fit.stats_valid() {
            return self.infer_early(q, base, queued);
        }
        if self.cfg.loss_threshold == u32::MAX {
            return (base, 0, None);
        }
        let g = self.on_time_density(r_m, p);
        let h = 1.0 / (STALL_SPREAD * p);
        let odds = (self.ev_loss + PRIOR_LOSS) * g / ((self.ev_stall + PRIOR_DELAY) * h);
        // Odds of a loss against a delay, at least 2^(K − 2).
        let loss = odds >= loss_odds(self.cfg.loss_threshold);
        let alt = Some(Ambiguous {
            delayed: base,
            lost: base.saturating_add(m_max),
            odds,
            wraps: false,
        });
        if loss {
            (base.saturating_add(m_max), m_max as u64, alt)
        } else {
            (base, 0, alt)
        }
    }

    /// The period the numbering uses before the fit is trustworthy: the
    /// expected one (configured, unless the first gaps replaced it), else a
    /// learned or measured one. The first few points' slope can be far off
    /// (a burst at start-up puts them a few microseconds apart).
    fn early_period(&self) -> Option<f64> {
        self.expected
            .or(self.learned_period)
            .or_else(|| self.period_f())
    }

    /// Numbering before the fit is trustworthy: from the gap to the previous
    /// arrival and the expected period (the configured one, unless the
    /// first gaps replaced it, before a learned or measured one), a loss
    /// only where the gap is clearly a whole number of periods.
    fn infer_early(&mut self, q: i64, base: i64, queued: bool) -> (i64, u64, Option<Ambiguous>) {
        let Some(p) = self.early_period() else {
            return (base, 0, None);
        };
        let Some(last) = self.last_arrival else {
            return (base, 0, None);
        };
        let r0 = q.saturating_sub(last) as f64 - p;
        let m = (r0 / p).round();
        if queued || m < 1.0 || (r0 - m * p).abs() > 0.25 * p || self.cfg.loss_threshold == u32::MAX
        {
            return (base, 0, None);
        }
        let m = m.min((self.cfg.window.as_nanos() as f64 / p).max(1.0)) as i64;
        let n = base.saturating_add(m);
        let alt = Ambiguous {
            delayed: base,
            lost: n,
            odds: f64::INFINITY,
            wraps: false,
        };
        (n, m as u64, Some(alt))
    }

    /// Tracks the arrival clock's tick: the gcd of the arrival gaps. A tick
    /// above 2 % of the period that does not divide it means a quantised
    /// clock whose grid the floor would follow.
    fn note_gap(&mut self, gap: i64, period: Option<f64>) {
        // The gcd only shrinks: once below 2 % of the period it stays there
        // and is no longer worth computing.
        let coarse = |tick: i64| period.is_some_and(|p| tick as f64 >= p * 0.02);
        if gap > 0 && (self.tick == 0 || coarse(self.tick)) {
            self.tick = gcd(self.tick.unsigned_abs(), gap.unsigned_abs()) as i64;
            self.gaps = self.gaps.saturating_add(1);
            if let Some(p) = period {
                // A tick that divides the period puts every sample at the
                // same phase of the grid (a constant offset, harmless); a
                // tick that does not makes the floor follow the grid.
                let tick = self.tick as f64;
                let phase = (p / tick).fract();
                self.fit.quantised_tick =
                    (self.gaps >= 8 && tick >= p * 0.02 && (0.05..0.95).contains(&phase))
                        .then_some(tick);
            }
        }
    }

    /// Counter difference to the previous index (mod 2^bits); records the index.
    fn index_delta(&mut self, index: u64) -> Option<i64> {
        if self.cfg.counter_bits.is_none() {
            self.max_index |= index;
        }
        let mask = self.counter_mask(index);
        let index = index & mask;
        let prev = self.last_index.replace(index)?;
        let raw = index.wrapping_sub(prev) & mask;
        let mut d = match self.in_samples(raw) {
            Some(d) => d,
            None => self.stride_missed(raw)?,
        };
        if self.counter_stride != 1 {
            self.stride_misses = 0;
        }
        if d != 1 || self.stride_run.len != 0 {
            d = self.note_counter_step(d);
        }
        i64::try_from(d).ok().filter(|d| (1..(1 << 40)).contains(d))
    }

    /// A counter step that is not a multiple of the learned stride (an
    /// anomaly). After [`STRIDE_RUN`] in a row the stride is forgotten (it
    /// was a pattern of losses) and this step counts as it is.
    #[cold]
    fn stride_missed(&mut self, raw: u64) -> Option<u64> {
        self.stride_misses += 1;
        if self.stride_misses < STRIDE_RUN {
            return None;
        }
        self.counter_stride = 1;
        (self.stride_misses, self.stride_run) = (0, DivisorRun::default());
        Some(raw)
    }

    /// Learns the counter's stride: after [`STRIDE_RUN`] steps in a row
    /// that share a divisor `s ≥ 2` (a counter of bytes, or one shared by
    /// two channels; a counter that counts by one and loses half its
    /// samples in such a pattern is far less likely), its steps are
    /// divided by `s` from then on. Returns step `d` in the stride it
    /// knows now.
    #[cold]
    fn note_counter_step(&mut self, d: u64) -> u64 {
        if d == 0 {
            // A repeated value: an anomaly, not a step.
            return d;
        }
        self.stride_run.push(d);
        if self.stride_run.len < STRIDE_RUN {
            return d;
        }
        let s = std::mem::take(&mut self.stride_run).gcd;
        self.counter_stride = self.counter_stride.saturating_mul(s);
        d / s
    }

    /// A counter difference in samples: divided by the counter's stride,
    /// `None` if not a multiple of it.
    #[inline]
    fn in_samples(&self, d: u64) -> Option<u64> {
        match self.counter_stride {
            1 => Some(d),
            s => d.is_multiple_of(s).then_some(d / s),
        }
    }

    /// A gap `extra` whole periods longer than the counter's step (its
    /// sample `n` late by them) may hide whole wraps of a narrow counter
    /// (a burst of losses as long as its range) or be a stall: the
    /// counter cannot tell. The sample keeps the counter's number; the
    /// next one decides (on time for the wraps, or queued behind it).
    #[cold]
    fn counter_wraps(&self, n: i64, extra: i64, index: Option<u64>) -> Option<Ambiguous> {
        let range = self
            .in_samples(self.counter_mask(index?).checked_add(1)?)
            .and_then(|r| i64::try_from(r).ok())?;
        let wraps = extra / range;
        (wraps >= 1 && range < 1 << 40).then(|| Ambiguous {
            delayed: n,
            lost: n.saturating_add(wraps * range),
            odds: f64::INFINITY,
            wraps: true,
        })
    }

    /// Across a gap longer than the window (`by_gap` whole periods), the
    /// step to a sample with counter value `index`: the counter's step
    /// (less the samples numbered without a counter since its last value)
    /// plus the whole wraps that best match the gap; and whether the
    /// counter is narrow enough to have wrapped in the gap (its range is
    /// at most twice the gap). A stall that ends in a burst keeps its
    /// numbering, where the gap alone would count the stall as lost
    /// samples.
    fn counter_periods(&self, index: u64, by_gap: i64) -> Option<(i64, bool)> {
        let (last, last_n) = (self.last_index?, self.last_index_n?);
        let mask = self.counter_mask(index);
        let d = i64::try_from(self.in_samples(index.wrapping_sub(last) & mask)?).ok()?;
        let since = self.last_n.map_or(0, |n| n.saturating_sub(last_n));
        let step = d.saturating_sub(since);
        if step < 1 {
            return None;
        }
        // The counter's range in samples.
        let range = mask
            .checked_add(1)
            .and_then(|r| self.in_samples(r))
            .and_then(|r| i64::try_from(r).ok());
        match range {
            Some(r) if r <= 1 << 40 && r / 2 <= by_gap => {
                let wraps = ((by_gap - step) as f64 / r as f64).round().max(0.0);
                Some((step.saturating_add(wraps as i64 * r), true))
            }
            _ => Some((step, false)),
        }
    }

    /// The counter's mask: its configured width, or all ones up to the
    /// highest bit seen (`index` included).
    fn counter_mask(&self, index: u64) -> u64 {
        match self.cfg.counter_bits {
            Some(bits) if bits < 64 => (1u64 << bits) - 1,
            Some(_) => u64::MAX,
            None => u64::MAX
                .checked_shr((self.max_index | index).leading_zeros())
                .unwrap_or(0),
        }
    }

    /// A sample whose counter repeats the last one's, arriving less than
    /// half a period after it: the driver delivered that sample twice. It
    /// is stamped as the sample it repeats (counted in `index_anomalies`)
    /// and leaves the numbering and the fits alone; numbered as a new
    /// sample, it would put every later sample one period late.
    fn duplicate(&mut self, q: i64, index: Option<u64>) -> Option<Estimate> {
        let (i, n, last) = (index?, self.last_index_n?, self.last_arrival?);
        // The period only for a repeated counter value (rare).
        if self.last_index != Some(i & self.counter_mask(i)) {
            return None;
        }
        let p = self.period_f()?;
        if (q.saturating_sub(last) as f64) >= 0.5 * p {
            return None;
        }
        self.st.index_anomalies += 1;
        self.st.samples += 1;
        let stamp = self.estimate_at(n, q, Some(p));
        self.st.last_estimate = Some(stamp);
        Some(Estimate {
            stamp,
            sample: n,
            lost_before: 0,
        })
    }

    /// Numbers the pending sample (resolving an ambiguous gap with the
    /// arrival `q` of the next one) and commits it to the fit.
    #[inline(always)]
    fn resolve_and_commit(&mut self, mut pd: Pending, q: i64) {
        let forced = std::mem::take(&mut self.force_delayed);
        // The period only matters for an ambiguous gap (rare): computed then.
        // Before the statistics, the period the early numbering used.
        let period = pd.alt.and_then(|_| {
            if self.fit.stats_valid() {
                self.period_f()
            } else {
                self.early_period()
            }
        });
        // (number in the fit, number the next sample follows)
        let (fit_n, chain_n) = if let (Some(alt), Some(p)) = (pd.alt, period) {
            let (nd, nl) = (alt.delayed, alt.lost);
            // After a loss the next sample arrives about a period later, on
            // time for its number; after a stall it queues behind, or comes
            // early for the loss numbering: before the floor by more than
            // the jitter's spread, which no sample on time does. A next
            // sample that is itself late decides nothing: the pending one
            // keeps the number it was given on arrival (the next one is
            // numbered after it), but enters the fit as delayed, the
            // harmless choice there (a point above the floor). Falling back
            // to the delayed number would number every later sample a whole
            // loss too early.
            let gap = q.saturating_sub(pd.point.q) as f64;
            let verdict = if forced {
                Verdict::Delayed
            } else if !self.fit.stats_valid() {
                if gap >= 0.5 * p {
                    Verdict::Lost
                } else {
                    Verdict::Delayed
                }
            } else {
                match self.floor_residual(nl.saturating_add(1), q, period) {
                    Some(_) if gap < 0.5 * p => Verdict::Delayed,
                    Some(r) => self.next_verdict(alt, r, gap, p),
                    None => Verdict::Open,
                }
            };
            if matches!(verdict, Verdict::Paused | Verdict::Restarted) {
                self.arm_drain_watch(pd, q, p);
            }
            if verdict == Verdict::Restarted {
                self.restart(0);
                if self.last_index_n == Some(pd.point.n) {
                    self.last_index_n = Some(nl);
                }
                pd.point.n = nl;
                self.commit(pd.point);
                self.last_n = Some(nl);
                return;
            }
            let numbers = match verdict {
                Verdict::Lost if alt.wraps => {
                    self.st.losses_from_index += (nl - nd) as u64;
                    if self.last_index_n == Some(nd) {
                        self.last_index_n = Some(nl);
                    }
                    (nl, nl)
                }
                Verdict::Lost => {
                    self.ev_loss += 1.0;
                    self.ev_lost += (nl - nd) as f64;
                    self.st.losses_detected += (nl - nd) as u64;
                    // Sooner than a period after it, the next sample may
                    // be queued behind the judged one on a slow link; later,
                    // it may have stalled on its own.
                    if self.last_index.is_none() && self.announced == 0 && self.st.references == 0 {
                        self.loss_watch = Some(LossWatch {
                            lost: nl,
                            m: nl - nd,
                            left: LOSS_WATCH,
                            strong: gap >= p,
                            by: q,
                        });
                    }
                    (nl, nl)
                }
                Verdict::Paused => {
                    self.st.losses_detected += (nl - nd) as u64;
                    self.pause_watch = PAUSE_WATCH;
                    (nl, nl)
                }
                Verdict::Delayed => {
                    self.ev_stall += 1.0;
                    self.st.delays_detected += 1;
                    (nd, nd)
                }
                Verdict::Open if pd.point.n == nl => {
                    self.st.losses_detected += (nl - nd) as u64;
                    (nd, nl)
                }
                // (A restart returned above.)
                Verdict::Open | Verdict::Restarted => {
                    self.st.delays_detected += 1;
                    (nd, nd)
                }
            };
            self.cap_evidence();
            numbers
        } else {
            (pd.point.n, pd.point.n)
        };
        pd.point.n = fit_n;
        if pd.drained {
            // Late by the backlog, it says nothing of the line (and a long
            // drain would pull the floor's centroid edge up to it).
            self.committed_n = fit_n;
        } else {
            self.commit(pd.point);
        }
        self.last_n = Some(chain_n);
    }

    /// Keeps the estimator as a pause verdict on the pending sample `pd`
    /// (judged by the arrival `q`) finds it, so that the arrivals after it
    /// can overturn the verdict (see [`Self::watch_drain`]). Not with a
    /// device counter (which numbers a drain itself), announcements or
    /// reference pulses (which a replay would not see again), nor during a
    /// drain. The copy is the one allocation, at a rare event.
    #[cold]
    fn arm_drain_watch(&mut self, pd: Pending, q: i64, p: f64) {
        if self.drain_watch.is_some()
            || self.draining
            || self.last_index.is_some()
            || self.announced > 0
            || self.st.references > 0
        {
            return;
        }
        let mut before = self.clone();
        before.pending = Some(pd);
        let mut arrivals = [0; DRAIN_WATCH];
        arrivals[0] = q;
        self.drain_watch = Some(Box::new(DrainWatch {
            before,
            first: pd.point.q,
            period: p,
            // At least DRAIN_FALL of a period: a jitter-free pause (its
            // gaps a fitted period give or take a few ns) is no drain.
            confirm: (DRAIN_CONFIRM * std::f64::consts::SQRT_2 * self.fit.std_r.min(0.5 * p))
                .max(DRAIN_FALL * p),
            arrivals,
            len: 1,
        }));
    }

    /// After a pause verdict, the arrivals that follow tell a pause from a
    /// backlog drained by a link a little faster than the sensor (a stall
    /// followed by samples every 0.8 periods, say). After a pause the
    /// samples come a period apart, give or take the jitter; in a drain
    /// each comes less than a period after the one before, so the arrivals
    /// fall further and further behind one period per sample. One gap
    /// cannot tell them apart when the link gains less on the sensor than
    /// the jitter spreads; the sum of the gaps can. Once the arrivals since
    /// the judged sample fall behind by [`DRAIN_CONFIRM`] standard
    /// deviations of the difference of two residuals, and by at least
    /// [`DRAIN_FALL`] of a period (every gap shorter than a period), the
    /// verdict is overturned: the estimator is put
    /// back as it was, the judged sample taken for delayed, and the
    /// arrivals since are numbered again as a draining backlog (queued
    /// while they come within a period and are still late), which keeps
    /// the clock line and the numbering of before the stall. The estimates
    /// already returned stand. A gap of a period or more, a counter, a
    /// step back, an announced loss, a reference pulse or [`DRAIN_WATCH`]
    /// arrivals end the watch: the verdict stands.
    #[cold]
    fn watch_drain(
        &mut self,
        q: i64,
        index: Option<u64>,
    ) -> Option<Result<Estimate, EstimatorError>> {
        let w = self.drain_watch.as_mut()?;
        let last = w.arrivals[w.len - 1];
        let gap = q.checked_sub(last);
        if index.is_some()
            || w.len >= DRAIN_WATCH
            || !gap.is_some_and(|g| g >= 0 && (g as f64) < w.period)
        {
            self.drain_watch = None;
            return None;
        }
        w.arrivals[w.len] = q;
        w.len += 1;
        let deficit = w.len as f64 * w.period - q.saturating_sub(w.first) as f64;
        if deficit < w.confirm {
            return None;
        }
        let DrainWatch {
            before,
            first,
            arrivals,
            len,
            ..
        } = *self.drain_watch.take()?;
        *self = before;
        self.fit.restore_capacity();
        self.refs.restore_capacity();
        self.force_delayed = true;
        self.draining = true;
        // The copy was taken within the judging arrival's update.
        let _ =
            self.number_and_estimate(arrivals[0], None, Some(arrivals[0].saturating_sub(first)));
        for &a in &arrivals[1..len - 1] {
            let _ = self.update_inner(a, None);
        }
        Some(self.update_inner(q, None))
    }

    /// After a loss verdict given by a sample less than a period after the
    /// judged one, the arrivals that follow can still show the judged
    /// sample was delayed, with the samples behind it queued on a link a
    /// little faster than the sensor (a delay of just over a period
    /// drained 0.9 periods a sample, say): the first of them may be on time
    /// for the loss numbering, but the backlog comes sooner and sooner on
    /// it, before the floor, where no sample on time comes. Once an arrival
    /// (every gap since shorter than a period) is before the floor for its
    /// number by more than [`Self::before_floor`] allows (and by at least
    /// [`DRAIN_FALL`] of a period, for a stream without jitter), the
    /// verdict is overturned: the points numbered since are numbered back by the
    /// samples taken for lost, the loss is withdrawn and counted as a
    /// delay, and the backlog drains as queued. The estimates already
    /// returned stand. A gap of a period or more, a counter or
    /// [`LOSS_WATCH`] arrivals end the watch: the verdict stands.
    ///
    /// A verdict given by a sample a period or more after the judged one
    /// (which may have stalled on its own, just over a period like the
    /// judged one) is watched from the arrival after it, and only an
    /// arrival half a period before the floor overturns it.
    #[cold]
    fn watch_loss(&mut self, q: i64, index: Option<u64>, since_last: Option<i64>) {
        let Some(w) = self.loss_watch.take() else {
            return;
        };
        let (Some(gap), Some(p), Some(prev)) = (since_last, self.period_f(), self.last_n) else {
            return;
        };
        if w.strong && q == w.by {
            self.loss_watch = Some(w);
            return;
        }
        if index.is_some() || w.left == 0 || gap as f64 >= p {
            return;
        }
        let r = self.floor_residual(prev.saturating_add(1), q, Some(p));
        let before = if w.strong {
            0.5 * p
        } else {
            self.before_floor(p).max(DRAIN_FALL * p)
        };
        if !r.is_some_and(|r| r < -before) {
            self.loss_watch = Some(LossWatch {
                left: w.left - 1,
                ..w
            });
            return;
        }
        if !self.fit.shift_newest(w.lost, -w.m) {
            return;
        }
        self.last_n = Some(prev.saturating_sub(w.m));
        if self.committed_n >= w.lost {
            self.committed_n = self.committed_n.saturating_sub(w.m);
        }
        // The young fit's running minimum may have been one of the moved
        // points, low only on the loss reading: taken again over the
        // points as now numbered.
        if !self.matured
            && let (Some(slope), Some(first)) =
                (self.learned_period.or(self.expected), self.fit.first())
        {
            let line = Line {
                n0: first.n,
                q0: first.q,
                c: 0.0,
                slope,
            };
            let low = |p: &&Point| line.residual(p.n, p.q);
            self.young_anchor = self
                .fit
                .points()
                .min_by(|a, b| low(a).total_cmp(&low(b)))
                .copied();
        }
        let m = w.m as f64;
        self.st.losses_detected = self.st.losses_detected.saturating_sub(w.m as u64);
        self.ev_loss = (self.ev_loss - 1.0).max(0.0);
        self.ev_lost = (self.ev_lost - m).max(self.ev_loss);
        self.ev_stall += 1.0;
        self.st.delays_detected += 1;
        self.forget_change_runs();
        self.step_run = DivisorRun::default();
        self.draining = true;
    }

    /// How far before the floor a sample on time may come: the smaller of
    /// the residuals' standard deviation and `BELOW_FACTOR` × their mean
    /// (what the change detector reads as below the floor), at most half a
    /// period. Under exponential delays the floor is sharp and a sample
    /// half a mean before it is misnumbered; under symmetric jitter the
    /// standard deviation is the smaller.
    fn before_floor(&self, p: f64) -> f64 {
        self.fit
            .std_r
            .min(BELOW_FACTOR * self.fit.mean_r)
            .min(0.5 * p)
    }

    /// Whether a sample `gap` after its predecessor continues a draining
    /// backlog: within a period of it and still late on the floor (numbered
    /// next) by more than half a period.
    #[cold]
    fn still_draining(&self, q: i64, gap: f64, p: f64) -> bool {
        let base = self.last_n.map(|n| n.saturating_add(1));
        gap < p
            && base
                .and_then(|n| self.floor_residual(n, q, Some(p)))
                .is_some_and(|r| r > 0.5 * p)
    }

    /// What the next sample, not queued (`gap` after the pending one) and
    /// `r` after the floor's time for the loss numbering, says of an
    /// ambiguous gap:
    ///
    /// * on time for the loss numbering (within the jitter's spread): the
    ///   loss is weighed ([`Self::loss_confirmed`]), else it was a delay;
    /// * on time after `k` further losses of its own (a sensor that halved
    ///   its rate loses every other sample): the same weighing, else
    ///   undecided (it may be stalled itself, after either reading);
    /// * a period after the pending sample and as late on the delayed
    ///   reading, beyond the [`STALL_SPREAD`] periods a stall is modelled
    ///   over: that reading needs the same long stall twice (a stall
    ///   queues the next sample right behind), so the device paused. On
    ///   the old clock line the samples of the pause were lost (not
    ///   evidence of the loss process); off it, the clock started over on
    ///   a new phase (a restart, as after a gap longer than the window);
    /// * before the floor by more than [`Self::before_floor`] (no sample
    ///   after a loss comes there): a delay;
    /// * otherwise it is late itself and decides nothing.
    #[cold]
    fn next_verdict(&self, alt: Ambiguous, r: f64, gap: f64, p: f64) -> Verdict {
        let spread = (self.fit.mean_r + 4.0 * self.fit.std_r).min(0.5 * p);
        let std = self.fit.std_r.min(0.5 * p);
        let paused = r + (alt.lost - alt.delayed) as f64 * p > STALL_SPREAD * p
            && (-PAUSE_EARLY * std..=spread).contains(&(gap - p));
        let early = self.before_floor(p);
        let k = if r > spread { (r / p).round() } else { 0.0 };
        let rk = r - k * p;
        if (-early..=spread).contains(&rk) && (k == 0.0 || !alt.wraps) {
            return if k == 0.0 && alt.wraps {
                Verdict::Lost
            } else if paused && k == 0.0 {
                Verdict::Paused
            } else if self.loss_confirmed(alt, rk, p, k) {
                Verdict::Lost
            } else if k == 0.0 {
                Verdict::Delayed
            } else {
                Verdict::Open
            };
        }
        if paused {
            Verdict::Restarted
        } else if r < -early {
            Verdict::Delayed
        } else {
            Verdict::Open
        }
    }

    /// Whether a next sample on time for the loss numbering (residual `r`
    /// after the lost samples, and after `further` losses of its own)
    /// confirms the loss: the odds on arrival, times the chance of a run of
    /// `m` lost samples in a row (each further loss as likely as in the
    /// losses seen so far) and of the next sample's own run, times how much
    /// likelier an on-time next sample is than one that is itself stalled
    /// to the same arrival, must favour the loss. So two stalls in a row
    /// are not taken for a run of losses in a stream that has shown stalls
    /// and no losses. Like every confirmed numbering, this does not depend
    /// on the loss threshold (which only sets how soon a loss is believed
    /// on arrival).
    fn loss_confirmed(&self, alt: Ambiguous, r: f64, p: f64, further: f64) -> bool {
        let m = (alt.lost - alt.delayed) as f64;
        // Laplace's rule for "a lost sample is followed by another loss".
        let again = (self.ev_lost - self.ev_loss + 1.0) / (self.ev_lost + 2.0);
        let held = self.fit.len() as f64 + 2.0;
        let mut run = again.powf(m - 1.0);
        if further > 0.0 {
            // A new run of losses starts (at the rate of runs seen), then
            // goes on.
            run *= (self.ev_loss + 1.0) / held * again.powf(further - 1.0);
        }
        let on_time = self.on_time_density(r, p);
        // A stall of the next sample: its rate among the samples held, its
        // delay spread like the pending one's.
        let stalled = (self.ev_stall + 1.0) / held / (STALL_SPREAD * p);
        alt.odds * run * on_time >= stalled
    }

    /// Density of residual `r` above the floor for a sample on time: the
    /// jitter, exponential with the measured mean.
    fn on_time_density(&self, r: f64, p: f64) -> f64 {
        let mu = self.fit.mean_r.max(p * 1e-4);
        (-r.max(0.0) / mu).exp() / mu
    }

    #[inline(always)]
    fn commit(&mut self, p: Point) {
        let mut change = false;
        self.pause_watch = self.pause_watch.saturating_sub(1);
        if !p.queued
            && self.fit.stats_valid()
            && let Some(f) = self.fit.floor()
        {
            let r = f.residual(p.n, p.q);
            let mu = self.fit.mean_r.max(1.0);
            // Below: against the floor of the last rebuild, which the newest
            // points have not bent (a shorter period would pull the live
            // floor down with them).
            let below = match self.fit.rebuilt_floor() {
                Some(frozen) => frozen.residual(p.n, p.q),
                None => r,
            };
            if below < -BELOW_FACTOR * mu {
                self.below_run += 1;
            } else {
                self.below_run = 0;
            }
            // A jump of more than half a period above a run's peak
            // (another stall) starts the run over.
            let jump = 0.5 * f.slope;
            for (i, &(factor, _)) in ABOVE_LEVELS.iter().enumerate() {
                let (run, peak) = (&mut self.above_runs[i], &mut self.above_peak[i]);
                if r > factor * mu {
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
            // A run whose residuals fell from its peak by DRAIN_FALL of a
            // period per sample since (and by more than the jitter could)
            // is a backlog draining at the link's rate: each sample as
            // late as the one before, less what the link gains on the
            // sensor. Not a step of the line.
            let draining = |i: usize| {
                let (top, since) = self.above_peak[i];
                top - r >= (DRAIN_FALL * f.slope * f64::from(since)).max(DRAIN_JITTER * mu)
            };
            // After a pause the device's clock may have moved by less than
            // the jitter: the odds of each run without a change are then
            // e^−8, not e^−24, over the few samples watched.
            let shorten = if self.pause_watch > 0 {
                PAUSE_RUN_DIVISOR
            } else {
                1
            };
            let reached =
                |i: usize| self.above_runs[i] >= ABOVE_LEVELS[i].1 / shorten && !draining(i);
            let above = reached(0) || ((reached(1) || reached(2)) && self.fit.exponential_like());
            change = above || self.below_run >= BELOW_RUN;
        }
        let step = p.n.wrapping_sub(self.committed_n);
        self.committed_n = p.n;
        if step != 1 || self.step_run.len != 0 {
            // A run of steps sharing a divisor above 1: every gap a whole
            // number of lost samples of the same count, plus one.
            self.step_run.push(step.max(0).unsigned_abs());
        }
        self.fit.push(p, self.max_span);
        if !self.matured {
            self.matured = self.fit.len() >= YOUNG;
            let below = match (self.running_minimum(), self.young_anchor) {
                (Some(l), Some(_)) => l.residual(p.n, p.q) < 0.0,
                _ => true,
            };
            if below {
                self.young_anchor = Some(p);
            }
        }
        if std::mem::take(&mut self.fit.inconsistent) {
            let keep = self.fit.len() / 4;
            self.fit.keep_last(keep);
            self.forget_pulses();
            self.st.changes_detected += 1;
        }
        if change {
            self.fit.keep_last(KEEP_AFTER_CHANGE);
            self.refs.keep_last(2);
            self.summarise_pulses();
            self.forget_change_runs();
            self.st.changes_detected += 1;
        }
        if self.fit.len() >= MIN_STATS_POINTS
            && let Some(h) = self.deferred_ref.take()
        {
            self.place_reference(h);
        }
    }

    fn place_reference(&mut self, h: i64) -> ReferenceOutcome {
        let (Some(floor), true) = (self.fit.floor(), self.fit.len() >= MIN_STATS_POINTS) else {
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
                // A glitch is rejected, but `REF_JUMP_RUN` in a row mean
                // the pulses moved (a step of their clock): the line and
                // the phase start over from the floor.
                self.ref_misfits += 1;
                if self.ref_misfits < REF_JUMP_RUN {
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
        // 0.9 of a period before its sample's floor; `REF_JUMP_RUN` in a row
        // renumber the pulses from this one.
        let x = match (x, xf) {
            (Some(x), Some(xf)) if first_after(xf) < x => {
                self.ref_early += 1;
                if self.ref_early < REF_JUMP_RUN {
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

    /// Forgets the runs of samples above and below the floor that signal a
    /// change (after the history was cut or renumbered, or a restart: they
    /// were judged against the old line).
    fn forget_change_runs(&mut self) {
        self.above_runs = [0; 3];
        self.below_run = 0;
    }

    /// Forgets the pulse line and the pulses' offset on the arrival floor
    /// (a restart, a history that mixed numberings, pulses that moved or
    /// were numbered late).
    fn forget_pulses(&mut self) {
        self.refs.clear();
        self.ref_young = None;
        self.forget_ref_phase();
    }

    /// Forgets the pulses' offset on the arrival floor and its spread (a
    /// restart, a renumbering of the samples, or pulses that moved).
    fn forget_ref_phase(&mut self) {
        self.ref_phase = None;
        self.ref_dev = REF_DEV_START;
        self.ref_early = 0;
    }

    /// The pulse number `x` given by the pulse line, moved by the whole
    /// periods the samples' numbering has moved against the pulses: the
    /// pulse's place on the arrival floor (`xf`, fractional) keeps a steady
    /// offset from its number until the samples are renumbered (a loss
    /// wrongly inferred or announced); when that offset has jumped by more
    /// than half a period on `REF_JUMP_RUN` pulses in a row, the pulses are
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
        if self.ref_jumps < REF_JUMP_RUN {
            return x;
        }
        self.ref_jumps = 0;
        self.refs.clear();
        self.st.references_renumbered += 1;
        x + jump
    }

    /// The estimate for sample `n` that arrived at `q`. Where a line's value
    /// leaves the i64 range (times near its ends), the arrival stands.
    #[inline(always)]
    fn estimate_at(&self, n: i64, q: i64, period: Option<f64>) -> Timestamp {
        if let Some(v) = self.reference_estimate(n, q, period) {
            return Timestamp::from_nanos(v);
        }
        let line: Option<Line> = self.young_line().or(self
            .fit
            .active()
            .filter(|l| l.slope > 0.0 && self.fit.len() >= 2));
        let raw = match line {
            Some(l) => match l.eval(n) {
                Some(e) if self.fit.mode == FitMode::Hull || !self.matured => e.min(q),
                Some(e) => e,
                None => q,
            },
            None => match self.floor_line(period).and_then(|l| l.eval(n)) {
                Some(f) => f.min(q),
                None => q,
            },
        };
        let latency = match self.ref_offset {
            Some(o) => round(o),
            None => self.cfg.min_latency.as_nanos(),
        };
        Timestamp::from_nanos(raw.saturating_sub(latency))
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
    /// [`LineFit::slope_precision`]) and the arrival fit's, once the arrival
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
    /// once per pulse; see [`LineFit::young_summary`]). Its level is the
    /// floor of the mixed slope under all but an eighth of the pulses
    /// ([`LineFit::low_level`]): with one-sided pulse jitter (a pulse
    /// stamped by an interrupt handler) that is the level the floor takes
    /// once the pulse fit has statistics, without the tilt of a floor edge
    /// through two of a handful of pulses; with a wide symmetric jitter it
    /// sinks less with each new low pulse than the lowest one does, and a
    /// glitch below the pulses does not pull it down.
    fn summarise_pulses(&mut self) {
        let own = self.refs.own_line().map(|l| l.slope);
        self.ref_young = self
            .refs
            .young_summary(|wp| own.map(|s| self.mixed_slope(s, wp).unwrap_or(s)));
    }

    /// The reference line's value at `n`, while references are recent.
    fn reference_estimate(&self, n: i64, q: i64, period: Option<f64>) -> Option<i64> {
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

#[cfg(test)]
mod tests;
