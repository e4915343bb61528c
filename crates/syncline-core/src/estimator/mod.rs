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
//! # The model, in stages
//!
//! A periodic sensor acquires sample `n` at `t0 + n·P` on its own clock;
//! the host sees it arrive at that time plus a delay that is at least the
//! minimum latency and otherwise only ever positive (one-sided: the
//! transport, a driver's queue, a stall). Each stage owns its state:
//!
//! 1. **Numbering** (this file, `loss.rs`, `counter.rs`, `packets.rs`):
//!    which sample number the arrival is. The device counter decides when
//!    there is one (`counter::Counter`); else an announced loss
//!    ([`Estimator::update_loss`]); else, where the bursts show packets of
//!    one size, the packets' lattice (`packets::Packets`: a short packet
//!    lost the rest of its samples); else inference from the arrival
//!    against the clock line: a sample late by whole periods is either
//!    the first after lost samples or a delayed one.
//! 2. **The clock line** (`fit.rs`): period and offset fitted on the
//!    numbered arrivals for the one-sided delay law: the lower convex hull
//!    (the one-way LP line, exact for one-sided delays, stalls and
//!    bursts), least squares when the residuals show symmetric jitter. The
//!    history grows to `history_factor × window` while the arrivals fit one
//!    line. Before the fit matures, the young line: a running minimum at
//!    the expected period (`Estimator::young_line`). A rate that wanders
//!    slower than the history spans is followed by forgetting the older
//!    half of the history (`Wander::forget`); one that wanders faster (no
//!    line fits) by a local tracker (`wander.rs`).
//! 3. **Changes** (`changes.rs`, called from `Estimator::commit`): runs
//!    of residuals far above or below the line, or beyond the jitter's
//!    reach, signal a period step or a clock step; a slope test of the
//!    newest samples, and the samples that come below the floor more
//!    often than a line that holds allows, find a shorter period under
//!    any jitter (until it is told, least-squares estimates are held
//!    within the mean residual of their arrivals). The history
//!    is then cut where the change lies (two floors fitted on either side
//!    of it), so that only samples after it are kept; a run falling
//!    steadily from its peak is a draining backlog, not a change. Stalls
//!    and the bursts after them are queued samples, kept out of the
//!    line's level (`Estimator::queued_behind`).
//! 4. **Quantised arrival clocks** (`quant.rs`): the gcd of the arrival
//!    gaps, or a host timer tick the stamps gather on; the line is then
//!    the maximum-likelihood one for delays read on that grid.
//! 5. **Reference pulses** (`reference.rs`): hardware pulses stamped at
//!    acquisition are numbered against the samples and, while recent, give
//!    the estimates' line and the latency.
//! 6. **Output** (`output.rs`): the estimate is the sample's place on the
//!    line, less the latency; by default it is held 1 ns after the one
//!    before it if the model would put it earlier, and counted.
//!
//! # One update, in code
//!
//! [`Estimator::update`] (and [`Estimator::update_with_index`]) is a
//! short sequence of calls, each a method named for its step:
//!
//! - `update_inner`: the arrival's own checks. `arrival_checks` (a
//!   backwards arrival is rejected; a step back of the host clock or a gap
//!   longer than the window restarts the fits, `restart`), `duplicate`
//!   (a repeated device counter, `counter.rs`), `check_first_gaps` (a
//!   configured period the first gaps contradict, `check_expected`),
//!   `age_announcements` (announced losses no gap showed, `loss.rs`).
//!   A drain watch under way meets the arrival first (`watch_drain`).
//! - `number_and_estimate`, the stages proper:
//!   `packet_held` (the sample before this one waited for it in a
//!   packet); `confirm_pending` (stage 1, confirmation: where this
//!   arrival starts a burst, `packet_end` numbers the bursts on the
//!   packets' lattice; this arrival settles the pending sample's number,
//!   `resolve_and_commit`, which
//!   then enters stages 2 and 3 in `commit`); `queued_behind` (a burst
//!   after a stall); `number_arrival` (stage 1, on arrival:
//!   `infer_number`, `track_link`); `note_gap` (stage 4); `estimate_at`
//!   (stages 2 and 5: the line, or the pulses' line, at the number);
//!   `hold_pending` (the sample waits for the next arrival to confirm
//!   its number).
//! - `output` (stage 6).
//!
//! # Where a loss is decided
//!
//! A gap's samples are taken for lost or for a delay in
//! `Estimator::infer_number`, on arrival, in this order: the device
//! counter's step; announced losses that fit the gap; in packets of one
//! size, the packets' lattice (`Estimator::number_packets`, which also
//! numbers a short packet's last sample at its packet's end when the next
//! burst starts); a backlog draining
//! at a link's interval (`link_losses`); else the odds of a loss against
//! a delay (the evidence of earlier resolved gaps, `loss::LossEvidence`,
//! and the jitter the fit has seen) against the loss threshold. An
//! ambiguous verdict is settled by the next arrival in
//! `Estimator::resolve_and_commit` (`Estimator::next_verdict`, `loss.rs`);
//! two watches let later arrivals overturn it when a backlog drains
//! behind it (`Estimator::watch_loss`, `Estimator::watch_drain`). An
//! overturn revises in place the numbers of the points it covers and
//! brings each stage that depends on them to the new numbers by a
//! bounded update of its own (the fit's points put back or moved and
//! refitted, the change runs and the wander screen started over, the
//! loss evidence and counts corrected); nothing is copied or replayed. A
//! revised number is counted in `revisions` and told in
//! [`Estimate::revised`].
//!
//! Every tuning value (thresholds, run lengths, priors) is a field of
//! [`Tuning`], with why it has its value. A latency every sample shares
//! cannot be seen in arrival times and stays in the estimates (less the
//! configured minimum latency; under symmetric jitter, the floor's level
//! as of the switch into least squares or the last change told by a run
//! of samples far above the line: a period step, or arrivals coming
//! earlier than the line, leave the delays' law and the level as they
//! were, `Changes::level_kept`).
//! `docs/stamp.md` is the user's guide.
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

// The stages (see the module documentation): numbering (here, `loss`,
// `counter`, `packets`), the clock line (`fit`, `wander`), changes (`changes`), a
// quantised arrival clock (`quant`), reference pulses (`reference`), the
// output (`output`); the public types (`config`) and the tuning values
// (`tuning`).
mod changes;
mod config;
mod counter;
mod fit;
mod history;
mod loss;
mod output;
mod packets;
mod quant;
mod reference;
mod tuning;
mod wander;

use changes::{Changes, Residuals};
pub use config::{Estimate, EstimatorConfig, EstimatorError, EstimatorStatus, ReferenceOutcome};
use counter::Counter;
pub use fit::FitMode;
use fit::{Line, LineFit, Point, round};
use loss::{LossEvidence, STALL_LENGTHS};
use output::Monotone;
use packets::{LATTICE_REACH, Lattice, Packets};
use quant::ArrivalClock;
use reference::Pulses;
pub use tuning::Tuning;
use wander::Wander;

use crate::{TimeDelta, Timestamp};

/// The largest ring buffer (keeps every relative coordinate and sum in
/// range whatever `max_samples` says).
const MAX_CAPACITY: usize = 1 << 20;
/// Arrival gaps whose median is checked against the configured period,
/// and the factor by which it must exceed it to drop the configured period
/// (see `Estimator::check_expected`).
const FIRST_GAPS: usize = 8;
/// Host timer ticks an arrival clock may be quantised on, tried where the
/// arrivals are not exact multiples of one tick (see
/// `Estimator::soft_tick`), the coarsest first: Windows' default
/// 15.625 ms, Linux's `HZ` = 100, 250 and 300, and 2 and 1 ms.
const HOST_TICKS: [f64; 6] = [
    15_625_000.0,
    10_000_000.0,
    4_000_000.0,
    10_000_000.0 / 3.0,
    2_000_000.0,
    1_000_000.0,
];
/// Arrivals watched after a pause verdict for a draining backlog (see
/// `Estimator::watch_drain`).
const DRAIN_WATCH: usize = 32;
/// The odds of a loss against a delay that loss threshold `k` asks for
/// before a late sample is numbered after a loss: `2^(k − 2)` (1 at the
/// default 2; 0 for `k = 0`, infinite from `k = 1026` on).
fn loss_odds(k: u32) -> f64 {
    match k {
        0 => 0.0,
        k => f64::from(2u32).powi(i32::try_from(k.min(1100)).unwrap_or(1100) - 2),
    }
}

/// A sample whose number may still be revised by the next arrival.
#[derive(Debug, Clone, Copy)]
struct Pending {
    point: Point,
    /// The number returned for the sample (its estimate's `sample`).
    sample: i64,
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

/// Delay verdicts in a row, each on a sample numbered right after the one
/// before it and late by the same whole periods, each judged by a next
/// sample on time for the loss reading (see [`Estimator::loss_confirmed`]).
#[derive(Debug, Clone, Copy)]
struct DelayRun {
    /// The last sample of the run, judged delayed.
    n: i64,
    /// The samples the loss reading took for lost before each.
    m: i64,
    /// The likelihood ratio of the run's next samples so far: each on
    /// time for the loss reading against stalled again on the delay one.
    carry: f64,
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

/// Late samples coming a fixed interval apart, shorter than a period: a
/// backlog drained by a link faster than the sensor (see
/// [`Estimator::link_losses`]).
#[derive(Debug, Clone, Copy)]
struct LinkDrain {
    /// The sum of the gaps that fit the link and of their intervals: the
    /// link's interval is their ratio.
    sum_gap: f64,
    sum_k: f64,
    /// The sum of their squared deviations from a whole number of
    /// intervals, each over its number of intervals (the variance of one
    /// interval, times the gaps less one).
    m2: f64,
    /// How many gaps fit the link.
    gaps: u32,
}

impl LinkDrain {
    fn start(gap: f64) -> Self {
        LinkDrain {
            sum_gap: gap,
            sum_k: 1.0,
            m2: 0.0,
            gaps: 1,
        }
    }

    /// The link's interval.
    fn interval(&self) -> f64 {
        self.sum_gap / self.sum_k
    }

    /// The intervals in `gap` if it is a whole number `k ≥ 1` of them:
    /// within `Tuning::link_tol` of an interval for one, within `Tuning::link_sd`
    /// standard deviations of a `k`-interval gap for more.
    fn intervals(&self, gap: f64, t: &Tuning) -> Option<f64> {
        let d = self.interval();
        let k = (gap / d).round();
        let tol = if k == 1.0 {
            t.link_tol * d
        } else {
            // k intervals spread √k times one; k times the interval's
            // error, measured from so many gaps, adds k²/gaps. Measured
            // from a few gaps, the spread is uncertain: the bound widens
            // like Student's t with as many degrees of freedom.
            let n = f64::from(self.gaps.max(2));
            let sd = (self.m2 / (n - 1.0)).sqrt() * (k + k * k / n).sqrt();
            let tol = t.link_sd * (1.0 + t.link_widen / (n - 1.0)) * sd;
            // Not `clamp`, which panics where a tuning puts the floor above
            // the cap; NaN stays NaN (no gap is within it).
            if tol.is_nan() {
                tol
            } else {
                tol.max(t.link_floor * d).min(t.link_tol * d)
            }
        };
        (k >= 1.0 && (gap - k * d).abs() <= tol).then_some(k)
    }

