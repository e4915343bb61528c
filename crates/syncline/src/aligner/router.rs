//! The router: the aligner's inputs delivered to declared consumers, each
//! through one ordered queue with its own policy.

use std::any::Any;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use futures::task::AtomicWaker;
use syncline_core::{Stamped, Timestamp};
use tokio::sync::{mpsc, watch};

use super::consumer::{
    Consumer, ConsumerCtl, DropReport, Outlet, OutletCtl, QueuePolicy, Reports, Shared,
    close_unbuilt,
};
use super::engine::Engine;
use super::lane::{AlignerItem, Lane, QueueLane, Route, Routes};
use super::{AlignedStatus, AlignerConfig, AlignerControl, Parts, StreamConfig, StreamId};
use crate::clock::{Clock, ClockTimer};

/// The handle of an input registered with [`RouterBuilder::input`]; it
/// names the input's sample type, so routes are type-checked.
#[derive(Debug)]
pub struct InputId<T> {
    index: usize,
    id: StreamId,
    _type: PhantomData<fn() -> T>,
}

impl<T> Clone for InputId<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for InputId<T> {}

impl<T> InputId<T> {
    /// The aligner's handle of this input (for [`AlignerControl`]).
    pub fn stream_id(&self) -> StreamId {
        self.id
    }
}

/// The routes of an input, added by the consumers declared before the
/// router is built (found by the input's value type).
struct PendingInput<T> {
    routes: Vec<Route<T>>,
}

/// A type-erased [`PendingInput`].
type AnyInput = Box<dyn Any + Send>;

/// Builds an input's lane from its [`PendingInput`] and its capacity (the
/// input stream is captured, so the lane polls it with no boxed adapter).
type BuildLane = Box<dyn FnOnce(AnyInput, usize) -> Option<Box<dyn Lane<()>>> + Send>;

/// Gives a consumer the inputs' names once they are all known.
type NameInputs = Box<dyn FnOnce(&[Arc<str>]) + Send>;

struct Pending {
    input: AnyInput,
    capacity: usize,
    build: BuildLane,
    /// Consumers with a backpressure policy fed by this input.
    waits_for: Vec<usize>,
}

/// Builds a [`Router`]: register the inputs ([`input`](Self::input)), then
/// declare the consumers ([`consumer`](Self::consumer)), each with the
/// inputs it takes.
///
/// ```
/// use futures::StreamExt;
/// use syncline::aligner::{AlignerConfig, QueuePolicy, RouterBuilder, StreamConfig};
/// use syncline::{Stamped, TimeDelta, Timestamp};
///
/// #[derive(Debug)]
/// enum Fusion {
///     Imu(Stamped<u32>),
///     Lidar(Stamped<&'static str>),
/// }
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() -> Result<(), syncline::aligner::AlignerError> {
/// let t = |ms: i64| Timestamp::from_nanos(ms * 1_000_000);
/// let ms = TimeDelta::from_millis;
/// let imu = futures::stream::iter((0..10).map(move |k| Stamped::new(t(5 * k), k as u32)));
/// let lidar = futures::stream::iter([Stamped::new(t(12), "scan")]);
///
/// let mut r = RouterBuilder::new(AlignerConfig { timeout: ms(100) });
/// let imu = r.input("imu", imu, StreamConfig::new(ms(5))?);
/// let lidar = r.input("lidar", lidar, StreamConfig::new(ms(100))?);
/// let mut fusion = r
///     .consumer("fusion", QueuePolicy::backpressure(64, ms(50)))
///     .route(imu, Fusion::Imu)
///     .route(lidar, Fusion::Lidar)
///     .build();
/// let mut last = r.consumer("last_imu", QueuePolicy::keep_newest(1)).route(imu, |s| s).build();
/// let driver = tokio::spawn(r.build());
///
/// let mut stamps = Vec::new();
/// while let Some(item) = fusion.next().await {
///     stamps.push(match item { Fusion::Imu(s) => s.stamp, Fusion::Lidar(s) => s.stamp });
/// }
/// assert!(stamps.is_sorted());
/// assert_eq!(stamps.len(), 11);
/// let status = driver.await.unwrap();
/// assert_eq!(last.next().await.map(|s| s.value), Some(9));
/// assert_eq!(status.consumers[1].dropped_overflow, 9);
/// # Ok(())
/// # }
/// ```
pub struct RouterBuilder {
    parts: Parts<()>,
    pending: Vec<Pending>,
    consumers: Vec<Arc<dyn ConsumerCtl>>,
    outlets: Vec<Box<dyn OutletCtl>>,
    names: Vec<Arc<str>>,
    named: Vec<NameInputs>,
    reports: Arc<Reports>,
    reports_rx: Option<mpsc::Receiver<DropReport>>,
    /// The driver's waker while it waits for room, shared by all consumers.
    room: Arc<AtomicWaker>,
}

impl std::fmt::Debug for RouterBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RouterBuilder")
            .field("inputs", &self.names)
            .field("consumers", &self.consumers.len())
            .finish()
    }
}

