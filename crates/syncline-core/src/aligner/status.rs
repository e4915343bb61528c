//! The aligner's status: a serde value, cheap to take at any time.

use serde::Serialize;

use super::stream::{StreamCounters, StreamId, StreamState};
use crate::time::{TimeDelta, Timestamp};

/// A snapshot of the [`Aligner`](super::Aligner) (see
/// [`Aligner::status`](super::Aligner::status)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AlignerStatus {
    /// The maximum latency, in sample time (and, in live mode, after arrival).
    pub timeout: TimeDelta,
    /// Newest accepted stamp minus last released stamp (`None` before
    /// anything was released; saturated at the `TimeDelta` range).
    pub latency: Option<TimeDelta>,
    /// The stamp of the last released sample.
    pub current_time: Option<Timestamp>,
    /// The newest accepted stamp.
    pub latest_time: Option<Timestamp>,
    /// Samples handed back by `remove_stream` (queued when their stream was
    /// removed).
    pub dropped_removed: u64,
    /// Pushes to a removed or unknown stream (handed back, never queued).
    pub rejected_unknown: u64,
    /// Backward clock steps detected (a push older than the last released
    /// sample by more than the step threshold).
    pub clock_steps_backward: u64,
    /// Forward jumps detected (a push newer than the newest accepted stamp
    /// by more than the step threshold).
    pub forward_jumps: u64,
    /// The registered streams, by slot.
    pub streams: Vec<StreamStatus>,
}

/// One stream's part of [`AlignerStatus`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StreamStatus {
    /// Its handle.
    pub id: StreamId,
    /// Its lookahead.
    pub period: TimeDelta,
    /// Its queue capacity.
    pub capacity: usize,
    /// Its priority.
    pub priority: i64,
    /// Whether it holds the others back.
    pub state: StreamState,
    /// Received / released / dropped counters.
    #[serde(flatten)]
    pub counters: StreamCounters,
    /// Samples queued now.
    pub queued: usize,
    /// The stamp of its last push (even a dropped one).
    pub last_sample_time: Option<Timestamp>,
    /// The stamp of its last accepted push.
    pub last_accepted_time: Option<Timestamp>,
}
