//! Per-stream configuration, identity and state of the [`Aligner`](super::Aligner).

use std::collections::VecDeque;

use serde::Serialize;

use super::AlignerError;
use crate::time::{TimeDelta, Timestamp};

/// How a stream is registered: its lookahead (called `period` in Rock),
/// queue capacity and priority.
///
/// * `period` (`>= 0`, checked when the config is built): the stream promises that its next sample is not
///   earlier than its last one plus `period`. A period of zero still makes an
///   empty stream hold back every sample later than its last one (Rock's
///   rule): disable or end a stream that should not be waited for.
/// * `capacity` (`>= 1`, checked when the config is built): the queue length. A push into a full queue evicts
///   the stream's oldest queued sample and hands it back. By default it is
///   derived when the stream is registered, from the aligner's timeout and
///   the lookahead: `max(64, 2 · ceil(timeout / lookahead))`, at most
///   65,536 (64 for a lookahead of 0): room for everything the stream can
///   deliver while the aligner holds it back for the timeout, twice over
///   (a lookahead of half the period is common).
/// * `priority` (default 0): lower values are released first on equal
///   timestamps; equal priorities go by registration slot.
///
/// ```
/// use syncline_core::aligner::StreamConfig;
/// use syncline_core::TimeDelta;
///
/// let imu = StreamConfig::new(TimeDelta::from_millis(10))?.capacity(32)?.priority(-1);
/// assert_eq!(imu.get_capacity(), 32);
/// // Every `StreamConfig` is valid: bad values are refused when it is built.
/// assert!(StreamConfig::new(TimeDelta::from_millis(-1)).is_err());
/// assert!(imu.capacity(0).is_err());
/// # Ok::<(), syncline_core::aligner::AlignerError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamConfig {
    pub(super) period: TimeDelta,
    pub(super) capacity: usize,
    /// Whether `capacity` was set (else it is derived at registration).
    pub(super) capacity_set: bool,
    pub(super) priority: i64,
}

impl StreamConfig {
    /// The smallest derived queue capacity (and the capacity of a stream
    /// with a lookahead of 0).
    pub const DEFAULT_CAPACITY: usize = 64;

    /// The largest derived queue capacity.
    pub const MAX_DERIVED_CAPACITY: usize = 1 << 16;

    /// A stream with lookahead `period`, priority 0, and a capacity
    /// derived from the timeout at registration.
    ///
    /// # Errors
    /// [`AlignerError::NegativePeriod`] for a negative `period`: every
    /// `StreamConfig` is valid, so registering one cannot fail on it.
    pub const fn new(period: TimeDelta) -> Result<Self, AlignerError> {
        if period.is_negative() {
            return Err(AlignerError::NegativePeriod(period));
        }
        Ok(StreamConfig {
            period,
            capacity: Self::DEFAULT_CAPACITY,
            capacity_set: false,
            priority: 0,
        })
    }

    /// The same as [`new`](Self::new): the stream promises that its next
    /// stamp is not earlier than its last one plus `lookahead`.
    ///
    /// # Errors
    /// [`AlignerError::NegativePeriod`] for a negative `lookahead`.
    pub const fn lookahead(lookahead: TimeDelta) -> Result<Self, AlignerError> {
        Self::new(lookahead)
    }

    /// Sets the queue capacity.
    ///
    /// # Errors
    /// [`AlignerError::ZeroCapacity`] for 0: a queue holds at least one
    /// sample.
    pub const fn capacity(mut self, capacity: usize) -> Result<Self, AlignerError> {
        if capacity == 0 {
            return Err(AlignerError::ZeroCapacity);
        }
        self.capacity = capacity;
        self.capacity_set = true;
        Ok(self)
    }

    /// The capacity this stream gets under `timeout`: the one set, or
    /// `max(64, 2 · ceil(timeout / lookahead))` capped at 65,536 (64 for a
    /// lookahead of 0).
    pub fn capacity_for(&self, timeout: TimeDelta) -> usize {
        if self.capacity_set {
            return self.capacity;
        }
        let (t, p) = (timeout.as_nanos().max(0), self.period.as_nanos());
        if p <= 0 {
            return Self::DEFAULT_CAPACITY;
        }
        let ratio = u64::try_from(t / p + i64::from(t % p != 0)).unwrap_or(u64::MAX);
        let derived = usize::try_from(ratio.saturating_mul(2)).unwrap_or(usize::MAX);
        derived.clamp(Self::DEFAULT_CAPACITY, Self::MAX_DERIVED_CAPACITY)
    }

