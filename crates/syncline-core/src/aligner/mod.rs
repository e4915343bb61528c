//! The stream aligner: replays samples of several streams in global
//! timestamp order, waiting no longer than it must.
//!
//! Streams are registered with a period (lookahead), a queue capacity and a
//! priority; the aligner has one maximum latency, the timeout. Each stream
//! must be in order on its own; across streams samples may arrive in any
//! order. The release rule is Rock's `StreamAligner` rule
//! (`reference/rock-aggregator.md` §3), without its defects:
//!
//! * Each stream has an **expected time**: its queued head's stamp, or, when
//!   its queue is empty, its last accepted stamp plus its period (a stream
//!   that never accepted a sample expects `EPOCH + period`, so it holds the
//!   others back until the timeout).
//! * The earliest queued head (ties: lower priority, then lower slot) is
//!   released unless an **active empty** stream expects a strictly earlier
//!   time and the timeout is not reached.
//! * The timeout is reached when the newest accepted stamp minus the last
//!   released stamp is `>= timeout` (before the first release: minus the
//!   earliest queued stamp). It bounds the lag of released time behind pushed
//!   time, in **sample time**.
//! * Live mode adds a **wall-clock bound**: samples pushed with
//!   [`Aligner::push_arrived`] are released (with everything ordered before
//!   them) once `handle_timeout(now)` says `now >= arrival + timeout`, even
//!   if every input went silent. [`Aligner::poll_timeout`] gives the
//!   deadline to arm.
//! * **Clock steps** (on by default; [`Aligner::with_clock_steps`] turns
//!   the rule off, as `syncline align`'s replay contract does). A push
//!   older than the last released sample by more
//!   than the step threshold, `max(2 · timeout, 1 s)`, is a **backward
//!   clock step** (stamps taken on a wall clock that was stepped back), not
//!   a late sample: it is counted in `clock_steps_backward`, the samples
//!   queued before it are released first (in their order, whatever their
//!   stamps), and the aligner starts again from the stepped time (last
//!   released, newest and every stream's last accepted stamp forgotten), so
//!   nothing is dropped as late for the length of the step. A push newer
//!   than the newest accepted stamp by more than the threshold is counted
//!   in `forward_jumps` (a forward step, or a stream resuming after a long
//!   silence); the timeout rule already releases everything queued before
//!   it in order.
//! * A push is `dropped late` when older than the last released sample,
//!   `dropped backward` when older than its stream's previous accepted sample
//!   (equal stamps are accepted), and a push into a full queue evicts the
//!   stream's oldest queued sample, handed back to the caller.
//!
//! Every pushed sample leaves as released, or handed back with a reason,
//! and is counted in [`AlignerStatus`].
//!
//! ```
//! use syncline_core::aligner::{Aligner, AlignerConfig, Push, StreamConfig};
//! use syncline_core::{TimeDelta, Timestamp};
//!
//! let ms = |v: i64| Timestamp::from_nanos(v * 1_000_000);
//! let mut aligner = Aligner::new(AlignerConfig { timeout: TimeDelta::from_millis(200) });
//! let imu = aligner.add_stream(StreamConfig::new(TimeDelta::from_millis(10))?.capacity(64)?);
//! let gps = aligner.add_stream(StreamConfig::new(TimeDelta::from_millis(100))?.capacity(8)?);
//!
//! assert!(matches!(aligner.push(imu, ms(1000), "imu a"), Push::Queued));
//! assert!(matches!(aligner.push(gps, ms(1005), "gps a"), Push::Queued));
//! // imu 1000 goes first; then the imu promises nothing before 1010, so
//! // gps 1005 can go too.
//! let out: Vec<_> = std::iter::from_fn(|| aligner.poll_release()).map(|r| r.sample.value).collect();
//! assert_eq!(out, ["imu a", "gps a"]);
//! // At end of input, finish() releases whatever is still queued.
//! aligner.finish();
//! assert!(aligner.poll_release().is_none());
//! # Ok::<(), syncline_core::aligner::AlignerError>(())
//! ```

mod status;
mod stream;
#[cfg(test)]
mod tests;

pub use status::{AlignerStatus, StreamStatus};
pub use stream::{StreamConfig, StreamCounters, StreamId, StreamState};

use crate::stamped::Stamped;
use crate::time::{TimeDelta, Timestamp};
use stream::{Entry, Stream};

