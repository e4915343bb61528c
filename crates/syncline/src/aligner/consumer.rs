//! Consumers of the aligner: each receives a chosen set of inputs, in one
//! global timestamp order, through one queue with its own policy.

use std::any::Any;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};

use futures::Stream;
use futures::task::AtomicWaker;
use serde::Serialize;
use syncline_core::{TimeDelta, Timestamp};
use tokio::sync::mpsc;

/// How a consumer's queue behaves when the consumer is slower than its
/// inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueuePolicy {
    /// Keep the newest `depth` samples: a push into a full queue drops the
    /// oldest queued sample (`overflow`), ROS's `depth`. The aligner never
    /// waits for this consumer.
    KeepNewest {
        /// Queue length (at least 1).
        depth: usize,
    },
    /// Lossless while the consumer keeps up: when its queue is full the
    /// aligner waits for room (still taking in every input), for at most
    /// `deadline` (measured on the aligner's clock; without a clock it
    /// waits for ever). The receiver wakes it every half queue it reads
    /// (one wake per half queue, not per sample), and any receiver of
    /// the router does when it waits for a sample; live, every input
    /// arrival and the deadline also make it look for room. Past the
    /// deadline the consumer is marked **stalled**: its samples that find
    /// the queue full are dropped (`stalled`) without waiting, until it
    /// takes a sample again.
    Backpressure {
        /// Queue length (at least 1).
        capacity: usize,
        /// The longest the aligner waits for room.
        deadline: TimeDelta,
    },
}

impl QueuePolicy {
    /// [`QueuePolicy::KeepNewest`] with `depth` (at least 1).
    pub const fn keep_newest(depth: usize) -> Self {
        QueuePolicy::KeepNewest {
            depth: if depth == 0 { 1 } else { depth },
        }
    }

    /// [`QueuePolicy::Backpressure`] with `capacity` (at least 1) and
    /// `deadline` (negative values are taken as zero).
    pub fn backpressure(capacity: usize, deadline: TimeDelta) -> Self {
        QueuePolicy::Backpressure {
            capacity: capacity.max(1),
            deadline: deadline.max(TimeDelta::ZERO),
        }
    }

    /// The queue length.
    pub const fn capacity(&self) -> usize {
        match *self {
            QueuePolicy::KeepNewest { depth } => depth,
            QueuePolicy::Backpressure { capacity, .. } => capacity,
        }
    }

    /// The backpressure deadline, if any.
    pub const fn deadline(&self) -> Option<TimeDelta> {
        match *self {
            QueuePolicy::KeepNewest { .. } => None,
            QueuePolicy::Backpressure { deadline, .. } => Some(deadline),
        }
    }
}

/// Why a sample did not reach a consumer, or did not get through the
/// aligner at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropKind {
    /// Aligner: older than the last released sample.
    Late,
    /// Aligner: older than its stream's previous sample.
    Backward,
    /// Aligner: evicted from its stream's full queue (the aligner could not
    /// hold it).
    AlignerOverflow,
    /// Consumer: evicted from a full keep-newest queue.
    Overflow,
    /// Consumer: a backpressure consumer past its deadline, queue full.
    Stalled,
    /// Consumer: its receiver was dropped.
    Closed,
}

/// One dropped sample (from
/// [`RouterBuilder::drop_reports`](super::RouterBuilder::drop_reports)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DropReport {
    /// The input it came from.
    pub stream: Arc<str>,
    /// The consumer that lost it (`None` for the aligner's own drops, which
    /// every consumer of the stream misses).
    pub consumer: Option<Arc<str>>,
    /// Its stamp.
    pub stamp: Timestamp,
    /// Why.
    pub reason: DropKind,
}

