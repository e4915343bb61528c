//! Synchronizers as async `Stream` combinators: [`approximate_time`],
//! [`exact_time`] and [`latest_time`] (also methods of their inputs,
//! [`SynclineExt`](crate::SynclineExt)) over a tuple of 2 to 12 streams of
//! different item types (yielding tuples) or a `Vec` of streams of one type
//! (yielding `Vec`s), driving the sans-IO cores of
//! [`syncline_core::sync`]. They cannot fail: their settings are checked
//! when they are built ([`ApproximateConfig::check`] gives
//! [`ApproximateSettings`], ...; the defaults are ROS's), and the topic
//! count is the inputs'. [`register_callback`] gives ROS's
//! `registerCallback` shape: a task that awaits an async closure per set.
//!
//! ```
//! use futures::{stream, StreamExt};
//! use syncline::sync::{approximate_time, ApproximateSettings};
//! use syncline::{Stamped, Timestamp};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let ms = |x: i64| Timestamp::from_nanos(x * 1_000_000);
//! let camera = stream::iter((0..5).map(move |k| Stamped::new(ms(33 * k), format!("img{k}"))));
//! let odom = stream::iter((0..17).map(move |k| Stamped::new(ms(10 * k + 1), k as f64)));
//! let mut sets = approximate_time((camera, odom), ApproximateSettings::default());
//! let mut n = 0;
//! while let Some((img, odom)) = sets.next().await {
//!     assert!((img.stamp.as_nanos() - odom.stamp.as_nanos()).abs() <= 5_000_000);
//!     n += 1;
//! }
//! assert_eq!(n, 5);
//! assert_eq!(sets.status().sets, 5);
//! # }
//! ```

mod inputs;

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::{Stream, StreamExt};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::clock::Clock;
pub use inputs::{CloneInputs, Slots, SyncInputs};
pub use syncline_core::sync::{
    ApproximateConfig, ApproximateSettings, ApproximateTime, ConfigError, DropCounts, DropReason,
    ExactConfig, ExactSettings, ExactTime, LatestConfig, LatestSettings, LatestTime, Output,
    RateConfig, StallAction, StallConfig, SyncPolicy, SyncStatus,
};
use syncline_core::{TimeDelta, Timestamp};

/// A message that left the synchronizer without being part of a set.
#[derive(Debug)]
pub struct DropReport<D> {
    /// The input (topic) it came from, 0-based.
    pub topic: usize,
    /// Its stamp.
    pub stamp: Timestamp,
    /// Why it was dropped.
    pub reason: DropReason,
    /// The message (`Box<dyn Any + Send>` for tuple inputs: downcast to the
    /// topic's item type).
    pub message: D,
}

/// A synchronizer stream: yields sets of its inputs' items, ends when no
/// further set can be formed because inputs have ended (what is still held
/// is then reported as dropped with reason `end`).
///
/// Made by [`approximate_time`], [`exact_time`] and [`latest_time`].
pub struct Synchronized<S: SyncInputs, P> {
    inputs: S,
    storage: S::Storage,
    core: P,
    clock: Option<Box<dyn Clock>>,
    ended: Vec<bool>,
    next_input: usize,
    seqs: Vec<u64>,
    ready: VecDeque<S::Item>,
    drops: Option<mpsc::UnboundedSender<DropReport<S::Message>>>,
    status: watch::Sender<SyncStatus>,
    /// Topics already warned about (overflow or stall), for `tracing`.
    warned: Vec<bool>,
    finished: bool,
    stall: StallTimer,
    /// The topics' names, for the status.
    names: Vec<String>,
}

