//! syncline across processes and hosts, over zenoh.
#![forbid(unsafe_code)]

pub mod ros2;
