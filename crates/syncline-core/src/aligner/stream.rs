//! Per-stream configuration, identity and state of the [`Aligner`](super::Aligner).

use std::collections::VecDeque;

use serde::Serialize;

use crate::time::{TimeDelta, Timestamp};

/// How a stream is registered: its period (lookahead), queue capacity and
/// priority.
///
/// * `period` (`>= 0`): the stream promises that its next sample is not
///   earlier than its last one plus `period`. A period of zero still makes an
///   empty stream hold back every sample later than its last one (Rock's
///   rule): disable or end a stream that should not be waited for.
/// * `capacity` (`>= 1`, default 64): the queue length. A push into a full
///   queue evicts the stream's oldest queued sample and hands it back.
/// * `priority` (default 0): lower values are released first on equal
///   timestamps; equal priorities go by registration slot.
///
/// ```
/// use syncline_core::aligner::StreamConfig;
/// use syncline_core::TimeDelta;
///
/// let imu = StreamConfig::new(TimeDelta::from_millis(10)).capacity(32).priority(-1);
/// assert_eq!(imu.get_capacity(), 32);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamConfig {
    pub(super) period: TimeDelta,
    pub(super) capacity: usize,
    pub(super) priority: i64,
}

impl StreamConfig {
    /// The default queue capacity.
    pub const DEFAULT_CAPACITY: usize = 64;

    /// A stream with lookahead `period`, capacity 64 and priority 0.
    pub const fn new(period: TimeDelta) -> Self {
        StreamConfig {
            period,
            capacity: Self::DEFAULT_CAPACITY,
            priority: 0,
        }
    }

    /// Sets the queue capacity (must be at least 1).
    pub const fn capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// Sets the priority (lower first on equal timestamps).
    pub const fn priority(mut self, priority: i64) -> Self {
        self.priority = priority;
        self
    }

    /// The configured period.
    pub const fn get_period(&self) -> TimeDelta {
        self.period
    }

    /// The configured capacity.
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
    pub(super) slot: u32,
    pub(super) generation: u32,
}

impl StreamId {
    /// The registration slot (0-based); it also breaks ties of equal
    /// timestamps and priorities (lower slot first).
    #[inline]
    pub const fn slot(self) -> usize {
        self.slot as usize
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
