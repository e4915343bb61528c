//! Tick: periodic timers aligned on real time, and simulated time driven by
//! a central coordinator, on top of the sans-IO cores of
//! [`syncline_core::timer`].

mod precise;

pub use precise::{DEFAULT_SPIN, PreciseTicker, lateness, system_now};
