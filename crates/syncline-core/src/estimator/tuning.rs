//! Every tuning value of the estimator in one place, with why it has its
//! value.

use serde::{Deserialize, Serialize};

/// The estimator's tuning values: thresholds, run lengths, tolerances and
/// priors that are choices rather than identities. [`Default`] holds the
/// values the estimator was measured with (the public scenarios and the
/// family draws of `scripts/family_draws.py`); set another with
/// [`EstimatorConfig::with_tuning`](super::EstimatorConfig::with_tuning).
///
/// Each field says what it does and why it has its value: the measurement
/// that set it where there was one, else what it guards against. Values
/// fixed by the data layout (ring and array sizes) are not here.
///
/// Most users never change these: the configuration's window, period, loss
/// threshold, minimum latency and counter width are the stream's facts;
/// these are the model's.
///
/// For readers of the source: where a field's doc names a function
/// (`Estimator::young_fits`, `LineFit::rebuilt_floor`) or a file, that is
/// the private code in `syncline-core/src/estimator/` that uses the value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Tuning {
    // ---- Numbering: which sample number an arrival is (`numbering.rs`, `loss.rs`, `counter.rs`).
    /// Samples before the fit is mature: until then the estimates sit on the young line (a
    /// running minimum at the expected period, like Rock's and Olson's estimators), steadier
    /// than a slope measured from a handful of samples; from then on the measured slope
    /// replaces the expected period. About the 24 samples the residual statistics need
    /// (`min_stats_points`) plus a rebuild. Free samples only (not queued behind their
    /// predecessor): the burst after a stall longer than the window, at the start of the
    /// restarted history, is most of 32 samples and says nothing of the line (the fit ended
    /// the young line 10-15 samples after such bursts and the floor took their spacing for
    /// the period, 18 periods off on 0.4-0.9 s sensors of the `stalls` family draws).
    ///
    /// At 0, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub young: usize,
    /// Young samples from which the young line's slope (the expected period) is checked against
    /// the samples (see `young_ratio`).
    pub young_check: usize,
    /// The young line is used only while the samples' mean residual above it is at most this
    /// many times their mean residual above the floor (the lowest line of any slope), plus
    /// `young_slack` of a period. A period configured 10 % short left the running minimum at
    /// its first sample and estimates 3 s late after 31 samples of a 1 Hz stream; a period too
    /// long drags it to the newest arrival. Three times allows for the floor's own fit to the
    /// few young samples.
    pub young_ratio: f64,
    /// The margin of the young check (see `young_ratio`), in periods: a jitter-free stream has
    /// residuals of zero above both lines.
    pub young_slack: f64,
    /// A floor flatter than this fraction of the young samples' mean spacing is not held
    /// against the configured period (see `Estimator::young_fits`).
    pub young_flat: f64,
    /// The factor by which the median of the first eight arrival gaps must exceed the
    /// configured period for the median to replace it (with `all_long`): a period configured
    /// too short by half (a 50 Hz sensor set up as 100 Hz) makes every gap look like one lost
    /// sample.
    ///
    /// Set off, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub period_contradicted: f64,
    /// The factor by which all but one of those gaps must exceed the configured period too (a
    /// gap without a loss does so only with a jitter of 0.3 periods), so that early losses
    /// alone do not drop it.
    pub all_long: f64,
    /// A sample arriving within this fraction of a period after its predecessor was queued
    /// behind it (FIFO burst after a stall).
    ///
    /// At 0, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub queued: f64,
    /// A sample within half a period of its predecessor and late on the floor by this many mean
    /// residuals was queued too (see `Estimator::late_behind`).
    ///
    /// Set off, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub queued_late: f64,
    /// A sample queued right behind its predecessor (see `queued`) when that one is late on the
    /// floor by more than this fraction of a period: the predecessor was held with it (a packet
    /// sent when its last sample is ready, a USB adapter's latency timer, a backlog behind a
    /// stall), and is the one left out of the line's statistics instead, so that a burst's
    /// last sample, the least delayed, is its free one. Half a period: the samples a packet
    /// held wait a whole period or more, a sample on time at most its jitter.
    ///
    /// Whatever the jitter: of two samples a burst carried together, the earlier waited about a
    /// period longer than the later one. (The lateness once had to exceed the jitter's reach
    /// above the floor too; the free points a packet's earlier samples then left in widened
    /// that reach, so that on USB-timer streams with jitter of 0.4 periods the first and
    /// fourth of six samples were free and the period 0.27 % off: `--kinds usb_timer --seed 3
    /// --draws 8`, 309000 1.37 to 0.08 x Rock's RMS, no change on the other 14 kinds.)
    ///
    /// Measured with `scripts/family_draws.py --seed 5 --draws 20`: the `packets` draws went
    /// from 0 to 90 % within Rock's RMS (median RMS/Rock 1.68 to 0.005), the `usb_timer` ones
    /// from 30 to 85 % (1.57 to 0.013), 79.0 to 88.7 % over all 15 kinds.
    pub held_late: f64,
    /// Arrivals in a row before the last accepted one, each at or after the one before it, that
    /// are taken for a step back of the host clock (the fit restarts at the new time) rather
    /// than for bad stamps (rejected). A single stamp far ahead (a corrupt one) is then
    /// followed by at most `back_run − 1` rejections, not by a stream rejected until the clock
    /// catches up with it.
    pub back_run: u32,
    /// Announced losses must show up as a gap within this many updates.
    pub announce_timeout: u32,
    /// Stall delays are modelled as spread over this many periods.
    ///
    /// Measured: at one period, S4 (random loss) misses its target (843 µs RMS against 504
    /// µs).
    pub stall_spread: f64,
    /// Pseudo-count of the uniform stall law against the recorded lengths of the certain
    /// delays (`Estimator::stall_density`): `n` lengths weigh `n / (n + stall_prior)`, 0.8
    /// for the 16 kept, a fifth for one odd delay. Infinite turns the record off.
    ///
    /// The record (with `hold_near` and `hold_records`), against the uniform law alone,
    /// `scripts/family_draws.py --draws 140 --no-causal`: usb_timer misses 14 to 10 of 140
    /// draws on `--seed 13` (1309125: 42 losses and 22 changes in 3,000 samples to none), 4
    /// to 3 on `--seed 11`; all kinds, 40 to 34 and 26 to 24. The test
    /// `a_usb_timer_near_the_period_holds_no_losses`.
    pub stall_prior: f64,
    /// Least bandwidth, in periods, of the recorded stall lengths' density (which is at least
    /// the jitter's standard deviation): the floor's own error where the jitter is tiny.
    pub stall_bw_min: f64,
    /// How near, in periods, an ambiguous sample's lateness must be to half of the recorded
    /// stall lengths to be held like them and stay out of the fit (`Estimator::held_as_before`):
    /// a latency timer's holds spread by the sensor's jitter, a few % of the period; the loss
    /// reading differs by a whole one.
    pub hold_near: f64,
    /// The fewest recorded stall lengths from which a sample late by their common length is
    /// held like them (`Estimator::held_as_before`); `usize::MAX` turns that off.
    pub hold_records: usize,
    /// The largest stall rate the loss stage weighs a stall with (`Estimator::stall_rate`): a
    /// stream whose samples are mostly held is numbered by its packets
    /// (`Estimator::packet_held`), not by weighing each sample's delay. Not tuned: the family
    /// figures of `stall_prior` were measured with it.
    pub stall_rate_max: f64,
    /// How far below the floor, in periods, a sample may arrive and still be on time for a
    /// later number (the floor's place is that uncertain on a young or drifting fit; see
    /// `Estimator::loss_slack`).
    ///
    /// At 0, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub loss_slack: f64,
    /// Where the floor is known better (statistics valid and the floor's slope within
    /// `loss_slack_period` of the expected period), the slack is at most this many mean
    /// residuals above it plus `loss_slack_min` of a period: on a jitter-free stream the floor
    /// is exact, and a sample 0.4 ms before a later number's floor is late for an earlier one,
    /// not on time after losses (taken for the later number it dented the floor and misnumbered
    /// tens of samples after it).
    pub loss_slack_jitter: f64,
    /// See `loss_slack_jitter`: the margin in periods added to the floor's spread.
    pub loss_slack_min: f64,
    /// The floor's slope must lie within this fraction of the expected period for its spread to
    /// bound the slack (`Estimator::loss_slack`).
    pub loss_slack_period: f64,
    /// Pseudo-count of the loss evidence: without evidence, a gap is a delay (sensors mostly do
    /// not lose samples), yet one confirmed loss is enough to turn well-fitting gaps into
    /// losses.
    ///
    /// At 0, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub prior_loss: f64,
    /// Pseudo-count of the delay (stall) evidence (see `prior_loss`).
    ///
    /// Measured: at 0, S11b (EuRoC IMU) misses its target (53 µs RMS against 5 µs).
    pub prior_delay: f64,
    /// Evidence is halved when it exceeds this, so it follows changes.
    ///
    /// Set off, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub evidence_cap: f64,
    /// Arrival gaps of samples late by more than half a period, each one link interval or a
    /// whole number of them, from which those samples are a backlog drained by the link (see
    /// `Estimator::link_losses`).
    ///
    /// Set off, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub link_run: u32,
    /// How far a gap may stray from the link's interval, in intervals, and still be one (a
    /// sample drained right behind its predecessor). Also how much faster than the sensor a
    /// link must be to drain a backlog (its interval below `1 − link_tol` periods): within it,
    /// a gap of one interval is one of a period too (`Estimator::link_losses`).
    pub link_tol: f64,
    /// How far a gap of `k` intervals may stray from `k` × the interval, in standard deviations
    /// of a `k`-interval gap, to count the `k − 1` samples lost in it (at most `link_tol` of an
    /// interval, at least `link_floor` of one; see `LinkDrain::intervals`).
    pub link_sd: f64,
    /// The tightest tolerance of a gap of several link intervals, in intervals (see `link_sd`):
    /// timer resolution, so that a perfectly regular link still matches.
    pub link_floor: f64,
    /// How much sooner than a period after a pending sample, in standard deviations of the
    /// residuals, the next one may come for a pause.
    pub pause_early: f64,
    /// How far, in standard deviations of the difference of two residuals, the arrivals after a
    /// pause verdict must fall behind one period each before they are taken for a backlog
    /// drained faster than the sensor.
    ///
    /// Set off, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub drain_confirm: f64,
    /// Arrivals watched after a loss verdict for a backlog drained by a slow link (see
    /// `Estimator::watch_loss`).
    ///
    /// At 0, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub loss_watch: u32,
    /// Device counter steps in a row sharing a divisor above 1 before it is taken for the
    /// counter's stride (see `Estimator::note_counter_step`).
    pub stride_run: u32,
    /// Numbering steps in a row sharing a divisor above 1 before the samples are renumbered
    /// (see `Estimator::renumber_steps`).
    ///
    /// Set off, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub renumber_run: u32,
    /// Arrival gaps in a row, between consecutive numbers, of a whole fraction `1/d` of the
    /// period after a renumbering by a multiple of `d`, each sample early on the floor, before
    /// the period is divided by `d` again (see `Estimator::restore_rate`): four samples within
    /// `3/d` periods, which the renumbered rate never delivers.
    ///
    /// Set off, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub restore_run: u32,
    /// How far such a gap may stray from `1/d` of the period, in `1/d` periods.
    pub restore_tol: f64,
    /// Before the fit has statistics, a gap is numbered as holding lost samples only where it is
    /// within this fraction of a period of a whole number of periods (`Estimator::infer_early`):
    /// a young stream's jitter is unknown, and a gap halfway between two numbers says nothing.
    pub early_loss_tol: f64,
    /// Before the fit has statistics, an arrival after a burst is judged from the burst's
    /// first sample (a packet's free one: a USB adapter's latency timer holds the later
    /// samples of a packet, so each arrives early for its number) unless it is earlier on the
    /// first's line by more than this fraction of a period (then the first was stalled and the
    /// backlog behind it drained: judged from the last, `Estimator::infer_early`). Half a
    /// period: the jitter of a packet's first sample stays within it on USB-timer streams of
    /// 0.01-0.5 periods of jitter, and a stall of two periods or more is beyond it.
    pub burst_free_reach: f64,
    /// An arrival within this fraction of a period after the one before belongs to its burst
    /// (`Estimator::note_burst`, the burst `infer_early` judges from): a driver hands a
    /// packet's samples over tens of microseconds apart, 0.04-0.12 of a 0.5 ms period
    /// (`scripts/family_draws.py`, 20-60 us). At `queued` (0.1), a packet of 30 split where
    /// a gap passed it, and the next packet's first read as after 16-20 losses: 7 of 420
    /// `usb_timer` draws of seeds 13, 11 and 2 (timers of 4-32 periods) lost to Rock; at
    /// 0.25, 1 (the others 0.01-0.66 × Rock).
    pub burst_gap: f64,
    /// A burst starts on the packets' lattice (`Estimator::packet_end`, the `packets` module)
    /// within this fraction of a period of its packet's time (the bursts' median phase): the
    /// jitter of a packet's last sample, which sends it. On the estimator tests' streams of
    /// packets with 1-10 % losses inside (`lossy_packets`, 100 draws), 0.2 left 13 draws' numbering
    /// drifting by more than a packet (delays beyond it leave bursts to the loss stage), 0.3
    /// left 9 (all under exponential delays of 5-30 % of the period); 0.4 took the bunching of
    /// uniform delays of 2.8 periods for packets (`jitter_wider_than_a_period_is_not_taken_for_
    /// losses` fails).
    pub packet_tol: f64,
    /// When the first gaps contradict the configured period (`period_contradicted`), a median
    /// within this fraction of a whole multiple of it is taken as that exact multiple (a rate
    /// configured in the wrong unit or twice too high), else the median itself.
    pub period_multiple_tol: f64,
    /// The sample after an ambiguous gap is on time for a numbering while its residual on the
    /// floor is at most the mean residual plus this many standard deviations (at most half a
    /// period; `Estimator::next_verdict`): beyond that, no sample on time comes.
    pub verdict_spread_sd: f64,
    /// The smallest mean residual (in periods) the density of an on-time sample uses
    /// (`Estimator::on_time_density`): on a jitter-free stream the mean is 0 and the density
    /// would be infinite, every odds 0 or infinite.
    pub on_time_mean_min: f64,
    /// How fast the bound on a gap of several link intervals widens when the link was measured
    /// from few gaps (`LinkDrain::intervals`): the bound is `link_sd · (1 + this / (gaps − 1))`
    /// deviations, like Student's t with as many degrees of freedom.
    pub link_widen: f64,
    // ---- The clock line (`fit.rs`).
    /// Points needed before the residual statistics are trusted.
    pub min_stats_points: usize,
    /// Where the arrival gaps show a jitter spanning periods (see `wide_jitter_gap`), how far
    /// above the floor the residual statistics reach, in median residuals of the free points,
    /// where that is beyond half a period (the reach otherwise): the jitter the stream has
    /// shown, not a fixed fraction of the period. Beyond three medians lie no uniform, Gaussian
    /// or gamma delays (shape 1.5-4: under 3 % beyond). The same reach bounds the young
    /// numbering's losses (`Estimator::infer_early`) and where a loss verdict weighs the next
    /// sample on time after a delay (`Estimator::loss_confirmed`).
    ///
    /// Measured with `scripts/family_draws.py --kinds uniform,gaussian,gamma --draws 20
    /// --seed 5`: the draws within Rock's RMS went from 70, 80 and 65 % to 100 % each.
    pub stats_reach: f64,
    /// Under a jitter spanning periods, an arrival after a gap longer than the window restarts
    /// the fits only where its residual on the floor (numbered next) is beyond this many times
    /// the largest residual of a free point in the history (see `Estimator::jitter_reaches`):
    /// the largest of `n` exponential delays is about `ln n` means, and a delay beyond twice
    /// that comes once in `n²` samples; a pause goes further.
    ///
    /// Measured on the nine draws of `scripts/family_draws.py --seed 2` whose jitter spans 3-5
    /// periods (periods of 0.05-0.8 s) and whose RMS was above Rock's: eight are now within it
    /// (exponential 201085 1.15 -> 0.96 x, 201090 1.01 -> 0.45, 201116 1.01 -> 0.46,
    /// heavy-tailed 204013 1.01 -> 0.50, 204021 1.04 -> 0.94, 204043 1.07 -> 0.97, 204086
    /// 1.05 -> 0.86, gamma 202038 1.05 -> 0.78); 201006 (no gap longer than its window) is
    /// unchanged. No other draw of the 15 kinds at `--draws 8 --seed 3` and `--seed 7` moves.
    pub restart_reach: f64,
    /// The arrival gaps' mean distance to a whole number of periods (in periods, for gaps not
    /// queued) from which the jitter spans periods, and below which it no longer does
    /// (hysteresis): `(enter, leave)`. The mean is a quarter period where the jitter spans
    /// periods (the distance is then spread evenly), about 0.8 of the jitter's standard
    /// deviation where it is well below a period; 0.225 is reached by uniform delays of 0.72
    /// periods, Gaussian ones of standard deviation 0.23 periods, exponential ones of mean
    /// 0.42 periods, where the residual statistics within half a period begin to miss much of
    /// the jitter. Numbering-free, so that a history mixing two numberings (residuals a period
    /// apart: the floor tilted by a loss missed at the start) is not taken for a wide jitter.
    /// At an entry of 0.2 (exponential delays of mean 0.3 periods), the lossy drained streams
    /// of `lossy_drained_streams_are_estimated_at_their_floor` changed level, 9 of 17 in least
    /// squares more than 1 ms off their floor against 7 of 18.
    pub wide_jitter_gap: (f64, f64),
    /// The gaps the mean of `wide_jitter_gap` spans (a running mean over about this many): its
    /// standard deviation is then 0.013 periods where the jitter spans periods, two below the
    /// leaving value.
    pub wide_jitter_memory: f64,
    /// The fewest gaps before `wide_jitter_gap` is judged.
    pub wide_jitter_gaps: u32,
    /// Hull to least-squares decision: the ratio of the mean residual above the floor to its
    /// standard deviation is about 1 for exponential delays (the floor is sharp), about 2 for
    /// uniform or quantised and about 3 for Gaussian jitter; from this ratio on the fit leaves
    /// the hull for least squares.
    ///
    /// Never entering least squares, none of the 13 public scenarios misses its target: it
    /// guards the case described above.
    pub ls_enter_ratio: f64,
    /// The ratio below which the fit goes back to the hull: below `ls_enter_ratio`, so that the
    /// mode does not flap (hysteresis).
    pub ls_leave_ratio: f64,
    /// The band above the floor, in residual standard deviations, whose points measure the
    /// density of the delays at their lower edge (`LineFit::edge_sharpness`). The floor's
    /// precision against least squares' from the count in the band assumes that density about
    /// constant across it: narrow, so that a density that vanishes at the edge (gamma delays
    /// of shape 3-4) counts few points, yet wide enough to hold a few dozen under a bounded
    /// law. 0.1: a uniform law puts 2.9 % of its points in it.
    pub edge_band: f64,
    /// The edge sharpness (`LineFit::edge_sharpness`) from which least squares hands over to
    /// the floor, and down to which the floor is kept against `ls_enter_ratio` (hysteresis).
    /// The floor's error over least squares' is about the inverse of the sharpness. Simulated
    /// on 60 draws each of 30-3000 points (the median, 10th and 90th percentiles): uniform
    /// delays 4.9 (3.4-6.9) at 300 points, 8.9 (7.3-11.4) at 1000, 16 at 3000, the floor 3-10
    /// times as precise as least squares; Gaussian jitter 0-0.3 (at most 1.2), gamma delays of
    /// shape 3 and 4 (least squares the more precise from 1000 points) 1.1-2.2 (at most 3.5),
    /// triangular delays peaked mid-way 0.9-1.3. 4 enters the floor above all of those, and 3
    /// leaves it where a uniform law has shown itself (300 points and more).
    pub sharp_edge: (f64, f64),
    /// The fewest residuals from which the edge sharpness is judged: at 30 points Gaussian
    /// jitter reached 3.7 on 10 % of the simulated draws, at 100 points 2.0; a uniform law
    /// reaches 4 from about 200 points, so 128 costs it nothing.
    pub sharp_edge_points: usize,
    /// Below `sharp_edge_points` residuals, in a history that can grow to hold them, the ratio
    /// (see `ls_enter_ratio`) above which the fit enters least squares regardless of the edge.
    /// Simulated on 2000 histories each (residuals above their minimum): uniform delays stay
    /// below 2.2 in 98 % of histories of 24 points and 99 % of 48, so they keep the floor until
    /// their edge is judged; Gaussian jitter is above it in 28 % at 24 points, 53 % at 48 and
    /// 90 % at 128 (the others enter least squares once the history holds `blunt_edge_points`
    /// or can grow no further). Gamma delays of shape 2-4 stay below 2.2 in 99-100 %.
    pub ls_clear_ratio: f64,
    /// The residuals below which an edge not yet sharp is still undecided (see
    /// `ls_clear_ratio`): the count in the edge band is a few points at 128-256 residuals, and
    /// uniform delays of 0.35-0.45 periods scored 1.3-2.5 at 249 points and 7.2-7.6 at 497
    /// (`bounded_delays_are_fitted_on_the_floor`, seeds 3 and 14), gamma delays of shape 3-4
    /// 1.1-2.2, Gaussian jitter 0-1.2. Gamma delays, for which least squares is the more
    /// precise line from about 1000 points, keep the floor until 512.
    pub blunt_edge_points: usize,
    /// Residuals whose mean is below this many standard deviations look exponential (about 1):
    /// the runs above the floor that signal a change are then judged at lower levels too (see
    /// `LineFit::exponential_like`).
    pub exponential_ratio: f64,
    /// Residual standard deviations above the mean residual that the jitter reaches: the limit
    /// for a point to enter the least-squares sums, and how far an estimate may lie after its
    /// arrival (`Estimator::late_margin`).
    pub ls_limit_sd: f64,
    /// The ratio from which a fit of reference pulses enters least squares (see
    /// `LineFit::for_pulses`).
    pub pulse_ls_enter_ratio: f64,
    /// History points from which `LineFit::rebuilt_floor` is kept.
    pub frozen_min_points: usize,
    /// The mean to standard deviation ratio of the residuals above the floor from which, in
    /// least squares, the points gather around the mean residual rather than at the floor
    /// (the centre the history's consistency is judged at, see `consistency_divisor`): about 3
    /// for Gaussian jitter under its floor, 1.7 for uniform and 1 for exponential delays, whose
    /// points gather at the floor. Halfway between uniform and Gaussian jitter, with a margin
    /// for the Gaussian ratio's spread on a few hundred points (2.5-3).
    pub ls_centre_ratio: f64,
    /// A history is judged for consistency (see `consistency_divisor`) only on this many times
    /// `min_stats_points` free points or more (72): fewer are too few to tell a mix of two
    /// numberings from jitter.
    pub consistency_stats: usize,
    /// A history is inconsistent, and cut, where fewer than one in this many of its free points
    /// lie within half a period (or the median residual, under a jitter spanning periods) of
    /// where they gather (see `ls_centre_ratio`): it mixes two numberings, e.g. losses missed
    /// at the start, whose points lie a period or more below the rest and tilt the floor. One
    /// in three: uniform delays of 0.8 periods put 31 % of the points within a quarter period
    /// of the floor, yet 62 % within half a period, where the check is made; with the points
    /// within a quarter period, such histories were cut again and again (232-425 us RMS on a
    /// 200 Hz IMU with 1 ms + U(0, 4 ms) delays, 36-80 us at half a period).
    pub consistency_divisor: usize,
    /// The young summary's level (`LineFit::low_level`) is that of the lowest line under all
    /// but one in this many of the newest points (at most 64): one glitch in eight below the
    /// points does not pull the young line down, while the level stays within the lowest
    /// eighth of the jitter.
    pub low_level_divisor: usize,
    /// Points appended between two rebuilds of the fit at least (half the history otherwise):
    /// a rebuild costs O(history), so a young fit is rebuilt every 16 points, and its first
    /// statistics (`min_stats_points`) come with the second rebuild.
    pub rebuild_min: usize,
    /// From this many points in a full history (one the span trims), every other scheduled
    /// rebuild of a fit in the hull mode keeps the residual statistics (mean, deviation, edge,
    /// mode) of the one before and rebuilds only the hull and the lines: half the history is
    /// new since, and statistics of 1,024 points or more move by about `1/√N` (3 %) of their
    /// spread. The pass over the history costs about 21 instructions per update on the
    /// bench's 100 Hz stream (`examples/estimator_instructions.rs`: 1,283.7 → 1,262.8, the
    /// same estimates). Below it, staler statistics held a mode too long: at every size from
    /// 0, 80 of 600 family draws changed (seed 2, 40 per kind; quantised draw 212024, 161
    /// points, 1.6 → 3.9 us); at 1,024 none of them. `usize::MAX`: always refreshed.
    pub stats_refresh_points: usize,
    // ---- Changes: period steps, clock steps, pauses and drains (`Estimator::commit`).
    /// Runs of free (not queued) samples whose residuals all lie above the floor by `factor ×`
    /// the mean residual signal that the line is too early (a step up of the latency or of the
    /// sensor clock): `(factor, run)`. For exponential delays each run has the same odds
    /// without a change, `e^(−factor·run) = e^(−24)` per start, and a step of `factor ×` the
    /// mean makes it certain. The first holds in every mode; the smaller steps only while the
    /// residuals look exponential (`LineFit::exponential_like`: under symmetric jitter or a
    /// quantised clock's grid, low residuals are rarer and long runs above half the mean are
    /// common). On a quantised clock the residual is the delay beyond one tick above the fitted
    /// line, in fitted delay means, with the same odds at most.
    ///
    /// Measured: with the runs off, S8 (period step) misses its target (3.1 ms RMS against
    /// a 0.5 ms target); with the first level alone, none of the 13 public scenarios does.
    pub above_levels: [(f64, u32); 3],
    /// Consecutive samples below the floor (of the last rebuild) by `below_factor` × the mean
    /// residual that signal that the line is too late: a step down of the latency or a shorter
    /// period. No sample on time comes below the floor, so a few in a row are enough.
    ///
    /// Set off, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub below_run: u32,
    /// Consecutive samples beyond the jitter's reach above the floor (`ls_limit_sd` residual
    /// standard deviations above the mean residual), none less late than the first, that
    /// signal that the line is too early: a longer period, whatever the jitter's law. Each
    /// such sample has odds of about `e^-6` under exponential delays (so four in a row
    /// `e^-24`, as the runs of `above_levels`), `3e-7` under Gaussian jitter and none under
    /// uniform jitter. Where the jitter is symmetric, `above_levels` waits for residuals of
    /// twice the mean, six standard deviations of a Gaussian, and then twelve of them: a
    /// 4 % step of a 2 Hz sensor had put its estimates 230 ms early by then.
    /// (`scripts/family_draws.py --seed 2 --kinds period_step --draws 80`: 76.2 to 80.0 % of
    /// the draws within Rock's RMS.)
    pub beyond_run: u32,
    /// The newest free samples (at most 32) among which the breaches of the live floor are
    /// counted (`changes::Changes::breached`): a shorter period sends a share of them below
    /// the floor within a few tens of samples, where a run of `below_run` samples all below
    /// it waited for the arrivals to move by the whole jitter, and the slope test for the
    /// slope change to stand out of it.
    pub breach_window: u32,
    /// The odds of a sample coming below the live floor while the line holds, times the
    /// free points the floor was fitted on: 2 for the floor's two supporting points, doubled
    /// for its extension beyond them to the newest sample.
    pub breach_share: f64,
    /// The odds without a change from which the breaches signal one: `1e-9` per sample, as
    /// the slope test's (`step_t`), so that thousands of samples per stream raise no false
    /// step.
    pub breach_odds: f64,
    /// The fewest free points the floor must have been fitted on for the breaches to be
    /// counted: with fewer, each sample breaches the floor with odds of a few percent.
    pub breach_min_points: usize,
    /// The breaches of the live floor among the newest `breach_window` free samples from which
    /// a least-squares estimate is held within the mean residual after its arrival instead of
    /// `ls_limit_sd` deviations beyond that (`Estimator::late_margin`): breaches under way, too few yet to tell a change,
    /// are the first sign of a shorter period, whose least-squares line runs later and later
    /// than the arrivals until the change is told (14 ms after them on a 39 Hz sensor whose
    /// period shortened by 0.85 % under gamma jitter of a fifth of a period, 2.6 x Rock's RMS,
    /// `scripts/family_draws.py --kinds period_step --seed 2 --first 51 --draws 1`). Two
    /// breaches come with odds of about `C(16, 2) · (breach_share / free)²` while the line
    /// holds (0.2 % of the samples at 1000 free points): holding every estimate at its
    /// arrival moved the least-squares output of symmetric jitter off its level. The hold
    /// leaves the mean residual: at the arrival itself, the breaching sample of a steady
    /// Gaussian stream was put 0.7 ms early (max 703 µs against Rock's 607 on
    /// `scripts/estimator_draws.py --seeds 9006 --kinds S1_gauss_jitter`); within the mean
    /// residual, 85.7 % of the period_step draws against 87.9 % (seed 2, 140 draws).
    pub breach_hold: u32,
    /// See `below_run`: how far below the floor, in mean residuals, a sample counts as below
    /// it. Also bounds how far before the floor a sample on time may come in the loss verdicts.
    pub below_factor: f64,
    /// The fall of the residuals per sample, in periods, over a run above the floor from which
    /// the run is a draining backlog, not a change (see `Estimator::commit`).
    pub drain_fall: f64,
    /// The fall from the run's peak must also exceed this many mean residuals.
    pub drain_jitter: f64,
    /// The window lengths, in free samples, of the slope test of a shorter period
    /// (`changes::SlopeSteps`, at most 256): each window length `m` compares the slopes of the
    /// newest two segments of `m` free samples every `m / 2` free samples, from the sums of
    /// their halves kept as the samples come. Short windows find large steps within a few tens of samples; long
    /// ones a step of 0.5 % under a jitter of half a period, which takes a few hundred samples
    /// to move the arrivals beyond their jitter. The test is what finds a shorter period under
    /// symmetric jitter, where the live floor bends down with the newest samples and no
    /// floor of a rebuild is kept to judge them against (`below_run`): `scripts/family_draws.py
    /// --seed 2 --kinds period_step --draws 80` went from 61.2 to 67.5 % of the draws within
    /// Rock's RMS with it (a 3.8 % step of a 68 Hz sensor under Gaussian jitter had been found
    /// 700 samples late).
    pub step_windows: [usize; 5],
    /// The ramp test of a longer period (`changes::Ramp`): the likelihood-ratio statistic of a
    /// ramp of the residuals (a longer period adds its excess to each later sample's residual)
    /// from which the period stepped: 6.5 deviations of a normal statistic, odds of about
    /// `4e-11` per start searched, so that thousands of samples with up to 64 starts each
    /// raise no false step. It tells a ramp of `δ/σ` per sample after about `(127/(δ/σ)²)^(1/3)`
    /// samples (10 at a third of a deviation), where the runs beyond the jitter's reach wait
    /// for the arrivals to leave the jitter (a 2.4 % step of a 38 Hz sensor under Gaussian
    /// jitter of a third of a period, `scripts/family_draws.py --kinds period_step --seed 2
    /// --first 46 --draws 1`: 1.02 to 0.12 x Rock's RMS). Measured with `--draws 140
    /// --jobs 1 --no-causal`: period_step misses 14 -> 11 (seed 2), 12 -> 10 (seed 5),
    /// 20 -> 14 (seed 7); gaussian, exponential, counter, uniform, stalls, loss_random and
    /// usb_timer (seed 2) unchanged but for one usb_timer draw's strict figure. The same
    /// threshold holds for the fall below a least-squares line (a shorter period,
    /// `Changes::fall`), whose history is cut at the fall's start: all 15 kinds, `--seed 2
    /// --draws 140 --jobs 2 --no-causal`, 28 -> 25 misses (period_step 11 -> 8), none new. At
    /// 0 both tests are off.
    pub ramp_t: f64,
    /// The CUSUM level (in residual deviations, drift `ramp_drift`) from which the ramp's
    /// starts are searched: the search (up to 64 starts) runs only while the residuals have
    /// risen by three deviations beyond the drift, rare without a change, so that the
    /// steady state costs only the CUSUM and five sums.
    pub ramp_look: f64,
    /// The fewest samples after a ramp's start that it is judged on: four fit a ramp and its
    /// scatter.
    pub ramp_min: usize,
    /// The CUSUM's drift, in residual deviations: half of one, the usual CUSUM drift for a
    /// shift of one deviation; jitter alone keeps the CUSUM near 0.
    pub ramp_drift: f64,
    /// The ramp test's bound on the excesses, in deviations: an excess within it is taken as
    /// it is, one beyond it as the one before plus its own step, and a step beyond it (a
    /// far-late sample, a stall, the return from one) as no step; three deviations, which
    /// jitter alone seldom passes in one step. Clipped at this level instead, a ramp that
    /// passed it before it was told was flat to the test of its rise: period_step misses
    /// (`--draws 140 --no-causal`) seed 2 8 -> 7, seed 5 9 -> 7, seed 7 14 -> 9; all 15 kinds
    /// (seed 2) 25 -> 24 misses, none new but in period_step (2: a fast step told sooner,
    /// on fewer samples after it), strict 1958 -> 1959.
    pub ramp_clip: f64,
    /// The fewest free points of the history for the ramp test, as `breach_min_points`: on a
    /// younger line the residual statistics (from its last rebuild) are too rough (a gaussian
    /// draw with jitter of two periods, seed 203109, was cut at its 57th sample, 2.2 x its
    /// RMS). At most half of the most points the history holds (`history_factor` windows
    /// over the period): a slow sensor's history never reaches 64 points with a 5 s window
    /// (`slow_sensors_with_a_short_history_are_tested_for_ramps`).
    pub ramp_min_points: usize,
    /// Under one-sided delays (not least squares) the ramp's weighted sum must also reach
    /// this many times its largest weight, in the delays' tail scale: the sum of weighted
    /// exponential delays has a tail of `e^(-sum / largest weight)` at most (Chernoff),
    /// heavier than the Gaussian's that `ramp_t` assumes, and `ln 1e9` = 20.7 keeps the odds
    /// of `ramp_t`'s. Without it the exponential kind's median RMS/Rock went from 0.040 to
    /// 0.052 (seed 2, 140 draws, false steps on one draw in six). The scale is the residuals'
    /// deviation where they are not exponential-like (a gamma law of shape `k` has a tail of
    /// scale `σ/√k`): period_step misses 511059 fixed, 711109 and 711119 stricter (seeds 5
    /// and 7, 140 draws), none new.
    pub ramp_tail: f64,
    /// Under one-sided delays a ramp whose weighted sum stays within `ramp_tail` is told all
    /// the same where the samples after its start lie lifted off the floor
    /// (`changes::Ramp::floor_lift`): `(g, z, level)`, a log-likelihood ratio of a ramp from
    /// the start against none of at least `g`, at a start whose statistic (see
    /// `ramp_t`) is at least `z`, and at least `level` above the ratio of the best level step
    /// among the same samples. A ramp from the start exceeds `g` with probability `e^(-g)`
    /// per start without one, under exponential delays of the lower tail's scale: 16, about
    /// 1e-7, below the odds of `ramp_t` and `ramp_tail` once the 64 starts a search weighs are
    /// counted. `z` = 3.25, half of `ramp_t`, keeps the exact ratio (a pass over the samples
    /// after the start) to the searches near a ramp. A level step (a delay that grew and
    /// stays) lifts the samples as well: at a margin of 4 a step of 4 deviations was told as
    /// a ramp (`one_sided_ramps_are_told_by_their_lift_off_the_floor`, 57 streams of 100
    /// samples), and a USB adapter's stream (`scripts/family_draws.py --kinds usb_timer
    /// --seed 17 --first 39 --draws 1`) moved by microseconds (0.09 to 2.7 times Rock's RMS);
    /// at 6 neither. Family (140 draws, `--kinds period_step`, seeds 2, 11, 13, 17): misses
    /// 19 to 15; `longer_periods_under_one_sided_delays_are_told_by_the_lift`.
    pub ramp_lift: (f64, f64, f64),
    /// The t statistic (in the line's deviations) that the slope of the samples after a
    /// ramp's start, fitted with their own intercept, must reach: a longer period rises over
    /// them, a delay draining behind a slow link (a level step of clipped residuals, then a
    /// fall) does not, and without it such drains were cut as steps
    /// (`a_delay_drained_by_a_slow_link_is_no_loss`).
    pub ramp_rise: f64,
    /// The t statistic (slope difference over its standard error) from which the slope test
    /// signals a period step: odds of about `1e-9` per test without a change under Gaussian
    /// residuals, so that thousands of tests per stream raise no false step. At 0 the test is
    /// off.
    pub step_t: f64,
    /// The smallest slope change, as a fraction of the period, that the slope test takes for a
    /// period step: 2000 ppm, ten times the largest swing of a crystal's rate (±100 ppm), so
    /// that a wandering rate is followed by the line and the wander tracker, not cut as steps.
    pub step_min: f64,
    /// The largest share of queued samples (behind a late one, in a burst or a packet) in the
    /// slope test's window for which the test runs, on the free samples: under FIFO delivery
    /// a jitter of a third of a period queues one sample in twenty behind a late one, and a
    /// window holding any was not tested (a 2.9 % step of a 16 Hz sensor under exponential
    /// delays of 0.39 periods went unseen for 700 samples, `scripts/family_draws.py --seed 2
    /// --kinds period_step --first 103 --draws 1`: 4.0 x Rock's RMS). Packets queue half of
    /// their samples or more, a USB adapter's timer most: their windows stay untested.
    pub step_queued_share: f64,
    /// The t statistic (the slope difference of the history's older and newer halves over
    /// its standard error) from which a rate that wanders is followed by forgetting the older
    /// half (`Wander::forget`): odds of about `6e-5` per test without a change under Gaussian
    /// residuals, a test every quarter or sixteenth of the history (`forget_near`). A line over a 60 s history of a 41 Hz
    /// sensor whose rate wanders 66 ppm over 104 s was 5.2 x Rock's RMS (`scripts/family_draws.py
    /// --seed 2 --kinds wandering --first 121 --draws 1`); a rate wandering that slowly
    /// inflates no second difference the wander test reads, and only the halves' slopes show
    /// it. At 0 the test is off.
    pub forget_t: f64,
    /// The fewest committed samples between two tests of the halves' slopes (a quarter of the
    /// history otherwise, a sixteenth near the threshold: see `forget_near`).
    pub forget_every: u32,
    /// The share of its threshold (`forget_t`, `band_bend`) from which a test of the history
    /// for a bend is repeated after a sixteenth of the history instead of a quarter: a bend
    /// grows with the square of the history's span, so a statistic at half its threshold
    /// crosses it within about a quarter of the history. On the wandering draws of
    /// `scripts/family_draws.py --kinds wandering --draws 140`, seeds 2, 11 and 13, misses
    /// 14 → 10 at 0.5 (every sixteenth always: 9, at 3 % more instructions on the bench's
    /// stream and a pass over half the history every sixteenth under bounded delays: +857
    /// instructions per sample on a uniform wandering stream, +144 at 0.5).
    pub forget_near: f64,
    /// The fewest points the forgetting keeps: half of them fit each slope of the next test.
    pub forget_min_points: usize,
    /// How far the thinnest strip of a history under a bounded delay law may be wider than its
    /// newer half's, in units of the newer half's `W / k` (the delays' width over its points),
    /// before the older half is forgotten (`LineFit::band_bends`). Without a bend the widening
    /// is the newer half's own shortfall from `W`: simulated on 400 histories each of 128-3000
    /// uniform points on one line, its median 0.8-1.0, 99th percentile 6.1-6.4, largest 7.8-9.1.
    /// 12 lies beyond all of them; the bend it tells is still far below what the halves' slopes
    /// tell through least squares (`forget_t`). NaN turns the band off (`LineFit::band_check`).
    pub band_bend: f64,
    /// The newest history points searched for where a change lies once the runs above or
    /// below the floor found it (`changes::change_point`, at most 512): a step of 0.5 % under
    /// a jitter of a tenth of a period takes a few tens of samples to show.
    pub change_search: usize,
    /// The fewest free points on each side of a change where it is searched for, and so the
    /// fewest kept after it: three points fit a line and show its scatter. Only the points
    /// after the change are kept: a fixed dozen (as before) kept the few samples before a
    /// step that its detection took, which bent the young floor and its residual statistics
    /// (into least squares) for hundreds of samples (`scripts/family_draws.py --seed 2
    /// --kinds period_step --draws 80`: 67.5 % of the draws within Rock's RMS with the
    /// dozen, 76.2 % with the search).
    pub change_min_seg: usize,
    /// Samples after a pause verdict over which a step of the line is looked for with runs
    /// `pause_run_divisor` times shorter: the device's clock may have moved by less than the
    /// jitter.
    ///
    /// At 0, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub pause_watch: u32,
    /// See `pause_watch`: the change runs are this many times shorter after a pause, so that
    /// the odds of a run without a change are `e^-8`, not `e^-24`, over the few samples
    /// watched.
    pub pause_run_divisor: u32,
    // ---- A quantised arrival clock (`quant.rs`, `Estimator::soft_tick`).
    /// Arrivals after the arrival gaps' exact gcd fell below 2 % of the period before their
    /// phases are tried on `HOST_TICKS`.
    ///
    /// Set off, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub soft_tick_after: u32,
    /// The least share of the arrivals whose phase on a tick lies within `soft_tick_near` of a
    /// tick of their mean phase for the clock to count as quantised on it: uniform phases give
    /// twice that width, 0.2; a sensor whose period is `k + 1/m` ticks (and whose jitter is
    /// small) puts its phases in `m` groups, at most half of them near any one phase.
    pub soft_tick_share: f64,
    /// The most arrivals whose phases are tried (the newest), so that the one-off test costs at
    /// most a few thousand trigonometric evaluations per tick tried.
    pub soft_tick_points: usize,
    /// How near their mean phase (in ticks) arrivals count as on the grid of a soft tick (see
    /// `soft_tick_share`); stamps further off are left out of the fit.
    pub soft_tick_near: f64,
    /// Standard deviation of the prior on the period, in ppm of the expected period: about the
    /// relative tolerance of a sensor's and a host's crystal. (Measured on 160 draws of the
    /// quantised scenario kind: 10 to 17 ppm do about equally well; 3 ppm shrinks real drifts
    /// too much, 20 ppm lets the slope wander.)
    pub quant_prior_ppm: f64,
    /// The anchor's memory, in multiples of the history's sample count (the weight of an output
    /// decays by `e` over this many samples), so that the centroid lies within the span where
    /// the fitted line holds.
    pub quant_anchor_memory: f64,
    /// The output follows the fit at once until the history holds this many samples (the first
    /// fits' offsets move by a large part of the tick, their slopes by tens of ppm). Measured
    /// on 240 draws of the quantised kind: from 128 samples on, the fit's offset wanders more
    /// than the anchored output's slope error costs (the RMS over the target 7.5 % lower in
    /// geometric mean than from 256, two more draws meet their targets); from 64 or 96, the
    /// early slopes cost more again.
    pub quant_anchor_min_points: usize,
    /// The prior is used only while the fitted period is within this many ppm of the expected
    /// one (a wrong expected period must not bias the fit).
    pub quant_prior_gate_ppm: f64,
    /// The prior is dropped (until the fit is cleared) once the period the data would fit alone
    /// lies more than this many standard deviations of the difference (the data's and the
    /// prior's, combined) from the expected one, on `quant_prior_conflict_min_points` samples
    /// or more: the sensor's crystal is further off nominal than the prior allows. TUM RGB-D's
    /// Kinect, 195 ppm slow, was held near nominal for its first 13 s (0.79 ms RMS against its
    /// stamps' offline line, 0.38 ms with the drop); 30 Hz cameras 100-195 ppm off went from
    /// 92-603 µs RMS to 46-103 µs. On the scenario kind (drifts within 30 ppm, 2.5 prior
    /// standard deviations) no output changes; from 128 samples on, 14 of 300 S9 draws did (one
    /// target lost: the early fits' standard deviation is too small).
    pub quant_prior_conflict_sd: f64,
    /// The samples a fit needs before its conflict with the prior counts (see
    /// `quant_prior_conflict_sd`).
    pub quant_prior_conflict_min_points: usize,
    /// The output takes the expected period itself while the data's own estimate of the period
    /// is within this many of its standard deviations of it (see the module documentation).
    /// Measured on 320 draws of the quantised kind: 0.75, 1, 1.25, 1.5 and 2 meet 302, 304,
    /// 307, 302 and 297 targets against 299 without the lock, at a mean RMS 1 %, 2 %, 4 %, 8 %
    /// and 18 % higher.
    ///
    /// At 0, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub quant_lock_sd: f64,
    /// History points a refit may cost per update, amortised: on a longer history the line is
    /// refitted every `len / quant_refit_points` samples (rounded up). A 30 Hz camera's 40 s history
    /// (1200-1800 points) is refitted every 3-4 samples, a full default history (8192 points)
    /// every 16. Measured on 240 draws of the quantised kind: the same draws meet their targets
    /// as with a refit at every sample, mean RMS 53.62 against 53.61 µs.
    pub quant_refit_points: usize,
    /// Newton iterations per refit (warm-started, usually one or two suffice).
    pub quant_max_newton: usize,
    /// A Newton step that moves the line by less than this (ns, anywhere over the history) ends
    /// the iteration: far below the line's own uncertainty.
    pub quant_newton_tol_ns: f64,
    /// An arrival clock's tick (the gcd of the arrival gaps, or a host tick) is coarse, and the
    /// fit takes the arrivals as quantised, only from this fraction of a period on
    /// (`Estimator::note_gap`, `Estimator::soft_tick`): a finer tick moves an arrival by less
    /// than the jitter does, and the gcd is no longer followed below it.
    pub coarse_tick: f64,
    /// Arrival gaps before their gcd is trusted as the clock's tick: a few gaps can share a
    /// divisor by chance.
    pub coarse_tick_gaps: u32,
    /// A coarse tick matters only where the samples' phase on its grid goes round: by `f` of a
    /// tick per sample (`f` the period's distance to a whole number of ticks, in ticks), so
    /// `f · window / period` times over the window. From this many turns on the fit takes the
    /// arrivals as quantised (`Estimator::phase_turns`); below it the phase barely moves over the
    /// history, a nearly constant offset that the floor or least squares absorb, and the
    /// quantised likelihood, whose samples then do not cover the tick, pins the line no better.
    /// It replaces a fixed band (the period's fractional part in ticks within 0.05-0.95), which
    /// left out ticks within 5 % of a divisor of the period however fast the phase turned (a
    /// 1 ms tick under a 0.963 ms period turns every 27 samples, 190 times in 5 s: the floor
    /// followed the sawtooth, 2.46 x Rock's RMS, 0.06 x as quantised) and took in slow sensors
    /// whose phase turns once or twice in the window (15.625 ms ticks under 200-330 ms periods:
    /// 0.45-1.76 x Rock's RMS as quantised, 0.22-0.36 x without). On 40 quantised family draws
    /// (`scripts/family_draws.py --kinds quantised --seed 5 --draws 40`) 4 turns leaves 3 above
    /// Rock's RMS against 4 with the band, the strict target met on 32 against 30.
    pub tick_phase_turns: f64,
    /// A tick of more periods than this is not fitted as quantised: about as many samples share
    /// each stamp, all but the last of them queued, and the quantised likelihood on the few left
    /// pins the line worse than the floor or least squares do on all of them (a 15.625 ms tick
    /// under a 0.657 ms period, `scripts/family_draws.py --kinds quantised --seed 7 --first 5
    /// --draws 1`: 2.7 ms RMS as quantised, 57 us otherwise, Rock 4.4 ms). 20 is where the
    /// former band of `tick_phase_turns` stopped.
    pub quant_max_tick_periods: f64,
    /// How far (ns) an arrival stamp may lie off its clock's tick, so that gaps of whole ticks
    /// still share it (`quant::near_gcd`): a stamp read on a µs clock (`timeval`) or carried in
    /// an `f64` of ns since 1970 (256 ns steps) misses the tick by up to this. Measured on the
    /// quantised family draws (stamps in 256 ns steps): with exact gcds the tick of 7.4 and
    /// 13.9 ms clocks was never found.
    pub tick_stamp_error_ns: f64,
    /// The largest share of a tick candidate that `tick_stamp_error_ns` (times the ticks in a
    /// gap) may reach: beyond it a remainder says nothing and the gcd goes on, so gaps that share
    /// no tick fall to a fine one (a µs or less for ms gaps) instead of stopping at a spurious
    /// coarse one.
    pub tick_stamp_share: f64,
    /// A tick found only up to the stamps' error (`quant::near_gcd`, not exact) is taken as
    /// the clock's where the samples' phase on it moves by at least this many times
    /// `tick_stamp_error_ns` per sample. Gaps of a sensor with no grid and a jitter within the
    /// stamps' error share a near tick about one gap long, whose distance to the period (the
    /// phase's step) is within the gaps' spread: up to twice the gcd's tolerance of a one-tick
    /// gap, `2 · tick_stamp_error_ns`, either way.
    pub near_tick_min_step: f64,
    /// On a quantised arrival clock, the ratio of the quantised fit's mean delay beyond its line
    /// (`QuantFit::delay_mean`) to the delays' spread (the residuals' standard deviation less
    /// the wait for the tick's, `τ²/12`, in quadrature) from which the fit leaves the quantised
    /// likelihood for least squares: about 1 for exponential delays, 2.5-3 for Gaussian jitter,
    /// whose lower tail that likelihood follows (quantised seed 2: 212046, 212079, 212137 at
    /// 1.0-1.3 x Rock's RMS, 0.25-0.30 x in least squares). Above `ls_enter_ratio`: at 1.6
    /// an exponential draw whose delays queue behind one another (mean 0.42 periods, FIFO,
    /// 212014) entered least squares early and went from 0.02 to 1.15 x Rock's RMS.
    pub quant_ls_enter_ratio: f64,
    /// The ratio below which the fit goes back to the quantised likelihood (hysteresis, as
    /// `ls_leave_ratio`).
    pub quant_ls_leave_ratio: f64,
    // ---- Reference pulses (`reference.rs`).
    /// The pulses' phase deviation assumed before any is measured (in periods: a phase
    /// tolerance of a quarter period).
    pub ref_dev_start: f64,
    /// Pulses in a row whose place on the arrival floor jumped by whole periods before the
    /// pulses are renumbered to follow the samples, or that lie off the pulse line by more than
    /// a quarter period before the line starts over (fewer are rejected as glitches).
    ///
    /// Set off, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub ref_jump_run: u32,
    /// Without a pulse line, a pulse is numbered as the first sample whose arrival floor (less
    /// the minimum latency) is not before it, with this slack in periods: a pulse stamped a
    /// little after its sample.
    pub ref_first_slack: f64,
    /// A pulse further off the pulse line than this many of its residual standard deviations
    /// (once the line has statistics), clamped to `ref_glitch_min`-`ref_glitch_max` of a
    /// period, is a glitch and rejected.
    pub ref_glitch_sd: f64,
    /// See `ref_glitch_sd` (in periods).
    pub ref_glitch_min: f64,
    /// See `ref_glitch_sd` (in periods); also the tolerance before the pulse line has
    /// statistics.
    pub ref_glitch_max: f64,
    /// The pulse line's slope is the precision-weighted mean of the pulses' and the arrivals'
    /// unless they differ by more than this many standard errors of their difference: then
    /// they measure two periods (the arrival line still on the one before a step the pulses
    /// already follow) and the pulses' own stands. 4: slopes that agree differ by more with
    /// odds of about 6e-5 (Gaussian errors).
    pub ref_mix_sd: f64,
    /// Below a pulse floor no pulse lies by more than the floor's own error: the tolerance there
    /// is the mean residual, at least this fraction of a period.
    pub ref_below_min: f64,
    /// A pulse's place on the arrival floor must keep the pulses' phase within this many times
    /// its mean deviation so far, clamped to `ref_phase_min`-`ref_phase_max` of a period.
    pub ref_phase_sd: f64,
    /// See `ref_phase_sd` (in periods).
    pub ref_phase_min: f64,
    /// See `ref_phase_sd` (in periods).
    pub ref_phase_max: f64,
    /// Pulses the phase's and its deviation's running means span (each new pulse moves them by
    /// one part in this many): a jittery pulse moves the phase a little.
    pub ref_phase_gain: f64,
    /// A pulse line that puts a sample more than this fraction of a period after its arrival is
    /// matched to the wrong samples (a pulse cannot follow its sample's arrival): the arrivals
    /// give the estimate.
    pub ref_after_arrival: f64,
    // ---- A wandering rate (`wander.rs`).
    /// Committed samples between two tests.
    pub wander_check_every: u32,
    /// Second differences needed at each lag for a test.
    pub wander_min_d1: usize,
    /// Second differences needed at the longer lag (see `wander_min_d1`).
    pub wander_min_dl: usize,
    /// The stream wanders once the ratio of the spreads reaches this on `wander_enter_checks`
    /// tests in a row...
    ///
    /// Set off, none of the 13 public scenarios misses its target: it guards the case
    /// described above.
    pub wander_enter_ratio: f64,
    /// Tests in a row at `wander_enter_ratio` or more before the tracker starts.
    pub wander_enter_checks: u32,
    /// ... and no longer once it falls below this.
    pub wander_leave_ratio: f64,
    /// A ratio this high (twice `wander_enter_ratio`) starts the tracker on one test: on the
    /// live rig's camera it starts 2 s sooner.
    pub wander_enter_at_once: f64,
    /// The test runs only while the screen's ratio (running means, see `Wander::push`) is at
    /// least this, or the tracker is in use.
    pub wander_screen_ratio: f64,
    /// The memory of the screen's running means, in blocks of `wander_check_every` samples.
    pub wander_screen_blocks: u32,
    /// A square in the screen's running means counts at most this many times the mean.
    pub wander_screen_clip: f64,
    /// The smallest jitter spread the test believes, as a fraction of the period: hardware
    /// stamps have none, and the ratio of two zeros says nothing.
    pub wander_floor_frac: f64,
    /// A gap between two committed samples further than this (in periods) from their numbers'
    /// distance keeps the second differences across it out of the test.
    pub wander_gap_tol: f64,
    /// A second difference at lag 1 this small (ns) repeats the gap before it exactly: a link's
    /// interval, not a sensor's frame. Where this share of them, `wander_exact_share`, is, the
    /// stream is not tested.
    pub wander_exact_ns: f64,
    /// See `wander_exact_ns`: the share of exact second differences from which the stream is
    /// not tested.
    pub wander_exact_share: f64,
    /// A sample later than its prediction by this many standard deviations of the prediction is
    /// not used (a stall or a queued sample).
    pub wander_gate_sd: f64,
    /// Samples in a row beyond the gate on the same side (later, or earlier, than the
    /// prediction) after which the filter restarts at the arrival: the clock's phase stepped (a
    /// frame longer than the others), which a stall does not do for two samples with a period
    /// between them.
    pub wander_step_run: u32,
    /// A gap of more numbers than this restarts the filter.
    pub wander_max_steps: i64,
    /// The fewest samples in the ring a test needs.
    pub wander_ring_min: usize,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            young: 32,
            young_check: 5,
            young_ratio: 3.0,
            young_slack: 0.02,
            young_flat: 0.5,
            period_contradicted: 1.5,
            all_long: 1.3,
            queued: 0.1,
            queued_late: 4.0,
            held_late: 0.5,
            back_run: 3,
            announce_timeout: 10,
            stall_spread: 10.0,
            stall_prior: 4.0,
            stall_bw_min: 0.01,
            hold_near: 0.05,
            hold_records: 4,
            stall_rate_max: 0.5,
            loss_slack: 0.05,
            loss_slack_jitter: 2.0,
            loss_slack_min: 0.002,
            loss_slack_period: 0.01,
            prior_loss: 0.001,
            prior_delay: 5.0,
            evidence_cap: 64.0,
            link_run: 3,
            link_tol: 0.05,
            link_sd: 4.0,
            link_floor: 1e-4,
            pause_early: 3.0,
            drain_confirm: 4.0,
            loss_watch: 32,
            stride_run: 16,
            renumber_run: 64,
            restore_run: 3,
            early_loss_tol: 0.25,
            burst_free_reach: 0.5,
            burst_gap: 0.25,
            packet_tol: 0.3,
            period_multiple_tol: 0.05,
            verdict_spread_sd: 4.0,
            on_time_mean_min: 1e-4,
            link_widen: 3.0,
            restore_tol: 0.25,
            min_stats_points: 24,
            stats_reach: 3.0,
            restart_reach: 2.0,
            wide_jitter_gap: (0.225, 0.2),
            wide_jitter_memory: 64.0,
            wide_jitter_gaps: 8,
            ls_enter_ratio: 1.6,
            ls_leave_ratio: 1.3,
            edge_band: 0.1,
            sharp_edge: (4.0, 3.0),
            sharp_edge_points: 128,
            ls_clear_ratio: 2.2,
            blunt_edge_points: 512,
            exponential_ratio: 1.3,
            ls_limit_sd: 5.0,
            pulse_ls_enter_ratio: 2.2,
            frozen_min_points: 256,
            ls_centre_ratio: 2.5,
            consistency_stats: 3,
            consistency_divisor: 3,
            low_level_divisor: 8,
            rebuild_min: 16,
            stats_refresh_points: 1024,
            above_levels: [(2.0, 12), (1.0, 24), (0.5, 48)],
            below_run: 4,
            below_factor: 0.5,
            breach_window: 16,
            breach_share: 4.0,
            breach_odds: 1e-9,
            breach_min_points: 64,
            breach_hold: 2,
            beyond_run: 4,
            drain_fall: 0.05,
            drain_jitter: 4.0,
            step_windows: [16, 32, 64, 128, 256],
            ramp_t: 6.5,
            ramp_look: 3.0,
            ramp_min: 4,
            ramp_drift: 0.5,
            ramp_clip: 3.0,
            ramp_min_points: 64,
            ramp_tail: 20.7,
            ramp_lift: (16.0, 3.25, 6.0),
            ramp_rise: 2.0,
            step_t: 6.0,
            step_min: 0.002,
            step_queued_share: 0.125,
            forget_t: 4.0,
            forget_every: 16,
            forget_near: 0.5,
            forget_min_points: 64,
            band_bend: 12.0,
            change_search: 256,
            change_min_seg: 3,
            pause_watch: 48,
            pause_run_divisor: 3,
            soft_tick_after: 64,
            soft_tick_share: 0.75,
            soft_tick_points: 512,
            soft_tick_near: 0.1,
            quant_prior_ppm: 12.0,
            quant_anchor_memory: 2.0,
            quant_anchor_min_points: 128,
            quant_prior_gate_ppm: 200.0,
            quant_prior_conflict_sd: 6.0,
            quant_prior_conflict_min_points: 256,
            quant_lock_sd: 1.0,
            quant_refit_points: 512,
            quant_max_newton: 6,
            quant_newton_tol_ns: 100.0,
            coarse_tick: 0.02,
            coarse_tick_gaps: 8,
            tick_phase_turns: 4.0,
            quant_max_tick_periods: 20.0,
            tick_stamp_error_ns: 1_000.0,
            tick_stamp_share: 0.1,
            near_tick_min_step: 4.0,
            quant_ls_enter_ratio: 1.6,
            quant_ls_leave_ratio: 1.0,
            ref_dev_start: 0.25 / 6.0,
            ref_jump_run: 3,
            ref_first_slack: 0.1,
            ref_glitch_sd: 10.0,
            ref_glitch_min: 0.01,
            ref_glitch_max: 0.25,
            ref_mix_sd: 4.0,
            ref_below_min: 1e-4,
            ref_phase_sd: 6.0,
            ref_phase_min: 0.03,
            ref_phase_max: 0.25,
            ref_phase_gain: 8.0,
            ref_after_arrival: 0.25,
            wander_check_every: 32,
            wander_min_d1: 64,
            wander_min_dl: 48,
            wander_enter_ratio: 3.0,
            wander_enter_checks: 2,
            wander_leave_ratio: 2.0,
            wander_enter_at_once: 6.0,
            wander_screen_ratio: 2.0,
            wander_screen_blocks: 2,
            wander_screen_clip: 16.0,
            wander_floor_frac: 1e-4,
            wander_gap_tol: 0.5,
            wander_exact_ns: 2.0,
            wander_exact_share: 0.25,
            wander_gate_sd: 4.0,
            wander_step_run: 2,
            wander_max_steps: 64,
            wander_ring_min: 96,
        }
    }
}
