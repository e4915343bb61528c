//! The estimator's configuration, errors, estimates and status.

use serde::{Deserialize, Serialize};

use super::{FitMode, Tuning};
use crate::{TimeDelta, Timestamp};

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

/// Configuration of an [`Estimator`](super::Estimator): the stream's
/// facts (window, expected period, minimum latency, counter width), the
/// user's prior on losses (the loss threshold), the output guarantee
/// (monotonic) and the model's [`Tuning`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EstimatorConfig {
    /// Base estimation window. The history may grow to `history_factor ×
    /// window` while the data fit one clock line; it is cut after a detected
    /// change. A gap in the arrivals longer than the window restarts the fit.
    pub window: TimeDelta,
    /// Expected period, used until the estimator has measured its own. If
    /// the median of the first arrival gaps is 1.5 × it or more and all
    /// but one of them 1.3 × (a rate set up twice too high, not a few early
    /// losses), the median replaces it and the fit starts over.
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
    /// Estimates never go backwards (default `true`): an estimate the model
    /// puts at or before the one returned before it is returned 1 ns after
    /// that one instead, and counted in [`EstimatorStatus::held`]. So each
    /// estimate is strictly later than the one before, as an aligner or an
    /// interpolation buffer needs. The exceptions are a step back of the
    /// arrival clock (three arrivals in a row before the last accepted one,
    /// counted in `restarts`), which the estimates follow back, and
    /// [`Estimator::reset`](super::Estimator::reset). `false` returns the
    /// model's estimates as they are.
    #[serde(default = "default_true")]
    pub monotonic: bool,
    /// The model's tuning values (default [`Tuning::default`]); see
    /// [`Tuning`] for what each does and why it has its value.
    #[serde(default)]
    pub tuning: Tuning,
}

/// Serde helper: a flag that defaults to true.
fn default_true() -> bool {
    true
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
            monotonic: true,
            tuning: Tuning::default(),
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

    /// Sets whether estimates never go backwards (see
    /// [`EstimatorConfig::monotonic`]).
    pub fn with_monotonic(mut self, monotonic: bool) -> Self {
        self.monotonic = monotonic;
        self
    }

    /// Sets the model's tuning values (see [`Tuning`]).
    pub fn with_tuning(mut self, tuning: Tuning) -> Self {
        self.tuning = tuning;
        self
    }

    /// Sets the counter width in bits.
    pub fn with_counter_bits(mut self, bits: u32) -> Self {
        self.counter_bits = Some(bits);
        self
    }

    pub(super) fn validate(&self) -> Result<(), EstimatorError> {
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
    /// arrivals may revise it (an ambiguous gap judged a delay after all
    /// by the next arrival, or a few arrivals on by a backlog draining
    /// behind it); the estimate of the arrival that revises it says so in
    /// [`Estimate::revised`]. So a later sample can repeat a number already
    /// returned; a gap in the numbers is a count of lost samples, except
    /// across a restart or where a sensor that halved its rate was
    /// renumbered.
    pub sample: i64,
    /// Samples judged lost right before this one when it was estimated.
    pub lost_before: u64,
    /// How many earlier samples' numbers this arrival revised (0 almost
    /// always): the sample before it, judged again now that this one
    /// arrived (a loss that was a delay, or the reverse), or the samples
    /// since a verdict that this arrival overturned (a backlog drained
    /// behind a stall), or a run renumbered after the sensor's rate
    /// changed. Their estimates were returned and stand; only their
    /// numbers, and the numbering after them, change. Counted in
    /// [`EstimatorStatus::revisions`].
    #[serde(default)]
    pub revised: u32,
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
    /// Estimates held: the model put them at or before the estimate
    /// returned before them, and they were returned 1 ns after it instead
    /// (see [`EstimatorConfig::monotonic`]).
    #[serde(default)]
    pub held: u64,
    /// Numbers of samples already returned that later arrivals (or an
    /// announced loss) revised (see [`Estimate::revised`]).
    #[serde(default)]
    pub revisions: u64,
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
    /// The stream's rate wanders (an auto-exposure camera, a motor): no
    /// line fits it, and the estimates follow the arrivals with a local
    /// tracker (see `docs/stamp.md`). Absent from the JSON when false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub wandering: bool,
    /// The last estimate returned.
    pub last_estimate: Option<Timestamp>,
}

/// Serde helper: leave a false flag out.
fn is_false(b: &bool) -> bool {
    !*b
}
