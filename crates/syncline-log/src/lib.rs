//! Recordings for syncline: MCAP files with ROS 2 messages, read front to
//! back in memory bounded by the largest chunk, with each message's stamp
//! taken from its `std_msgs/Header` where the schema starts with one (else
//! its `log_time`), and the timing analysis that `syncline analyze` prints.
//!
//! * [`McapReader`]: streaming MCAP reading (chunked or not, zstd, lz4 or
//!   uncompressed, indexed or not); damage is a [`LogError`] naming the
//!   file and the byte offset, never a panic.
//! * [`cdr`]: the header stamp from CDR bytes (both byte orders, XCDR1 and
//!   XCDR2) and whether a `ros2msg` / `ros2idl` schema starts with a header.
//! * [`analysis`]: per-topic rate, jitter, gaps and losses, order and
//!   latency, in bounded memory.
//! * [`replay`]: a recording as a `Stream` of stamped messages, as fast as
//!   possible or at recorded speed on any clock.
//! * [`record`]: a live pipeline's messages and statuses to MCAP on a
//!   writer thread fed by a bounded channel, what could not be written
//!   counted.
#![forbid(unsafe_code)]

pub mod analysis;
pub mod cdr;
mod error;
mod mcap_reader;
pub mod quantiles;
pub mod record;
pub mod replay;

pub use analysis::{Timing, TopicTiming};
pub use error::LogError;
pub use mcap_reader::{
    ChannelInfo, DEFAULT_RECORD_LIMIT, MCAP_MAGIC, McapReader, Message, StampSource,
    looks_like_mcap,
};

/// The code blocks of `docs/inspect.md`, compiled as doctests so that the
/// guide cannot rot.
#[doc = include_str!("../../../docs/inspect.md")]
#[cfg(doctest)]
pub struct InspectDoctests;