/// The aligner's global parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AlignerConfig {
    /// The maximum latency: in sample time (newest accepted stamp minus last
    /// released stamp) and, for samples pushed with an arrival time, in wall
    /// time after their arrival. A timeout of zero or less never waits.
    pub timeout: TimeDelta,
}

/// Errors of the aligner's configuration and stream management.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AlignerError {
    /// A stream capacity of 0: a queue must hold at least one sample.
    #[error("a stream's capacity must be at least 1")]
    ZeroCapacity,
    /// A negative period.
    #[error("a stream's period must be >= 0, got {0}")]
    NegativePeriod(TimeDelta),
    /// The handle names a stream that was removed (or never existed here).
    #[error("unknown or removed stream {0:?}")]
    UnknownStream(StreamId),
}

/// Why a push was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// Strictly older than the last released sample.
    Late,
    /// Strictly older than the stream's previous accepted sample.
    Backward,
    /// The stream was removed (or the handle is foreign).
    UnknownStream,
}

impl DropReason {
    /// The reason as a short name (`late`, `backward`, `unknown_stream`).
    pub const fn as_str(self) -> &'static str {
        match self {
            DropReason::Late => "late",
            DropReason::Backward => "backward",
            DropReason::UnknownStream => "unknown_stream",
        }
    }
}

/// The outcome of [`Aligner::push`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[must_use = "an evicted or dropped sample is handed back and should be accounted for"]
pub enum Push<T> {
    /// The sample was queued.
    Queued,
    /// The sample was queued; the stream's queue was full and its oldest
    /// queued sample was evicted (an overflow drop), handed back here.
    Evicted(Stamped<T>),
    /// The sample was not queued, for this reason; handed back.
    Dropped(DropReason, Stamped<T>),
}

/// A sample released in order by [`Aligner::poll_release`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Release<T> {
    /// The stream it came from.
    pub stream: StreamId,
    /// The sample and its stamp.
    pub sample: Stamped<T>,
}

/// What a stream contributes to the release decision, kept up to date on
/// every change so that the decision scans a small, dense array with one
/// unsigned comparison and one minimum per stream.
#[derive(Debug, Clone, Copy)]
struct Key {
    /// A stream with queued samples: its head's `(stamp, priority)` as one
    /// unsigned order ([`order`]); otherwise [`NO_HEAD`]. (A head at
    /// `(Timestamp::MAX, i64::MAX)` also reads `NO_HEAD`: the scan then
    /// finds it through `Aligner::queued`.)
    head: u128,
    /// An active, empty stream: its expected time; otherwise
    /// `Timestamp::MAX`, which holds nothing back (blocking needs a
    /// strictly earlier time).
    block: Timestamp,
}

const NO_HEAD: u128 = u128::MAX;

const IDLE: Key = Key {
    head: NO_HEAD,
    block: Timestamp::MAX,
};

const SIGN: u64 = 1 << 63;

/// `(stamp, priority)` as an unsigned number with the same order
/// (lexicographic, both signed).
#[inline]
fn order(stamp: Timestamp, priority: i64) -> u128 {
    let hi = (stamp.as_nanos() as u64) ^ SIGN;
    let lo = (priority as u64) ^ SIGN;
    (u128::from(hi) << 64) | u128::from(lo)
}

/// The stamp part of an [`order`].
#[inline]
fn order_stamp(head: u128) -> Timestamp {
    Timestamp::from_nanos(((head >> 64) as u64 ^ SIGN) as i64)
}

#[derive(Debug, Clone)]
struct Slot<T> {
    generation: u32,
    stream: Option<Stream<T>>,
}

/// The stream aligner core (sans-IO). See the [module docs](self) for the
/// rules and an example.
///
/// Usage: `push` (or `push_arrived`) each sample as it arrives, then call
/// [`poll_release`](Self::poll_release) until it returns `None`. In live
/// mode, arm a timer at [`poll_timeout`](Self::poll_timeout) and call
/// [`handle_timeout`](Self::handle_timeout) when it fires (then drain
/// `poll_release` again). At end of input call [`finish`](Self::finish) and
/// drain. Memory is bounded by the capacities: queues are allocated at
/// registration (no allocation per sample) and never exceed them.
#[derive(Debug, Clone)]
pub struct Aligner<T> {
    timeout: TimeDelta,
    slots: Vec<Slot<T>>,
    /// `keys[i]` summarises `slots[i]`.
    keys: Vec<Key>,
    /// Stamp of the last released sample.
    current: Option<Timestamp>,
    /// Newest accepted stamp.
    latest: Option<Timestamp>,
    /// Latest wall time given to `handle_timeout`.
    wall_now: Option<Timestamp>,
    dropped_removed: u64,
    rejected_unknown: u64,
    /// Samples queued over all streams.
    queued: usize,
    /// Queued samples from before a backward clock step (released first).
    flushing: usize,
    clock_steps_backward: u64,
    forward_jumps: u64,
    /// Whether a push far older than the last release is a clock step.
    detect_steps: bool,
    /// [`Aligner::step_threshold`] in nanoseconds, kept with the timeout.
    step: i128,
}