/// A consumer's counters (part of [`AlignedStatus`](super::AlignedStatus)).
///
/// Conservation: `routed = received + queued + dropped_overflow +
/// dropped_stalled + dropped_closed`, where `routed` counts the samples
/// the aligner released from this consumer's inputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConsumerStatus {
    /// Its name.
    pub name: String,
    /// Its queue policy.
    pub policy: QueuePolicy,
    /// The names of its inputs.
    pub inputs: Vec<String>,
    /// Samples released to it by the aligner.
    pub routed: u64,
    /// Samples its receiver returned (`next`, `recv`, `try_recv`).
    pub received: u64,
    /// Samples in its queue now (with those a backpressure receiver took
    /// in its batch and has not returned yet).
    pub queued: usize,
    /// The longest its queue has been.
    pub max_queued: usize,
    /// Dropped from a full keep-newest queue.
    pub dropped_overflow: u64,
    /// Dropped while stalled (backpressure past its deadline).
    pub dropped_stalled: u64,
    /// Dropped because its receiver was gone.
    pub dropped_closed: u64,
    /// Whether it is stalled now.
    pub stalled: bool,
    /// How many times it was marked stalled.
    pub stalls: u64,
    /// Whether its receiver was dropped.
    pub closed: bool,
}

impl ConsumerStatus {
    /// Every drop of this consumer.
    pub fn dropped(&self) -> u64 {
        self.dropped_overflow + self.dropped_stalled + self.dropped_closed
    }
}

/// The drop-report channel shared by the aligner and its routes.
#[derive(Debug)]
pub(super) struct Reports {
    tx: mpsc::Sender<DropReport>,
    enabled: AtomicBool,
    lost: std::sync::atomic::AtomicU64,
}

/// Room in the drop-report channel; reports that find it full are counted.
pub(super) const REPORTS_CAPACITY: usize = 1024;

impl Reports {
    pub(super) fn new() -> (Arc<Self>, mpsc::Receiver<DropReport>) {
        let (tx, rx) = mpsc::channel(REPORTS_CAPACITY);
        let reports = Reports {
            tx,
            enabled: AtomicBool::new(false),
            lost: std::sync::atomic::AtomicU64::new(0),
        };
        (Arc::new(reports), rx)
    }

    pub(super) fn enable(&self) {
        self.enabled.store(true, Ordering::Relaxed);
    }

