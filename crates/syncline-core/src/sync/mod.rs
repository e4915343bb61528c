//! Synchronizers: form sets of messages across topics that belong to the
//! same moment, following ROS `message_filters` exactly
//! ([`ApproximateTime`], [`ExactTime`], [`LatestTime`]) and going beyond it
//! where its users ask: every message that leaves without being in a set is
//! reported with a [`DropReason`], an optional stall timeout keeps a silent
//! topic from blocking the others, and a [`SyncStatus`] counts everything.
//!
//! All three policies share one shape (sans-IO, no clock, no I/O):
//!
//! ```
//! use syncline_core::sync::{ApproximateConfig, ApproximateTime};
//! use syncline_core::Timestamp;
//!
//! let mut sync = ApproximateTime::new(ApproximateConfig::new(2)).unwrap();
//! let t = Timestamp::from_nanos;
//! sync.push(0, t(0), "a0").unwrap();
//! sync.push(1, t(0), "b0").unwrap();          // an exact match is emitted at once
//! let set = sync.poll_set().unwrap();
//! assert_eq!(set.get(0).unwrap().value, "a0");
//! assert_eq!(set.get(1).unwrap().value, "b0");
//! let _ = set;
//! assert!(sync.poll_set().is_none());
//! assert_eq!(sync.status().sets, 1);
//! ```
//!
//! Sets are lent out of a buffer that the synchronizer reuses, so a steady
//! stream of messages allocates nothing.

/// A policy's config checked for any number of topics: `Config::check`,
/// the `Settings` type it returns and that type's accessors. The topic
/// count its per-topic settings need is the config's own `needed_topics`.
macro_rules! checked_settings {
    ($config:ident, $settings:ident, $policy:ident, $adapter:literal) => {
        impl $config {
            #[doc = concat!(
                "Checks every setting for any number of topics (the count, if one\n",
                "was given, is not used) and returns them as [`", stringify!($settings), "`], from\n",
                "which a synchronizer of any number of inputs is made without an\n",
                "error ([`", stringify!($policy), "::with_settings`]; the async adapters\n",
                "`.", $adapter, "(settings)` take them).\n\n",
                "# Errors\n",
                "The [`ConfigError`] of the first bad setting, as [`validate`](Self::validate)."
            )]
            pub fn check(self) -> Result<$settings, ConfigError> {
                let mut all = self.clone();
                all.topics = all.needed_topics().max(1);
                all.validate()?;
                Ok($settings { config: self })
            }
        }

        #[doc = concat!(
            "Settings of [`", stringify!($policy), "`] checked for any number of topics\n",
            "([`", stringify!($config), "::check`]); the default is [`", stringify!($config),
            "::default`]'s, always valid."
        )]
        #[derive(Debug, Clone, PartialEq, Default)]
        pub struct $settings {
            config: $config,
        }

        impl $settings {
            /// The settings.
            pub fn config(&self) -> &$config {
                &self.config
            }

            /// The topic count that its per-topic settings need (0 without any).
            pub fn needed_topics(&self) -> usize {
                self.config.needed_topics()
            }

            /// Queue a report for every drop (they are counted either way).
            pub fn report_drops(mut self, on: bool) -> Self {
                self.config.report_drops = on;
                self
            }
        }
    };
}

mod approximate;
mod exact;
mod latest;
mod outbox;

use serde::{Deserialize, Serialize};

pub use approximate::{
    ApproximateConfig, ApproximateSettings, ApproximateTime, StallAction, StallConfig,
};
pub use exact::{ExactConfig, ExactSettings, ExactTime};
pub use latest::{LatestConfig, LatestSettings, LatestTime, RateConfig};
pub use outbox::{Dropped, Output, Set};

/// Why a message left a synchronizer without being part of a set (the
/// reasons of `syncline sync --report-drops`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DropReason {
    /// Its topic's queue was full: the oldest held message of that topic
    /// made room.
    Overflow,
    /// Passed over: a set was formed (or chosen) without it and it can no
    /// longer be in one. ApproximateTime also uses it for a head deleted
    /// because the would-be pivot topic had just overflowed.
    Skipped,
    /// Rejected by the maximum interval of ApproximateTime.
    Interval,
    /// A later message of the same topic took its place (ExactTime: the same
    /// stamp; LatestTime: a newer message before it was ever in a set).
    Replaced,
    /// Removed by the stall timeout.
    Stalled,
    /// Still held when the input ended ([`ApproximateTime::finish`] and
    /// friends).
    End,
}

impl DropReason {
    /// The reason as `syncline sync` prints it (`"overflow"`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Skipped => "skipped",
            DropReason::Interval => "interval",
            DropReason::Replaced => "replaced",
            DropReason::Stalled => "stalled",
            DropReason::End => "end",
        }
    }
}

/// Dropped-message counts by reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct DropCounts {
    /// [`DropReason::Overflow`].
    pub overflow: u64,
    /// [`DropReason::Skipped`].
    pub skipped: u64,
    /// [`DropReason::Interval`].
    pub interval: u64,
    /// [`DropReason::Replaced`].
    pub replaced: u64,
    /// [`DropReason::Stalled`].
    pub stalled: u64,
    /// [`DropReason::End`].
    pub end: u64,
}

impl DropCounts {
    /// Counts one drop.
    pub fn add(&mut self, reason: DropReason) {
        let c = match reason {
            DropReason::Overflow => &mut self.overflow,
            DropReason::Skipped => &mut self.skipped,
            DropReason::Interval => &mut self.interval,
            DropReason::Replaced => &mut self.replaced,
            DropReason::Stalled => &mut self.stalled,
            DropReason::End => &mut self.end,
        };
        *c = c.saturating_add(1);
    }