impl RouterBuilder {
    /// A builder with the aligner's timeout; replay mode until
    /// [`live`](Self::live) is called.
    pub fn new(config: AlignerConfig) -> Self {
        let (reports, rx) = Reports::new();
        RouterBuilder {
            parts: Parts::new(config),
            pending: Vec::new(),
            consumers: Vec::new(),
            outlets: Vec::new(),
            names: Vec::new(),
            named: Vec::new(),
            reports,
            reports_rx: Some(rx),
            room: Arc::new(AtomicWaker::new()),
        }
    }

    /// Live mode: arrivals are read from `clock`, no sample waits longer
    /// than the timeout after its arrival, and backpressure deadlines run
    /// on it.
    pub fn live(mut self, clock: impl Clock) -> Self {
        self.parts.clock = Some(Arc::new(clock));
        self
    }

    /// Registers an input (in order on its own). Its samples are cloned
    /// for every consumer but the last that takes it (wrap large samples in
    /// an `Arc`). Its items are [`Stamped<T>`], or
    /// [`Arrived<Stamped<T>>`](crate::source::Arrived) (what a
    /// [`crate::source`] stamped by `.timestamped(..)` yields): then the live
    /// latency bound counts from their hand-over ([`AlignerItem`]). It
    /// cannot fail: every [`StreamConfig`] was checked when it was built.
    pub fn input<T, S>(&mut self, name: &str, input: S, config: StreamConfig) -> InputId<T>
    where
        T: Clone + Send + 'static,
        S: Stream + Send + 'static,
        S::Item: AlignerItem<Value = T>,
    {
        let id = self.parts.core.add_stream(config);
        self.parts.ids.push(id);
        self.parts.names.push(name.to_string());
        self.names.push(Arc::from(name));
        let index = self.pending.len();
        self.pending.push(Pending {
            input: Box::new(PendingInput::<T> { routes: Vec::new() }),
            capacity: config.capacity_for(self.parts.core.timeout()),
            build: Box::new(move |pending: AnyInput, capacity| {
                let p = pending.downcast::<PendingInput<T>>().ok()?;
                let routes = Routes {
                    routes: p.routes,
                    undelivered: 0,
                };
                let lane: Box<dyn Lane<()>> = Box::new(QueueLane::new(input, capacity, routes));
                Some(lane)
            }),
            waits_for: Vec::new(),
        });
        InputId {
            index,
            id,
            _type: PhantomData,
        }
    }

