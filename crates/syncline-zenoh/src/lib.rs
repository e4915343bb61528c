//! syncline across processes and hosts, over [zenoh](https://zenoh.io).
//!
//! * [`ZenohCoordinator`] and [`ZenohParticipant`]: the timing transport
//!   ([`syncline::timer::CoordinatorTransport`] /
//!   [`syncline::timer::ParticipantTransport`]), so the coordinator and
//!   timers of [`syncline::timer`] run unchanged across processes.
//! * [`NetConfig`]: peer to peer on explicit endpoints (or a zenoh
//!   configuration file, [`open_file`]).
//! * [`StampedPublisher`] and [`StampedSubscriber`]: stamped streams
//!   between processes, stamp, sequence number and clock domain intact.
//!
//! * [`ros2`]: ROS 2 topics as stamped streams over rmw_zenoh's wire
//!   format, without a ROS installation.
//!
//! Zenoh needs a multi-thread tokio runtime.
#![forbid(unsafe_code)]

mod config;
pub mod ros2;
pub mod stamped;
mod timing;
pub mod wire;

pub use config::{NetConfig, open, open_file};
pub use stamped::{
    ClockId, ClockPolicy, Finished, OnPublisherLost, PublisherOptions, Received, StampedPublisher,
    StampedSubscriber, StreamStats, SubscriberConfig,
};
pub use timing::{LinkStats, TimingConfig, ZenohCoordinator, ZenohParticipant, check_name};

/// A value for zenoh's `ZENOH_RUNTIME` environment variable that runs all
/// of zenoh's tasks (accepting, receiving, sending, the session's own) on
/// zenoh's one `net` thread instead of six.
///
/// Zenoh reads the variable once, when a process first uses it, so it must
/// be in the process's environment at launch (`ZENOH_RUNTIME=... prog`);
/// `syncline coordinator` and `syncline participant` start themselves
/// again with it when it is unset. With it, a message received or sent
/// wakes one zenoh thread instead of two or three (the socket's reactor and
/// the receiving or sending task then live on the same thread): fewer
/// context switches and less CPU per message (docs/distributed.md).
///
/// Not for a process whose zenoh callbacks may block: a
/// [`StampedSubscriber`] whose queue is full blocks zenoh's receiving
/// thread, which would then also stop the sending and the keep-alives of
/// every link of that process.
pub const ONE_THREAD_RUNTIME: &str =
    "(rx: (handover: net), acc: (handover: net), tx: (handover: net), app: (handover: net))";

/// The tokio runtime of zenoh's application tasks (zenoh's `app`
/// runtime; under [`ONE_THREAD_RUNTIME`], zenoh's one `net` thread).
///
/// A task spawned here runs on the thread that receives zenoh's messages
/// and runs its callbacks: a message handed from a callback to the task,
/// and a put from the task to zenoh's sending task, then wake a task on
/// the same thread instead of another thread (no futex wake, no context
/// switch). `syncline coordinator` and `syncline participant` run there.
/// The task must not block for long: while it runs, zenoh's receiving,
/// sending and keep-alives of this process wait. Nor may it put bursts
/// under [`ONE_THREAD_RUNTIME`]: a put that finds its link's queue (two
/// batches) full waits for zenoh's sending task, which only this thread
/// runs (zenoh closes the link after five seconds); single puts made one
/// after another without a wait count as a burst, since each holds a batch
/// until this thread writes it. The timing transport sends every frame
/// after the first since its task last waited, and its re-sends, from
/// `block_in_place`; publish a
/// [`StampedPublisher`] from a thread of your own. A [`StampedSubscriber`]
/// consumed here counts what it cannot queue ([`StreamStats::overflow`]).
///
/// ```no_run
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let rt = syncline_zenoh::zenoh_runtime();
/// let session = rt.block_on(rt.spawn(async {
///     syncline_zenoh::NetConfig::new().listen("tcp/127.0.0.1:0").open().await
/// }))??;
/// # drop(session);
/// # Ok(()) }
/// ```
pub fn zenoh_runtime() -> tokio::runtime::Handle {
    (*zenoh_runtime::ZRuntime::Application).clone()
}

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Zenoh refused (opening a session, declaring a key).
    #[error("zenoh: {0}")]
    Zenoh(String),
    /// A bad configuration.
    #[error("zenoh configuration: {0}")]
    Config(String),
    /// A value could not be serialised.
    #[error("encoding a sample: {0}")]
    Encode(String),
    /// A participant name that is not one key chunk of letters, digits,
    /// `-`, `_` or `.`.
    #[error("invalid participant name {0:?} (letters, digits, '-', '_', '.')")]
    Name(String),
}

impl Error {
    fn zenoh(e: zenoh::Error) -> Self {
        Error::Zenoh(e.to_string())
    }
}

/// The code blocks of `docs/ros2.md`, compiled as doctests so that the
/// guide cannot rot.
#[doc = include_str!("../../../docs/ros2.md")]
#[cfg(doctest)]
pub struct Ros2GuideDoctests;

/// The code blocks of `docs/distributed.md`, compiled as doctests.
#[doc = include_str!("../../../docs/distributed.md")]
#[cfg(doctest)]
pub struct DistributedGuideDoctests;