    /// Reports that found the channel full.
    pub(super) fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    pub(super) fn send(&self, report: impl FnOnce() -> DropReport) {
        if self.enabled.load(Ordering::Relaxed)
            && let Err(mpsc::error::TrySendError::Full(_)) = self.tx.try_send(report())
        {
            self.lost.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A queued sample: `(input index, stamp, item)`.
type Item<E> = (u32, Timestamp, E);

struct Queue<E> {
    items: VecDeque<Item<E>>,
    /// Backpressure: samples the receiver moved to its own buffer at its
    /// last refill. Those it has not returned yet (`held - taken`) count as
    /// queued and against the capacity.
    held: usize,
    /// `taken` when it was last marked stalled: it is stalled until it
    /// takes a sample again.
    taken_at_stall: usize,
    /// `received` counts the samples returned up to the last refill;
    /// `queued` is computed when a status is taken.
    status: ConsumerStatus,
}

/// Releases are handed to a consumer's queue in batches of at most this
/// many (fewer for a shorter queue): one lock and at most one wake-up of
/// the consumer per batch. The driver also hands over whatever it holds
/// before it waits, so live latency is unchanged.
pub(super) const BATCH: usize = 512;

/// A value alone on its cache lines (128 bytes: two lines, as adjacent-line
/// prefetchers pair them), so what the receiver writes and what the driver
/// writes, on different cores, never invalidate each other.
#[repr(align(128))]
struct CacheLine<T>(T);

/// The state a consumer shares between the aligner and its receiver.
pub(super) struct Shared<E> {
    queue: CacheLine<Mutex<Queue<E>>>,
    /// Backpressure: samples the receiver returned from its buffer since
    /// its last refill (written by the receiver only, read for a status).
    taken: CacheLine<AtomicUsize>,
    /// The receiver waits for a sample.
    items: AtomicWaker,
    /// The aligner waits for room (backpressure); one waker for all the
    /// router's consumers, so any receiver can wake it.
    room: Arc<AtomicWaker>,
    /// The aligner finished: the receiver ends once the queue is empty.
    finished: AtomicBool,
    /// Input names by input index (set when the router is built).
    pub(super) stream_names: std::sync::OnceLock<Vec<Arc<str>>>,
    name: Arc<str>,
    reports: Arc<Reports>,
}

impl<E> Shared<E> {
    fn lock(&self) -> MutexGuard<'_, Queue<E>> {
        self.queue.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A consumer of the router whose drop reports go to `reports` and
    /// whose receiver wakes the router's driver through `room`.
    pub(super) fn new(
        name: &str,
        policy: QueuePolicy,
        reports: Arc<Reports>,
        room: Arc<AtomicWaker>,
    ) -> Self {
        let capacity = policy.capacity();
        Shared {
            queue: CacheLine(Mutex::new(Queue {
                items: VecDeque::with_capacity(capacity.min(1 << 16)),
                held: 0,
                taken_at_stall: 0,
                status: ConsumerStatus {
                    name: name.to_string(),
                    policy,
                    inputs: Vec::new(),
                    routed: 0,
                    received: 0,
                    queued: 0,
                    max_queued: 0,
                    dropped_overflow: 0,
                    dropped_stalled: 0,
                    dropped_closed: 0,
                    stalled: false,
                    stalls: 0,
                    closed: false,
                },
            })),
            taken: CacheLine(AtomicUsize::new(0)),
            items: AtomicWaker::new(),
            room,
            finished: AtomicBool::new(false),
            stream_names: std::sync::OnceLock::new(),
            name: Arc::from(name),
            reports,
        }
    }

    fn report(&self, input: u32, stamp: Timestamp, reason: DropKind) {
        self.reports.send(|| DropReport {
            stream: self
                .stream_names
                .get()
                .and_then(|n| n.get(input as usize))
                .cloned()
                .unwrap_or_else(|| Arc::from("?")),
            consumer: Some(self.name.clone()),
            stamp,
            reason,
        });
    }

    /// Hands the driver's outbox `out` over to the queue, by the policy,
    /// under one lock. Returns the new credit (the room left; unbounded for
    /// keep-newest), whether a push would now wait for room (a
    /// backpressure consumer, open, not stalled, with a full queue), and
    /// whether the receiver is owed a wake-up: the queue went from empty to
    /// non-empty (the receiver sleeps only on an empty queue and re-checks
    /// under the lock after registering: one wake per batch, not per
    /// sample). The caller wakes it, after the lock is released.
    fn hand_over(&self, out: &mut Vec<Item<E>>) -> (usize, bool, bool) {
        let mut q = self.lock();
        let q = &mut *q;
        let was_empty = q.items.is_empty();
        let capacity = q.status.policy.capacity();
        // What the receiver holds and has not returned yet (it only
        // returns more meanwhile: the room found is sure to be there).
        let taken = self.taken.0.load(Ordering::Relaxed).min(q.held);
        if q.status.stalled && taken > q.taken_at_stall {
            q.status.stalled = false;
        }
        let held = q.held - taken;
        q.status.routed += out.len() as u64;
        if !q.status.closed && q.items.len() + held + out.len() <= capacity {
            // Everything fits (always, for a backpressure consumer that is
            // not stalled): one move.
            q.items.extend(out.drain(..));
        }
        for (input, stamp, item) in out.drain(..) {
            if q.status.closed {
                q.status.dropped_closed += 1;
                self.report(input, stamp, DropKind::Closed);
            } else if q.items.len() + held >= capacity {
                match q.status.policy {
                    QueuePolicy::KeepNewest { .. } => {
                        if let Some((i, s, _)) = q.items.pop_front() {
                            self.report(i, s, DropKind::Overflow);
                        }
                        q.status.dropped_overflow += 1;
                        q.items.push_back((input, stamp, item));
                    }
                    QueuePolicy::Backpressure { .. } => {
                        // Only reached when stalled: a backpressure
                        // consumer's outbox never holds more than its room.
                        q.status.dropped_stalled += 1;
                        self.report(input, stamp, DropKind::Stalled);
                    }
                }
            } else {
                q.items.push_back((input, stamp, item));
            }
        }
        let occupied = q.items.len() + held;
        q.status.max_queued = q.status.max_queued.max(occupied);
        let backpressure = matches!(q.status.policy, QueuePolicy::Backpressure { .. });
        let credit = if backpressure {
            capacity.saturating_sub(occupied)
        } else {
            usize::MAX
        };
        let waits = backpressure && !q.status.stalled && !q.status.closed && credit == 0;
        (credit, waits, was_empty && !q.items.is_empty())
    }

    /// Marks the consumer stalled (its deadline passed while full).
    pub(super) fn stall(&self) {
        let mut q = self.lock();
        if !q.status.stalled {
            q.taken_at_stall = self.taken.0.load(Ordering::Relaxed).min(q.held);
            q.status.stalled = true;
            q.status.stalls += 1;
            tracing::warn!(consumer = %self.name, "aligner: consumer stalled past its deadline; its samples are dropped while its queue is full");
        }
    }

    pub(super) fn status(&self) -> ConsumerStatus {
        let q = self.lock();
        let taken = self.taken.0.load(Ordering::Relaxed).min(q.held);
        let mut s = q.status.clone();
        s.received += taken as u64;
        s.queued = q.items.len() + q.held - taken;
        s
    }

    /// Adds an input's name to the status.
    pub(super) fn add_input(&self, name: &str) {
        self.lock().status.inputs.push(name.to_string());
    }

    /// The receiver is gone: the samples in `local` (its buffer, after it
    /// returned `taken` since its last refill), in the queue, and later
    /// ones are dropped.
    fn close(&self, local: &mut VecDeque<Item<E>>, taken: usize) {
        let mut q = self.lock();
        q.status.closed = true;
        q.status.received += taken.min(q.held) as u64;
        q.held = 0;
        self.taken.0.store(0, Ordering::Relaxed);
        let drained: Vec<(u32, Timestamp)> = local
            .drain(..)
            .chain(q.items.drain(..))
            .map(|(i, s, _)| (i, s))
            .collect();
        q.status.dropped_closed += drained.len() as u64;
        drop(q);
        for (i, s) in drained {
            self.report(i, s, DropKind::Closed);
        }
        self.room.wake();
    }

    /// Keep-newest: moves the oldest `limit` queued samples (at most) to
    /// the end of `buf` under one lock; returns how many.
    fn take_newest(&self, buf: &mut Vec<E>, limit: usize) -> usize {
        let mut q = self.lock();
        let n = limit.min(q.items.len());
        buf.extend(q.items.drain(..n).map(|(_, _, item)| item));
        q.status.received += n as u64;
        n
    }

    /// Keep-newest: the oldest queued sample. Backpressure (its buffer
    /// `local` is empty and it returned `taken` from it since its last
    /// refill): `None`, the whole queue moved to `local` under one lock
    /// (one lock per batch, not per sample), the aligner woken if it may
    /// wait for the room just given back.
    fn refill(&self, local: &mut VecDeque<Item<E>>, taken: &mut usize) -> Option<E> {
        let mut q = self.lock();
        if let QueuePolicy::KeepNewest { .. } = q.status.policy {
            let (_, _, item) = q.items.pop_front()?;
            q.status.received += 1;
            return Some(item);
        }
        // The room it held is given back: the aligner may wait for it (it
        // re-checks after registering).
        let freed = q.held > 0;
        q.status.received += q.held as u64;
        q.held = 0;
        q.taken_at_stall = 0;
        *taken = 0;
        self.taken.0.store(0, Ordering::Relaxed);
        if !q.items.is_empty() {
            std::mem::swap(&mut q.items, local);
            q.held = local.len();
            q.status.stalled = false;
        }
        drop(q);
        if freed {
            self.room.wake();
        }
        None
    }

    /// The aligner is done (its outlet was flushed): the receiver ends once
    /// its queue is empty.
    pub(super) fn finish(&self) {
        self.finished.store(true, Ordering::Release);
        self.items.wake();
    }
}

/// The type-erased side of a consumer that the aligner reads.
pub(super) trait ConsumerCtl: Send + Sync {
    fn deadline(&self) -> Option<TimeDelta>;
    fn stall(&self);
    fn status(&self) -> ConsumerStatus;
}

impl<E: Send> ConsumerCtl for Shared<E> {
    fn deadline(&self) -> Option<TimeDelta> {
        self.lock().status.policy.deadline()
    }
    fn stall(&self) {
        Shared::stall(self)
    }
    fn status(&self) -> ConsumerStatus {
        Shared::status(self)
    }
}

/// The driver's end of a consumer: releases not yet in its queue. Only the
/// driver owns it, so a push takes no lock; the queue's lock is taken once
/// per batch.
pub(super) struct Outlet<E> {
    shared: Arc<Shared<E>>,
    /// At most `batch` samples.
    items: Vec<Item<E>>,
    /// The outbox is handed over when it holds this many.
    batch: usize,
    /// Backpressure: the queue's free room at the last hand-over; while the
    /// outbox holds fewer items, they are sure to fit (only the driver adds
    /// to the queue).
    credit: usize,
    /// `min(batch, credit)`: the outbox is handed over when it holds this
    /// many (one comparison per push).
    limit: usize,
}

impl<E> Outlet<E> {
    pub(super) fn new(shared: Arc<Shared<E>>, policy: QueuePolicy) -> Self {
        let batch = policy.capacity().clamp(1, BATCH);
        Outlet {
            shared,
            items: Vec::with_capacity(batch),
            batch,
            credit: policy.capacity(),
            limit: batch.min(policy.capacity()),
        }
    }

    /// Delivers a released sample by the policy (the aligner checked room
    /// for a backpressure consumer that is not stalled): into the outbox,
    /// handed over to the queue once a batch is full.
    #[inline]
    pub(super) fn push(&mut self, input: u32, stamp: Timestamp, item: E) {
        self.items.push((input, stamp, item));
        if self.items.len() >= self.limit {
            self.hand_over();
        }
    }

    /// See [`Shared::hand_over`]; refreshes the credit and wakes the
    /// receiver if it is owed a wake-up (after the lock is released).
    fn hand_over(&mut self) -> bool {
        let (credit, waits, wake) = self.shared.hand_over(&mut self.items);
        self.credit = credit;
        self.limit = self.batch.min(credit);
        if wake {
            self.shared.items.wake();
        }
        waits
    }
}

/// The type-erased [`Outlet`] the driver holds per consumer. The routes
/// reach the typed outlet by upcasting to `dyn Any` (a vtable load, no
/// call) and downcasting (see [`Outlet::push`]).
pub(super) trait OutletCtl: Any + Send {
    /// Hands over whatever the outbox holds (before the driver waits).
    fn flush(&mut self);
    /// How many pushes surely fit now without another check (at least 1),
    /// or `Pending` when a push would wait for room: a backpressure
    /// consumer, open, not stalled, whose queue has no room after the
    /// outbox (the aligner's waker is registered then; the receiver wakes
    /// it when it takes the full queue, one wake per batch of room).
    fn poll_room(&mut self, cx: &mut Context<'_>) -> Poll<usize>;
    /// The aligner is done: flushes, then lets the receiver end.
    fn finish(&mut self);
}

impl<E: Send + 'static> OutletCtl for Outlet<E> {
    fn flush(&mut self) {
        if !self.items.is_empty() {
            self.hand_over();
        }
    }
    fn poll_room(&mut self, cx: &mut Context<'_>) -> Poll<usize> {
        if self.items.len() < self.credit {
            return Poll::Ready(self.credit - self.items.len());
        }
        if !self.hand_over() {
            // Stalled or closed consumers get a credit of one: whether a
            // push waits is checked again for every sample.
            return Poll::Ready(self.credit.max(1));
        }
        self.shared.room.register(cx.waker());
        if self.hand_over() {
            Poll::Pending
        } else {
            Poll::Ready(self.credit.max(1))
        }
    }
    fn finish(&mut self) {
        self.flush();
        self.shared.finish();
    }
}

/// The receiving end of a consumer: a `Stream` of `E` in global timestamp
/// order. It ends when the aligner has finished and the queue is empty.
/// Dropping it counts its queued and later samples as `closed`.
///
/// A backpressure consumer takes its whole queue at once into a buffer of
/// its own (one lock per batch, not per sample); the samples in that buffer
/// still count as queued and against the capacity until it has returned
/// them all. A keep-newest consumer takes one sample at a time, so the
/// queue always keeps the newest.
#[must_use = "a consumer that is never read only drops samples"]
pub struct Consumer<E> {
    shared: Arc<Shared<E>>,
    /// Backpressure: the batch taken at the last refill, not yet returned.
    local: VecDeque<Item<E>>,
    /// Samples returned from `local` since the last refill.
    taken: usize,
    /// The aligner is woken every this many samples returned (half the
    /// capacity), as the room they give back may be what it waits for.
    step: usize,
    /// The value of `taken` at which it is woken next.
    wake_at: usize,
    /// A keep-newest consumer (it takes from the queue, not a buffer).
    keep_newest: bool,
}

impl<E> std::fmt::Debug for Consumer<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("name", &self.shared.name)
            .finish()
    }
}

impl<E> Consumer<E> {
    pub(super) fn new(shared: Arc<Shared<E>>, policy: QueuePolicy) -> Self {
        // The buffer and the queue trade places at every refill: both get
        // the queue's room, so neither allocates in steady state.
        let (local, step) = match policy {
            QueuePolicy::Backpressure { capacity, .. } => (
                VecDeque::with_capacity(capacity.min(1 << 16)),
                (capacity / 2).max(1),
            ),
            QueuePolicy::KeepNewest { .. } => (VecDeque::new(), usize::MAX),
        };
        Consumer {
            shared,
            local,
            taken: 0,
            step,
            wake_at: step,
            keep_newest: matches!(policy, QueuePolicy::KeepNewest { .. }),
        }
    }