    /// Declares a consumer of `E` with its queue policy; add its inputs
    /// with [`ConsumerBuilder::route`] / [`ConsumerBuilder::input`], then
    /// [`build`](ConsumerBuilder::build) its receiving end.
    pub fn consumer<E: Send + 'static>(
        &mut self,
        name: &str,
        policy: QueuePolicy,
    ) -> ConsumerBuilder<'_, E> {
        let shared = Arc::new(Shared::new(
            name,
            policy,
            self.reports.clone(),
            self.room.clone(),
        ));
        let index = self.consumers.len();
        self.consumers.push(shared.clone());
        self.outlets
            .push(Box::new(Outlet::<E>::new(shared.clone(), policy)));
        let named = shared.clone();
        self.named.push(Box::new(move |names| {
            let _ = named.stream_names.set(names.to_vec());
        }));
        ConsumerBuilder {
            builder: self,
            shared: Some(shared),
            index,
            policy,
        }
    }

    /// The stream of drop reports (aligner drops with `consumer: None`,
    /// consumer drops with its name). Reports are sent only once this was
    /// called; when its channel (1,024 reports) is full they are counted in
    /// `reports_lost` instead. `None` if it was taken already.
    pub fn drop_reports(&mut self) -> Option<mpsc::Receiver<DropReport>> {
        let rx = self.reports_rx.take()?;
        self.reports.enable();
        Some(rx)
    }

    /// The driver; spawn it (or await it). It completes with the final
    /// status when every input ended and every release was delivered.
    pub fn build(mut self) -> Router {
        for name_them in self.named.drain(..) {
            name_them(&self.names);
        }
        let mut waits_for = Vec::with_capacity(self.pending.len());
        for p in self.pending {
            waits_for.push(p.waits_for);
            let lane = (p.build)(p.input, p.capacity);
            // `build` matches the type the input was boxed with.
            if let Some(lane) = lane {
                self.parts.lanes.push(lane);
            }
        }
        let mut engine = self.parts.engine();
        engine.consumers = self.consumers;
        engine.outlets = self.outlets;
        engine.reports = Some(self.reports);
        let stall_timer = engine.clock().cloned().map(ClockTimer::new);
        let credit = vec![0; engine.consumers.len()];
        let mut backpressured: Vec<usize> = waits_for.iter().flatten().copied().collect();
        backpressured.sort_unstable();
        backpressured.dedup();
        Router {
            engine,
            waits_for,
            backpressured,
            credit,
            spent: 0,
            floor: 0,
            in_flight: None,
            waiting_since: None,
            stall_timer,
        }
    }
}

/// Declares one consumer (from [`RouterBuilder::consumer`]).
#[must_use = "call build() to get the consumer's receiving end"]
pub struct ConsumerBuilder<'a, E> {
    builder: &'a mut RouterBuilder,
    shared: Option<Arc<Shared<E>>>,
    index: usize,
    policy: QueuePolicy,
}

impl<E: Send + 'static> ConsumerBuilder<'_, E> {
    /// Routes an input to this consumer, wrapping each sample with `wrap`
    /// (typically a variant of the consumer's enum).
    pub fn route<T, F>(self, input: InputId<T>, wrap: F) -> Self
    where
        T: Clone + Send + 'static,
        F: Fn(Stamped<T>) -> E + Send + 'static,
    {
        let Some(shared) = self.shared.clone() else {
            return self;
        };
        let Some(pending) = self.builder.pending.get_mut(input.index) else {
            return self;
        };
        let Some(p) = pending.input.downcast_mut::<PendingInput<T>>() else {
            return self;
        };
        if let Some(name) = self.builder.names.get(input.index) {
            shared.add_input(name);
        }
        let index = input.index as u32;
        let consumer = self.index;
        p.routes.push(Box::new(
            move |stamp: Timestamp, value: T, outlets: &mut [Box<dyn OutletCtl>]| {
                // The outlet at `consumer` is this consumer's, of `E`.
                if let Some(o) = outlets
                    .get_mut(consumer)
                    .and_then(|o| (o.as_mut() as &mut dyn Any).downcast_mut::<Outlet<E>>())
                {
                    o.push(index, stamp, wrap(Stamped::new(stamp, value)));
                }
            },
        ));
        if matches!(self.policy, QueuePolicy::Backpressure { .. }) {
            pending.waits_for.push(self.index);
        }
        self
    }

