//! Tick: periodic timers aligned on real time, and simulated time driven by
//! a central coordinator, on top of the sans-IO cores of
//! [`syncline_core::timer`].
//!
//! * [`PreciseTicker`]: the real-time wait (park, then spin on the system
//!   clock), never early.
//! * [`TimingCoordinator`]: the coordinator core as a tokio task, over a
//!   [`CoordinatorTransport`]; [`in_process_bus`] is the in-process one.
//! * [`run_simulated`]: a participant in simulated time; [`SimClock`] is
//!   the [`Clock`](crate::clock::Clock) it advances.

mod bus;
mod coarse;
mod driver;
mod participant;
mod periodic;
mod precise;
mod sim_clock;
mod stop;
mod transport;

pub use bus::{BusConnector, BusCoordinator, BusParticipant, in_process_bus};
pub use coarse::CoarseTimer;
pub use driver::TimingCoordinator;
pub use participant::{Ended, HEARTBEAT, run_simulated};
pub use periodic::{PeriodicTimer, TimerConfig, TimerError, TimerStats};
pub use precise::{DEFAULT_SPIN, PreciseTicker, lateness, system_now};
pub use sim_clock::SimClock;
pub use stop::StopSignal;
pub use transport::{
    CoordinatorTransport, Inbound, Outbound, ParticipantTransport, PeerKey, TransportClosed,
};

#[cfg(test)]
mod tests;
