//! Losses or delays: the verdict of the sample after an ambiguous gap,
//! the evidence it feeds, announced losses, and the watches that let later
//! arrivals overturn a verdict (a backlog drained by a slow link).

use super::fit::{Line, Point};
use super::{
    Ambiguous, DRAIN_WATCH, DelayRun, DivisorRun, DrainWatch, Estimator, LinkDrain, LossWatch,
    Pending,
};

/// Stage 1's evidence of losses against delays: the gaps the next
/// arrivals confirmed as losses and as delays (stalls), and the driver's
/// record of right and false announcements. All are pseudo-counts, halved
/// together past `Tuning::evidence_cap` so that they follow a stream that
/// changes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct LossEvidence {
    /// Gaps confirmed as losses.
    pub loss: f64,
    /// Gaps confirmed as delays.
    pub stall: f64,
    /// Gaps confirmed as pauses (samples lost beyond the stalls' spread,
    /// on the line), and gaps longer than the window that restarted the
    /// fits, the next arrival a period or so later: they back the loss
    /// reading of the next gap as long.
    pub pause: f64,
    /// Samples lost in the gaps counted in `loss` (scaled alike).
    pub lost: f64,
    /// Announced losses that showed up as gaps (scaled like the evidence).
    pub ann_used: f64,
    /// Announced losses that did not: how far the driver's word is trusted.
    pub ann_false: f64,
    /// The status's sample count where the gap evidence began, moved up
    /// as the evidence is halved: `samples − since` is how many samples
    /// the evidence speaks for (see [`Estimator::evidence_samples`]).
    pub since: f64,
    /// How late on the floor (in periods) the newest [`STALL_LENGTHS`]
    /// certain delays were, a ring (see [`Estimator::stall_density`]).
    pub stall_at: [f64; STALL_LENGTHS],
    /// How many of `stall_at` are filled.
    pub stall_len: usize,
    /// The ring's next slot.
    pub stall_next: usize,
    /// The recorded lengths' bandwidth by Silverman's rule (periods),
    /// kept with them.
    pub stall_bw: f64,
}

/// The certain delays whose lengths [`LossEvidence::stall_at`] keeps: the
/// recent ones, enough for a density of one or two lengths.
pub(super) const STALL_LENGTHS: usize = 16;

impl LossEvidence {
    /// No evidence, as in a new estimator.
    #[cfg(test)]
    pub fn reset(&mut self) {
        *self = LossEvidence::default();
    }

    /// Halves the gap evidence once it exceeds `cap` (`now`: the status's
    /// sample count), and the samples it speaks for.
    pub fn cap(&mut self, cap: f64, now: u64) {
        if self.loss + self.stall + self.pause > cap {
            self.since = 0.5 * (self.since + now as f64);
            self.pause *= 0.5;
            self.loss *= 0.5;
            self.lost *= 0.5;
            self.stall *= 0.5;
        }
    }

    /// Records a certain delay, `late` periods on the floor.
    #[cold]
    #[inline(never)]
    pub fn note_stall(&mut self, late: f64) {
        if late.is_finite() {
            self.stall_at[self.stall_next] = late;
            self.stall_next = (self.stall_next + 1) % STALL_LENGTHS;
            self.stall_len = (self.stall_len + 1).min(STALL_LENGTHS);
            let rec = &self.stall_at[..self.stall_len];
            let n = rec.len() as f64;
            let mean = rec.iter().sum::<f64>() / n;
            let var = rec.iter().map(|s| (s - mean) * (s - mean)).sum::<f64>() / n;
            self.stall_bw = 1.06 * var.sqrt() * n.powf(-0.2);
        }
    }

