//! Tick: periodic schedules aligned on real time, and simulated time driven
//! by a central coordinator (after CPM Lab's `cpm::Timer` family and the LCC
//! `TimerTrigger`).
//!
//! * [`Grid`] / [`Schedule`]: deadlines at `offset + n * period` since the
//!   Unix epoch, never early, missed deadlines skipped and counted.
//! * [`Coordinator`]: participants register, report "ready, next wake-up
//!   at t"; the coordinator distributes a latched real-time start, or drives
//!   simulated time step by step, detects out-of-sync and unresponsive
//!   participants and recovers from both.
//! * [`SimParticipant`]: the participant side of simulated time.
//! * [`Header`] / [`ValidReader`]: message stamping (creation and
//!   valid-after times) and the reader that returns the newest valid sample.
//!
//! All of them are sans-IO: time comes in as an argument.

mod coordinator;
mod participant;
mod schedule;
mod stamp;

pub use coordinator::{
    Command, Coordinator, CoordinatorConfig, CoordinatorError, CoordinatorStatus, Event, Mode,
    Pace, ParticipantId, ParticipantState, ParticipantStatus, Phase, Recipient, Report, Signal,
};
pub use participant::{Action, ParticipantCounters, SimParticipant};
pub use schedule::{Grid, Schedule, ScheduleError, ScheduleStatus, Tick};
pub use stamp::{Header, ValidReader, ValidReaderStatus, ValidSample};

#[cfg(test)]
mod tests;