    /// Sets the priority (lower first on equal timestamps).
    pub const fn priority(mut self, priority: i64) -> Self {
        self.priority = priority;
        self
    }

    /// The configured lookahead.
    pub const fn get_period(&self) -> TimeDelta {
        self.period
    }

    /// The configured lookahead (same as [`get_period`](Self::get_period)).
    pub const fn get_lookahead(&self) -> TimeDelta {
        self.period
    }

    /// The capacity set, or 64 when it will be derived at registration
    /// (see [`capacity_for`](Self::capacity_for)).
    pub const fn get_capacity(&self) -> usize {
        self.capacity
    }

    /// The configured priority.
    pub const fn get_priority(&self) -> i64 {
        self.priority
    }
}

/// The handle of a registered stream. A slot freed by
/// [`Aligner::remove_stream`](super::Aligner::remove_stream) may be reused,
/// but with a new generation, so an old handle never reaches a new stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct StreamId {
    pub(super) slot: usize,
    pub(super) generation: u32,
}

impl StreamId {
    /// The registration slot (0-based); it also breaks ties of equal
    /// timestamps and priorities (lower slot first).
    #[inline]
    pub const fn slot(self) -> usize {
        self.slot
    }
}

/// Whether a stream can hold the others back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StreamState {
    /// Waited for when empty (lookahead rule).
    Active,
    /// Not waited for; its queued samples are still released in order. A
    /// push makes it active again (as in Rock).
    Disabled,
    /// Has ended: never waited for again, even if a straggler is pushed.
    Ended,
}

/// Counters of one stream (part of [`AlignerStatus`](super::AlignerStatus)).
///
/// Conservation: `received = released + dropped_late + dropped_backward +
/// dropped_overflow + queued` while the stream is registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct StreamCounters {
    /// Samples pushed.
    pub received: u64,
    /// Samples released in order.
    pub released: u64,
    /// Dropped: older than the last released sample.
    pub dropped_late: u64,
    /// Dropped: older than the stream's previous accepted sample.
    pub dropped_backward: u64,
    /// Evicted from a full queue.
    pub dropped_overflow: u64,
}

/// A queued sample.
#[derive(Debug, Clone)]
pub(super) struct Entry<T> {
    pub(super) stamp: Timestamp,
    /// Arrival time for the live wall-clock bound (`None`: no bound).
    pub(super) arrival: Option<Timestamp>,
    pub(super) value: T,
}

/// Queues are allocated at registration up to this many entries; a larger
/// capacity grows on demand (amortised, once) up to the capacity, so a huge
/// capacity never allocates memory it does not use.
pub(super) const PREALLOCATED_MAX: usize = 1 << 16;

/// A registered stream.
#[derive(Debug, Clone)]
pub(super) struct Stream<T> {
    /// Queued samples from before a backward clock step, at the queue's
    /// front: released first, whatever their stamps.
    pub(super) old: usize,
    pub(super) queue: VecDeque<Entry<T>>,
    pub(super) config: StreamConfig,
    pub(super) state: StreamState,
    pub(super) last_accepted: Option<Timestamp>,
    pub(super) last_arrival: Option<Timestamp>,
    pub(super) last_sample_time: Option<Timestamp>,
    pub(super) counters: StreamCounters,
}

impl<T> Stream<T> {
    pub(super) fn new(config: StreamConfig) -> Self {
        Stream {
            old: 0,
            queue: VecDeque::with_capacity(config.capacity.min(PREALLOCATED_MAX)),
            config,
            state: StreamState::Active,
            last_accepted: None,
            last_arrival: None,
            last_sample_time: None,
            counters: StreamCounters::default(),
        }
    }

    /// When an empty stream expects its next sample: its last accepted
    /// stamp plus its period; a stream that never accepted one expects
    /// `EPOCH + period` (Rock's rule 3.6.5, made explicit).
    #[inline]
    pub(super) fn expected(&self) -> Timestamp {
        self.last_accepted
            .unwrap_or(Timestamp::EPOCH)
            .saturating_add(self.config.period)
    }
}