/// The stall timeout on the runtime's timer: one sleep, reset to each new
/// deadline, never re-created (quinn's pattern).
///
/// The core's clock is its newest stamp; between messages it is taken to
/// advance with the runtime's clock from the moment that stamp arrived, so a
/// topic that stays silent is set aside (or its peers' messages dropped)
/// when the timeout has passed on the runtime's timer, whether or not
/// messages arrive on the other inputs.
#[derive(Debug, Default)]
struct StallTimer {
    /// The newest stamp pushed and the runtime instant it arrived at.
    anchor: Option<(Timestamp, tokio::time::Instant)>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The runtime instant the sleep is set to.
    armed: Option<tokio::time::Instant>,
}

impl StallTimer {
    fn pushed(&mut self, stamp: Timestamp) {
        if self.anchor.is_none_or(|(newest, _)| stamp > newest) {
            self.anchor = Some((stamp, tokio::time::Instant::now()));
        }
    }

    /// The core's clock now, on the runtime's timer.
    fn now(&self) -> Option<Timestamp> {
        let (stamp, at) = self.anchor?;
        let elapsed = tokio::time::Instant::now().saturating_duration_since(at);
        Some(stamp.saturating_add(TimeDelta::try_from(elapsed).unwrap_or(TimeDelta::MAX)))
    }

    /// Polls the timer towards the stamp-domain `deadline`; the core's
    /// clock once it is reached.
    fn poll(&mut self, deadline: Timestamp, cx: &mut Context<'_>) -> Option<Timestamp> {
        let (stamp, at) = self.anchor?;
        let now = self.now()?;
        if now >= deadline {
            return Some(now);
        }
        // No timer outside a tokio runtime: the timeout then advances with
        // the messages only (never a panic).
        tokio::runtime::Handle::try_current().ok()?;
        let wait = u64::try_from(deadline.nanos_since_wide(stamp)).ok()?;
        let when = at.checked_add(std::time::Duration::from_nanos(wait))?;
        match &mut self.sleep {
            Some(sleep) => {
                if self.armed != Some(when) {
                    sleep.as_mut().reset(when);
                }
            }
            None => self.sleep = Some(Box::pin(tokio::time::sleep_until(when))),
        }
        self.armed = Some(when);
        let sleep = self.sleep.as_mut()?;
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Some(self.now()?.max(deadline)),
            Poll::Pending => None,
        }
    }
}

// Nothing is pinned structurally: the inputs are `Unpin`, the rest is
// plain data moved only through `&mut`.
impl<S: SyncInputs, P> Unpin for Synchronized<S, P> {}

impl<S: SyncInputs, P> std::fmt::Debug for Synchronized<S, P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Synchronized")
            .field("inputs", &self.ended.len())
            .field("ready", &self.ready.len())
            .field("finished", &self.finished)
            .finish()
    }
}

impl<S: SyncInputs, P> Synchronized<S, P> {
    fn new(inputs: S, core: P, clock: Option<Box<dyn Clock>>) -> Self {
        let n = inputs.count();
        Synchronized {
            storage: inputs.storage(),
            inputs,
            core,
            clock,
            ended: vec![false; n],
            next_input: 0,
            seqs: Vec::with_capacity(n),
            ready: VecDeque::new(),
            drops: None,
            status: watch::Sender::new(SyncStatus::default()),
            warned: vec![false; n],
            finished: false,
            stall: StallTimer::default(),
            names: (0..n).map(|i| i.to_string()).collect(),
        }
    }