    /// The next sample from the buffer, else from the queue. The buffer's
    /// path is inlined into the receiver's poll; the refill is not.
    #[inline(always)]
    fn take(&mut self) -> Option<E> {
        if self.local.is_empty() {
            return self.take_refilled();
        }
        self.take_local()
    }

    /// The next sample from the buffer.
    #[inline(always)]
    fn take_local(&mut self) -> Option<E> {
        let (_, _, item) = self.local.pop_front()?;
        self.taken += 1;
        self.shared.taken.0.store(self.taken, Ordering::Relaxed);
        if self.taken == self.wake_at {
            self.wake_room();
        }
        Some(item)
    }

    /// The room given back since the last wake may be what the aligner
    /// waits for (it waits only on a full queue).
    #[inline(never)]
    fn wake_room(&mut self) {
        self.wake_at += self.step;
        self.shared.room.wake();
    }

    /// [`take`](Self::take) with an empty buffer: from the queue.
    #[inline(never)]
    fn take_refilled(&mut self) -> Option<E> {
        if let Some(item) = self.shared.refill(&mut self.local, &mut self.taken) {
            return Some(item);
        }
        self.wake_at = self.step;
        self.take_local()
    }

    /// Moves up to `limit` samples to the end of `buf`: from the buffer,
    /// refilled from the queue once (one lock) when it runs out, or, for a
    /// keep-newest consumer, from the queue under one lock. Returns how
    /// many.
    fn take_many(&mut self, buf: &mut Vec<E>, limit: usize) -> usize {
        if self.keep_newest {
            return self.shared.take_newest(buf, limit);
        }
        let mut moved = 0;
        for _ in 0..2 {
            if self.local.is_empty() {
                // Never `Some` for a backpressure consumer.
                let _ = self.shared.refill(&mut self.local, &mut self.taken);
                self.wake_at = self.step;
            }
            let n = (limit - moved).min(self.local.len());
            buf.extend(self.local.drain(..n).map(|(_, _, item)| item));
            moved += n;
            self.taken += n;
            self.shared.taken.0.store(self.taken, Ordering::Relaxed);
            if self.taken >= self.wake_at {
                // As in `take_local`: one wake for the room given back,
                // the next one a step past what is taken now.
                while self.wake_at + self.step <= self.taken {
                    self.wake_at += self.step;
                }
                self.wake_room();
            }
            if moved == limit || !self.local.is_empty() {
                break;
            }
        }
        moved
    }