/// The smallest step threshold (see the module docs).
const MIN_STEP: TimeDelta = TimeDelta::from_secs(1);

impl<T> Aligner<T> {
    /// An aligner with no streams. A negative timeout is taken as zero.
    pub fn new(config: AlignerConfig) -> Self {
        let timeout = clamp_timeout(config.timeout);
        Aligner {
            step: step_nanos(timeout),
            timeout,
            slots: Vec::new(),
            keys: Vec::new(),
            current: None,
            latest: None,
            wall_now: None,
            dropped_removed: 0,
            rejected_unknown: 0,
            queued: 0,
            flushing: 0,
            clock_steps_backward: 0,
            forward_jumps: 0,
            detect_steps: true,
        }
    }

    /// Turns the clock-step rule (module docs) on (the default) or off.
    /// Off, a push older than the last released sample is always dropped
    /// as late, as Rock's StreamAligner and the replay contract of
    /// `syncline align` do; forward jumps are still counted.
    pub fn with_clock_steps(mut self, detect: bool) -> Self {
        self.detect_steps = detect;
        self
    }

    /// The clock-step threshold: `max(2 · timeout, 1 s)`.
    pub fn step_threshold(&self) -> TimeDelta {
        step_threshold(self.timeout)
    }

    /// A backward clock step: the queued samples go out first, then the
    /// aligner starts again from the stepped time.
    #[cold]
    fn step_back(&mut self) {
        self.clock_steps_backward = self.clock_steps_backward.saturating_add(1);
        for s in self.slots.iter_mut().filter_map(|s| s.stream.as_mut()) {
            s.old = s.queue.len();
            s.last_accepted = None;
            s.last_arrival = None;
        }
        self.flushing = self.queued;
        self.current = None;
        self.latest = None;
        for i in 0..self.slots.len() {
            self.refresh(i);
        }
    }

    /// Releases the earliest of the samples queued before a backward step.
    #[cold]
    fn release_old(&mut self) -> Option<Release<T>> {
        let mut best: Option<(u128, usize)> = None;
        for (i, slot) in self.slots.iter().enumerate() {
            if let Some(s) = slot.stream.as_ref()
                && s.old > 0
                && let Some(f) = s.queue.front()
            {
                let o = order(f.stamp, s.config.priority);
                if best.is_none_or(|(b, _)| o < b) {
                    best = Some((o, i));
                }
            }
        }
        let Some((_, i)) = best else {
            self.flushing = 0;
            return None;
        };
        let slot = self.slots.get_mut(i)?;
        let generation = slot.generation;
        let stream = slot.stream.as_mut()?;
        let entry = stream.queue.pop_front()?;
        stream.old -= 1;
        self.flushing = self.flushing.saturating_sub(1);
        stream.counters.released = stream.counters.released.saturating_add(1);
        self.queued = self.queued.saturating_sub(1);
        if let Some(k) = self.keys.get_mut(i) {
            *k = key_of(stream);
        }
        Some(Release {
            stream: StreamId {
                slot: i,
                generation,
            },
            sample: Stamped::new(entry.stamp, entry.value),
        })
    }

