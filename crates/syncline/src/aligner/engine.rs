//! The driver shared by `Aligned` and `FanOut`: polls the inputs, pushes
//! into the core, arms one timer for the live bound, yields releases.

use std::sync::Arc;
use std::task::{Context, Poll};

use syncline_core::aligner::{Aligner, DropReason, Push, StreamId};
use syncline_core::{TimeDelta, Timestamp};
use tokio::sync::{mpsc, watch};

use super::consumer::{ConsumerCtl, DropKind, DropReport, OutletCtl, Reports};
use super::control::{AlignerControl, Command};
use super::lane::{BatchEnd, Lane};
use super::{AlignedStatus, LaneStatus};
use crate::clock::{Clock, ClockTimer};

/// Publish the status every this many pushes and releases (and whenever the driver
/// becomes idle after a change, and at the end).
const STATUS_EVERY: u32 = 1024;

/// The yield budget: at most this many samples taken in per poll of the
/// driver; then it wakes itself and returns `Pending`, so an input that is
/// always ready never starves the other tasks of its thread.
pub(super) const BUDGET: u32 = 1024;

/// Replay: at most this many samples of one input are taken in at once
/// (fewer when its queue has less room, the budget is nearly spent, or its
/// samples reach half the timeout past the last release).
const MAX_BATCH: u32 = 256;

pub(super) struct Engine<O> {
    pub(super) core: Aligner<()>,
    pub(super) ids: Vec<StreamId>,
    pub(super) lanes: Vec<Box<dyn Lane<O>>>,
    pub(super) lane_status: Vec<LaneStatus>,
    ended: Vec<bool>,
    /// Per input: it has not produced a sample yet, nor ended.
    fresh: Vec<bool>,
    /// How many inputs are fresh. Replay batches wait until none is: a
    /// stream that never took in a sample expects one right after the
    /// epoch, so its first sample must come in before any batch of the
    /// others runs ahead of it.
    fresh_count: usize,
    open: usize,
    next_lane: usize,
    clock: Option<Arc<dyn Clock>>,
    timer: Option<ClockTimer>,
    /// A polled sample not yet pushed: `(lane, stamp, arrival)`. It waits
    /// while releases made due by its arrival time go out first.
    stash: Option<(usize, Timestamp, Option<Timestamp>)>,
    finished: bool,
    control_tx: mpsc::UnboundedSender<Command>,
    control_rx: mpsc::UnboundedReceiver<Command>,
    status_tx: watch::Sender<AlignedStatus>,
    since_status: u32,
    /// Samples that may still be taken in during this poll.
    budget: u32,
    /// The control channel was not read yet during this poll (it is read
    /// once per poll: a command wakes the driver).
    control_due: bool,
    /// The consumers (router only).
    pub(super) consumers: Vec<Arc<dyn ConsumerCtl>>,
    /// The driver's end of each consumer (router only).
    pub(super) outlets: Vec<Box<dyn OutletCtl>>,
    /// Where drops are reported (router only).
    pub(super) reports: Option<Arc<Reports>>,
    stream_names: Vec<Arc<str>>,
}

impl<O> Engine<O> {
    pub(super) fn new(
        core: Aligner<()>,
        ids: Vec<StreamId>,
        lanes: Vec<Box<dyn Lane<O>>>,
        names: Vec<String>,
        clock: Option<Arc<dyn Clock>>,
    ) -> Self {
        let lane_status: Vec<LaneStatus> = names
            .into_iter()
            .map(|name| LaneStatus {
                name,
                undelivered: 0,
                consumer_gone: false,
            })
            .collect();
        let stream_names = lane_status
            .iter()
            .map(|l| Arc::from(l.name.as_str()))
            .collect();
        let (status_tx, _) = watch::channel(AlignedStatus {
            aligner: core.status(),
            lanes: lane_status.clone(),
            consumers: Vec::new(),
            reports_lost: 0,
            finished: false,
        });
        let n = lanes.len();
        let (control_tx, control_rx) = mpsc::unbounded_channel();
        Engine {
            control_tx,
            control_rx,
            core,
            ids,
            lanes,
            lane_status,
            ended: vec![false; n],
            fresh: vec![true; n],
            fresh_count: n,
            open: n,
            next_lane: 0,
            timer: clock.clone().map(ClockTimer::new),
            clock,
            stash: None,
            finished: false,
            status_tx,
            since_status: 0,
            budget: BUDGET,
            control_due: true,
            consumers: Vec::new(),
            outlets: Vec::new(),
            reports: None,
            stream_names,
        }
    }