    /// Names the topics (input order) in the status and in `tracing`
    /// warnings; by default they are named by their index, `"0"`, `"1"`,
    /// ... Extra names are ignored; inputs without a name keep their index.
    ///
    /// ```
    /// use futures::stream;
    /// use syncline::prelude::*;
    /// use syncline::sync::ApproximateSettings;
    ///
    /// let t = Timestamp::from_nanos;
    /// let sets = (stream::iter([t(0)]), stream::iter([t(1)]))
    ///     .approximate_time(ApproximateSettings::default())
    ///     .named(["camera", "lidar"]);
    /// assert_eq!(sets.status().topics, ["camera", "lidar"]);
    /// ```
    pub fn named<I>(mut self, names: I) -> Self
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        for (slot, name) in self.names.iter_mut().zip(names) {
            *slot = name.into();
        }
        self
    }

    /// Messages this stream keeps alive now, over all inputs: those the
    /// synchronizer holds (ApproximateTime, ExactTime: the sum of
    /// [`SyncStatus::held`] after each poll) and, for LatestTime, the
    /// newest of each input. Bounded by the policy's queue size, however
    /// long a message is held.
    pub fn stored(&self) -> usize {
        S::stored(&self.storage)
    }

    /// A channel of every drop from now on, with the message and reason.
    /// Read it, or the reports accumulate.
    pub fn drop_reports(&mut self) -> mpsc::UnboundedReceiver<DropReport<S::Message>> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.drops = Some(tx);
        rx
    }
}

impl<S: SyncInputs, P: SyncPolicy<u64>> Synchronized<S, P> {
    /// The synchronizer's counters now, with the topics' names.
    pub fn status(&self) -> SyncStatus {
        let mut status = self.core.sync_status();
        status.topics.clone_from(&self.names);
        status
    }

    /// A watch of the counters, updated as the stream is polled (observable
    /// from another task while this stream is consumed). Every receiver
    /// stays live: call it as often as needed. Nothing is published while
    /// no receiver exists.
    pub fn status_watch(&self) -> watch::Receiver<SyncStatus> {
        self.status.send_replace(self.status());
        self.status.subscribe()
    }

    /// Moves the core's outputs into ready sets (members taken or cloned
    /// out of the storage by `extract`) and drop reports.
    fn drain(&mut self, extract: fn(&mut S::Storage, &[u64]) -> Option<S::Item>) {
        while let Some(out) = self.core.poll_output() {
            match out {
                Output::Set(set) => {
                    self.seqs.clear();
                    self.seqs
                        .extend(set.members().iter().flatten().map(|m| m.value));
                    if set.is_complete() {
                        if let Some(item) = extract(&mut self.storage, &self.seqs) {
                            self.ready.push_back(item);
                        }
                    } else {
                        // Partial sets (stall timeout) cannot be typed as a
                        // set: their members are reported as stalled.
                        for (topic, m) in set.members().iter().enumerate() {
                            if let Some(m) = m {
                                let msg = S::take_message(&mut self.storage, topic, m.value);
                                report(&self.drops, topic, m.stamp, DropReason::Stalled, msg);
                            }
                        }
                    }
                }
                Output::Dropped(d) => {
                    if matches!(d.reason, DropReason::Overflow | DropReason::Stalled)
                        && let Some(w) = self.warned.get_mut(d.topic)
                        && !std::mem::replace(w, true)
                    {
                        tracing::warn!(
                            topic = self.names.get(d.topic).map_or("", String::as_str),
                            reason = d.reason.as_str(),
                            "synchronizer dropped a message: a topic is silent or late \
                             (overflow: increase the queue size, or set a stall timeout)"
                        );
                    }
                    let msg = S::take_message(&mut self.storage, d.topic, d.message.value);
                    report(&self.drops, d.topic, d.message.stamp, d.reason, msg);
                }
            }
        }
    }