    /// Adds a gap of `k` intervals.
    fn push(&mut self, gap: f64, k: f64) {
        let dev = gap - k * self.interval();
        self.sum_gap += gap;
        self.sum_k += k;
        self.m2 += dev * (gap - k * self.interval()) / k;
        self.gaps = self.gaps.saturating_add(1);
    }
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
/// [`Estimator::watch_drain`]). The fit's history is marked while it
/// lasts (its points as the verdict found them stay in their slots).
#[derive(Debug, Clone)]
struct DrainWatch {
    /// The judged sample, as the verdict found it (its two readings).
    judged: Pending,
    /// The verdict restarted the fits (a pause on a new phase).
    restarted: bool,
    /// The arrival clock as the verdict found it: a restart forgets it,
    /// and an overturn, which undoes the restart, puts it back (else the
    /// gcd of the drain's gaps, one link interval each, started it over).
    clock: ArrivalClock,
    /// The quantised tick the fit took from that clock.
    quantised_tick: Option<f64>,
    /// The loss evidence and the counts of losses, delays and changes as
    /// the verdict found them: the verdict and the arrivals numbered on
    /// it added to them, and an overturn takes those back.
    evidence: LossEvidence,
    losses: u64,
    delays: u64,
    changes: u64,
    /// The judged sample's arrival (the first after the gap).
    first: i64,
    period: f64,
    /// The deficit on one period per sample, in ns, from which the
    /// arrivals are a drain.
    confirm: f64,
    /// The arrivals since the judged one, the judging one first.
    arrivals: [i64; DRAIN_WATCH],
    len: usize,
    /// The link the gaps measure, from the first gap shorter than a
    /// period on.
    link: Option<LinkDrain>,
    /// The link as measured before the newest arrival's gap.
    link_before: Option<LinkDrain>,
    /// The link intervals each arrival's gap spans: one for a gap shorter
    /// than a period, `k` for a gap of `k` of them (`k − 1` samples lost
    /// on the link; see [`Estimator::watch_drain`]).
    steps: [u32; DRAIN_WATCH],
    /// The numbers returned for those arrivals (`i64::MIN` where none was).
    numbers: [i64; DRAIN_WATCH],
}

/// The timestamp estimator. See the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Estimator {
    cfg: EstimatorConfig,
    max_span: i64,
    fit: LineFit,
    /// Stage 5: the reference pulses (see `reference.rs`).
    pulses: Pulses,
    pending: Option<Pending>,
    /// The two readings of the arriving sample's gap, if ambiguous: set by
    /// [`Self::infer_number`], kept with the sample by
    /// [`Self::hold_pending`] (a field, not a returned value: the steady
    /// path's `None` is written long before it is read).
    arrival_alt: Option<Ambiguous>,
    last_arrival: Option<i64>,
    /// The current burst (samples arriving within `Tuning::queued` of a
    /// period of each other: a packet, or a backlog after a stall): its
    /// first arrival and how many samples it holds so far (see
    /// [`Self::infer_early`]).
    burst: Option<(i64, u32)>,
    /// The newest bursts, the packets' lattice they show and the newest
    /// number on it (see [`Self::packet_end`]).
    packets: Packets,
    /// The number [`Self::packet_end`] gave the arriving sample (the first
    /// of a packet), if any: taken by [`Self::number_arrival`].
    packet_next: Option<i64>,
    /// Set by a restart after a gap longer than the window that numbered
    /// the samples on past it: the next arrival tells whether that was a
    /// pause (see [`Self::note_gap_restart`]).
    gap_restart: bool,
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
    /// Stage 1: the evidence of losses against delays (see `loss.rs`).
    evidence: LossEvidence,
    /// Losses announced and not yet seen as a gap, and the updates since.
    announced: u64,
    announce_age: u32,
    /// Stage 1: the device counter (see `counter.rs`).
    counter: Counter,
    /// Stage 4: the arrival clock's tick (see [`Self::note_gap`]).
    clock: ArrivalClock,
    /// Committed numbering steps in a row that share a divisor above 1
    /// (see [`Self::renumber_steps`]).
    step_run: DivisorRun,
    /// The product of the divisors the samples were renumbered by (see
    /// [`Self::renumber_steps`]; 1 if never): the sensor's rate had fallen
    /// that many times below the one first numbered.
    rate_divisor: u64,
    /// The period right after the last renumbering (the expected one, or
    /// the fit's without one), while `rate_divisor` is above 1.
    renumbered_period: Option<f64>,
    /// A run of committed points one number apart whose arrival gaps are
    /// `1/d` of the period (see [`Self::restore_rate`]): `d`, the run's
    /// length and the number before its first point.
    restore_run: (u64, u32, i64),
    /// The number of the last committed point (any value before the first).
    committed_n: i64,
    /// Stage 3: the change detector (see `changes.rs`).
    changes: Changes,
    /// The running-minimum anchor of the young fit, and whether the fit
    /// has matured.
    young_anchor: Option<Point>,
    matured: bool,
    /// A pause verdict under watch (see [`Self::watch_drain`]).
    drain_watch: Option<Box<DrainWatch>>,
    /// The drain watch's room while none is under watch, allocated with
    /// the estimator.
    drain_room: Option<Box<DrainWatch>>,
    /// A loss verdict under watch (see [`Self::watch_loss`]).
    loss_watch: Option<LossWatch>,
    /// The delay verdicts in a row that the next one extends (see
    /// [`Self::loss_confirmed`]).
    delay_run: Option<DelayRun>,
    /// The run as the verdict being given would extend it (set by
    /// [`Self::loss_confirmed`], kept if the verdict is a delay).
    delay_run_next: Option<DelayRun>,
    /// A backlog is draining: samples arriving less than a period after
    /// their predecessor and still late are queued (see
    /// [`Self::watch_drain`]).
    draining: bool,
    /// Numbers of earlier samples the current update revised (see
    /// [`Estimate::revised`]).
    revised_now: u32,
    /// A backlog draining at a link's interval (see [`Self::link_losses`]).
    link: Option<LinkDrain>,
    /// The wander test and the local tracker (see `wander.rs`).
    wander: Wander,
    /// The output stage: estimates never go backwards (see `output.rs`).
    out: Monotone,
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
        let mut fit = LineFit::new(cap, cfg.tuning);
        fit.window = w;
        fit.prior_period = cfg.period.map(|p| p.as_nanos() as f64);
        let pulses = Pulses::new(cap, &cfg);
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
            held: 0,
            revisions: 0,
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
            wandering: false,
            last_estimate: None,
        };
        let mut est = Estimator {
            cfg,
            max_span,
            fit,
            pulses,
            pending: None,
            arrival_alt: None,
            last_arrival: None,
            burst: None,
            packets: Packets::default(),
            packet_next: None,
            gap_restart: false,
            back_run: 0,
            back_last: 0,
            last_n: None,
            next_start: 0,
            learned_period: None,
            expected: cfg.period.map(|p| p.as_nanos() as f64),
            first_gaps: [0; FIRST_GAPS],
            first_gap_count: 0,
            evidence: LossEvidence::default(),
            announced: 0,
            announce_age: 0,
            counter: Counter::default(),
            clock: ArrivalClock::default(),
            step_run: DivisorRun::default(),
            rate_divisor: 1,
            renumbered_period: None,
            restore_run: (0, 0, 0),
            committed_n: 0,
            changes: Changes::default(),
            young_anchor: None,
            matured: false,
            drain_watch: None,
            drain_room: None,
            loss_watch: None,
            delay_run: None,
            delay_run_next: None,
            draining: false,
            revised_now: 0,
            link: None,
            wander: Wander::new(cfg.tuning, cap),
            out: Monotone::default(),
            st,
        };
        est.drain_room = Some(Box::new(DrainWatch {
            judged: Pending {
                point: Point {
                    freed: false,
                    n: 0,
                    q: 0,
                    queued: false,
                },
                sample: 0,
                alt: None,
                drained: false,
            },
            restarted: false,
            clock: ArrivalClock::default(),
            quantised_tick: None,
            evidence: LossEvidence::default(),
            losses: 0,
            delays: 0,
            changes: 0,
            first: 0,
            period: 0.0,
            confirm: 0.0,
            arrivals: [0; DRAIN_WATCH],
            len: 0,
            link: None,
            link_before: None,
            steps: [1; DRAIN_WATCH],
            numbers: [i64::MIN; DRAIN_WATCH],
        }));
        Ok(est)
    }

    /// Ends the drain watch, if any: the verdict stands.
    fn end_drain_watch(&mut self) {
        if let Some(w) = self.drain_watch.take() {
            self.drain_room = Some(w);
            self.fit.unmark();
        }
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
    ///
    /// The estimate is later than the one returned before it unless
    /// [`EstimatorConfig::monotonic`] is off (see there).
    pub fn update(&mut self, arrival: Timestamp) -> Result<Estimate, EstimatorError> {
        self.revised_now = 0;
        let e = self.update_inner(arrival.as_nanos(), None)?;
        Ok(self.output(e))
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
        self.revised_now = 0;
        let e = self.update_inner(arrival.as_nanos(), Some(index))?;
        Ok(self.output(e))
    }

    /// `k` numbers of samples already returned were revised by the current
    /// update.
    fn note_revisions(&mut self, k: usize) {
        if k > 0 {
            self.st.revisions = self.st.revisions.saturating_add(k as u64);
            self.revised_now = self
                .revised_now
                .saturating_add(u32::try_from(k).unwrap_or(u32::MAX));
        }
    }

    /// The output stage: the model's estimate `e`, held after the last one
    /// returned if it would go back (see [`EstimatorConfig::monotonic`]).
    #[inline]
    fn output(&mut self, mut e: Estimate) -> Estimate {
        e.revised = self.revised_now;
        e.stamp = self.out.pass(e.stamp, self.cfg.monotonic);
        self.st.last_estimate = Some(e.stamp);
        e
    }

    /// The driver announced one lost sample. It must show up as a gap
    /// within the next 10 updates, else it is counted as rejected. An
    /// announcement right after the sample that ended the gap (a driver
    /// that finds the loss in that sample's counter) numbers that sample
    /// after the loss, if its gap fits. A gap is numbered from an
    /// announcement when the sample is on time for it as often as the
    /// driver's announcements have proven right (see `announcement_fits`).
    pub fn update_loss(&mut self) {
        self.end_drain_watch();
        self.loss_watch = None;
        self.announced = self.announced.saturating_add(1);
        self.announce_age = 0;
        self.st.losses_announced += 1;
        self.announce_late();
    }

    /// A hardware reference pulse stamped `hw` (host clock) at a sample's
    /// acquisition. References lock the estimates to the pulses. A reference
    /// before the estimator can place it is kept (the latest one) and used
    /// once possible.
    pub fn update_reference(&mut self, hw: Timestamp) -> ReferenceOutcome {
        self.end_drain_watch();
        self.loss_watch = None;
        self.st.references += 1;
        self.place_reference(hw.as_nanos())
    }

    /// Stage 5: places the pulse stamped `h` (see [`Pulses::place`]).
    fn place_reference(&mut self, h: i64) -> ReferenceOutcome {
        self.pulses
            .place(h, &self.fit, &self.cfg, self.max_span, &mut self.st)
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
        st.wandering = self.wander.active;
        st.held = self.out.held;
        st.arrival_tick_ns = self.fit.quantised_tick.map(round);
        st.latency_ns = match self.pulses.offset {
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

    /// One arrival through the stages (see the module documentation):
    /// the checks of the arrival itself, then [`Self::number_and_estimate`].
    #[inline(always)]
    fn update_inner(&mut self, q: i64, index: Option<u64>) -> Result<Estimate, EstimatorError> {
        // A drain watch that overturns its verdict numbers the arrival by
        // the link intervals it counted in its gap.
        let link_losses = match self.drain_watch.is_some() {
            true => self.watch_drain(q, index),
            false => None,
        };
        let since_last = self.arrival_checks(q, index)?;
        if let Some(e) = self.duplicate(q, index) {
            return Ok(e);
        }
        self.check_first_gaps(since_last);
        self.age_announcements();
        self.number_and_estimate(q, index, since_last, link_losses)
    }

    /// The arrival `q` against the one before it: returns the time since
    /// it (none for the first arrival or after a step back of the host
    /// clock). An arrival before the previous one is rejected (see
    /// [`Self::update`]) unless it is the `Tuning::back_run`-th in a row;
    /// that step back, or a gap longer than the window, restarts the fits
    /// ([`Self::restart`]).
    #[inline(always)]
    fn arrival_checks(
        &mut self,
        q: i64,
        index: Option<u64>,
    ) -> Result<Option<i64>, EstimatorError> {
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
                if run < self.cfg.tuning.back_run {
                    self.st.rejected_backwards += 1;
                    return Err(EstimatorError::Backwards {
                        arrival: q,
                        previous: last,
                    });
                }
                // The host clock stepped back: the rejected arrivals were
                // samples too, so this one follows them in the numbering;
                // there is no gap to the previous arrival to judge. The
                // estimates follow the clock back.
                self.restart(i64::from(run));
                self.out.forget();
                self.last_arrival = None;
                since_last = None;
            } else if gap > self.cfg.window.as_nanos()
                && !(index.is_none() && (self.jitter_reaches(q) || self.line_spans(gap)))
            {
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
                    None => {
                        // (Under a jitter spanning periods, such a gap
                        // may be one long delay: no evidence either way.)
                        self.gap_restart = by_gap > 1 && !self.fit.wide_jitter();
                        self.restart(by_gap);
                    }
                }
            } else if self.gap_restart {
                self.note_gap_restart(gap);
            }
        }
        self.back_run = 0;
        Ok(since_last)
    }