    pub(super) fn status(&self) -> AlignedStatus {
        AlignedStatus {
            aligner: self.core.status(),
            lanes: self.lane_status.clone(),
            consumers: self.consumers.iter().map(|c| c.status()).collect(),
            reports_lost: self.reports.as_ref().map_or(0, |r| r.lost()),
            finished: self.finished,
        }
    }

    /// A new poll of the driver: a fresh yield budget.
    pub(super) fn begin_poll(&mut self) {
        self.budget = BUDGET;
        self.control_due = true;
    }

    /// The clock, in live mode.
    pub(super) fn clock(&self) -> Option<&Arc<dyn Clock>> {
        self.clock.as_ref()
    }

    fn report(&self, lane: usize, stamp: Timestamp, reason: DropKind) {
        if let Some(r) = &self.reports {
            r.send(|| DropReport {
                stream: self
                    .stream_names
                    .get(lane)
                    .cloned()
                    .unwrap_or_else(|| Arc::from("?")),
                consumer: None,
                stamp,
                reason,
            });
        }
    }

    pub(super) fn watch(&self) -> watch::Receiver<AlignedStatus> {
        // Statuses are only built while someone watches: start from now.
        self.status_tx.send_replace(self.status());
        self.status_tx.subscribe()
    }

    pub(super) fn stream_id(&self, name: &str) -> Option<StreamId> {
        let k = self.lane_status.iter().position(|l| l.name == name)?;
        self.ids.get(k).copied()
    }

    pub(super) fn control(&self) -> AlignerControl {
        AlignerControl {
            tx: self.control_tx.clone(),
        }
    }

    /// Applies the pending control commands; `true` if there were any.
    fn poll_control(&mut self, cx: &mut Context<'_>) -> bool {
        if !std::mem::take(&mut self.control_due) {
            return false;
        }
        let mut any = false;
        while let Poll::Ready(Some(c)) = self.control_rx.poll_recv(cx) {
            any = true;
            let r = match c {
                Command::Timeout(t) => {
                    self.core.set_timeout(t);
                    Ok(())
                }
                Command::Period(id, p) => self.core.set_period(id, p),
                Command::Priority(id, p) => self.core.set_priority(id, p),
                Command::Disable(id) => self.core.disable_stream(id),
                Command::Enable(id) => self.core.enable_stream(id),
                Command::End(id) => self.core.end_stream(id),
                Command::Remove(id) => self.remove(id),
            };
            if let Err(e) = r {
                tracing::warn!("aligner: control command {c:?} ignored: {e}");
            }
            self.since_status += 1;
        }
        any
    }

    /// Removes a stream: stops polling its input, drops its queued values
    /// (counted by the core as `dropped_removed`).
    fn remove(&mut self, id: StreamId) -> Result<(), syncline_core::aligner::AlignerError> {
        let dropped = self.core.remove_stream(id)?.count();
        let k = id.slot();
        if let Some(lane) = self.lanes.get_mut(k) {
            lane.clear();
        }
        if let Some(e) = self.ended.get_mut(k)
            && !*e
        {
            *e = true;
            self.open -= 1;
        }
        self.started(k);
        if matches!(self.stash, Some((lane, ..)) if lane == k) {
            self.stash = None;
        }
        tracing::debug!(stream = self.name(k), dropped, "aligner: stream removed");
        Ok(())
    }