    fn poll_sets(
        &mut self,
        cx: &mut Context<'_>,
        extract: fn(&mut S::Storage, &[u64]) -> Option<S::Item>,
        reuse: bool,
    ) -> Poll<Option<S::Item>> {
        let n = self.ended.len();
        loop {
            if let Some(item) = self.ready.pop_front() {
                self.publish_status();
                return Poll::Ready(Some(item));
            }
            if self.finished {
                return Poll::Ready(None);
            }
            let mut progressed = false;
            for k in 0..n {
                let i = (self.next_input + k) % n;
                if self.ended[i] {
                    continue;
                }
                match self.inputs.poll_input(i, &mut self.storage, cx) {
                    Poll::Ready(Some((stamp, seq))) => {
                        let now = self.clock.as_ref().map_or(stamp, |c| c.now());
                        // `i` is below the input count, which the core was
                        // configured with.
                        let _ = self.core.push_at(i, stamp, seq, now);
                        self.stall.pushed(stamp);
                        self.drain(extract);
                        if reuse {
                            S::purge_before(&mut self.storage, i, seq);
                        }
                        progressed = true;
                        self.next_input = (i + 1) % n;
                        break;
                    }
                    Poll::Ready(None) => {
                        self.ended[i] = true;
                        progressed = true;
                    }
                    Poll::Pending => {}
                }
            }
            // No set can be formed any more once an input has ended and
            // holds nothing (LatestTime keeps using its last message).
            let hopeless = (0..n).any(|i| self.ended[i] && !reuse && self.core.held(i) == 0);
            if self.ended.iter().all(|e| *e) || hopeless {
                // What the open inputs have already delivered goes through
                // the core too, so that it leaves as a drop report (`end`,
                // or `overflow`) instead of staying unread in the input.
                for i in 0..n {
                    while !self.ended[i] {
                        match self.inputs.poll_input(i, &mut self.storage, cx) {
                            Poll::Ready(Some((stamp, seq))) => {
                                let now = self.clock.as_ref().map_or(stamp, |c| c.now());
                                let _ = self.core.push_at(i, stamp, seq, now);
                                self.drain(extract);
                            }
                            Poll::Ready(None) => self.ended[i] = true,
                            Poll::Pending => break,
                        }
                    }
                }
                self.core.finish_input();
                self.drain(extract);
                self.finished = true;
                self.publish_status();
                continue;
            }
            if !progressed {
                if self.stall_timeout(cx, extract) {
                    continue;
                }
                self.publish_status();
                return Poll::Pending;
            }
        }
    }

    /// Runs the core's timeout on the runtime's timer; true when it acted
    /// (its outputs are then drained). A deadline that does not move after
    /// acting is not acted on again in this poll.
    fn stall_timeout(
        &mut self,
        cx: &mut Context<'_>,
        extract: fn(&mut S::Storage, &[u64]) -> Option<S::Item>,
    ) -> bool {
        let Some(deadline) = self.core.timeout_at() else {
            return false;
        };
        let Some(now) = self.stall.poll(deadline, cx) else {
            return false;
        };
        self.core.on_timeout(now);
        self.drain(extract);
        self.core.timeout_at().is_none_or(|next| next > deadline)
    }

    fn publish_status(&self) {
        if self.status.receiver_count() > 0 {
            self.status.send_replace(self.status());
        }
    }
}

fn report<D>(
    tx: &Option<mpsc::UnboundedSender<DropReport<D>>>,
    topic: usize,
    stamp: Timestamp,
    reason: DropReason,
    message: Option<D>,
) {
    if let (Some(tx), Some(message)) = (tx, message) {
        // A closed receiver means nobody listens any more.
        let _ = tx.send(DropReport {
            topic,
            stamp,
            reason,
            message,
        });
    }
}

impl<S: SyncInputs> Stream for Synchronized<S, ApproximateTime<u64>> {
    type Item = S::Item;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.get_mut().poll_sets(cx, S::take_set, false)
    }
}

impl<S: SyncInputs> Stream for Synchronized<S, ExactTime<u64>> {
    type Item = S::Item;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.get_mut().poll_sets(cx, S::take_set, false)
    }
}

impl<S: CloneInputs> Stream for Synchronized<S, LatestTime<u64>> {
    type Item = S::Item;
    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.get_mut()
            .poll_sets(cx, |st, seqs| S::clone_set(st, seqs), true)
    }
}