    /// Records the first arrival gaps while a period is expected (see
    /// [`Self::check_expected`]).
    #[inline(always)]
    fn check_first_gaps(&mut self, since_last: Option<i64>) {
        if self.first_gap_count < FIRST_GAPS
            && self.expected.is_some()
            && let Some(gap) = since_last
        {
            self.check_expected(gap);
        }
    }

    /// The stages for the arrival `q`, from the pending sample's verdict on.
    #[inline(always)]
    fn number_and_estimate(
        &mut self,
        q: i64,
        index: Option<u64>,
        since_last: Option<i64>,
        link_losses: Option<i64>,
    ) -> Result<Estimate, EstimatorError> {
        let held = self.packet_held(q, since_last);
        // Stage 1, numbering (confirmation), then stages 2 and 3 for the
        // pending sample.
        self.confirm_pending(q, index, since_last);
        let period = self.period_f();
        let (queued, late_behind) = self.queued_behind(q, since_last, period);
        // Stage 1, numbering (on arrival).
        let (n, lost) = self.number_arrival(q, index, since_last, period, queued, link_losses);
        let queued = ((queued
            || (late_behind && n == self.last_n.map_or(n, |l| l.saturating_add(1))))
            && !held)
            || Self::off_grid(self.clock.soft_tick, q, self.cfg.tuning.soft_tick_near)
            // An ambiguous arrival late by the stream's repeated hold.
            || (self.arrival_alt.is_some()
                && self.evidence.stall_len >= self.cfg.tuning.hold_records
                && self.held_as_before(n, q, period));
        // Stage 4: the arrival clock's tick; and the jitter's width, which
        // the clock line's statistics follow (`LineFit::note_gap`), beyond
        // what the arrival clock's resolution spreads the gaps by.
        if let Some(gap) = since_last {
            self.note_gap(gap, period);
            if let Some(p) = period {
                self.fit.note_gap(gap as f64, p, self.clock.resolution());
            }
        }
        // Stages 2 and 5: the estimate on the clock line (or the pulses'
        // line); the output stage (6) follows in `update`.
        let stamp = self.estimate_at(n, q, period);
        self.note_burst(q, since_last, period);
        self.hold_pending(Point {
            n,
            q,
            queued,
            freed: held && !queued,
        });
        Ok(Estimate {
            stamp,
            sample: n,
            lost_before: lost,
            revised: 0,
        })
    }

    /// A packet: a sample right behind the pending one (within
    /// `Tuning::queued` of a period), which is late on the floor by more
    /// than `Tuning::held_late` of a period, was held with it (a packet
    /// leaves when its last sample is ready; a backlog drains behind a
    /// stalled sample). The pending one waited and says nothing of the
    /// line; this one takes over as the burst's free point, and the
    /// burst's last sample, the least delayed, is the one left free.
    #[inline(always)]
    fn packet_held(&mut self, q: i64, since_last: Option<i64>) -> bool {
        match (since_last, self.period_f(), self.fit.floor()) {
            (Some(gap), Some(p), Some(f)) if (gap as f64) < self.cfg.tuning.queued * p => {
                let beyond = self.cfg.tuning.held_late * p;
                let Some(pd) = self.pending.as_mut() else {
                    return false;
                };
                // At the number it keeps now (a gap this short
                // resolves an ambiguous one as delayed).
                let n = pd.alt.map_or(pd.point.n, |a| a.delayed);
                let r = f.residual(n, pd.point.q);
                let late = r > beyond;
                pd.point.queued |= late;
                // A delay for certain (an ambiguous one is recorded with
                // its verdict).
                if late && pd.alt.is_none() {
                    self.evidence.note_stall(r / p);
                }
                // The packet's last sample lands below the floor by more
                // than a hold: the history was held above it.
                let (drop, first) = (-f.residual(n.saturating_add(1), q), (n, pd.point.q));
                if drop > beyond && self.evidence.stall_len < self.cfg.tuning.hold_records {
                    self.held_history(f, first, drop, p);
                }
                late
            }
            _ => false,
        }
    }

    /// A second floor: a packet's last sample landed `drop` ns below the
    /// floor `f`, at the least latency; where the newest free points of
    /// the history and the packet's first `(n, q)` all sit more than
    /// `Tuning::held_late` of a period above that new floor, they were
    /// held (a USB adapter's latency timer near the period holds every
    /// lone sample about that long, and only a packet's last sample comes
    /// free). Their lengths seed the stall record, each a certain delay;
    /// without them the first lone sample after the packet read as after a
    /// loss (on time for it on the new floor) and the numbering went a
    /// period off until the history was cut.
    #[cold]
    #[inline(never)]
    fn held_history(&mut self, f: Line, first: (i64, i64), drop: f64, p: f64) {
        let beyond = self.cfg.tuning.held_late * p;
        let pts = self.fit.history();
        let free = pts
            .iter()
            .rev()
            .filter(|pt| !pt.queued)
            .take(STALL_LENGTHS - 1);
        let lengths = std::iter::once(first)
            .chain(free.map(|pt| (pt.n, pt.q)))
            .map(|(n, q)| f.residual(n, q) + drop);
        let mut held = [0.0; STALL_LENGTHS];
        let mut k = 0;
        for r in lengths {
            if r.is_nan() || r <= beyond {
                return;
            }
            held[k] = r / p;
            k += 1;
        }
        if k < self.cfg.tuning.hold_records {
            return;
        }
        for &r in &held[..k] {
            self.evidence.note_stall(r);
            self.evidence.stall += 1.0;
        }
        self.cap_evidence();
    }

    /// Follows the burst the arrival `q` belongs to: a new one unless it
    /// came within `Tuning::burst_gap` of a period after the one before.
    #[inline(always)]
    fn note_burst(&mut self, q: i64, since_last: Option<i64>, period: Option<f64>) {
        self.burst = match (self.burst, since_last, period) {
            (Some((first, k)), Some(gap), Some(p))
                if (gap as f64) < self.cfg.tuning.burst_gap * p =>
            {
                Some((first, k.saturating_add(1)))
            }
            _ => Some((q, 1)),
        };
    }

    /// Stage 1, numbering (confirmation): the arrival `q` confirms or
    /// revises the pending sample's number ([`Self::resolve_and_commit`]),
    /// which then enters the clock line (stage 2) and the change detector
    /// (stage 3); a loss verdict under watch meets the arrival
    /// ([`Self::watch_loss`]).
    #[inline(always)]
    fn confirm_pending(&mut self, q: i64, index: Option<u64>, since_last: Option<i64>) {
        if let Some(mut p) = self.pending.take() {
            if let Some(gap) = since_last {
                self.packet_end(&mut p, q, gap);
            }
            self.resolve_and_commit(p, q);
            if self.step_run.len >= self.cfg.tuning.renumber_run {
                self.renumber_steps();
                // (Numbers on the lattice are of the numbering before.)
                self.packet_next = None;
            }
        }
        if self.loss_watch.is_some() {
            self.watch_loss(q, index, since_last);
        }
    }

    /// Stage 1, numbering (packets; see the `packets` module): the arrival
    /// `q`, `gap` after the pending sample `pd`, starts a new burst. The
    /// burst `pd` ends is recorded; where the newest bursts show packets of
    /// one size, the bursts are numbered on the packets' lattice
    /// ([`Self::number_packets`]). Not with a device counter (which numbers
    /// every sample) or announcements (which number the losses), nor on a
    /// quantised arrival clock (whose tick bunches samples too), after an
    /// ambiguous gap (whose verdict is still to come) or during a drain.
    #[inline(always)]
    fn packet_end(&mut self, pd: &mut Pending, q: i64, gap: i64) {
        let Some((first, k)) = self.burst else {
            return;
        };
        // (The steady path of a stream without bursts ends here.)
        if k == 1 && self.packets.idle() {
            return;
        }
        // The expected period where there is one: losses the numbering
        // missed lengthen the fit's (a tenth lost, a tenth longer).
        let Some(p) = self.expected.or_else(|| self.period_f()) else {
            return;
        };
        if (gap as f64) < self.cfg.tuning.burst_gap * p || self.fit.quantised_tick.is_some() {
            return;
        }
        let tol = self.cfg.tuning.packet_tol;
        let Some(lattice) = self.packets.note(first, k, q, p, tol) else {
            return;
        };
        if k <= lattice.m
            && pd.alt.is_none()
            && !pd.drained
            && !self.draining
            && self.counter.last.is_none()
            && self.st.losses_announced == 0
        {
            self.number_packets(pd, first, k, q, lattice);
        }
    }

