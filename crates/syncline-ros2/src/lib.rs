//! The ROS 2 wire format without ROS, as `rmw_zenoh` speaks it: data key
//! expressions and liveliness tokens ([`names`]), the 33-byte per-sample
//! attachment ([`attachment`]), CDR payloads and their header stamps
//! ([`cdr`]), and message definitions with their RIHS01 type hashes and
//! MCAP schemas ([`msg`]), and serde types for the shipped messages
//! ([`types`]).
//!
//! Everything here is pure: no I/O, no zenoh. `syncline-zenoh` sends and
//! receives these bytes; `syncline-log` reads and writes them in MCAP
//! recordings.
//!
//! ```
//! use syncline_ros2::msg::MessageRegistry;
//! use syncline_ros2::names::{DataKey, HashChunk, Topic};
//!
//! let registry = MessageRegistry::shipped();
//! let key = DataKey {
//!     domain: 0,
//!     topic: Topic::parse("/robot1/imu")?,
//!     type_name: registry.get("sensor_msgs/msg/Imu").unwrap().name().clone(),
//!     hash: HashChunk::Rihs01(registry.type_hash("sensor_msgs/msg/Imu")?),
//! };
//! assert_eq!(
//!     key.to_string(),
//!     "0/robot1/imu/sensor_msgs::msg::dds_::Imu_/\
//!      RIHS01_7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b"
//! );
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]

pub mod attachment;
pub mod cdr;
mod defs;
pub mod msg;
pub mod names;
pub mod seq;
pub mod types;

pub use attachment::{Attachment, Gid};
pub use cdr::{CdrReader, CdrWriter, HeaderStamp, header_stamp, set_header_stamp};
pub use msg::{MessageDefinition, MessageRegistry, TypeHash, TypeName};
pub use names::{DataKey, EntityKind, LivelinessToken, Qos, Topic};
pub use seq::{LossTracker, SeqVerdict};