    /// Registers a stream; it takes the lowest free slot. Its queue is
    /// allocated now, at full capacity (capacities above 65 536 entries are
    /// allocated up to that and grow on demand). It cannot fail: every
    /// [`StreamConfig`] was checked when it was built, and slots are only
    /// bounded by memory.
    pub fn add_stream(&mut self, config: StreamConfig) -> StreamId {
        let mut config = config;
        config.capacity = config.capacity_for(self.timeout);
        config.capacity_set = true;
        let stream = Some(Stream::new(config));
        if let Some((slot, s)) = self
            .slots
            .iter_mut()
            .enumerate()
            .find(|(_, s)| s.stream.is_none())
        {
            s.generation = s.generation.wrapping_add(1);
            s.stream = stream;
            let generation = s.generation;
            self.refresh(slot);
            return StreamId { slot, generation };
        }
        self.slots.push(Slot {
            generation: 0,
            stream,
        });
        self.keys.push(IDLE);
        let slot = self.slots.len() - 1;
        self.refresh(slot);
        StreamId {
            slot,
            generation: 0,
        }
    }

    /// Removes a stream. Its queued samples are handed back (in queue order)
    /// and counted in [`AlignerStatus::dropped_removed`]; later pushes with
    /// its handle are rejected as [`DropReason::UnknownStream`].
    ///
    /// # Errors
    /// [`AlignerError::UnknownStream`] if it was already removed.
    pub fn remove_stream(
        &mut self,
        id: StreamId,
    ) -> Result<impl Iterator<Item = Stamped<T>>, AlignerError> {
        self.stream_mut(id)?;
        let stream = self
            .slots
            .get_mut(id.slot())
            .and_then(|s| s.stream.take())
            .ok_or(AlignerError::UnknownStream(id))?;
        self.refresh(id.slot());
        self.flushing = self.flushing.saturating_sub(stream.old);
        self.queued = self.queued.saturating_sub(stream.queue.len());
        self.dropped_removed = self
            .dropped_removed
            .saturating_add(stream.queue.len() as u64);
        Ok(stream
            .queue
            .into_iter()
            .map(|e| Stamped::new(e.stamp, e.value)))
    }

    fn stream_mut(&mut self, id: StreamId) -> Result<&mut Stream<T>, AlignerError> {
        match self.slots.get_mut(id.slot()) {
            Some(Slot {
                generation,
                stream: Some(s),
            }) if *generation == id.generation => Ok(s),
            _ => Err(AlignerError::UnknownStream(id)),
        }
    }

    fn set_state(&mut self, id: StreamId, state: StreamState) -> Result<(), AlignerError> {
        self.stream_mut(id)?.state = state;
        self.refresh(id.slot());
        Ok(())
    }

    /// Stops waiting for a stream; its queued samples are still released in
    /// order. A push to it makes it active again.
    ///
    /// # Errors
    /// [`AlignerError::UnknownStream`].
    pub fn disable_stream(&mut self, id: StreamId) -> Result<(), AlignerError> {
        self.set_state(id, StreamState::Disabled)
    }

    /// Waits for a disabled or ended stream again.
    ///
    /// # Errors
    /// [`AlignerError::UnknownStream`].
    pub fn enable_stream(&mut self, id: StreamId) -> Result<(), AlignerError> {
        self.set_state(id, StreamState::Active)
    }

    /// Marks a stream as ended: it never holds the others back again (a
    /// straggler pushed later is still aligned, but not waited for).
    ///
    /// # Errors
    /// [`AlignerError::UnknownStream`].
    pub fn end_stream(&mut self, id: StreamId) -> Result<(), AlignerError> {
        self.set_state(id, StreamState::Ended)
    }

    /// Ends every stream: [`poll_release`](Self::poll_release) then drains
    /// every queued sample in order (end of input).
    pub fn finish(&mut self) {
        for s in self.slots.iter_mut().filter_map(|s| s.stream.as_mut()) {
            s.state = StreamState::Ended;
        }
        for i in 0..self.slots.len() {
            self.refresh(i);
        }
    }

    /// Changes a stream's period (lookahead) at run time.
    ///
    /// # Errors
    /// [`AlignerError::NegativePeriod`], [`AlignerError::UnknownStream`].
    pub fn set_period(&mut self, id: StreamId, period: TimeDelta) -> Result<(), AlignerError> {
        check_period(period)?;
        self.stream_mut(id)?.config.period = period;
        self.refresh(id.slot());
        Ok(())
    }

    /// Changes a stream's priority at run time.
    ///
    /// # Errors
    /// [`AlignerError::UnknownStream`].
    pub fn set_priority(&mut self, id: StreamId, priority: i64) -> Result<(), AlignerError> {
        self.stream_mut(id)?.config.priority = priority;
        self.refresh(id.slot());
        Ok(())
    }