    /// [`Self::packet_end`] for a burst of `k` samples, the first arriving
    /// at `first`; the next burst starts at `q`. The burst's packet is the
    /// one nearest its start on the lattice, numbered from the newest
    /// burst numbered on it (`Packets::memory`; without one, from the
    /// number the burst's first sample was given). Where the next burst
    /// starts on the lattice (within `Tuning::packet_tol` of a period of
    /// its packet's time), a burst short of a whole packet lost the rest:
    /// its last sample takes the packet's last number (counted as losses
    /// and as a revision), unless it was numbered later; a short burst
    /// followed off the lattice may be a packet a latency timer sent
    /// early. The next burst's first sample takes its packet's first
    /// number where it starts on the lattice, or is the next packet after
    /// a whole one; else it is judged as any arrival (a stall of a packet
    /// or more, by the loss stage). Whole packets lost between two bursts
    /// are read only where the starts were calm (`packets::CALM_RUN`), and
    /// short bursts not at all where the stream lately showed a latency
    /// timer's (`Packets::strike`).
    #[cold]
    fn number_packets(&mut self, pd: &mut Pending, first: i64, k: u32, q: i64, l: Lattice) {
        let mm = i64::from(l.m);
        let given = pd.point.n.saturating_sub(i64::from(k) - 1);
        let (w, on) = l.place(first);
        let (w_next, close) = l.place(q);
        // The memory's packet on this lattice, within reach of this burst's
        // (a memory off this lattice is of another one: a latency timer's
        // packets shift the bursts by their short packets).
        let memory = self.packets.memory.and_then(|(n, at)| {
            let (wm, on) = l.place(at);
            let d = w.saturating_sub(wm);
            (on && (0..=LATTICE_REACH).contains(&d)).then_some((n, wm))
        });
        let (base_n, base_w) = memory.unwrap_or((given, w));
        let number = |wx: i64| base_n.saturating_add(wx.saturating_sub(base_w).saturating_mul(mm));
        let own = number(w);
        // A short burst where short bursts were followed off the lattice
        // lately (a latency timer's, whose lone samples a jitter can bring
        // near the lattice) is judged as any arrival, and the burst after
        // it too.
        if k < l.m && l.struck {
            return self.keep_memory(memory, false, given, l.time(w));
        }
        if on && close && own >= given {
            let end = own.saturating_add(mm - 1);
            if end > pd.point.n {
                self.st.losses_detected += end.saturating_sub(pd.point.n) as u64;
                pd.point.n = end;
            }
        }
        let n = match close {
            // (A short burst off the lattice is no packet of it: a latency
            // timer's lone sample.)
            true if on || k == l.m => number(w_next),
            // After a whole packet, the next one (off the lattice) starts
            // at the number after its last.
            false if k == l.m && w_next == w.saturating_add(1) => pd.point.n.saturating_add(1),
            _ => {
                // A short burst followed off the lattice (twice within
                // `PACKET_RUN` bursts; once may be a jitter's tail): bursts
                // paced by a latency timer (a lone sample it sent shifts
                // the packets after it by a period), not packets of one
                // size; learned again before the lattice numbers any burst.
                if k < l.m && !close {
                    self.packets.strike();
                }
                return self.keep_memory(memory, k == l.m, given, l.time(w));
            }
        };
        // Whole packets lost before the next burst only where it starts on
        // the lattice and the newest `CALM_RUN` bursts all did (else a long
        // delay, a heavy tail's, may reach the packet after: the loss stage
        // judges it against the stream's evidence of stalls and losses).
        if w_next > w && (w_next == w.saturating_add(1) || (close && !l.strayed)) && n > pd.point.n
        {
            self.packet_next = Some(n);
            // (Remembered only where the burst starts on the lattice.)
            if close {
                self.packets.memory = Some((n, l.time(w_next)));
            }
        } else {
            self.keep_memory(memory, k == l.m, given, l.time(w));
        }
    }

    /// Where [`Self::number_packets`] numbered no burst on the lattice: a
    /// memory usable now stays; else a whole packet's first number `given`
    /// and its packet's time `at` become it (a short one's first sample
    /// may be any of its packet's).
    fn keep_memory(&mut self, memory: Option<(i64, i64)>, whole: bool, given: i64, at: i64) {
        if memory.is_none() && whole {
            self.packets.memory = Some((given, at));
        }
    }

    /// Whether the arrival `q` was queued right behind its predecessor,
    /// and whether it came within half a period of it and late
    /// ([`Self::late_behind`]). A sample queued so (a burst after a stall)
    /// is never the first after a loss: it was already waiting. Its delay
    /// says nothing of the line (left out of the fits' levels and of the
    /// change runs).
    #[inline(always)]
    fn queued_behind(
        &mut self,
        q: i64,
        since_last: Option<i64>,
        period: Option<f64>,
    ) -> (bool, bool) {
        let (queued, late_behind) = match (since_last, period) {
            (Some(gap), Some(p)) => {
                let gap = gap as f64;
                (
                    gap < self.cfg.tuning.queued * p
                        || (self.draining && self.still_draining(q, gap, p)),
                    gap < 0.5 * p && self.late_behind(q),
                )
            }
            _ => (false, false),
        };
        self.draining &= queued;
        (queued, late_behind)
    }

    /// Stage 1, numbering (on arrival): the number of the arriving sample
    /// `q` and the samples lost before it ([`Self::infer_number`]), from
    /// its residual on the floor if numbered next; the link a backlog
    /// drains at is followed ([`Self::track_link`]). `counted`: the
    /// samples a drain watch that overturned its verdict on this arrival
    /// counted lost on the link in its gap (see [`Self::watch_drain`]).
    #[inline(always)]
    fn number_arrival(
        &mut self,
        q: i64,
        index: Option<u64>,
        since_last: Option<i64>,
        period: Option<f64>,
        queued: bool,
        counted: Option<i64>,
    ) -> (i64, u64) {
        if let Some(n) = self.packet_next.take() {
            let lost = self
                .last_n
                .map_or(0, |l| n.saturating_sub(l).saturating_sub(1).max(0));
            self.st.losses_detected += lost as u64;
            self.arrival_alt = None;
            return (n, lost as u64);
        }
        let link_losses =
            counted.or_else(|| since_last.and_then(|gap| self.link_losses(gap as f64)));
        let r0 = self
            .last_n
            .and_then(|prev| self.floor_residual(prev.saturating_add(1), q, period));
        let (n, lost) = self.infer_number(q, index, period, r0, queued, link_losses);
        if let (Some(gap), Some(p)) = (since_last, period) {
            self.track_link(n, q, r0, gap as f64, p);
        }
        if index.is_some() {
            self.counter.last_n = Some(n);
        }
        (n, lost)
    }

    /// The arriving sample `n` (arrival `q`) becomes the pending one, whose
    /// number the next arrival confirms or revises.
    #[inline(always)]
    fn hold_pending(&mut self, point: Point) {
        let Point { n, q, .. } = point;
        if let Some(w) = self.drain_watch.as_mut() {
            w.numbers[w.len - 1] = n;
        }
        self.pending = Some(Pending {
            sample: n,
            point,
            alt: self.arrival_alt,
            drained: self.draining,
        });
        self.last_arrival = Some(q);
        self.last_n = Some(n);
        self.st.samples += 1;
    }

    /// After `Tuning::renumber_run` steps in a row that share a divisor `g ≥ 2`
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
        if self.counter.last.is_some() || self.st.references > 0 || self.announced > 0 {
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
        self.note_revisions(self.fit.len().saturating_sub(1));
        self.wander.clear();
        let artefacts = sum - sum / gcd;
        self.st.losses_detected = self.st.losses_detected.saturating_sub(artefacts);
        // The losses left after renumbering (taken as single ones) are the
        // evidence now.
        let left = (sum / gcd).saturating_sub(u64::from(len)) as f64;
        (self.evidence.loss, self.evidence.lost) = (left, left);
        self.cap_evidence();
        self.fit.prior_period = self.fit.prior_period.map(|p| p * g as f64);
        self.expected = self.expected.map(|p| p * g as f64);
        self.rate_divisor = self.rate_divisor.saturating_mul(gcd);
        self.renumbered_period = self.expected.or_else(|| self.fit.floor().map(|f| f.slope));
        self.forget_change_runs();
        self.st.changes_detected += 1;
    }

    /// Follows the committed point `p` (before it enters the fit) for a
    /// sensor back at a rate it had before a renumbering (see
    /// [`Self::renumber_steps`]): points one number apart whose arrival
    /// gaps are `1/d` of the period after the renumbering (the expected
    /// one, or the fit's without one), for a `d ≥ 2` that divides
    /// the renumberings' product. Returns the run's `d` and the number
    /// before its first point once `Tuning::restore_run` gaps in a row are so.
    #[cold]
    fn note_restored_rate(&mut self, p: Point) -> Option<(u64, i64)> {
        let (Some(prev), Some(e)) = (self.fit.last(), self.renumbered_period) else {
            self.restore_run = (0, 0, 0);
            return None;
        };
        let gap = p.q.saturating_sub(prev.q) as f64;
        let d = (e / gap).round();
        // Early on the floor, as no sample of the renumbered rate comes;
        // a backlog drained at a link's interval comes late.
        let early = self.fit.floor().is_some_and(|f| f.residual(p.n, p.q) < 0.0);
        let fits = p.n == prev.n.saturating_add(1)
            && early
            && d >= 2.0
            && d <= self.rate_divisor as f64
            && self.rate_divisor.is_multiple_of(d as u64)
            && (gap - e / d).abs() <= self.cfg.tuning.restore_tol * e / d;
        if !fits {
            self.restore_run = (0, 0, 0);
            return None;
        }
        let d = d as u64;
        self.restore_run = match self.restore_run {
            (k, len, pivot) if k == d && len > 0 => (d, len + 1, pivot),
            _ => (d, 1, prev.n),
        };
        let (_, len, pivot) = self.restore_run;
        (len >= self.cfg.tuning.restore_run).then_some((d, pivot))
    }

    /// The sensor came back to a rate `d` times higher after a
    /// renumbering (a camera that dropped every other frame under load for
    /// a while, then none): the period becomes `1/d` of the current one,
    /// and the points up to number `pivot` are numbered again by their
    /// arrival times at that period (counted in `changes_detected`), so
    /// that the history and the run after it lie on one line. (By their
    /// times, not `d` times their old numbers: a run too short to restore
    /// the rate, broken by a single loss, was numbered one apart already.)
    /// Without it, the run looks like a step of the line below it: the
    /// history is cut to a mix of both spacings, the fit's slope falls
    /// between the two periods, and the numbering after the next cut
    /// followed the wrong one (estimates up to 1.1 s early on a real EuRoC
    /// sequence).
    #[cold]
    fn restore_rate(&mut self, d: u64, pivot: i64) {
        self.fit.prior_period = self.fit.prior_period.map(|p| p / d as f64);
        self.expected = self.expected.map(|p| p / d as f64);
        let period = self.renumbered_period.map(|p| p / d as f64);
        if let Some(p) = period {
            let moved = self.fit.points().filter(|pt| pt.n <= pivot).count();
            self.fit.renumber_by_time(p, pivot);
            self.note_revisions(moved);
            self.wander.clear();
        }
        if !self.matured {
            // Its number was the old one's; the next point sets it again.
            self.young_anchor = None;
        }
        self.rate_divisor /= d;
        self.renumbered_period = period.filter(|_| self.rate_divisor > 1);
        self.restore_run = (0, 0, 0);
        self.step_run = DivisorRun::default();
        self.link = None;
        self.forget_change_runs();
        self.st.changes_detected += 1;
    }

    /// Records one of the first [`FIRST_GAPS`] arrival gaps; with all of
    /// them, replaces the configured period by their median if that exceeds
    /// it by `Tuning::period_contradicted` × and all but one of them by
    /// `Tuning::all_long` ×. A period configured too short by half (a 50 Hz
    /// sensor set up as 100 Hz) makes every gap look like one lost sample,
    /// and a gap a little longer than a loss's tolerance like a delay: the
    /// numbering would mix both for the whole run. Seven of the first eight
    /// gaps holding a loss is far less likely than a wrong setting. The fit
    /// then starts over with the median as the expected period (checked by the young fit like a configured one, and without
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
        // All but one gap long too: a wrong setting makes every gap long,
        // but for one jitter may shorten. Losses of one sample in five make
        // the median of eight gaps long about once in a hundred streams (a
        // property test found one, which then relearned its period from
        // the losses), seven of eight about once in ten thousand.
        let Some(p) = self.expected.filter(|&p| {
            median > self.cfg.tuning.period_contradicted * p
                && g[1] as f64 > self.cfg.tuning.all_long * p
        }) else {
            return;
        };
        // A whole multiple of the configured period (a rate set up in the
        // wrong unit or twice too high) is kept exact.
        let k = (median / p).round();
        let period = if (median - k * p).abs() <= self.cfg.tuning.period_multiple_tol * median {
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
        (self.evidence.loss, self.evidence.lost, self.evidence.stall) = (0.0, 0.0, 0.0);
    }