    fn pop_many(&mut self, cx: &mut Context<'_>, buf: &mut Vec<E>, limit: usize) -> Poll<usize> {
        if limit == 0 {
            return Poll::Ready(0);
        }
        let n = self.take_many(buf, limit);
        if n > 0 {
            return Poll::Ready(n);
        }
        self.shared.items.register(cx.waker());
        let n = self.take_many(buf, limit);
        if n > 0 {
            return Poll::Ready(n);
        }
        if self.shared.finished.load(Ordering::Acquire) {
            // Everything handed over before `finish` is in the queue.
            return Poll::Ready(self.take_many(buf, limit));
        }
        // As in `pop`: a receiver that waits lets a waiting aligner push.
        self.shared.room.wake();
        Poll::Pending
    }

    fn pop(&mut self, cx: &mut Context<'_>) -> Poll<Option<E>> {
        if let Some(item) = self.take() {
            return Poll::Ready(Some(item));
        }
        self.shared.items.register(cx.waker());
        if let Some(item) = self.take() {
            return Poll::Ready(Some(item));
        }
        if self.shared.finished.load(Ordering::Acquire) {
            // Everything handed over before `finish` is in the queue.
            return Poll::Ready(self.take());
        }
        // This receiver waits for a sample: if the aligner waits for room
        // in another consumer's queue (a task reading several consumers in
        // turn), it gets to push what fits.
        self.shared.room.wake();
        Poll::Pending
    }