    /// Routes an input whose samples convert into `E` (`E: From<Stamped<T>>`).
    pub fn input<T>(self, input: InputId<T>) -> Self
    where
        T: Clone + Send + 'static,
        E: From<Stamped<T>>,
    {
        self.route(input, E::from)
    }

    /// The consumer's receiving end.
    pub fn build(mut self) -> Consumer<E> {
        let shared = self.shared.take();
        match shared {
            Some(shared) => Consumer::new(shared, self.policy),
            None => unreachable_consumer(),
        }
    }
}

/// `build` always has the consumer's state (it is taken only there).
fn unreachable_consumer<E>() -> Consumer<E> {
    let (reports, _) = Reports::new();
    let policy = QueuePolicy::keep_newest(1);
    let shared = Shared::new("?", policy, reports, Arc::new(AtomicWaker::new()));
    Consumer::new(Arc::new(shared), policy)
}

impl<E> Drop for ConsumerBuilder<'_, E> {
    fn drop(&mut self) {
        // Declared but never built: nobody will read it.
        if let Some(shared) = self.shared.take() {
            close_unbuilt(&shared);
        }
    }
}

/// The router driver: a future that aligns the inputs and delivers each
/// release to every consumer routed from its input, in global timestamp
/// order. Keep-newest consumers never make it wait. While it waits for a
/// backpressure consumer's room it keeps taking in every input in live
/// mode (what the aligner cannot hold is counted as overflow, by stream);
/// in replay mode (no clock) the inputs wait too and nothing is lost.
/// Completes with the final status when every input ended.
#[must_use = "futures do nothing unless polled or spawned"]
pub struct Router {
    engine: Engine<()>,
    /// Per input: the backpressure consumers it feeds.
    waits_for: Vec<Vec<usize>>,
    /// Every consumer some input waits for.
    backpressured: Vec<usize>,
    /// Per consumer: `spent` plus the room it had when last asked. Only
    /// the driver adds to a queue, so its room only grows meanwhile, and
    /// each release takes at most one unit of it: `credit - spent` more
    /// pushes surely fit without asking it again.
    credit: Vec<usize>,
    /// Releases delivered so far.
    spent: usize,
    /// The smallest credit of the backpressured consumers: while `spent`
    /// is below it, every release surely fits (no check per consumer).
    floor: usize,
    /// A release taken from the core, waiting for room.
    in_flight: Option<(usize, Timestamp)>,
    /// When the wait for a backpressure consumer began `(consumer, since)`.
    waiting_since: Option<(usize, Timestamp)>,
    stall_timer: Option<ClockTimer>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("status", &self.status())
            .finish()
    }
}

impl Router {
    /// The current status (streams with names, consumers with their
    /// counters).
    pub fn status(&self) -> AlignedStatus {
        self.engine.status()
    }

    /// A `watch` receiver of the status, updated while it runs (every
    /// 1,024 events, whenever the driver waits after a change, at the end).
    pub fn status_watch(&self) -> watch::Receiver<AlignedStatus> {
        self.engine.watch()
    }

    /// A handle to change the running aligner (timeout, periods, streams).
    pub fn control(&self) -> AlignerControl {
        self.engine.control()
    }

    /// The first backpressure consumer of `lane` that has no room now
    /// (its waker registered). A consumer's room is asked for (under its
    /// lock) only when the credit it gave last time is spent.
    #[inline]
    fn blocked(&mut self, cx: &mut Context<'_>, lane: usize) -> Option<usize> {
        if self.spent < self.floor {
            return None;
        }
        self.blocked_slow(cx, lane)
    }