    /// Changes the timeout at run time (a negative value is taken as zero).
    /// Queues are not resized.
    pub fn set_timeout(&mut self, timeout: TimeDelta) {
        self.timeout = clamp_timeout(timeout);
        self.step = step_nanos(self.timeout);
    }

    /// The timeout in force.
    pub fn timeout(&self) -> TimeDelta {
        self.timeout
    }

    /// Pushes a sample without an arrival time (replay: only the
    /// sample-time rule applies to it).
    #[inline]
    pub fn push(&mut self, id: StreamId, stamp: Timestamp, value: T) -> Push<T> {
        self.push_inner(id, stamp, value, None)
    }

    /// Pushes a sample that arrived at `arrival` (live mode): besides the
    /// sample-time rule, it is released at the latest once
    /// [`handle_timeout`](Self::handle_timeout) reaches `arrival + timeout`.
    /// Arrivals are taken as non-decreasing per stream (an earlier one is
    /// raised to the stream's previous arrival).
    pub fn push_arrived(
        &mut self,
        id: StreamId,
        stamp: Timestamp,
        value: T,
        arrival: Timestamp,
    ) -> Push<T> {
        self.push_inner(id, stamp, value, Some(arrival))
    }

    #[inline(always)]
    fn push_inner(
        &mut self,
        id: StreamId,
        stamp: Timestamp,
        value: T,
        arrival: Option<Timestamp>,
    ) -> Push<T> {
        let slot = id.slot();
        // The threshold is at least 1 s: a step needs `stamp < cur` (or
        // `stamp > latest`), one comparison that settles most pushes.
        if self.detect_steps
            && let Some(cur) = self.current
            && stamp < cur
            && cur.nanos_since_wide(stamp) > self.step
            && self
                .slots
                .get(slot)
                .is_some_and(|s| s.generation == id.generation && s.stream.is_some())
        {
            self.step_back();
        }
        if let Some(latest) = self.latest
            && stamp > latest
            && stamp.nanos_since_wide(latest) > self.step
        {
            self.forward_jumps = self.forward_jumps.saturating_add(1);
        }
        let current = self.current;
        let (Some(stream), Some(key)) = (
            self.slots
                .get_mut(slot)
                .filter(|s| s.generation == id.generation)
                .and_then(|s| s.stream.as_mut()),
            self.keys.get_mut(slot),
        ) else {
            self.rejected_unknown = self.rejected_unknown.saturating_add(1);
            return Push::Dropped(DropReason::UnknownStream, Stamped::new(stamp, value));
        };
        if stream.state == StreamState::Disabled {
            // Re-enabled: an empty stream may hold the others back again.
            stream.state = StreamState::Active;
            *key = key_of(stream);
        }
        let c = &mut stream.counters;
        c.received = c.received.saturating_add(1);
        stream.last_sample_time = Some(stamp);
        if current.is_some_and(|cur| stamp < cur) {
            c.dropped_late = c.dropped_late.saturating_add(1);
            return Push::Dropped(DropReason::Late, Stamped::new(stamp, value));
        }
        if self.latest.is_none_or(|l| stamp > l) {
            self.latest = Some(stamp);
        }
        if stream.last_accepted.is_some_and(|l| stamp < l) {
            c.dropped_backward = c.dropped_backward.saturating_add(1);
            return Push::Dropped(DropReason::Backward, Stamped::new(stamp, value));
        }
        stream.last_accepted = Some(stamp);
        let arrival = match (arrival, stream.last_arrival) {
            (Some(a), Some(prev)) => Some(a.max(prev)),
            (a, _) => a,
        };
        if arrival.is_some() {
            stream.last_arrival = arrival;
        }
        let evicted = if stream.queue.len() >= stream.config.capacity {
            if stream.old > 0 {
                stream.old -= 1;
                self.flushing = self.flushing.saturating_sub(1);
            }
            stream.queue.pop_front()
        } else {
            None
        };
        let was_empty = stream.queue.is_empty();
        stream.queue.push_back(Entry {
            stamp,
            arrival,
            value,
        });
        // The key follows the queue's head: it changes only when the head
        // does (the queue was empty, or its head was evicted).
        match evicted {
            Some(e) => {
                *key = key_of(stream);
                stream.counters.dropped_overflow =
                    stream.counters.dropped_overflow.saturating_add(1);
                Push::Evicted(Stamped::new(e.stamp, e.value))
            }
            None => {
                self.queued += 1;
                if was_empty {
                    *key = Key {
                        head: order(stamp, stream.config.priority),
                        block: Timestamp::MAX,
                    };
                }
                Push::Queued
            }
        }
    }

