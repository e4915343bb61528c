//! **syncline** makes time right in robot sensor pipelines, on tokio.
//!
//! This crate is the async shell around the sans-IO cores of
//! [`syncline_core`] (re-exported here as [`core`]): stream adapters and
//! combinators, the clocks that feed them time, timers and channels.
//!
//! ```
//! use syncline::prelude::*;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let clock = SystemClock;
//! let now = clock.now();
//! assert!(now > Timestamp::EPOCH);
//! # }
//! ```
#![forbid(unsafe_code)]

pub mod aligner;
pub mod clock;
mod ext;
pub mod interpolated;
pub mod source;
pub mod sync;
pub mod timer;
pub mod timestamped;

pub use ext::SynclineExt;
pub use syncline_core as core;
pub use syncline_core::estimator::EstimatorConfig;
pub use syncline_core::timer::Grid;
pub use syncline_core::{HasStamp, Stamped, TimeDelta, TimeError, Timestamp};

/// The names most programs need, in one `use syncline::prelude::*;`.
pub mod prelude {
    pub use crate::SynclineExt;
    pub use crate::clock::{Clock, SimClock, SystemClock, TokioClock};
    pub use crate::source::{Arrived, Source, source};
    pub use syncline_core::estimator::{Estimator, EstimatorConfig};
    pub use syncline_core::{HasStamp, Stamped, TimeDelta, Timestamp};
}
