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
    ClockId, ClockPolicy, OnPublisherLost, Received, StampedPublisher, StampedSubscriber,
    StreamStats, SubscriberConfig,
};
pub use timing::{LinkStats, TimingConfig, ZenohCoordinator, ZenohParticipant, check_name};

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