    /// Recomputes `keys[slot]` from `slots[slot]`.
    fn refresh(&mut self, slot: usize) {
        let key = self
            .slots
            .get(slot)
            .and_then(|s| s.stream.as_ref())
            .map_or(IDLE, key_of);
        if let Some(k) = self.keys.get_mut(slot) {
            *k = key;
        }
    }

    /// One pass over the stream keys: the slot of the earliest head
    /// (ties: lower priority, then lower slot) with its stamp, and the
    /// earliest blocking expectation (`Timestamp::MAX`: none).
    #[inline]
    fn scan(&self) -> (Option<(usize, Timestamp)>, Timestamp) {
        let mut best = NO_HEAD;
        let mut slot = usize::MAX;
        let mut blocker = Timestamp::MAX;
        for (i, k) in self.keys.iter().enumerate() {
            // Which stream is earliest changes from one release to the
            // next: a branch here is mispredicted about half the time.
            let earlier = k.head < best;
            best = std::hint::select_unpredictable(earlier, k.head, best);
            slot = std::hint::select_unpredictable(earlier, i, slot);
            blocker = blocker.min(k.block);
        }
        if slot != usize::MAX {
            return (Some((slot, order_stamp(best))), blocker);
        }
        // Nothing below `NO_HEAD`: nothing queued, or only heads at
        // `(Timestamp::MAX, i64::MAX)` (the first such slot goes first).
        let head = (self.queued > 0)
            .then(|| {
                self.slots
                    .iter()
                    .position(|s| s.stream.as_ref().is_some_and(|s| !s.queue.is_empty()))
            })
            .flatten()
            .map(|i| (i, Timestamp::MAX));
        (head, blocker)
    }

    /// The earliest arrival among queued samples that carry one (each
    /// stream's head has its earliest: arrivals are non-decreasing).
    fn earliest_arrival(&self) -> Option<Timestamp> {
        self.slots
            .iter()
            .filter_map(|s| s.stream.as_ref()?.queue.front()?.arrival)
            .min()
    }

    /// Whether some queued sample reached its live-mode bound.
    #[cold]
    fn overdue(&self) -> bool {
        let Some(now) = self.wall_now else {
            return false;
        };
        self.earliest_arrival()
            .is_some_and(|a| a.saturating_add(self.timeout) <= now)
    }

    /// Releases the next sample in timestamp order, if the rules allow it
    /// now. Call it until it returns `None` after every push, every
    /// `handle_timeout` and after `finish`.
    #[inline]
    pub fn poll_release(&mut self) -> Option<Release<T>> {
        if self.flushing > 0
            && let Some(r) = self.release_old()
        {
            return Some(r);
        }
        let (head, blocker) = self.scan();
        let (slot, stamp) = head?;
        let blocked = blocker < stamp;
        if blocked && !self.sample_timeout_reached(stamp) && !self.overdue() {
            return None;
        }
        let (Some(slot_ref), Some(key)) = (self.slots.get_mut(slot), self.keys.get_mut(slot))
        else {
            return None;
        };
        let generation = slot_ref.generation;
        let stream = slot_ref.stream.as_mut()?;
        let entry = stream.queue.pop_front()?;
        let c = &mut stream.counters;
        c.released = c.released.saturating_add(1);
        self.current = Some(entry.stamp);
        *key = key_of(stream);
        self.queued = self.queued.saturating_sub(1);
        Some(Release {
            stream: StreamId { slot, generation },
            sample: Stamped::new(entry.stamp, entry.value),
        })
    }

    /// `latest − current ≥ timeout` (before the first release, `current` is
    /// the earliest queued stamp, `head`).
    fn sample_timeout_reached(&self, head: Timestamp) -> bool {
        let Some(latest) = self.latest else {
            return false;
        };
        let lag = latest.nanos_since_wide(self.current.unwrap_or(head));
        lag >= i128::from(self.timeout.as_nanos())
    }