    /// Halves the announcement record once it exceeds `cap`.
    pub fn cap_announcements(&mut self, cap: f64) {
        if self.ann_used + self.ann_false > cap {
            self.ann_used *= 0.5;
            self.ann_false *= 0.5;
        }
    }
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

impl Estimator {
    /// An announcement after the sample that ends its gap: the pending
    /// sample, numbered as delayed, is renumbered after the loss (or its
    /// loss numbering is confirmed), if the gap fits.
    #[cold]
    pub(super) fn announce_late(&mut self) {
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
            // A number already returned, revised by the announcement.
            self.st.revisions = self.st.revisions.saturating_add(1);
        }
        self.use_announcements(m);
        self.pending = Some(Pending {
            sample: alt.lost,
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
    pub(super) fn announcement_fits(&self, r_lost: f64, r_delayed: f64, p: f64) -> bool {
        if !self.fit.stats_valid() {
            return true;
        }
        let record = (self.evidence.ann_used + 1.0) / (self.evidence.ann_false + 1.0);
        let rate = (self.evidence.stall + 1.0) / (self.fit.len() as f64 + 2.0);
        let density = |r: f64| {
            (1.0 - rate) * self.on_time_density(r, p) + rate / (self.cfg.tuning.stall_spread * p)
        };
        record * density(r_lost) >= density(r_delayed)
    }

    /// `m` announced losses showed up as a gap: they are used up (and are
    /// no evidence for unannounced gaps: a driver that announces its
    /// losses leaves the others to stalls).
    pub(super) fn use_announcements(&mut self, m: u64) {
        self.announced -= m.min(self.announced);
        self.announce_age = 0;
        self.evidence.ann_used += m as f64;
        self.cap_announcements();
    }

    pub(super) fn cap_evidence(&mut self) {
        self.evidence
            .cap(self.cfg.tuning.evidence_cap, self.st.samples);
    }

    /// Announced losses that no gap showed within
    /// `Tuning::announce_timeout` updates are rejected (counted in
    /// `losses_rejected`, and as evidence against the driver's
    /// announcements).
    #[inline(always)]
    pub(super) fn age_announcements(&mut self) {
        if self.announced > 0 {
            self.announce_age += 1;
            if self.announce_age > self.cfg.tuning.announce_timeout {
                self.st.losses_rejected += self.announced;
                self.evidence.ann_false += self.announced as f64;
                self.announced = 0;
                self.cap_announcements();
            }
        }
    }

    pub(super) fn cap_announcements(&mut self) {
        self.evidence
            .cap_announcements(self.cfg.tuning.evidence_cap);
    }

    /// Numbers the pending sample (resolving an ambiguous gap with the
    /// arrival `q` of the next one) and commits it to the fit.
    #[inline(always)]
    pub(super) fn resolve_and_commit(&mut self, mut pd: Pending, q: i64) {
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
            self.delay_run_next = None;
            let verdict = if self.link_queued(gap) {
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
            // A delay weighed against the loss reading extends the run of
            // them; any other verdict ends it.
            self.delay_run = match verdict {
                Verdict::Delayed => self.delay_run_next.take(),
                _ => None,
            };
            if matches!(verdict, Verdict::Paused | Verdict::Restarted) {
                self.arm_drain_watch(pd, q, p, verdict == Verdict::Restarted);
            }
            if verdict == Verdict::Restarted {
                self.restart(0);
                if self.counter.last_n == Some(pd.point.n) {
                    self.counter.last_n = Some(nl);
                }
                pd.point.n = nl;
                self.commit(pd.point);
                self.last_n = Some(nl);
                self.note_revisions(usize::from(nl != pd.sample));
                return;
            }
            let numbers = match verdict {
                Verdict::Lost if alt.wraps => {
                    self.st.losses_from_index += (nl - nd) as u64;
                    if self.counter.last_n == Some(nd) {
                        self.counter.last_n = Some(nl);
                    }
                    (nl, nl)
                }
                Verdict::Lost => {
                    self.evidence.loss += 1.0;
                    self.evidence.lost += (nl - nd) as f64;
                    self.st.losses_detected += (nl - nd) as u64;
                    // Sooner than a period after it, the next sample may
                    // be queued behind the judged one on a slow link; later,
                    // it may have stalled on its own.
                    if self.counter.last.is_none() && self.announced == 0 && self.st.references == 0
                    {
                        self.loss_watch = Some(LossWatch {
                            lost: nl,
                            m: nl - nd,
                            left: self.cfg.tuning.loss_watch,
                            strong: gap >= p,
                            by: q,
                        });
                    }
                    (nl, nl)
                }
                Verdict::Paused => {
                    self.evidence.pause += 1.0;
                    self.st.losses_detected += (nl - nd) as u64;
                    self.changes.watch_pause(self.cfg.tuning.pause_watch);
                    (nl, nl)
                }
                Verdict::Delayed => {
                    self.evidence.stall += 1.0;
                    // Its length is recorded where the next sample came
                    // right behind it (held with it): a delay for certain,
                    // not a verdict a later arrival may find wrong (the
                    // first of a burst of losses read as delayed would
                    // make the next one's lateness a stall length too).
                    if let (true, Some(r), Some(p)) = (
                        gap < 0.5 * p,
                        self.floor_residual(nd, pd.point.q, period),
                        period,
                    ) {
                        self.evidence.note_stall(r / p);
                    }
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
        self.note_revisions(usize::from(chain_n != pd.sample));
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

    /// Watches a pause verdict on the pending sample `pd` (judged by the
    /// arrival `q`; `restarted`: the verdict restarts the fits) so that the
    /// arrivals after it can overturn it (see [`Self::watch_drain`]). Not
    /// with a device counter (which numbers a drain itself), announcements
    /// or reference pulses (whose numbers would have to follow), nor during
    /// a drain. What is kept is bounded and allocates nothing: the judged
    /// sample, the loss stage's evidence and counts as the verdict finds
    /// them, in the watch's room (allocated with the estimator), and a mark
    /// on the fit's history, whose marked points stay in their slots while
    /// the watch lasts.
    #[cold]
    fn arm_drain_watch(&mut self, pd: Pending, q: i64, p: f64, restarted: bool) {
        if self.drain_watch.is_some()
            || self.draining
            || self.counter.last.is_some()
            || self.announced > 0
            || self.st.references > 0
        {
            return;
        }
        let Some(mut w) = self.drain_room.take() else {
            return;
        };
        self.fit.mark();
        w.judged = pd;
        w.restarted = restarted;
        w.clock = self.clock;
        w.quantised_tick = self.fit.quantised_tick;
        w.evidence = self.evidence;
        (w.losses, w.delays, w.changes) = (
            self.st.losses_detected,
            self.st.delays_detected,
            self.st.changes_detected,
        );
        w.first = pd.point.q;
        w.period = p;
        // At least `Tuning::drain_fall` of a period: a jitter-free pause (its
        // gaps a fitted period give or take a few ns) is no drain.
        w.confirm = (self.cfg.tuning.drain_confirm
            * std::f64::consts::SQRT_2
            * self.fit.std_r.min(0.5 * p))
        .max(self.cfg.tuning.drain_fall * p);
        w.arrivals = [0; DRAIN_WATCH];
        w.arrivals[0] = q;
        w.len = 1;
        w.link = Some(q.saturating_sub(pd.point.q) as f64)
            .filter(|&gap| gap < p)
            .map(LinkDrain::start);
        w.link_before = w.link;
        w.steps = [1; DRAIN_WATCH];
        w.numbers = [i64::MIN; DRAIN_WATCH];
        self.drain_watch = Some(w);
    }

    /// After a pause verdict, the arrivals that follow tell a pause from a
    /// backlog drained by a link a little faster than the sensor (a stall
    /// followed by samples every 0.8 periods, say). After a pause the
    /// samples come a period apart, give or take the jitter; in a drain
    /// each comes less than a period after the one before, so the arrivals
    /// fall further and further behind one period per sample. One gap
    /// cannot tell them apart when the link gains less on the sensor than
    /// the jitter spreads; the sum of the gaps can. Once the arrivals since
    /// the judged sample fall behind by `Tuning::drain_confirm` standard
    /// deviations of the difference of two residuals, and by at least
    /// `Tuning::drain_fall` of a period, the verdict is overturned in place
    /// ([`Self::overturn_pause`]) before the arrival `q` is numbered: the
    /// judged sample was delayed, and the arrivals since are a backlog
    /// drained by the link, which keeps the clock line and the numbering
    /// of before the stall. The estimates already returned stand; each
    /// number revised is counted.
    ///
    /// Each gap shorter than a period is one interval of the link; the
    /// gaps measure it (a [`LinkDrain`]). A longer gap that is a whole
    /// number `k` of those intervals held `k − 1` samples lost after their
    /// turn on the link: the arrivals fall behind `k` periods over it, and
    /// the backlog's numbers count those samples, from its first gap on
    /// (returned for the arrival `q` that overturns the verdict, which is
    /// numbered after them).
    /// Any other gap of a period or more (a pause of the link, or of the
    /// device), a counter, a step back, an announced loss, a reference
    /// pulse or [`DRAIN_WATCH`] arrivals end the watch: the verdict stands.
    #[cold]
    pub(super) fn watch_drain(&mut self, q: i64, index: Option<u64>) -> Option<i64> {
        let w = self.drain_watch.as_mut()?;
        let last = w.arrivals[w.len - 1];
        let gap = q.checked_sub(last).filter(|&g| g >= 0).map(|g| g as f64);
        let k = match (gap, w.link) {
            (Some(g), _) if g < w.period => Some(1.0),
            // A whole number (two or more) of a link's intervals: samples
            // lost after their turn on the link.
            (Some(g), Some(l)) => l.intervals(g, &self.cfg.tuning),
            _ => None,
        };
        let (Some(k), Some(g)) = (k, gap) else {
            self.end_drain_watch();
            return None;
        };
        if index.is_some() || w.len >= DRAIN_WATCH {
            self.end_drain_watch();
            return None;
        }
        w.link_before = w.link;
        match w.link.as_mut() {
            Some(l) => l.push(g, k),
            None => w.link = Some(LinkDrain::start(g)),
        }
        w.steps[w.len] = k as u32;
        w.arrivals[w.len] = q;
        w.len += 1;
        let intervals: f64 = w.steps[..w.len].iter().map(|&k| f64::from(k)).sum();
        let deficit = intervals * w.period - q.saturating_sub(w.first) as f64;
        if deficit < w.confirm {
            return None;
        }
        let w = self.drain_watch.take()?;
        self.overturn_pause(&w);
        self.drain_room = Some(w);
        (k >= 2.0).then(|| k as i64 - 1)
    }

    /// Overturns the pause verdict the watch `w` kept, in place: each
    /// stage whose state depends on the numbers the verdict gave is brought
    /// to the delay reading by a bounded update of its own.
    ///
    /// * Numbering: the judged sample takes the delayed number; the
    ///   arrivals since (but the newest, which is numbered next) follow it
    ///   by the link intervals the watch counted (`k − 1` samples lost in a
    ///   gap of `k`), as a backlog drained while each comes within a period
    ///   of the one before and still late on the floor; each number that
    ///   moves is a revision. The last of them is the pending sample.
    /// * Losses: the evidence and the counts as the verdict found them,
    ///   plus the delay and the losses on the link.
    /// * The clock line: the fit's points as the verdict found them
    ///   (`LineFit::put_back`, which also undoes a restart; the arrival
    ///   clock, too, as the verdict found it), plus the
    ///   judged sample, delayed; the drained samples stay out of it (late
    ///   by the backlog, they say nothing of the line), an arrival after
    ///   the backlog drained enters it.
    /// * Changes and the wander screen: their runs start over (they were
    ///   taken over the old numbers); the young fit's anchor is taken
    ///   again over the points.
    #[cold]
    fn overturn_pause(&mut self, w: &DrainWatch) {
        let pd = w.judged;
        let Some(alt) = pd.alt else {
            self.fit.unmark();
            return;
        };
        if !self.fit.put_back() {
            return;
        }
        if w.restarted {
            self.st.restarts = self.st.restarts.saturating_sub(1);
            self.clock = w.clock;
            self.fit.quantised_tick = w.quantised_tick;
        }
        self.evidence = w.evidence;
        self.st.losses_detected = w.losses;
        self.st.delays_detected = w.delays.saturating_add(1);
        self.st.changes_detected = w.changes;
        self.evidence.stall += 1.0;
        self.forget_change_runs();
        self.changes.watch_pause(0);
        self.wander.clear();
        self.step_run = DivisorRun::default();
        self.delay_run = None;
        self.loss_watch = None;
        // The judged sample, delayed, after the points of before.
        self.committed_n = self.fit.last().map_or(alt.delayed, |l| l.n);
        let mut moved = usize::from(alt.delayed != pd.sample);
        self.commit(Point {
            n: alt.delayed,
            ..pd.point
        });
        // The backlog behind it.
        let p = w.period;
        let (mut n, mut prev_q, mut draining) = (alt.delayed, pd.point.q, true);
        let newest = w.len - 1;
        for i in 0..newest {
            let (q, step) = (w.arrivals[i], i64::from(w.steps[i]));
            let gap = q.saturating_sub(prev_q) as f64;
            draining = draining
                && gap < p
                && self
                    .floor_residual(n.saturating_add(1), q, Some(p))
                    .is_some_and(|r| r > 0.5 * p);
            n = n.saturating_add(step);
            if step >= 2 {
                let lost = step - 1;
                self.st.losses_detected += lost as u64;
                self.evidence.loss += 1.0;
                self.evidence.lost += lost as f64;
            }
            moved += usize::from(w.numbers[i] != i64::MIN && w.numbers[i] != n);
            let point = Point {
                freed: false,
                n,
                q,
                queued: draining || gap < self.cfg.tuning.queued * p,
            };
            if i + 1 == newest {
                self.pending = Some(Pending {
                    point,
                    sample: n,
                    alt: None,
                    drained: draining,
                });
            } else if draining {
                self.committed_n = n;
            } else {
                self.commit(point);
            }
            prev_q = q;
        }
        self.cap_evidence();
        self.last_n = Some(n);
        self.draining = draining;
        self.link = if draining { w.link_before } else { None };
        self.retake_young_anchor();
        self.note_revisions(moved);
    }

    /// The young fit's running minimum taken again over the points as now
    /// numbered (after a verdict overturned): the old anchor may be a
    /// point that was low only on the overturned reading.
    fn retake_young_anchor(&mut self) {
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
    /// `Tuning::drain_fall` of a period, for a stream without jitter), the
    /// verdict is overturned: the points numbered since are numbered back by the
    /// samples taken for lost, the loss is withdrawn and counted as a
    /// delay, and the backlog drains as queued. The estimates already
    /// returned stand. A gap of a period or more, a counter or
    /// `Tuning::loss_watch` arrivals end the watch: the verdict stands.
    ///
    /// A verdict given by a sample a period or more after the judged one
    /// (which may have stalled on its own, just over a period like the
    /// judged one) is watched from the arrival after it, and only an
    /// arrival half a period before the floor overturns it.
    #[cold]
    pub(super) fn watch_loss(&mut self, q: i64, index: Option<u64>, since_last: Option<i64>) {
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
            self.before_floor(p).max(self.cfg.tuning.drain_fall * p)
        };
        if !r.is_some_and(|r| r < -before) {
            self.loss_watch = Some(LossWatch {
                left: w.left - 1,
                ..w
            });
            return;
        }
        let moved = self.fit.points().filter(|pt| pt.n >= w.lost).count();
        if !self.fit.shift_newest(w.lost, -w.m) {
            return;
        }
        self.note_revisions(moved);
        self.wander.clear();
        self.last_n = Some(prev.saturating_sub(w.m));
        if self.committed_n >= w.lost {
            self.committed_n = self.committed_n.saturating_sub(w.m);
        }
        // The young fit's running minimum may have been one of the moved
        // points, low only on the loss reading.
        self.retake_young_anchor();
        let m = w.m as f64;
        self.st.losses_detected = self.st.losses_detected.saturating_sub(w.m as u64);
        self.evidence.loss = (self.evidence.loss - 1.0).max(0.0);
        self.evidence.lost = (self.evidence.lost - m).max(self.evidence.loss);
        self.evidence.stall += 1.0;
        self.st.delays_detected += 1;
        self.forget_change_runs();
        self.step_run = DivisorRun::default();
        self.draining = true;
    }

    /// How far before the floor a sample on time may come: the smaller of
    /// the residuals' standard deviation and `Tuning::below_factor` × their mean
    /// (what the change detector reads as below the floor), at most half a
    /// period. Under exponential delays the floor is sharp and a sample
    /// half a mean before it is misnumbered; under symmetric jitter the
    /// standard deviation is the smaller.
    fn before_floor(&self, p: f64) -> f64 {
        self.fit
            .std_r
            .min(self.cfg.tuning.below_factor * self.fit.mean_r)
            .min(0.5 * p)
    }

    /// Whether a sample `gap` after its predecessor continues a draining
    /// backlog: within a period of it and still late on the floor (numbered
    /// next) by more than half a period.
    #[cold]
    pub(super) fn still_draining(&self, q: i64, gap: f64, p: f64) -> bool {
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
    ///   reading, beyond the `Tuning::stall_spread` periods a stall is modelled
    ///   over: that reading needs the same long stall twice (a stall
    ///   queues the next sample right behind), so the device paused. On
    ///   the old clock line the samples of the pause were lost (not
    ///   evidence of the loss process); off it, the clock started over on
    ///   a new phase (a restart, as after a gap longer than the window);
    /// * before the floor by more than [`Self::before_floor`] (no sample
    ///   after a loss comes there): a delay;
    /// * otherwise it is late itself and decides nothing.
    #[cold]
    fn next_verdict(&mut self, alt: Ambiguous, r: f64, gap: f64, p: f64) -> Verdict {
        let spread =
            (self.fit.mean_r + self.cfg.tuning.verdict_spread_sd * self.fit.std_r).min(0.5 * p);
        let std = self.fit.std_r.min(0.5 * p);
        let paused = r + (alt.lost - alt.delayed) as f64 * p > self.cfg.tuning.stall_spread * p
            && (-self.cfg.tuning.pause_early * std..=spread).contains(&(gap - p));
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
    ///
    /// A delay verdict on the sample right before the pending one, late by
    /// the same whole periods and judged the same way, is part of the same
    /// reading: on it, each sample of the run was stalled on its own by the
    /// same delay (none queued behind the one before), while on the loss
    /// reading all are on time after one run of losses. The odds are those
    /// of the whole run ([`DelayRun::carry`] holds its earlier next
    /// samples' ratios), not of the last pair alone: judged pair by pair,
    /// a stream that had shown no loss took every sample after a burst of
    /// losses for stalled (a prior of one loss in thousands against a
    /// ratio of about a thousand per sample), each verdict adding to the
    /// stall evidence, periods off until the change detector cut the
    /// history a dozen samples later.
    fn loss_confirmed(&mut self, alt: Ambiguous, r: f64, p: f64, further: f64) -> bool {
        let m = (alt.lost - alt.delayed) as f64;
        // Laplace's rule for "a lost sample is followed by another loss".
        let again = (self.evidence.lost - self.evidence.loss + 1.0) / (self.evidence.lost + 2.0);
        let held = self.evidence_held() + 2.0;
        let mut run = again.powf(m - 1.0);
        if further > 0.0 {
            // A new run of losses starts (at the rate of runs seen), then
            // goes on.
            run *= (self.evidence.loss + 1.0) / held * again.powf(further - 1.0);
        }
        let on_time = self.on_time_density(r, p);
        // A stall of the next sample as long as the pending one's on the
        // delayed reading: at the stalls' rate, their lengths' density.
        let r_delayed = r + (m + further) * p;
        let stalled = self.stall_rate() * self.stall_density(r_delayed, p);
        // Or, the pending sample only delayed, the next one on time for
        // the number right after it, `m + further` periods later on the
        // floor, where the jitter the stream has shown reaches that far
        // (a jitter spanning periods; never under one within half a
        // period, whose losses are judged as before: `shown_reach` is then
        // half a period).
        let delayed = if self.fit.stats_valid() && r_delayed < self.fit.shown_reach {
            self.on_time_density(r_delayed, p)
        } else {
            0.0
        };
        // Only where the delay reading needs a stall of each sample: late
        // beyond the reach of a jitter the residuals show to be symmetric
        // and bounded (least squares, or a floor kept for its sharp edge:
        // `LineFit::bounded`; within that reach, samples late in a
        // row are the jitter's, and the exponential law the densities
        // assume would compound its own error over the run; on a one-sided
        // tail, the reach shown so far is no bound, and a long delay with
        // the samples queued a period apart behind it makes runs of late
        // samples), on a floor at the expected period (off it, a period
        // step the line has yet to follow makes runs of its own).
        let stalls_only =
            further == 0.0 && delayed == 0.0 && self.fit.bounded() && self.floor_at_expected();
        let carry = self
            .delay_run
            .filter(|d| stalls_only && d.n.saturating_add(1) == alt.delayed && d.m == m as i64)
            .map_or(1.0, |d| d.carry);
        let lost = carry * alt.odds * run * on_time >= stalled + delayed;
        self.delay_run_next = (!lost && stalls_only).then(|| DelayRun {
            n: alt.delayed,
            m: m as i64,
            carry: carry * on_time / (stalled + delayed),
        });
        lost
    }

    /// How many samples the gap evidence was gathered over (halved with
    /// it).
    fn evidence_samples(&self) -> f64 {
        (self.st.samples as f64 - self.evidence.since).max(0.0)
    }

    /// The samples the rate of loss runs and the chance of a jitter that
    /// long are taken over: the history held, or fewer where the evidence
    /// was halved since.
    pub(super) fn evidence_held(&self) -> f64 {
        (self.fit.len() as f64).min(self.evidence_samples())
    }

    /// The rate of stalls among the samples the evidence was gathered
    /// over (Laplace's rule; not the history held, which a restart
    /// empties while the evidence stays), at most `Tuning::stall_rate_max`.
    pub(super) fn stall_rate(&self) -> f64 {
        ((self.evidence.stall + 1.0) / (self.evidence_samples() + 2.0))
            .min(self.cfg.tuning.stall_rate_max)
    }

    /// Density (per ns) of a stall `d` ns long: uniform over
    /// `Tuning::stall_spread` periods (any stall, as long as any other),
    /// plus, weighted `n / (n + Tuning::stall_prior)` for the `n` lengths
    /// recorded, a kernel density of the recent certain delays' lengths
    /// (Epanechnikov's kernel, as wide as a Gaussian of the bandwidth
    /// Silverman's rule gives, at least the jitter's standard deviation or
    /// `Tuning::stall_bw_min` of a period). Never below the uniform law: a
    /// record of one length makes a stall of another no less likely (two
    /// stalls of 4 periods in a row, after stalls of 2.5, read as four
    /// losses). A stream whose delays repeat one length (a USB adapter's
    /// latency timer near the period holds lone samples that long) then
    /// makes a sample that late a delay: spread as the uniform law, each
    /// held lone sample read as a loss, the next held one confirmed it (a
    /// run of them is on time for the loss numbering), the numbering went
    /// a period off and the history was cut every few hundred samples.
    pub(super) fn stall_density(&self, d: f64, p: f64) -> f64 {
        let uniform = 1.0 / (self.cfg.tuning.stall_spread * p);
        let (w, kernel) = self.recorded_stalls(d, p);
        uniform + w * kernel
    }

    /// The recorded part of [`Self::stall_density`]: its weight and the
    /// kernel density (per ns) of the recorded lengths at `d` ns.
    fn recorded_stalls(&self, d: f64, p: f64) -> (f64, f64) {
        let t = &self.cfg.tuning;
        let n = self.evidence.stall_len;
        if n == 0 {
            return (0.0, 0.0);
        }
        let nf = n as f64;
        // Silverman's rule, never under the jitter the fit shows.
        let bw = self
            .evidence
            .stall_bw
            .max(self.fit.std_r / p)
            .max(t.stall_bw_min);
        // Epanechnikov's kernel (the optimal one, and no exponential per
        // length), as wide as a Gaussian of bandwidth `bw` in variance.
        let half = 5f64.sqrt() * bw;
        let w = nf / (nf + t.stall_prior);
        if !(half > 0.0 && w.is_finite()) {
            // (An odd `Tuning::stall_bw_min` or `stall_prior`.)
            return (0.0, 0.0);
        }
        let x = d / p;
        let kernel = self.evidence.stall_at[..n]
            .iter()
            .map(|s| ((x - s) / half).powi(2))
            .filter(|z2| *z2 < 1.0)
            .map(|z2| 1.0 - z2)
            .sum::<f64>()
            * 0.75
            / (nf * half * p);
        (w, kernel)
    }

    /// Whether sample `n`, arrived at `q`, is late by the length the
    /// stream's certain delays repeat: at least `Tuning::held_late` of a
    /// period, and within `Tuning::hold_near` of a period of at least half
    /// of the recorded lengths (the caller asks for `Tuning::hold_records`
    /// of them).
    /// Held like them, it says nothing of the line and stays out of the
    /// fit.
    #[cold]
    #[inline(never)]
    pub(super) fn held_as_before(&self, n: i64, q: i64, period: Option<f64>) -> bool {
        let (Some(p), Some(r)) = (period, self.floor_residual(n, q, period)) else {
            return false;
        };
        let t = &self.cfg.tuning;
        let rec = &self.evidence.stall_at[..self.evidence.stall_len];
        if r < t.held_late * p {
            return false;
        }
        let near = rec
            .iter()
            .filter(|&&s| (s - r / p).abs() <= t.hold_near)
            .count();
        2 * near >= rec.len()
    }

    /// Density of residual `r` above the floor for a sample on time: the
    /// jitter, exponential with the measured mean (on a quantised arrival
    /// clock, behind up to a tick of the grid's own delay,
    /// `quant::on_time_density`), within half a period of the floor times
    /// the share of lone samples found there.
    pub(super) fn on_time_density(&self, r: f64, p: f64) -> f64 {
        let least = p * self.cfg.tuning.on_time_mean_min;
        if let (Some(tick), Some(mu)) = (self.fit.quantised_tick, self.fit.quantised_delay_mean()) {
            return super::quant::on_time_density(r, mu, tick, least);
        }
        let mu = self.fit.mean_r.max(least);
        let density = (-r.max(0.0) / mu).exp() / mu;
        // Near the floor only a packet's last sample, where every lone one
        // was held (`LineFit::lone_near_share`).
        if r < 0.5 * p {
            density * self.fit.lone_near_share()
        } else {
            density
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{LossEvidence, STALL_LENGTHS};

    #[test]
    fn evidence_is_halved_past_the_cap_and_reset_clears_it() {
        let mut e = LossEvidence {
            loss: 40.0,
            stall: 30.0,
            pause: 0.0,
            lost: 50.0,
            ann_used: 60.0,
            ann_false: 10.0,
            since: 100.0,
            ..LossEvidence::default()
        };
        e.cap(64.0, 500);
        assert_eq!((e.loss, e.stall, e.lost), (20.0, 15.0, 25.0));
        // The samples the evidence speaks for are halved with it.
        assert_eq!(500.0 - e.since, 200.0);
        // Under the cap, nothing moves.
        e.cap(64.0, 600);
        assert_eq!(
            (e.loss, e.stall, e.lost, e.since),
            (20.0, 15.0, 25.0, 300.0)
        );
        // The announcement record has its own cap.
        assert_eq!((e.ann_used, e.ann_false), (60.0, 10.0));
        e.cap_announcements(64.0);
        assert_eq!((e.ann_used, e.ann_false), (30.0, 5.0));
        e.note_stall(1.0);
        e.reset();
        assert_eq!(e, LossEvidence::default());
    }

    #[test]
    fn the_stall_record_keeps_the_newest_lengths() {
        let mut e = LossEvidence::default();
        e.note_stall(f64::NAN);
        assert_eq!(e.stall_len, 0);
        for k in 0..(STALL_LENGTHS + 3) {
            e.note_stall(k as f64);
        }
        assert_eq!(e.stall_len, STALL_LENGTHS);
        let mut kept = e.stall_at.to_vec();
        kept.sort_by(f64::total_cmp);
        assert_eq!(kept[0], 3.0);
        assert_eq!(kept[STALL_LENGTHS - 1], (STALL_LENGTHS + 2) as f64);
    }
}