/// ApproximateTime (the ROS algorithm) over `inputs`: a tuple of 2 to 12
/// streams, or a `Vec` of streams, as many topics as inputs. It cannot
/// fail: the settings were checked when they were built
/// ([`ApproximateConfig::check`]). The same as
/// [`SynclineExt::approximate_time`](crate::SynclineExt::approximate_time).
pub fn approximate_time<S: SyncInputs>(
    inputs: S,
    settings: ApproximateSettings,
) -> Synchronized<S, ApproximateTime<u64>> {
    let n = topics(&inputs, settings.needed_topics());
    let core = ApproximateTime::with_settings(n, &settings.report_drops(true));
    Synchronized::new(inputs, core, None)
}

/// ExactTime over `inputs` (see [`approximate_time`]).
///
/// ```
/// use futures::{stream, StreamExt};
/// use syncline::sync::{exact_time, ExactSettings};
/// use syncline::{Stamped, Timestamp};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let t = Timestamp::from_nanos;
/// // The `Vec` form: any number of streams of one type.
/// let a = stream::iter([Stamped::new(t(1), 'a'), Stamped::new(t(2), 'b')]);
/// let b = stream::iter([Stamped::new(t(2), 'x'), Stamped::new(t(3), 'y')]);
/// let sets: Vec<_> = exact_time(vec![a, b], ExactSettings::default()).collect().await;
/// assert_eq!(sets.len(), 1);
/// assert_eq!((sets[0][0].value, sets[0][1].value), ('b', 'x'));
/// # }
/// ```
pub fn exact_time<S: SyncInputs>(
    inputs: S,
    settings: ExactSettings,
) -> Synchronized<S, ExactTime<u64>> {
    let n = topics(&inputs, settings.needed_topics());
    let core = ExactTime::with_settings(n, &settings.report_drops(true));
    Synchronized::new(inputs, core, None)
}

/// LatestTime over `inputs`, with `clock` as the receipt clock (items must
/// be `Clone`: a message can appear in several sets).
pub fn latest_time<S: CloneInputs>(
    inputs: S,
    settings: LatestSettings,
    clock: impl Clock,
) -> Synchronized<S, LatestTime<u64>> {
    let n = topics(&inputs, settings.needed_topics());
    let core = LatestTime::with_settings(n, &settings.report_drops(true));
    Synchronized::new(inputs, core, Some(Box::new(clock)))
}

/// The topic count: the inputs'. Per-topic settings for topics the inputs
/// do not have are unused (logged once, here).
fn topics<S: SyncInputs>(inputs: &S, needed: usize) -> usize {
    let n = inputs.count();
    if needed > n {
        tracing::warn!(
            inputs = n,
            needed,
            "synchronizer: per-topic settings name topics past the inputs; they are unused"
        );
    }
    n
}

/// ROS's `registerCallback` shape: spawns a task that awaits `callback`
/// with each set of `sets`, one at a time, in order; the task ends with the
/// stream. Nothing of the synchronizer is locked while the callback runs.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use futures::stream;
/// use syncline::sync::{approximate_time, register_callback, ApproximateSettings};
/// use syncline::Timestamp;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let t = Timestamp::from_nanos;
/// let a = stream::iter([t(0), t(10), t(20)]);
/// let b = stream::iter([t(1), t(11), t(21)]);
/// let sets = approximate_time((a, b), ApproximateSettings::default());
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let log = seen.clone();
/// register_callback(sets, move |(a, b)| {
///     let log = log.clone();
///     async move { log.lock().unwrap().push((a, b)) }
/// })
/// .await
/// .unwrap();
/// // The last pair is never proven optimal before the inputs end.
/// assert_eq!(seen.lock().unwrap().len(), 2);
/// # }
/// ```
pub fn register_callback<St, F, Fut>(sets: St, mut callback: F) -> JoinHandle<()>
where
    St: Stream + Send + 'static,
    St::Item: Send,
    F: FnMut(St::Item) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    tokio::spawn(async move {
        let mut sets = std::pin::pin!(sets);
        while let Some(set) = sets.next().await {
            callback(set).await;
        }
    })
}

#[cfg(test)]
mod tests;