    /// The next wall-clock instant at which a queued sample reaches its
    /// live-mode bound (`arrival + timeout`), if any sample carries an
    /// arrival time. Arm one timer for it.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.earliest_arrival()
            .map(|a| a.saturating_add(self.timeout))
    }

    /// The shell's timer fired (or time advanced) to `now`: every queued
    /// sample whose arrival is at least `timeout` before `now` becomes
    /// releasable, with everything ordered before it. Drain
    /// [`poll_release`](Self::poll_release) afterwards. Time going backwards
    /// is ignored.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.wall_now = Some(self.wall_now.map_or(now, |w| w.max(now)));
    }

    /// The stamp of the last released sample.
    pub fn current_time(&self) -> Option<Timestamp> {
        self.current
    }

    /// The newest accepted stamp.
    pub fn latest_time(&self) -> Option<Timestamp> {
        self.latest
    }

    /// Newest accepted stamp minus last released stamp, saturated.
    pub fn latency(&self) -> Option<TimeDelta> {
        let (latest, current) = (self.latest?, self.current?);
        let wide = latest.nanos_since_wide(current);
        Some(TimeDelta::from_nanos(
            i64::try_from(wide).unwrap_or(if wide < 0 { i64::MIN } else { i64::MAX }),
        ))
    }

    /// Samples queued over all streams.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Free places in the queue of stream `id` (0 for a removed stream):
    /// that many pushes to it in a row, with no release between them,
    /// evict nothing. A shell that takes in several samples of one input
    /// at once (replay) bounds its batch by this.
    #[inline]
    pub fn room(&self, id: StreamId) -> usize {
        match self.slots.get(id.slot()) {
            Some(Slot {
                generation,
                stream: Some(s),
            }) if *generation == id.generation => s.config.capacity.saturating_sub(s.queue.len()),
            _ => 0,
        }
    }

    /// Whether the sample-time timeout is reached now: the newest accepted
    /// stamp is at least the timeout after the last released one (`true`
    /// before the first release, when nothing bounds the lag yet). A shell
    /// that takes in several samples of one input at once (replay) ends
    /// its batch here, so that its batches never make the timeout rule
    /// release anything that one sample at a time would have waited for.
    #[inline]
    pub fn lag_reached(&self) -> bool {
        match (self.current, self.latest) {
            (Some(current), Some(latest)) => {
                latest.nanos_since_wide(current) >= i128::from(self.timeout.as_nanos())
            }
            _ => true,
        }
    }

    /// A snapshot of the counters (a serde value).
    pub fn status(&self) -> AlignerStatus {
        let streams = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, slot)| {
                let s = slot.stream.as_ref()?;
                Some(StreamStatus {
                    id: StreamId {
                        slot: i,
                        generation: slot.generation,
                    },
                    period: s.config.period,
                    capacity: s.config.capacity,
                    priority: s.config.priority,
                    state: s.state,
                    counters: s.counters,
                    queued: s.queue.len(),
                    last_sample_time: s.last_sample_time,
                    last_accepted_time: s.last_accepted,
                })
            })
            .collect();
        AlignerStatus {
            timeout: self.timeout,
            latency: self.latency(),
            current_time: self.current,
            latest_time: self.latest,
            dropped_removed: self.dropped_removed,
            rejected_unknown: self.rejected_unknown,
            clock_steps_backward: self.clock_steps_backward,
            forward_jumps: self.forward_jumps,
            streams,
        }
    }
}

/// What `stream` contributes to the release decision now.
#[inline]
fn key_of<T>(s: &Stream<T>) -> Key {
    match s.queue.front() {
        Some(front) => Key {
            head: order(front.stamp, s.config.priority),
            block: Timestamp::MAX,
        },
        None if s.state == StreamState::Active => Key {
            head: NO_HEAD,
            block: s.expected(),
        },
        None => IDLE,
    }
}

/// The clock-step threshold for `timeout`: `max(2 · timeout, 1 s)`.
fn step_threshold(timeout: TimeDelta) -> TimeDelta {
    TimeDelta::from_nanos(timeout.as_nanos().saturating_mul(2)).max(MIN_STEP)
}

/// [`step_threshold`] in nanoseconds, as the push compares it.
fn step_nanos(timeout: TimeDelta) -> i128 {
    i128::from(step_threshold(timeout).as_nanos())
}

fn clamp_timeout(t: TimeDelta) -> TimeDelta {
    t.max(TimeDelta::ZERO)
}

fn check_period(period: TimeDelta) -> Result<(), AlignerError> {
    if period.is_negative() {
        Err(AlignerError::NegativePeriod(period))
    } else {
        Ok(())
    }
}