    /// All drops together.
    pub fn total(&self) -> u64 {
        [
            self.overflow,
            self.skipped,
            self.interval,
            self.replaced,
            self.stalled,
            self.end,
        ]
        .iter()
        .fold(0u64, |a, &b| a.saturating_add(b))
    }
}

/// A synchronizer's counters: cheap to take, serialisable, always available.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SyncStatus {
    /// `"approximate"`, `"exact"` or `"latest"`.
    pub policy: String,
    /// Messages accepted by `push`.
    pub pushed: u64,
    /// Sets emitted (complete and partial).
    pub sets: u64,
    /// Of those, sets with a missing member (stall timeout, partial mode).
    pub partial_sets: u64,
    /// Messages dropped, by reason.
    pub dropped: DropCounts,
    /// Messages currently held, per topic.
    pub held: Vec<usize>,
    /// Messages that arrived with a stamp older than the previous message of
    /// their topic (kept, as ROS does; the set guarantees then no longer hold).
    pub out_of_order: u64,
    /// Topics currently considered stalled by the stall timeout.
    pub stalled_topics: Vec<usize>,
    /// The topics' names, in topic order, where the driver gave them (the
    /// async synchronizers do; the sans-IO cores leave it empty).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topics: Vec<String>,
}

/// Errors of synchronizer configuration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// No topics were configured.
    #[error("a synchronizer needs at least one topic")]
    NoTopics,
    /// ApproximateTime needs room for at least one message per topic.
    #[error("queue size must be at least 1")]
    ZeroQueue,
    /// The age penalty must be finite and non-negative.
    #[error("age penalty must be finite and >= 0, got {0}")]
    AgePenalty(f64),
    /// A duration that must not be negative was.
    #[error("{what} must be >= 0")]
    Negative {
        /// Which setting.
        what: &'static str,
    },
    /// A per-topic setting names a topic that does not exist.
    #[error("topic {topic} is out of range (synchronizer has {topics} topics)")]
    TopicOutOfRange {
        /// The topic index given.
        topic: usize,
        /// The number of topics.
        topics: usize,
    },
    /// A rate setting of LatestTime is not a finite number in its range.
    #[error("invalid rate setting: {0}")]
    Rate(&'static str),
}

/// Errors of `push`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    /// The message's topic index is not configured; the message was not
    /// taken.
    #[error("unknown topic {topic} (synchronizer has {topics} topics)")]
    UnknownTopic {
        /// The topic index given.
        topic: usize,
        /// The number of topics.
        topics: usize,
    },
}

/// The three policies behind one interface, for drivers that are generic
/// over the policy (the async shell, the CLI). `receipt` is the receipt
/// time; only [`LatestTime`] uses it.
pub trait SyncPolicy<M> {
    /// `push` of the policy.
    fn push_at(
        &mut self,
        topic: usize,
        stamp: crate::Timestamp,
        msg: M,
        receipt: crate::Timestamp,
    ) -> Result<(), SyncError>;
    /// `poll` of the policy: sets and drop reports in emission order.
    fn poll_output(&mut self) -> Option<Output<'_, M>>;
    /// `finish` of the policy: everything held is dropped as `end`.
    fn finish_input(&mut self);
    /// `status` of the policy.
    fn sync_status(&self) -> SyncStatus;
    /// Messages of `topic` currently held (may still become part of a set).
    fn held(&self, topic: usize) -> usize;
    /// `poll_timeout` of the policy: the stamp-domain instant at which its
    /// timeout (ApproximateTime's stall timeout) next acts, if any.
    fn timeout_at(&self) -> Option<crate::Timestamp> {
        None
    }
    /// `handle_timeout` of the policy: the stamp-domain clock reads `now`.
    fn on_timeout(&mut self, now: crate::Timestamp) {
        let _ = now;
    }
}

macro_rules! policy_impl {
    ($ty:ident, $($bound:path)?, |$s:ident, $t:ident, $st:ident, $m:ident, $r:ident| $push:expr
     $(, { $($extra:item)* })?) => {
        impl<M $(: $bound)?> SyncPolicy<M> for $ty<M> {
            fn push_at(
                &mut self,
                $t: usize,
                $st: crate::Timestamp,
                $m: M,
                $r: crate::Timestamp,
            ) -> Result<(), SyncError> {
                let $s = self;
                $push
            }
            fn poll_output(&mut self) -> Option<Output<'_, M>> {
                self.poll()
            }
            fn finish_input(&mut self) {
                self.finish()
            }
            fn sync_status(&self) -> SyncStatus {
                self.status()
            }
            fn held(&self, topic: usize) -> usize {
                self.held_of(topic)
            }
            $($($extra)*)?
        }
    };
}

policy_impl!(ApproximateTime, , |s, t, st, m, _r| s.push(t, st, m), {
    fn timeout_at(&self) -> Option<crate::Timestamp> {
        self.poll_timeout()
    }
    fn on_timeout(&mut self, now: crate::Timestamp) {
        self.handle_timeout(now)
    }
});
policy_impl!(ExactTime, , |s, t, st, m, _r| s.push(t, st, m));
policy_impl!(LatestTime, Clone, |s, t, st, m, r| s.push(t, st, m, r));

fn check_topic(topic: usize, topics: usize) -> Result<(), SyncError> {
    if topic < topics {
        Ok(())
    } else {
        Err(SyncError::UnknownTopic { topic, topics })
    }
}

#[cfg(test)]
mod proptests;
