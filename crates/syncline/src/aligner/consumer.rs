//! Consumers of the aligner: each receives a chosen set of inputs, in one
//! global timestamp order, through one queue with its own policy.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
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
    /// waits for ever). The receiver wakes it when the queue is down to
    /// half (one wake per half queue, not per sample), and any receiver of
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
    /// Samples it took from its queue.
    pub received: u64,
    /// Samples in its queue now.
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

struct Queue<E> {
    /// `(input index, stamp, item)`.
    items: VecDeque<(u32, Timestamp, E)>,
    status: ConsumerStatus,
}

/// Releases are handed to a consumer's queue in batches of at most this
/// many (fewer for a shorter queue): one lock and at most one wake-up of
/// the consumer per batch. The driver also hands over whatever it holds
/// before it waits, so live latency is unchanged.
pub(super) const BATCH: usize = 512;

/// The driver's side of a consumer: releases not yet in its queue.
struct Outbox<E> {
    /// `(input index, stamp, item)`, at most the batch size.
    items: Vec<(u32, Timestamp, E)>,
    /// Backpressure: the queue's free room at the last hand-over; while the
    /// outbox holds fewer items, they are sure to fit (only the driver adds
    /// to the queue).
    credit: usize,
}

/// A value alone on its cache lines (128 bytes: two lines, as adjacent-line
/// prefetchers pair them), so the receiver's queue lock and the driver's
/// outbox lock, on different cores, never invalidate each other.
#[repr(align(128))]
struct CacheLine<T>(T);

/// The state a consumer shares between the aligner and its receiver.
pub(super) struct Shared<E> {
    queue: CacheLine<Mutex<Queue<E>>>,
    /// Only the driver locks it (never contended).
    outbox: CacheLine<Mutex<Outbox<E>>>,
    /// The outbox is handed over when it holds this many.
    batch: usize,
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