    /// Whether a sample arriving within half a period of its predecessor
    /// is late on the floor (numbered next) by more than
    /// `Tuning::queued_late` × the mean residual: queued behind it, if numbered
    /// next. At kilohertz rates a driver drains its FIFO 20-60 µs per
    /// sample, more than `Tuning::queued` of the period; the lateness tells those
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
                f.residual(n.saturating_add(1), q)
                    > self.cfg.tuning.queued_late * self.fit.mean_r.max(1.0)
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

    /// Whether an arrival after a gap longer than the window is still within
    /// the reach of the jitter the stream has shown, numbered right after
    /// the last sample: where the arrival gaps show a jitter spanning
    /// periods, its residual on the floor is under `Tuning::restart_reach`
    /// times the largest residual of a free (not queued) point in the
    /// history. Under exponential or heavy-tailed delays of several periods
    /// one long delay makes such a gap, and the samples queued behind it
    /// come in a burst; a restart threw the line away for it, numbered the
    /// delay as losses and laid the young line on the delayed arrivals,
    /// periods late until the floor came back (and the next long delay
    /// restarted it again before the statistics were ever complete). Kept,
    /// the line numbers the sample like any late one (`infer_number`). A
    /// jitter under a period (no wide jitter) and a pause beyond what the
    /// stream has shown restart as before. Rare (a gap longer than the
    /// window): the history is scanned.
    #[cold]
    fn jitter_reaches(&self, q: i64) -> bool {
        if !self.fit.wide_jitter() {
            return false;
        }
        let period = self.period_f();
        let (Some(_), Some(n), Some(line)) = (period, self.last_n, self.floor_line(period)) else {
            return false;
        };
        let shown = self
            .fit
            .points()
            .filter(|pt| !pt.queued)
            .map(|pt| line.residual(pt.n, pt.q))
            .fold(0.0f64, f64::max);
        line.residual(n.saturating_add(1), q) < self.cfg.tuning.restart_reach * shown
    }

    /// Whether the line, with its residual statistics, was fitted over a
    /// span at least as long as a gap longer than the window: extrapolated
    /// over the gap it is as good as over its own history, so the arrival
    /// after the gap is numbered like any late one (`infer_number`, up to
    /// the samples that span holds). A stall then costs its first sample
    /// at most: the backlog queued behind it comes in a burst, each sample
    /// numbered on the line. A pause is told by the next arrival, a period
    /// later (`next_verdict`: paused on the line, or restarted on a new
    /// phase). Restarted at once, every sample of a stall's backlog was
    /// estimated at its arrival, up to 20 periods late (the `stalls` draws
    /// of `scripts/family_draws.py` whose stalls outlast their window of
    /// ten periods).
    #[cold]
    fn line_spans(&self, gap: i64) -> bool {
        self.fit.stats_valid() && self.line_span() >= gap
    }

    /// The time the fit's history spans, ns.
    fn line_span(&self) -> i64 {
        match (self.fit.first(), self.fit.last()) {
            (Some(a), Some(b)) => b.q.saturating_sub(a.q),
            _ => 0,
        }
    }