    pub(super) fn publish(&mut self) {
        self.since_status = 0;
        // Nobody watches: nothing to build (a new receiver gets a fresh
        // status from `watch`, and `status()` reads the live counters),
        // nor to hand over early (the driver hands every outbox over
        // before it waits or yields, so `status()` between polls finds
        // them empty; a hand-over here would split the consumers' batches
        // and wake them twice as often).
        if self.status_tx.receiver_count() > 0 {
            // Consumers' outboxes first: the status counts them as routed.
            for o in &mut self.outlets {
                o.flush();
            }
            let status = self.status();
            self.status_tx.send_replace(status);
        }
    }

    fn name(&self, lane: usize) -> &str {
        self.lane_status.get(lane).map_or("?", |l| l.name.as_str())
    }

    /// Pushes a polled sample into the core and mirrors the outcome in
    /// its lane.
    fn push(&mut self, lane: usize, stamp: Timestamp, arrival: Option<Timestamp>) {
        let (Some(&id), Some(l)) = (self.ids.get(lane), self.lanes.get_mut(lane)) else {
            return;
        };
        let outcome = match arrival {
            Some(a) => self.core.push_arrived(id, stamp, (), a),
            None => self.core.push(id, stamp, ()),
        };
        match outcome {
            Push::Queued => {}
            Push::Evicted(_) => l.evict(),
            Push::Dropped(..) => l.discard(),
        }
        self.account(lane, outcome);
        self.count(1);
    }

    /// Logs and reports a push that was not simply queued (its lane
    /// already mirrors it).
    fn account(&mut self, lane: usize, outcome: Push<()>) {
        match outcome {
            Push::Queued => {}
            Push::Evicted(old) => {
                tracing::warn!(stream = self.name(lane), stamp = %old.stamp, "aligner: queue full, oldest sample dropped (overflow)");
                self.report(lane, old.stamp, DropKind::AlignerOverflow);
            }
            Push::Dropped(reason, sample) => {
                let stamp = sample.stamp;
                let (why, kind) = match reason {
                    DropReason::Late => {
                        ("older than the last released sample (late)", DropKind::Late)
                    }
                    DropReason::Backward => (
                        "older than its stream's previous sample (backward)",
                        DropKind::Backward,
                    ),
                    DropReason::UnknownStream => ("unknown stream", DropKind::Late),
                };
                tracing::warn!(stream = self.name(lane), stamp = %stamp, "aligner: sample dropped: {why}");
                if reason != DropReason::UnknownStream {
                    self.report(lane, stamp, kind);
                }
            }
        }
    }

    /// `n` samples were taken in: they count against the yield budget and
    /// towards the next status.
    fn count(&mut self, n: u32) {
        self.budget = self.budget.saturating_sub(n);
        self.since_status += n;
        if self.since_status >= STATUS_EVERY {
            self.publish();
        }
        // (Releases count towards `since_status` too.)
    }