    fn out(&self) -> MutexGuard<'_, Outbox<E>> {
        self.outbox.0.lock().unwrap_or_else(|e| e.into_inner())
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
        let batch = capacity.clamp(1, BATCH);
        Shared {
            queue: CacheLine(Mutex::new(Queue {
                items: VecDeque::with_capacity(capacity.min(1 << 16)),
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
            outbox: CacheLine(Mutex::new(Outbox {
                items: Vec::with_capacity(batch),
                credit: capacity,
            })),
            batch,
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

    /// Delivers a released sample by the policy (the aligner checked room
    /// for a backpressure consumer that is not stalled): into the outbox,
    /// handed over to the queue once a batch is full.
    pub(super) fn push(&self, input: u32, stamp: Timestamp, item: E) {
        let mut o = self.out();
        o.items.push((input, stamp, item));
        if o.items.len() >= self.batch || o.items.len() >= o.credit {
            self.hand_over(&mut o);
        }
    }

    /// Hands the outbox over to the queue, by the policy, under one lock;
    /// refreshes the credit. Returns whether a push would now wait for
    /// room: a backpressure consumer, open, not stalled, with a full queue.
    fn hand_over(&self, o: &mut Outbox<E>) -> bool {
        let mut q = self.lock();
        let q = &mut *q;
        let was_empty = q.items.is_empty();
        let capacity = q.status.policy.capacity();
        for (input, stamp, item) in o.items.drain(..) {
            q.status.routed += 1;
            if q.status.closed {
                q.status.dropped_closed += 1;
                self.report(input, stamp, DropKind::Closed);
            } else if q.items.len() >= capacity {
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
        q.status.queued = q.items.len();
        q.status.max_queued = q.status.max_queued.max(q.items.len());
        let backpressure = matches!(q.status.policy, QueuePolicy::Backpressure { .. });
        o.credit = if backpressure {
            capacity.saturating_sub(q.items.len())
        } else {
            usize::MAX
        };
        let waits = backpressure && !q.status.stalled && !q.status.closed && o.credit == 0;
        // The receiver sleeps only on an empty queue (it re-checks under the
        // lock after registering): one wake per batch, not per sample.
        if was_empty && !q.items.is_empty() {
            self.items.wake();
        }
        waits
    }

    /// Hands over whatever the outbox holds (before the driver waits).
    pub(super) fn flush(&self) {
        let mut o = self.out();
        if !o.items.is_empty() {
            self.hand_over(&mut o);
        }
    }

    /// How many pushes surely fit now without another check (at least 1),
    /// or `Pending` when a push would wait for room: a backpressure
    /// consumer, open, not stalled, whose queue has no room after the
    /// outbox (the aligner's waker is registered then; the receiver wakes
    /// it once its queue is down to half, one wake per batch of room).
    pub(super) fn poll_room(&self, cx: &mut Context<'_>) -> Poll<usize> {
        let mut o = self.out();
        if o.items.len() < o.credit {
            return Poll::Ready(o.credit - o.items.len());
        }
        if !self.hand_over(&mut o) {
            // Stalled or closed consumers get a credit of one: whether a
            // push waits is checked again for every sample.
            return Poll::Ready(o.credit.max(1));
        }
        self.room.register(cx.waker());
        if self.hand_over(&mut o) {
            Poll::Pending
        } else {
            Poll::Ready(o.credit.max(1))
        }
    }

    /// Marks the consumer stalled (its deadline passed while full).
    pub(super) fn stall(&self) {
        let mut q = self.lock();
        if !q.status.stalled {
            q.status.stalled = true;
            q.status.stalls += 1;
            tracing::warn!(consumer = %self.name, "aligner: consumer stalled past its deadline; its samples are dropped while its queue is full");
        }
    }

    pub(super) fn status(&self) -> ConsumerStatus {
        self.lock().status.clone()
    }

    /// Adds an input's name to the status.
    pub(super) fn add_input(&self, name: &str) {
        self.lock().status.inputs.push(name.to_string());
    }

    /// The receiver is gone: queued and later samples are dropped.
    pub(super) fn close(&self) {
        let mut q = self.lock();
        q.status.closed = true;
        let n = q.items.len() as u64;
        q.status.dropped_closed += n;
        let drained: Vec<(u32, Timestamp)> = q.items.drain(..).map(|(i, s, _)| (i, s)).collect();
        q.status.queued = 0;
        drop(q);
        for (i, s) in drained {
            self.report(i, s, DropKind::Closed);
        }
        self.room.wake();
    }

    /// Takes the oldest queued sample. When a backpressure queue drops to
    /// half its capacity the aligner is woken (it may wait for room: it
    /// waits only on a full queue, and re-checks after registering), so a
    /// slow receiver wakes it once per half queue, not once per sample.
    fn take(&self) -> Option<E> {
        let mut q = self.lock();
        let (_, _, item) = q.items.pop_front()?;
        q.status.received += 1;
        q.status.queued = q.items.len();
        q.status.stalled = false;
        let wake = matches!(q.status.policy, QueuePolicy::Backpressure { capacity, .. } if q.items.len() == capacity / 2);
        drop(q);
        if wake {
            self.room.wake();
        }
        Some(item)
    }

    fn pop(&self, cx: &mut Context<'_>) -> Poll<Option<E>> {
        if let Some(item) = self.take() {
            return Poll::Ready(Some(item));
        }
        self.items.register(cx.waker());
        if let Some(item) = self.take() {
            return Poll::Ready(Some(item));
        }
        if self.finished.load(Ordering::Acquire) {
            // Everything handed over before `finish` is in the queue.
            return Poll::Ready(self.take());
        }
        // This receiver waits for a sample: if the aligner waits for room
        // in another consumer's queue that is not yet down to half (a task
        // reading several consumers in turn), it gets to push what fits.
        self.room.wake();
        Poll::Pending
    }

    /// The aligner is done: the receiver ends once its queue is empty.
    pub(super) fn finish(&self) {
        self.flush();
        self.finished.store(true, Ordering::Release);
        self.items.wake();
    }
}

/// The type-erased side of a consumer that the aligner drives.
pub(super) trait ConsumerCtl: Send + Sync {
    fn poll_room(&self, cx: &mut Context<'_>) -> Poll<usize>;
    fn deadline(&self) -> Option<TimeDelta>;
    fn stall(&self);
    fn status(&self) -> ConsumerStatus;
    fn finish(&self);
    fn flush(&self);
}

impl<E: Send> ConsumerCtl for Shared<E> {
    fn poll_room(&self, cx: &mut Context<'_>) -> Poll<usize> {
        Shared::poll_room(self, cx)
    }
    fn deadline(&self) -> Option<TimeDelta> {
        self.lock().status.policy.deadline()
    }
    fn stall(&self) {
        Shared::stall(self)
    }
    fn status(&self) -> ConsumerStatus {
        Shared::status(self)
    }
    fn finish(&self) {
        Shared::finish(self)
    }
    fn flush(&self) {
        Shared::flush(self)
    }
}

/// The receiving end of a consumer: a `Stream` of `E` in global timestamp
/// order. It ends when the aligner has finished and the queue is empty.
/// Dropping it counts its queued and later samples as `closed`.
#[must_use = "a consumer that is never read only drops samples"]
pub struct Consumer<E> {
    shared: Arc<Shared<E>>,
}

impl<E> std::fmt::Debug for Consumer<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("name", &self.shared.name)
            .finish()
    }
}

impl<E> Consumer<E> {
    pub(super) fn new(shared: Arc<Shared<E>>) -> Self {
        Consumer { shared }
    }

    /// The next sample; `None` once the aligner finished and the queue is
    /// empty.
    pub async fn recv(&mut self) -> Option<E> {
        std::future::poll_fn(|cx| self.shared.pop(cx)).await
    }

    /// Takes a sample if one is queued.
    pub fn try_recv(&mut self) -> Option<E> {
        self.shared.take()
    }

    /// Samples queued now.
    pub fn len(&self) -> usize {
        self.shared.lock().items.len()
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

impl<E> Stream for Consumer<E> {
    type Item = E;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<E>> {
        self.shared.pop(cx)
    }
}

impl<E> Drop for Consumer<E> {
    fn drop(&mut self) {
        self.shared.close();
    }
}