    /// [`blocked`](Self::blocked) once the floor of credits is spent.
    #[inline(never)]
    fn blocked_slow(&mut self, cx: &mut Context<'_>, lane: usize) -> Option<usize> {
        let consumers = self.waits_for.get(lane)?;
        for &c in consumers {
            let Some(credit) = self.credit.get_mut(c) else {
                continue;
            };
            if *credit > self.spent {
                continue;
            }
            match self.engine.outlets.get_mut(c).map(|o| o.poll_room(cx)) {
                Some(Poll::Ready(n)) => *credit = self.spent.saturating_add(n),
                Some(Poll::Pending) => return Some(c),
                None => {}
            }
        }
        self.floor = self
            .backpressured
            .iter()
            .filter_map(|&c| self.credit.get(c).copied())
            .min()
            .unwrap_or(usize::MAX);
        None
    }

    /// Waits for consumer `c`'s room while taking in the inputs; marks it
    /// stalled once its deadline passed. `Ready` when the wait is over.
    fn poll_wait(&mut self, cx: &mut Context<'_>, c: usize) -> Poll<()> {
        let Some(clock) = self.engine.clock().cloned() else {
            // Replay: no deadline, wait for room.
            return Poll::Pending;
        };
        let now = clock.now();
        let since = match self.waiting_since {
            Some((w, since)) if w == c => since,
            _ => {
                self.waiting_since = Some((c, now));
                now
            }
        };
        let deadline = self
            .engine
            .consumers
            .get(c)
            .and_then(|ctl| ctl.deadline())
            .unwrap_or_default();
        let at = since.saturating_add(deadline);
        let due = match self.stall_timer.as_mut() {
            Some(timer) => timer.poll_at(cx, at).is_ready(),
            None => now >= at,
        };
        if due {
            if let Some(ctl) = self.engine.consumers.get(c) {
                ctl.stall();
            }
            self.waiting_since = None;
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// Hands every consumer's outbox over to its queue.
    fn flush(&mut self) {
        for o in &mut self.engine.outlets {
            o.flush();
        }
    }

    /// Delivers the release of `lane` at `stamp` to its consumers.
    fn deliver(&mut self, lane: usize, stamp: Timestamp) {
        self.spent += 1;
        let engine = &mut self.engine;
        if let Some(l) = engine.lanes.get_mut(lane) {
            l.take_to(stamp, &mut engine.outlets);
        }
    }

    fn finish(&mut self) -> AlignedStatus {
        for o in &mut self.engine.outlets {
            o.finish();
        }
        self.engine.publish();
        self.engine.status()
    }
}

impl Future for Router {
    type Output = AlignedStatus;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<AlignedStatus> {
        let this = self.get_mut();
        this.engine.begin_poll();
        loop {
            if let Some((lane, stamp)) = this.in_flight {
                if let Some(c) = this.blocked(cx, lane) {
                    if this.poll_wait(cx, c).is_ready() {
                        continue;
                    }
                    // Live: keep taking in every input (what the aligner
                    // cannot hold is counted as overflow). Replay: the
                    // inputs wait too, nothing is lost.
                    if this.engine.clock().is_some() && this.engine.poll_intake(cx) {
                        if this.engine.budget_spent() {
                            this.flush();
                            cx.waker().wake_by_ref();
                            return Poll::Pending;
                        }
                        continue;
                    }
                    this.flush();
                    this.engine.publish();
                    return Poll::Pending;
                }
                this.waiting_since = None;
                this.in_flight = None;
                this.deliver(lane, stamp);
            }
            match this.engine.poll_release(cx) {
                Poll::Ready(Some((lane, stamp))) => {
                    if this.blocked(cx, lane).is_none() {
                        // Room in every consumer that could wait: deliver.
                        this.deliver(lane, stamp);
                        continue;
                    }
                    if let Some(l) = this.engine.lanes.get_mut(lane) {
                        l.stage();
                    }
                    this.in_flight = Some((lane, stamp));
                }
                Poll::Ready(None) => return Poll::Ready(this.finish()),
                Poll::Pending => {
                    // Waiting for inputs, the timer or a yield: hand every
                    // consumer what it has.
                    this.flush();
                    return Poll::Pending;
                }
            }
        }
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        // Receivers end once their queues are empty.
        for o in &mut self.engine.outlets {
            o.finish();
        }
    }
}