    /// Polls the inputs round-robin for one event. `Ready(true)`: something
    /// happened (a sample was stashed or a stream ended).
    fn poll_inputs(&mut self, cx: &mut Context<'_>) -> Poll<bool> {
        let n = self.lanes.len();
        // Round-robin from `next_lane` (no division per sample).
        let mut next = self.next_lane;
        for _ in 0..n {
            let k = if next >= n { 0 } else { next };
            next = k + 1;
            if self.ended.get(k).copied().unwrap_or(true) {
                continue;
            }
            let Some(lane) = self.lanes.get_mut(k) else {
                continue;
            };
            if self.clock.is_none() {
                // Replay: a batch of what the input has ready.
                let Some(&id) = self.ids.get(k) else {
                    continue;
                };
                let max = if self.fresh_count > 0 {
                    1
                } else {
                    self.core
                        .room(id)
                        .min(self.budget as usize)
                        .clamp(1, MAX_BATCH as usize) as u32
                };
                let window = TimeDelta::from_nanos(self.core.timeout().as_nanos() / 2);
                let batch = lane.poll_batch(cx, &mut self.core, id, max, window);
                match batch.end {
                    BatchEnd::Pending if batch.pushed == 0 => continue,
                    BatchEnd::Ended => self.end_input(k),
                    BatchEnd::NotQueued(outcome) => self.account(k, outcome),
                    BatchEnd::Pending | BatchEnd::Full => {}
                }
                if batch.pushed > 0 {
                    self.started(k);
                }
                self.next_lane = k + 1;
                self.count(batch.pushed);
                return Poll::Ready(true);
            }
            match lane.poll_input(cx) {
                Poll::Ready(Some((stamp, handed))) => {
                    self.started(k);
                    self.next_lane = k + 1;
                    let now = self.clock.as_ref().map(|c| c.now());
                    if let Some(now) = now {
                        self.core.handle_timeout(now);
                    }
                    match now {
                        // Live: the latency bound counts from the hand-over
                        // the item carries (never later than now), else from
                        // now. Stashed: releases made due by `now` go first.
                        Some(now) => {
                            let arrival = handed.map_or(now, |h| h.min(now));
                            self.stash = Some((k, stamp, Some(arrival)));
                        }
                        // Replay: nothing became due since the core was
                        // last asked for a release; push it now.
                        None => self.push(k, stamp, None),
                    }
                    return Poll::Ready(true);
                }
                Poll::Ready(None) => {
                    self.end_input(k);
                    return Poll::Ready(true);
                }
                Poll::Pending => {}
            }
        }
        Poll::Ready(false)
    }

    /// Input `k` produced a sample or ended: it is no longer fresh.
    fn started(&mut self, k: usize) {
        if let Some(f) = self.fresh.get_mut(k)
            && *f
        {
            *f = false;
            self.fresh_count -= 1;
        }
    }

    /// Input `k` ended: its stream no longer holds the others back.
    fn end_input(&mut self, k: usize) {
        self.started(k);
        if let Some(e) = self.ended.get_mut(k)
            && !*e
        {
            *e = true;
            self.open -= 1;
        }
        if let Some(&id) = self.ids.get(k) {
            let _ = self.core.end_stream(id);
        }
        tracing::debug!(stream = self.name(k), "aligner: input ended");
    }

    /// Live mode: arms the one timer at the core's deadline (a resettable
    /// sleep, re-armed only when the deadline moved) and handles it when
    /// due. `true` when time was handed to the core.
    fn poll_timer(&mut self, cx: &mut Context<'_>) -> bool {
        let (Some(clock), Some(timer)) = (self.clock.as_ref(), self.timer.as_mut()) else {
            return false;
        };
        let Some(deadline) = self.core.poll_timeout() else {
            timer.disarm();
            return false;
        };
        if timer.poll_at(cx, deadline).is_ready() {
            self.core.handle_timeout(clock.now().max(deadline));
            return true;
        }
        false
    }

    /// Takes in inputs, control commands and timer events without
    /// releasing anything (while a release waits for a consumer's room).
    /// `true` when something happened; bounded by the yield budget.
    pub(super) fn poll_intake(&mut self, cx: &mut Context<'_>) -> bool {
        let mut any = false;
        loop {
            if let Some((lane, stamp, arrival)) = self.stash.take() {
                self.push(lane, stamp, arrival);
                any = true;
                continue;
            }
            if self.budget == 0 || self.finished || self.open == 0 {
                return any;
            }
            if self.poll_control(cx) {
                any = true;
                continue;
            }
            if let Poll::Ready(true) = self.poll_inputs(cx) {
                any = true;
                continue;
            }
            // Hand the time to the core (the overdue samples go out once
            // the wait is over); not an event: nothing more to take in.
            self.poll_timer(cx);
            return any;
        }
    }