    /// The next sample; `None` once the aligner finished and the queue is
    /// empty.
    pub async fn recv(&mut self) -> Option<E> {
        std::future::poll_fn(|cx| self.pop(cx)).await
    }

    /// Waits for at least one sample, then moves every queued sample, up to
    /// `limit`, to the end of `buffer`, in order, and returns how many (as
    /// tokio's `mpsc::Receiver::recv_many`). It returns 0 once the aligner
    /// finished and the queue is empty, or when `limit` is 0. A consumer
    /// that handles samples in batches drains its whole queue per wake-up
    /// this way, with one lock per batch and no call per sample. A
    /// keep-newest consumer hands over its oldest queued samples; the
    /// newer ones stay queued.
    ///
    /// ```
    /// # use syncline::aligner::{AlignerConfig, QueuePolicy, RouterBuilder, StreamConfig};
    /// # use syncline::{Stamped, TimeDelta, Timestamp};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), syncline::aligner::AlignerError> {
    /// let samples = (0..1000).map(|k| Stamped::new(Timestamp::from_nanos(k * 1000), k));
    /// let mut r = RouterBuilder::new(AlignerConfig { timeout: TimeDelta::from_millis(1) });
    /// let input = r.input("input", futures::stream::iter(samples), StreamConfig::new(TimeDelta::from_micros(1))?);
    /// let policy = QueuePolicy::backpressure(256, TimeDelta::from_millis(10));
    /// let mut consumer = r.consumer("batches", policy).route(input, |s| s).build();
    /// let driver = tokio::spawn(r.build());
    /// let (mut batch, mut total) = (Vec::with_capacity(256), 0);
    /// while consumer.recv_many(&mut batch, 256).await > 0 {
    ///     total += batch.len();
    ///     batch.clear();
    /// }
    /// assert_eq!(total, 1000);
    /// driver.await.unwrap();
    /// # Ok(())
    /// # }
    /// ```
    pub async fn recv_many(&mut self, buffer: &mut Vec<E>, limit: usize) -> usize {
        std::future::poll_fn(|cx| self.pop_many(cx, buffer, limit)).await
    }

    /// Takes a sample if one is queued.
    pub fn try_recv(&mut self) -> Option<E> {
        self.take()
    }

    /// Samples queued now (with those taken into its buffer, not yet
    /// returned).
    pub fn len(&self) -> usize {
        self.shared.lock().items.len() + self.local.len()
    }

    /// Whether the queue is empty now.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// This consumer's counters.
    pub fn status(&self) -> ConsumerStatus {
        self.shared.status()
    }
}

// Nothing in a consumer is ever pinned (its samples live in heap buffers).
impl<E> Unpin for Consumer<E> {}

impl<E> Stream for Consumer<E> {
    type Item = E;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<E>> {
        self.get_mut().pop(cx)
    }
}

impl<E> Drop for Consumer<E> {
    fn drop(&mut self) {
        self.shared.close(&mut self.local, self.taken);
    }
}

/// A consumer declared but never built: nobody will read it.
pub(super) fn close_unbuilt<E>(shared: &Shared<E>) {
    shared.close(&mut VecDeque::new(), 0);
}