    /// The arrival after a restart that numbered the samples on past a gap
    /// longer than the window, `gap` ns after it: a period or so later,
    /// the device paused (a stall would have queued it right behind), and
    /// the pause is evidence like one the next arrival confirms on the
    /// line (`next_verdict`). Uncounted, the first gap beyond the stalls'
    /// spread once the line had statistics met the priors alone, which
    /// read it as one sample stalled that long: a 28-sample loss burst of
    /// a 0.5 s sensor after an 11-period gap at the start was estimated
    /// 14 s early (`scripts/family_draws.py --seed 11 --kinds loss_bursty
    /// --first 3 --draws 1`: 153 x Rock's RMS, now 16 x). Counted on the
    /// gap alone, a stall longer than the window made the next long stall
    /// a loss (stalls draw 1307059: 0.00 to 0.71 x Rock's RMS).
    #[cold]
    fn note_gap_restart(&mut self, gap: i64) {
        self.gap_restart = false;
        if self.period_f().is_some_and(|p| gap as f64 >= 0.5 * p) {
            self.evidence.pause += 1.0;
            self.cap_evidence();
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
        self.delay_run = None;
        self.last_n = None;
        self.young_anchor = None;
        self.matured = false;
        self.fit.clear();
        self.packets.reset();
        self.pulses.restart(&self.cfg);
        self.forget_change_runs();
        self.clock.reset();
        self.step_run = DivisorRun::default();
        self.link = None;
        self.wander.clear();
        self.st.restarts += 1;
    }

    /// The floor line (or, with a single point, the expected period from
    /// it; on a quantised arrival clock, the quantised fit's line).
    fn floor_line(&self, period: Option<f64>) -> Option<Line> {
        if let Some(l) = self.young_line() {
            return Some(l);
        }
        if let Some(l) = self.fit.quantised_floor() {
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

    /// Before the fit has matured (fewer than `Tuning::young` free samples
    /// since the start or a restart) and with an expected period: the lowest line of
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
    /// `Tuning::young_check` samples on, their mean residual above it is at most
    /// `Tuning::young_ratio` × (plus `Tuning::young_slack` of a period) their mean
    /// residual above the floor, the lowest line of any slope. A
    /// period too short leaves the running minimum at its first sample and
    /// every later estimate falls behind by the error per period (3 s
    /// after 31 samples of a 1 Hz stream configured 10 % short); a period
    /// too long drags it to the newest arrival.
    #[cold]
    fn young_fits(&self, young: &Line) -> bool {
        if self.fit.len() < self.cfg.tuning.young_check {
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
        if floor.slope < self.cfg.tuning.queued * young.slope
            || floor.slope < self.cfg.tuning.young_flat * spacing
        {
            return true;
        }
        let (ry, rf) = self.fit.points().fold((0.0, 0.0), |(ry, rf), p| {
            (ry + young.residual(p.n, p.q), rf + floor.residual(p.n, p.q))
        });
        let k = self.fit.len() as f64;
        ry / k <= self.cfg.tuning.young_ratio * rf / k + self.cfg.tuning.young_slack * young.slope
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
        r0: Option<f64>,
        queued: bool,
        link_losses: Option<i64>,
    ) -> (i64, u64) {
        let had_index = self.counter.last.is_some();
        let index_delta = index.and_then(|i| self.index_delta(i));
        let Some(prev) = self.last_n else {
            return self.numbered(self.next_start, 0, None);
        };
        let base = prev.saturating_add(1);
        let (m_max, r_m) = match (r0, period) {
            // A queued sample was waiting behind a stall: late by it, not
            // by losses, unless the driver announced some.
            // (The slack is at most `Tuning::loss_slack` periods: most samples are
            // judged without it.)
            (Some(r0), Some(p))
                if r0 > (1.0 - self.cfg.tuning.loss_slack) * p
                    && (!queued || self.announced > 0)
                    && r0 + self.loss_slack(p) > p =>
            {
                // (A gap longer than the window keeps the fits only
                // within the span of their history, `line_spans`.)
                let span = self.cfg.window.as_nanos().max(self.line_span());
                let max_gap = (span as f64 / p).max(1.0);
                let m = ((r0 + self.loss_slack(p)) / p).floor().min(max_gap);
                (m as i64, r0 - m * p)
            }
            _ => (0, 0.0),
        };
        if let Some(d) = index_delta {
            // Samples without a counter since the last one with it were
            // numbered already: the counter's step covers them too.
            let since = self.counter.last_n.map_or(0, |l| prev.saturating_sub(l));
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
                // The driver announced the wraps' losses too (a 4-bit
                // counter stepping 12 over a burst of 27 announced
                // losses): on time after them, the sample is numbered
                // after the wraps at once, not 16 periods early until the
                // next sample tells.
                if let (Some(w), Some(r0), Some(p)) = (wraps, r0, period) {
                    // (Whole wraps, at least one: `counter_wraps`.)
                    let extra = (w.lost - w.delayed).unsigned_abs();
                    let r_delayed = r0 - m as f64 * p;
                    if self.announced >= extra
                        && self.announcement_fits(r_delayed - extra as f64 * p, r_delayed, p)
                    {
                        self.use_announcements(extra);
                        self.st.losses_from_index += extra;
                        return self.numbered(w.lost, m as u64 + extra, None);
                    }
                }
                return self.numbered(n, m as u64, wraps);
            }
            self.st.index_anomalies += 1;
        } else if index.is_some() && had_index {
            self.st.index_anomalies += 1;
        }
        if m_max == 0 {
            return self.numbered(base, 0, None);
        }
        let p = period.unwrap_or(1.0);
        if self.announced > 0 {
            let m = self.announced.min(m_max as u64);
            let r = r_m + (m_max - m as i64) as f64 * p;
            if self.announcement_fits(r, r + m as f64 * p, p) {
                self.use_announcements(m);
                return self.numbered(base.saturating_add(m as i64), m, None);
            }
        }
        // Inside a backlog drained at a link's interval, a gap of k
        // intervals held k − 1 lost samples, if the sample is still late
        // after them (not the first on time after the drain).
        if let Some(m) = link_losses.filter(|&m| {
            m <= m_max
                && r_m + (m_max - m) as f64 * p > 0.5 * p
                && self.cfg.loss_threshold != u32::MAX
        }) {
            if m > 0 {
                self.st.losses_detected += m as u64;
                self.evidence.loss += 1.0;
                self.evidence.lost += m as f64;
                self.cap_evidence();
            }
            self.draining = true;
            return self.numbered(base.saturating_add(m), m as u64, None);
        }
        if queued {
            return self.numbered(base, 0, None);
        }
        if !self.fit.stats_valid() {
            let (n, lost, alt) = self.infer_early(q, base, queued);
            return self.numbered(n, lost, alt);
        }
        if self.cfg.loss_threshold == u32::MAX {
            return self.numbered(base, 0, None);
        }
        // On time after the loss, or stalled on the delayed reading (see
        // `Estimator::stall_density`).
        let g = self.on_time_density(r_m, p);
        let h = self.stall_density(r_m + m_max as f64 * p, p);
        // Numbered next, the sample may also be on time, late by the
        // jitter alone: as likely as the jitter reaches `r_m + m_max`
        // periods, among as many samples as the evidence speaks for.
        // Negligible where the jitter is well below a period.
        let on_time = self.evidence_held() * self.on_time_density(r_m + m_max as f64 * p, p);
        // A gap the next arrival would call a pause (beyond the stalls'
        // spread) is a loss reading the pauses seen so far back too.
        let pauses = if r_m + m_max as f64 * p > self.cfg.tuning.stall_spread * p {
            self.evidence.pause
        } else {
            0.0
        };
        let odds = (self.evidence.loss + pauses + self.cfg.tuning.prior_loss) * g
            / ((self.evidence.stall + self.cfg.tuning.prior_delay) * h + on_time);
        // Odds of a loss against a delay, at least 2^(K − 2).
        let loss = odds >= loss_odds(self.cfg.loss_threshold);
        let alt = Some(Ambiguous {
            delayed: base,
            lost: base.saturating_add(m_max),
            odds,
            wraps: false,
        });
        if loss {
            self.numbered(base.saturating_add(m_max), m_max as u64, alt)
        } else {
            self.numbered(base, 0, alt)
        }
    }

    /// The arriving sample's number `n`, the `lost` samples before it and
    /// the readings of an ambiguous gap (`alt`, kept in `arrival_alt`).
    #[inline(always)]
    fn numbered(&mut self, n: i64, lost: u64, alt: Option<Ambiguous>) -> (i64, u64) {
        self.arrival_alt = alt;
        (n, lost)
    }

    /// How far below the floor (ns) a sample may arrive and still be taken
    /// for a later number on time, after losses: `Tuning::loss_slack` of a
    /// period, the floor's uncertainty on a young or drifting fit, but no
    /// more than the floor's own spread (`Tuning::loss_slack_jitter` mean
    /// residuals above it, plus `Tuning::loss_slack_min` of a period) where the
    /// floor runs at the expected period (within `Tuning::loss_slack_period`).
    /// On a jitter-free stream the floor is exact: a sample 0.4 ms before
    /// a later number's floor is not on time for it but late for an
    /// earlier one (a stall of four periods less 0.4 ms is not four
    /// losses). Taken for the later number, it dented the floor by as
    /// much, every later sample looked late by the dent, and the numbering
    /// took the losses after it for delays, periods off for tens of
    /// samples. A floor laid on a drained backlog (a line at the link's
    /// interval, no spread at all) is not at the expected period, and says
    /// nothing of the jitter: there the slack stays.
    fn loss_slack(&self, p: f64) -> f64 {
        let wide = self.cfg.tuning.loss_slack * p;
        if !(self.fit.stats_valid() && self.floor_at_expected()) {
            return wide;
        }
        wide.min(
            self.cfg.tuning.loss_slack_jitter * self.fit.mean_r
                + self.cfg.tuning.loss_slack_min * p,
        )
    }

    /// Whether the floor runs at the expected period (within
    /// `Tuning::loss_slack_period`): its residuals then measure the jitter,
    /// not a period the line has yet to follow.
    pub(super) fn floor_at_expected(&self) -> bool {
        match (self.expected, self.fit.floor()) {
            (Some(e), Some(f)) => (f.slope / e - 1.0).abs() < self.cfg.tuning.loss_slack_period,
            _ => false,
        }
    }

    /// The samples lost in a gap of `gap` ns inside a backlog draining at a
    /// link's interval (see [`LinkDrain::intervals`]): `k − 1` for a gap
    /// of `k` intervals, once `Tuning::link_run` gaps fit the link; the sample,
    /// if still late after them, is numbered so and kept out of the fit
    /// like every drained one. A link a little faster than the sensor
    /// drains a stall's backlog one sample per interval, the lost ones
    /// included (lost after they took their turn on the link: a bad
    /// checksum); the samples are late by the backlog, so their residuals
    /// cannot tell a loss from a delay, but the gaps count the samples (a
    /// loss in a 0.92 period drain makes a gap of 1.84 periods, which the
    /// floor would read as one more sample delayed: every loss in a long
    /// drain put the numbering a period behind). A gap that only the
    /// jitter of the link's intervals could make a whole number of them
    /// (a link that paused a while) counts nothing. Losses that never took
    /// their turn on the link leave no gap, and no reading can see them
    /// before the drain ends. A link is one only if it is faster than the
    /// sensor by more than `Tuning::link_tol` of a period: at the
    /// sensor's own rate (gaps of a period, within the jitter) samples late
    /// by whole periods are not a backlog draining (their lateness does
    /// not fall), and each gap of one interval would be one of a period
    /// too; reading them as drained kept them out of the fit and numbered
    /// 150 samples of a 3 Hz stream 7 periods early after a burst of 7
    /// losses (`scripts/family_draws.py --seed 11 --kinds loss_bursty`,
    /// draw 1106099).
    #[inline(always)]
    fn link_losses(&self, gap: f64) -> Option<i64> {
        // (No link on the steady path: the rest is out of line.)
        self.link.and_then(|l| self.link_losses_in(l, gap))
    }

    /// [`Self::link_losses`] with a link under way.
    #[inline(never)]
    fn link_losses_in(&self, l: LinkDrain, gap: f64) -> Option<i64> {
        let t = &self.cfg.tuning;
        if l.gaps < t.link_run
            || !self
                .period_f()
                .is_some_and(|p| l.interval() < (1.0 - t.link_tol) * p)
        {
            return None;
        }
        // (A gap longer than the window restarted the fits before.)
        l.intervals(gap, t).map(|k| k as i64 - 1)
    }

    /// Whether a sample `gap` after the pending one came one link interval
    /// behind it (see [`Self::link_losses`]): queued behind it on the link,
    /// so the pending one was delayed, however well the next sample's
    /// arrival would fit a loss of many samples.
    pub(super) fn link_queued(&self, gap: f64) -> bool {
        self.link_losses(gap) == Some(0)
    }

    /// Follows the arrival gaps of samples late on the floor by more than
    /// half a period (see [`Self::link_losses`]): a gap shorter than a
    /// period starts a link at its interval; a gap of a whole number of
    /// intervals adds to it; a longer gap that is none (the link paused)
    /// leaves it; a shorter one starts another. A sample not late (the
    /// backlog drained) or queued right behind its predecessor ends it.
    /// Not on a quantised arrival clock, where every gap is a whole number
    /// of ticks: a sample late on the floor by the wait for its tick came
    /// a tick after the one before it, like a backlog drained at a link's
    /// interval, and a gap of two ticks (its phase going round) read as a
    /// loss.
    #[inline(always)]
    fn track_link(&mut self, n: i64, q: i64, r0: Option<f64>, gap: f64, p: f64) {
        if gap >= p && self.link.is_none() {
            return;
        }
        if self.fit.quantised_tick.is_some() {
            self.link = None;
            return;
        }
        // The residual for number n: the one for the next number unless
        // the sample was numbered after losses.
        let r = if self.last_n.is_some_and(|l| n == l.saturating_add(1)) {
            r0
        } else {
            self.floor_residual(n, q, Some(p))
        };
        let late = gap >= self.cfg.tuning.queued * p
            && r.is_some_and(|r| r > 0.5 * p)
            && self.fit.stats_valid();
        if !late && self.link.is_none() {
            return;
        }
        self.link = match self.link {
            _ if !late => None,
            Some(mut l) => match l.intervals(gap, &self.cfg.tuning) {
                Some(k) => {
                    l.push(gap, k);
                    Some(l)
                }
                // A shorter gap that is no whole number of the interval:
                // another link (or none).
                None if gap < l.interval() => Some(LinkDrain::start(gap)),
                // A longer one: the link paused (or a gap of lost samples
                // strayed further than the bound).
                None => Some(l),
            },
            None => (gap < p).then(|| LinkDrain::start(gap)),
        };
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
        let mut r0 = q.saturating_sub(last) as f64 - p;
        // After a burst of `k` samples, its first sample is the one that
        // left free (a packet leaves when it fills or when a latency timer
        // since its first sample fires: the samples behind the first
        // arrive early for their numbers, the first one late by the whole
        // timer). Measured from the first, the new arrival is on time for
        // the next number; measured from the last, it looks late by the
        // samples the packet held. A burst whose first sample was itself
        // late (a stall, its backlog queued behind it) puts the new
        // arrival early on the first's line by more than
        // `Tuning::burst_free_reach` of a period: there the last one is
        // the reference.
        if let Some((first, k)) = self.burst.filter(|&(_, k)| k > 1) {
            let r_first = q.saturating_sub(first) as f64 - f64::from(k) * p;
            if r_first > -self.cfg.tuning.burst_free_reach * p {
                r0 = r0.min(r_first);
            }
        }
        // On a quantised arrival clock each arrival waited up to a tick for
        // its stamp, the one before it too: a gap up to a tick longer than
        // a period says nothing of a loss (a 4.4 ms period on a 4 ms tick
        // has gaps of 8 ms each time the phase goes round). Beyond a tick
        // the nearest whole number of periods is the reading, within the
        // tolerance of a clock without ticks below it (a sample late by
        // its delay looks like one after a loss) and a tick more above
        // it: a gap of 5 ticks of 206 us under a 565 us period (1.82
        // periods, one loss) taken less a tick read as none, and every
        // sample after it was a period early until a change cut the
        // history 900 samples later (`family_draws.py --seed 13 --kinds
        // mixed --first 74 --draws 1`: 10.8 x Rock's RMS).
        let tick = self.fit.quantised_tick.unwrap_or(0.0);
        let m = if r0 <= tick { 0.0 } else { (r0 / p).round() };
        let max_gap = (self.cfg.window.as_nanos() as f64 / p).max(1.0);
        // Within the jitter the young samples have shown above their floor
        // (`Tuning::stats_reach` median residuals), the sample may be on
        // time for the next number: a jitter of several periods makes gaps
        // of whole periods without a loss.
        let shown = self
            .fit
            .wide_jitter()
            .then(|| self.floor_line(Some(p)))
            .flatten()
            .and_then(|l| {
                let reach = self.cfg.tuning.stats_reach * self.fit.young_median(&l)?;
                Some(l.residual(base, q) <= reach)
            });
        if queued || shown == Some(true) || self.cfg.loss_threshold == u32::MAX {
            return (base, 0, None);
        }
        let off = r0 - m * p;
        let tol = self.cfg.tuning.early_loss_tol * p;
        if m < 1.0 || off < -tol || off > tol + tick {
            // Halfway between two numbers the gap says nothing on arrival:
            // numbered as delayed, but late by a period or more, it may
            // still hold losses (as many as keep the arrival after its
            // acquisition), which the next arrival confirms or not
            // (`Estimator::resolve_and_commit`). Without that reading, a
            // burst of losses after a restart stayed a delay until the
            // change detector cut the history, the samples after it whole
            // periods early.
            let lost = ((r0 - tick) / p).floor();
            let alt = (lost >= 1.0).then(|| Ambiguous {
                delayed: base,
                lost: base.saturating_add(lost.min(max_gap) as i64),
                odds: 0.0,
                wraps: false,
            });
            return (base, 0, alt);
        }
        let m = m.min(max_gap) as i64;
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
    /// above 2 % of the period on which the samples' phase goes round
    /// ([`Self::phase_turns`]) means a quantised clock whose grid the floor
    /// would follow. Once both gcds are fine and no soft tick is awaited
    /// (the steady path) there is nothing to do, which one inline test
    /// tells; the work is out of line.
    #[inline(always)]
    fn note_gap(&mut self, gap: i64, period: Option<f64>) {
        let t = &self.cfg.tuning;
        let coarse = |tick: i64| period.is_some_and(|p| tick as f64 >= p * t.coarse_tick);
        let c = &self.clock;
        if c.soft_wait > 0
            || (gap > 0
                && (c.near_tick == 0 || c.tick == 0 || coarse(c.near_tick) || coarse(c.tick)))
        {
            self.note_gap_work(gap, period);
        }
    }

    /// [`Self::note_gap`] when there is work to do.
    #[inline(never)]
    fn note_gap_work(&mut self, gap: i64, period: Option<f64>) {
        // The gcds only shrink: once below 2 % of the period they stay
        // there and are no longer worth computing.
        let t = self.cfg.tuning;
        let coarse = |tick: i64| period.is_some_and(|p| tick as f64 >= p * t.coarse_tick);
        let mut fell = false;
        // The tick up to the stamps' error: the clock's resolution, which
        // the jitter's width is measured beyond (`ArrivalClock::resolution`),
        // and the tick the fit takes where stamps miss their grid by a
        // little (an `f64` of ns since 1970: the exact gcd falls to 256 ns
        // at the first gap that is off by a step).
        if gap > 0 && (self.clock.near_tick == 0 || coarse(self.clock.near_tick)) {
            let near = quant::near_gcd(self.clock.near_tick.unsigned_abs(), gap.unsigned_abs(), &t);
            self.clock.near_tick = near as i64;
            self.clock.near_gaps = self.clock.near_gaps.saturating_add(1);
            fell = !coarse(self.clock.near_tick);
        }
        if gap > 0 && (self.clock.tick == 0 || coarse(self.clock.tick)) {
            self.clock.tick = gcd(self.clock.tick.unsigned_abs(), gap.unsigned_abs()) as i64;
            self.clock.gaps = self.clock.gaps.saturating_add(1);
            fell |= !coarse(self.clock.tick);
        } else if !fell && self.clock.soft_wait > 0 {
            self.clock.soft_wait -= 1;
            if self.clock.soft_wait == 0 {
                self.soft_tick(period);
            }
            return;
        }
        if let Some(p) = period {
            // A tick that divides the period puts every sample at the
            // same phase of the grid (a constant offset, harmless); a
            // tick on which the phase goes round makes the floor follow
            // the grid. The phase is tested at the expected period where
            // there is one: a floor that follows the grid takes its slope
            // from the grid (a tick within a few % of the period), and the
            // period it fits would say that the phase stands still.
            let p = self.expected.unwrap_or(p);
            let on = |tick: i64, gaps: u32| {
                let tick = tick as f64;
                (gaps >= t.coarse_tick_gaps
                    && tick >= p * t.coarse_tick
                    && self.phase_turns(tick, p))
                .then_some(tick)
            };
            // The exact tick first; else the near one, where the phase
            // moves by more per sample than gaps within the stamps' error
            // of one another would show without any grid.
            self.fit.quantised_tick = on(self.clock.tick, self.clock.gaps).or_else(|| {
                on(self.clock.near_tick, self.clock.near_gaps).filter(|&tick| {
                    self.phase_step(tick, p) >= t.near_tick_min_step * t.tick_stamp_error_ns
                })
            });
            if fell && !coarse(self.clock.tick) && !coarse(self.clock.near_tick) {
                self.clock.soft_wait = self.cfg.tuning.soft_tick_after;
                self.clock.soft_from = self.last_n.unwrap_or(i64::MIN);
            }
        }
    }

    /// How far (ns) the samples' phase on a grid of `tick` ns moves from
    /// one sample to the next at period `p`: the period's distance to a
    /// whole number of ticks.
    fn phase_step(&self, tick: f64, p: f64) -> f64 {
        let f = (p / tick).fract();
        f.min(1.0 - f) * tick
    }

    /// Whether the samples' phase on a grid of `tick` ns (at most
    /// `Tuning::quant_max_tick_periods` periods) goes round at least
    /// `Tuning::tick_phase_turns` times over the window at period `p`:
    /// the phase moves by the period's distance to a whole number of ticks
    /// at each sample. Where it barely moves, every sample sits at about
    /// the same phase of the grid, a nearly constant offset.
    fn phase_turns(&self, tick: f64, p: f64) -> bool {
        let f = (p / tick).fract();
        let samples = self.cfg.window.as_nanos() as f64 / p;
        tick <= self.cfg.tuning.quant_max_tick_periods * p
            && f.min(1.0 - f) * samples >= self.cfg.tuning.tick_phase_turns
    }

    /// Tries the phases of the fit's arrivals on each of [`HOST_TICKS`]
    /// (coarse enough and not dividing the period, like an exact tick): a
    /// clock quantised on a host tick whose stamps stray from it (TUM
    /// RGB-D's Kinect rgb stamps: three quarters within 0.2 ms of a 4 ms
    /// grid, the rest scattered up to 2 ms off it) has no exact gcd, but
    /// its phases gather where uniform ones spread out. The coarsest tick
    /// on which `Tuning::soft_tick_share` of the phases gather near their mean
    /// (in one group: a 100 Hz sensor with little jitter has two phases on
    /// a 4 ms tick, and three frames of a 30 Hz camera on a 4 ms tick take
    /// three on a 10 ms one) is the clock's, fitted like an
    /// exact one (the quantised fit takes a stamp's tick as where the
    /// sample was ready by; a stray of a tenth of the tick moves that by
    /// as much). With too few points (a cut), tried again later.
    #[cold]
    fn soft_tick(&mut self, period: Option<f64>) {
        let (Some(first), Some(line)) = (self.fit.first(), self.fit.floor()) else {
            return;
        };
        // The sample period: the expected one where there is one (a young
        // fit after a stall or a cut can be percents off), if the floor
        // agrees with it; tried again later while it does not.
        let p = match (self.expected, period) {
            (Some(e), _) if ((line.slope / e) - 1.0).abs() < self.cfg.tuning.loss_slack_period => e,
            (None, Some(p)) => p,
            _ => {
                self.clock.soft_wait = self.cfg.tuning.soft_tick_after;
                return;
            }
        };
        // The newest `Tuning::soft_tick_points` at most: a bounded one-off cost.
        let newest = (self
            .fit
            .len()
            .checked_sub(self.cfg.tuning.soft_tick_points + 1))
        .and_then(|k| self.fit.points().nth(k))
        .map_or(i64::MIN, |pt| pt.n);
        let from = self.clock.soft_from.max(newest);
        let count = self.points_after(from).count();
        if count < self.cfg.tuning.soft_tick_after as usize || !self.fit.stats_valid() {
            self.clock.soft_wait = self.cfg.tuning.soft_tick_after;
            return;
        }
        let arrival =
            |tick: f64| move |pt: &Point| (pt.q.saturating_sub(first.q) as f64 % tick) / tick;
        let gathered = |tick: f64| {
            // The samples' own times at the expected period: on a stream
            // whose period is close to a whole number of ticks they gather
            // too, without any quantisation. Those of the bursts' last
            // samples alone: where samples come in packets, each packet
            // arrives when its last sample is ready, and packets whose
            // length is close to a whole number of ticks (a USB adapter's 5
            // samples of 1.337 ms, 6.686 ms, on a 3.333 ms tick) gather the
            // arrivals' phases on that tick without any grid.
            let times =
                |pt: &Point| (p * pt.n.saturating_sub(first.n) as f64).rem_euclid(tick) / tick;
            self.phases_gather(self.points_after(from), &arrival(tick))
                && !self.phases_gather(self.burst_ends(from, p), &times)
        };
        let Some(tick) = HOST_TICKS
            .into_iter()
            .filter(|&t| t >= p * self.cfg.tuning.coarse_tick && self.phase_turns(t, p))
            .find(|&t| gathered(t))
        else {
            return;
        };
        let (mean, _) = self.phase_mean(self.points_after(from), &arrival(tick));
        self.clock.soft_tick = Some((
            tick,
            first.q.saturating_add(round(mean.rem_euclid(1.0) * tick)),
        ));
        self.fit.quantised_tick = Some(tick);
        // The history's stamps taken off the grid, as later ones will be.
        let soft = self.clock.soft_tick;
        let near = self.cfg.tuning.soft_tick_near;
        self.fit.exclude(|pt| Self::off_grid(soft, pt.q, near));
    }

    /// Whether arrival `q` lies off the grid of a soft tick `soft` (see
    /// [`Self::soft_tick`]) by more than `Tuning::soft_tick_near` of a tick: a
    /// stamp taken elsewhere than at the tick, kept out of the fits'
    /// statistics (and of the quantised fit) like a queued sample.
    #[inline(always)]
    fn off_grid(soft: Option<(f64, i64)>, q: i64, near: f64) -> bool {
        let Some((tick, origin)) = soft else {
            return false;
        };
        let d = (q.saturating_sub(origin) as f64).rem_euclid(tick) / tick;
        d.min(1.0 - d) > near
    }

    /// Whether `Tuning::soft_tick_share` of the points `pts` have a `phase`
    /// (in turns) within `Tuning::soft_tick_near` of their circular mean.
    fn phases_gather<'a>(
        &self,
        pts: impl Iterator<Item = &'a Point> + Clone,
        phase: &dyn Fn(&Point) -> f64,
    ) -> bool {
        let (mean, count) = self.phase_mean(pts.clone(), phase);
        let near = pts
            .filter(|pt| {
                let d = (phase(pt) - mean).rem_euclid(1.0);
                d.min(1.0 - d) <= self.cfg.tuning.soft_tick_near
            })
            .count();
        near as f64 >= self.cfg.tuning.soft_tick_share * count as f64
    }

    /// The fit's points numbered after `from`, oldest first.
    fn points_after(&self, from: i64) -> impl Iterator<Item = &Point> + Clone {
        self.fit.history().iter().filter(move |pt| pt.n > from)
    }

    /// The fit's points numbered after `from` that end a burst: the next
    /// one arrived `Tuning::burst_gap` of the period `p` or more after it
    /// (or there is none), oldest first.
    fn burst_ends(&self, from: i64, p: f64) -> impl Iterator<Item = &Point> + Clone {
        let (h, gap) = (self.fit.history(), self.cfg.tuning.burst_gap * p);
        h.iter().enumerate().filter_map(move |(i, pt)| {
            let end = h
                .get(i + 1)
                .is_none_or(|next| next.q.saturating_sub(pt.q) as f64 >= gap);
            (pt.n > from && end).then_some(pt)
        })
    }

    /// The circular mean (in turns) of the `phase` of the points `pts`, and
    /// how many there are.
    fn phase_mean<'a>(
        &self,
        pts: impl Iterator<Item = &'a Point>,
        phase: &dyn Fn(&Point) -> f64,
    ) -> (f64, usize) {
        let (mut c, mut s, mut count) = (0.0, 0.0, 0usize);
        for pt in pts {
            let angle = phase(pt) * std::f64::consts::TAU;
            c += angle.cos();
            s += angle.sin();
            count += 1;
        }
        (s.atan2(c) / std::f64::consts::TAU, count)
    }

    #[inline(always)]
    fn commit(&mut self, p: Point) {
        // A change, and whether the estimates' level above the floor stays
        // as it was across it (`Changes::level_kept`, `LineFit::cut`).
        let (mut change, mut level_kept) = (false, false);
        let mut ramp_from: Option<i64> = None;
        let restore = if self.rate_divisor > 1
            && self.drain_watch.is_none()
            && self.loss_watch.is_none()
            && self.counter.last.is_none()
            && self.announced == 0
            && self.st.references == 0
        {
            self.note_restored_rate(p)
        } else {
            None
        };
        // Stage 3, changes: the runs above and below the clock line.
        self.changes.committed(p.queued);
        // No verdict of loss or drain is pending that a later arrival may
        // overturn (renumbering the samples the change tests see).
        let settled = self.drain_watch.is_none() && self.loss_watch.is_none();
        // (Where every lone sample is held, the packets' last samples alone
        // lie on the line: the changes are theirs.)
        if !p.queued
            && (!self.fit.lone_held() || p.freed)
            && self.fit.stats_valid()
            && let Some(f) = self.fit.floor()
        {
            let r = f.residual(p.n, p.q);
            // `mean_r.max(1.0)` and, below, `std_r.max(mu)` by compares (a
            // NaN left operand gives the right one, as `f64::max` does; the
            // right one is never NaN): no NaN fix-up on every sample.
            let mu = if self.fit.mean_r > 1.0 {
                self.fit.mean_r
            } else {
                1.0
            };
            // On a quantised clock a sample on time lies up to a tick above
            // the line, by a phase that may repeat for long runs (two
            // phases, a 100 Hz sensor on a 4 ms tick): it is judged by its
            // delay beyond the tick, against the fitted delay mean.
            let (x, unit, reach) = match self.fit.quantised_excess(p.n, p.q) {
                Some(k) => (k, 1.0, f64::INFINITY),
                None if settled => (r, mu, self.fit.jitter_reach()),
                None => (r, mu, f64::INFINITY),
            };
            let residuals = Residuals {
                r,
                // Below: against the floor of the last rebuild, which the
                // newest points have not bent (a shorter period would pull
                // the live floor down with them).
                below: match self.fit.rebuilt_floor() {
                    Some(frozen) => frozen.residual(p.n, p.q),
                    None => r,
                },
                x,
                unit,
                mu,
                slope: f.slope,
                reach,
                exponential: self.fit.exponential_like(),
                free: if reach.is_finite() {
                    self.fit.free_len()
                } else {
                    0
                },
            };
            change = self.changes.observe(residuals, &self.cfg.tuning);
            level_kept = change && self.changes.level_kept();
            // The ramp test of a longer period (`changes::Ramp`). Under least
            // squares, symmetric jitter of the line's deviation; else
            // one-sided delays, in units of the larger of their deviation
            // and their mean (the statistics leave out the far-late), with
            // an exponential tail.
            let ls = self.fit.mode == FitMode::LeastSquares;
            let sd = if ls {
                self.fit.std_r
            } else {
                if self.fit.std_r > mu {
                    self.fit.std_r
                } else {
                    mu
                }
            };
            // (A history shorter than that, a slow sensor's within its
            // `history_factor` windows, is tested from half its length.)
            let free = self.fit.free_len();
            let young =
                free < self.cfg.tuning.ramp_min_points && free < self.fit.longest_points() / 2;
            if change || !reach.is_finite() || young {
                self.changes.ramp_off();
            } else {
                let excess = self.ramp_excess(p, r, mu);
                let t = &self.cfg.tuning;
                // The scale (ns) of one-sided delays' exponential tail, which
                // the ramp's sum must outgrow (`Tuning::ramp_tail`): `sd`
                // for exponential-like residuals, as the bound was written;
                // else their deviation, which bounds the tail's scale of any
                // gamma law of shape 1 or more (`σ/√k`), and puts a blunter
                // law's ramp within reach sooner (a 2.4 % longer period
                // under gamma delays of shape 2.3 was told 16 samples late).
                // None under least squares (symmetric jitter).
                let tail = if ls {
                    0.0
                } else if self.fit.exponential_like() {
                    sd
                } else {
                    self.fit.std_r.min(sd)
                };
                // The residual above the floor in the lower tail's scale
                // (`changes::Ramp::floor_lift`; one-sided delays only).
                let lift = if ls { 0.0 } else { self.fit.in_low_scale(r) };
                let rise = self.changes.ramp(p.n, excess, (sd, tail, lift), t);
                let fall = if ls && rise.is_none() {
                    self.changes.fall(p.n, excess, sd, t)
                } else {
                    None
                };
                if rise.is_some() || fall.is_some() {
                    // A step of the period moved the line, not the delays
                    // about it.
                    (change, level_kept) = (true, true);
                    // Under least squares the history is cut where the
                    // ramp starts: the breakpoint search looks for a kink
                    // in the lower envelope, which symmetric jitter blurs.
                    // Under one-sided delays the search's cut is kept (the
                    // ramp's start gained nothing there, and after a false
                    // ramp on wide exponential jitter kept too few points).
                    ramp_from = fall.or(rise.filter(|_| ls));
                }
            }
        } else if !p.queued {
            self.changes.ramp_off();
        }
        let step = p.n.wrapping_sub(self.committed_n);
        self.committed_n = p.n;
        if step != 1 || self.step_run.len != 0 {
            // A run of steps sharing a divisor above 1: every gap a whole
            // number of lost samples of the same count, plus one.
            self.step_run.push(step.max(0).unsigned_abs());
        }
        self.fit.push(p, self.max_span);
        if self.wander.push(p) {
            // Not with reference pulses (a better source), nor on a
            // quantised arrival clock: a period near a whole number of its
            // ticks makes the arrivals' phase on the tick drift and wrap (a
            // beat), second differences the wander test reads as a rate
            // that wanders, and the tracker then followed the arrivals'
            // sawtooth.
            let period = self.period_f();
            self.wander.check(
                period.filter(|_| self.st.references == 0 && self.fit.quantised_tick.is_none()),
            );
        }
        if !self.matured {
            self.matured = self.fit.free_len() >= self.cfg.tuning.young;
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
            self.pulses.forget(&self.cfg);
            self.st.changes_detected += 1;
        }
        // Stage 3, changes: a period step, as a change of the slope; then
        // where the change lies, to keep only the points after it.
        let t = &self.cfg.tuning;
        let mut span = t.change_search;
        // Under exponential-like delays, with the floor of the last
        // rebuild kept (`LineFit::rebuilt_floor`), a shorter period puts
        // the arrivals below that floor, which the newest points do not
        // bend and no sample on time crosses: the run below it and the
        // live floor's breaches tell the step, and the slope test is not
        // run (it costs about 100 instructions per sample). Under
        // symmetric jitter (or gamma-like delays between the modes) the
        // live floor bends down with the newest samples, no floor of a
        // rebuild is kept, and the slope test tells the step.
        if self.fit.exponential_like() && self.fit.rebuilt_floor().is_some() {
            self.changes.slope_off();
        } else if !change
            && restore.is_none()
            && settled
            && self.matured
            && let Some(f) = self.fit.active()
            && let Some(s) = self.changes.slope_step(
                self.fit.history(),
                f.slope,
                self.fit.quantised_tick.unwrap_or(0.0),
                t,
            )
        {
            (change, level_kept, span) = (true, true, s);
        }
        // Keeps the points from the ramp's start on, or from where the
        // search puts the change.
        let keep = if let Some(from) = ramp_from {
            let h = self.fit.history();
            h.len() - h.partition_point(|q| q.n < from)
        } else if change {
            changes::change_point(self.fit.history(), span, t.change_min_seg)
        } else {
            0
        };
        // The clock line's forgetting: the older half of a history that
        // no longer fits one line (a wandering rate, `Wander::forget`).
        let forget = match self.fit.active() {
            Some(f) if !change && restore.is_none() && settled && self.matured => self
                .wander
                .forget(self.fit.history_log(), f.slope, self.cfg.window.as_nanos())
                .or_else(|| self.fit.band_bends(self.cfg.window.as_nanos())),
            _ => None,
        };
        if let Some(keep) = forget {
            self.fit.forget_oldest(keep);
        }
        if let Some((d, pivot)) = restore {
            self.restore_rate(d, pivot);
        } else if change {
            self.fit.cut(keep, !level_kept);
            // The pulses stay: they judge their own line (one off it is a
            // glitch, a run of them restarts it, `Pulses::place`), which
            // then follows a period step as soon as a cut did. Cut to two
            // after a change the arrivals alone showed (a false one under
            // Gaussian jitter), the line on two pulses put the estimates
            // up to 4.8 ms off.
            self.pulses.summarise(&self.fit);
            self.forget_change_runs();
            self.st.changes_detected += 1;
        }
        if self.fit.len() >= self.cfg.tuning.min_stats_points
            && let Some(h) = self.pulses.deferred.take()
        {
            self.place_reference(h);
        }
    }

    /// How far (ns) the committed free sample `p` lies above the mode's own
    /// line beyond the residual it has on average (the ramp test's excess,
    /// `changes::Ramp`): above the least-squares line itself, which runs
    /// through the residuals' mean (the floor's slope, set by a few extreme
    /// points under symmetric jitter, is rougher, and its error is a ramp
    /// of its own), else above the floor beyond the mean residual.
    fn ramp_excess(&self, p: Point, r: f64, mu: f64) -> f64 {
        match (self.fit.mode, self.fit.own_line()) {
            (FitMode::LeastSquares, Some(l)) => l.residual(p.n, p.q),
            _ => r - mu,
        }
    }

    /// Forgets the runs of samples above and below the floor that signal a
    /// change (after the history was cut or renumbered, or a restart: they
    /// were judged against the old line).
    fn forget_change_runs(&mut self) {
        self.changes.forget_runs();
    }

    /// How far (ns) a least-squares or quantised-clock estimate may lie
    /// after its arrival: those lines run through the jitter, not below
    /// it, so an arrival near the floor lies about `mean_r` below them, and
    /// never by more than `fit::LS_LIMIT_SD` residual deviations beyond that while
    /// the line fits the stream. A line that does not (a backlog drained
    /// into a young least-squares fit can tilt it by tens of percent) would
    /// otherwise put estimates after their own arrivals, where no sample
    /// was ever acquired: they are held at the arrival plus this margin,
    /// so the error is at most the sample's delay plus the margin. The
    /// residual statistics of the last rebuild are used even where they
    /// are no longer valid (after a change): they are the jitter last seen.
    /// While breaches of the floor are under way (`Changes::breaching`) the
    /// margin is the mean residual alone: the output of these lines sits
    /// `mean_r` above the floor, so an estimate later than its arrival
    /// plus `mean_r` puts the acquisition after the arrival less the least
    /// latency, which no sample is.
    fn late_margin(&self) -> i64 {
        // Breaches of the floor under way (a shorter period, not yet told):
        // the line runs later than the arrivals, and only the arrival (in
        // the output's frame, `mean_r` above the floor) bounds the estimate.
        let m = if self.changes.breaching(&self.cfg.tuning) {
            self.fit.mean_r
        } else {
            self.fit.jitter_reach()
        };
        if m.is_finite() && m > 0.0 {
            round(m)
        } else {
            i64::MAX
        }
    }

    /// The estimate for sample `n` that arrived at `q`. Where a line's value
    /// leaves the i64 range (times near its ends), the arrival stands.
    #[inline(always)]
    fn estimate_at(&self, n: i64, q: i64, period: Option<f64>) -> Timestamp {
        if let Some(v) = self.pulses.estimate(&self.fit, &self.cfg, n, q, period) {
            return Timestamp::from_nanos(v);
        }
        if let Some(e) = self.wander.estimate(n, q) {
            return Timestamp::from_nanos(e.saturating_sub(self.cfg.min_latency.as_nanos()));
        }
        let line: Option<Line> = self.young_line().or(self
            .fit
            .active()
            .filter(|l| l.slope > 0.0 && self.fit.len() >= 2));
        let raw = match line {
            Some(l) => match l.eval(n) {
                Some(e) if self.fit.mode == FitMode::Hull || !self.matured => e.min(q),
                Some(e) => e.min(q.saturating_add(self.late_margin())),
                None => q,
            },
            None => match self.floor_line(period).and_then(|l| l.eval(n)) {
                Some(f) => f.min(q),
                None => q,
            },
        };
        let latency = match self.pulses.offset {
            Some(o) => round(o),
            None => self.cfg.min_latency.as_nanos(),
        };
        Timestamp::from_nanos(raw.saturating_sub(latency))
    }
}

#[cfg(test)]
mod tests;
