//! Sans-IO cores of **syncline**: plain state machines that make time right in
//! robot sensor pipelines.
//!
//! Nothing in this crate reads a clock, sleeps, spawns or does I/O. Every
//! instant comes in as a [`Timestamp`] argument, every output is polled, and
//! the next instant at which a core wants to be woken is asked for. The async
//! shell (crate `syncline`) drives these cores asynchronously; the `syncline` CLI
//! drives the very same cores on recordings, so both give the same outputs on
//! the same inputs.
//!
//! ```
//! use syncline_core::{Stamped, TimeDelta, Timestamp};
//!
//! let t = Timestamp::from_nanos(1_000_000_000);
//! let later = t.checked_add(TimeDelta::from_millis(10)).unwrap();
//! assert_eq!(later.checked_since(t).unwrap(), TimeDelta::from_millis(10));
//!
//! let sample = Stamped::new(later, "imu");
//! assert_eq!(sample.stamp, later);
//! ```
#![forbid(unsafe_code)]

pub mod aligner;
pub mod associate;
pub mod estimator;
pub mod interp;
pub mod stamped;
pub mod sync;
pub mod time;
pub mod timer;

pub use stamped::{HasStamp, Stamped};
pub use time::{TimeDelta, TimeError, Timestamp};