    /// Whether the yield budget of this poll is spent.
    pub(super) fn budget_spent(&self) -> bool {
        self.budget == 0
    }

    /// The next release: `(lane, stamp)`, `None` once every input ended and
    /// everything was released.
    ///
    /// Inlined into the drivers' loops up to the core's release: a release
    /// the core has ready costs no call into the engine (most releases of a
    /// replay); the rest is [`poll_release_slow`](Self::poll_release_slow).
    #[inline]
    pub(super) fn poll_release(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<(usize, Timestamp)>> {
        if let Some(r) = self.take_release() {
            return Poll::Ready(Some(r));
        }
        self.poll_release_slow(cx)
    }

    /// The core's next ready release as `(lane, stamp)`, counted for the
    /// status.
    #[inline(always)]
    fn take_release(&mut self) -> Option<(usize, Timestamp)> {
        let r = self.core.poll_release()?;
        self.since_status += 1;
        Some((r.stream.slot(), r.sample.stamp))
    }

    /// [`poll_release`](Self::poll_release) once the core has nothing
    /// ready: takes in inputs, commands and timer events until it has.
    #[inline(never)]
    fn poll_release_slow(&mut self, cx: &mut Context<'_>) -> Poll<Option<(usize, Timestamp)>> {
        loop {
            if let Some(r) = self.take_release() {
                return Poll::Ready(Some(r));
            }
            if let Some((lane, stamp, arrival)) = self.stash.take() {
                self.push(lane, stamp, arrival);
                continue;
            }
            if self.finished {
                return Poll::Ready(None);
            }
            if self.budget == 0 {
                // Yield: let the other tasks of this thread run.
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            if self.open == 0 {
                self.core.finish();
                self.finished = true;
                continue;
            }
            if self.poll_control(cx) {
                continue;
            }
            if let Poll::Ready(true) = self.poll_inputs(cx) {
                continue;
            }
            if self.poll_timer(cx) {
                continue;
            }
            // Idle: a good moment to publish what changed.
            if self.since_status > 0 {
                self.publish();
            }
            return Poll::Pending;
        }
    }

    /// Delivery of a release through its lane, in fan-out mode: waits for
    /// room, or counts the sample as undelivered when its consumer is gone.
    pub(super) fn poll_deliver(
        &mut self,
        cx: &mut Context<'_>,
        lane: usize,
        stamp: Timestamp,
    ) -> Poll<()> {
        let Some(l) = self.lanes.get_mut(lane) else {
            return Poll::Ready(());
        };
        if l.poll_ready(cx).is_pending() {
            return Poll::Pending;
        }
        // Ready or gone: `take` queues it for sending, or counts it.
        let _ = l.take(stamp);
        self.sync_lane(lane);
        Poll::Ready(())
    }

    /// Copies a lane's delivery counter into its status; logs the moment
    /// its consumer is found gone.
    fn sync_lane(&mut self, lane: usize) {
        let (Some(l), Some(s)) = (self.lanes.get(lane), self.lane_status.get_mut(lane)) else {
            return;
        };
        s.undelivered = l.undelivered();
        if s.undelivered > 0 && !s.consumer_gone {
            tracing::warn!(stream = %s.name, "aligner: consumer gone; its samples are counted as undelivered");
            s.consumer_gone = true;
        }
    }

    /// Flushes every lane's outbox; `Pending` while a consumer has no room.
    pub(super) fn poll_flush(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let mut pending = false;
        for k in 0..self.lanes.len() {
            if let Some(l) = self.lanes.get_mut(k) {
                pending |= l.poll_flush(cx).is_pending();
            }
            self.sync_lane(k);
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    }

    /// Whether every lane's consumer is gone.
    pub(super) fn all_gone(&self) -> bool {
        self.lane_status.iter().all(|s| s.consumer_gone)
    }
}
