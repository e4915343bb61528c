//! The participant side of simulated time, as a sans-IO state machine: it
//! keeps its own grid, answers [`Signal`]s from the coordinator with steps
//! to run, and says which wake-up to report next.

use serde::{Deserialize, Serialize};

use crate::time::Timestamp;
use crate::timer::coordinator::Signal;
use crate::timer::schedule::{Grid, Schedule, ScheduleError, ScheduleStatus, Tick};

/// What the shell must do after [`SimParticipant::handle`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Action {
    /// Run the step for `tick.deadline` (set the simulated clock to it),
    /// then report [`SimParticipant::next`].
    Step(Tick),
    /// Report [`SimParticipant::next`] without running a step (after a
    /// resync).
    Report,
    /// Nothing to do: a trigger for a time before this participant's next
    /// wake-up (a duplicate, or meant for another participant), or a real-time
    /// start signal.
    Ignore,
    /// Stop.
    Stop,
}

/// Counters of a [`SimParticipant`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParticipantCounters {
    /// The underlying schedule (steps run = `ticks`, skipped = `missed`).
    pub schedule: ScheduleStatus,
    /// Triggers ignored because they were for a time in the past.
    pub stale_triggers: u64,
    /// Resyncs performed.
    pub resyncs: u64,
}

/// A participant in simulated time: a [`Schedule`] stepped by triggers
/// instead of a clock.
///
/// ```
/// use syncline_core::timer::{Action, Grid, Signal, SimParticipant};
/// use syncline_core::{TimeDelta, Timestamp};
///
/// let grid = Grid::new(TimeDelta::from_millis(10), TimeDelta::ZERO).unwrap();
/// let mut p = SimParticipant::new(grid, Timestamp::EPOCH).unwrap();
/// assert_eq!(p.next(), Some(Timestamp::EPOCH)); // report this first
/// assert!(matches!(p.handle(Signal::Trigger(Timestamp::EPOCH)), Action::Step(_)));
/// assert_eq!(p.next(), Some(Timestamp::from_nanos(10_000_000)));
/// // A trigger for the past is ignored:
/// assert_eq!(p.handle(Signal::Trigger(Timestamp::EPOCH)), Action::Ignore);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimParticipant {
    schedule: Schedule,
    stopped: bool,
    stale_triggers: u64,
    resyncs: u64,
}

impl SimParticipant {
    /// A participant whose first wake-up is the first grid point at or
    /// after `start` (simulated time usually starts at the epoch, 0).
    pub fn new(grid: Grid, start: Timestamp) -> Result<Self, ScheduleError> {
        Ok(SimParticipant {
            schedule: Schedule::starting_at(grid, start)?,
            stopped: false,
            stale_triggers: 0,
            resyncs: 0,
        })
    }

    /// The wake-up to report; `None` once stopped or past the time range.
    pub fn next(&self) -> Option<Timestamp> {
        if self.stopped {
            None
        } else {
            self.schedule.poll_timeout()
        }
    }

    /// The deadline of the last step run.
    pub fn last_step(&self) -> Option<Timestamp> {
        self.schedule.last_tick()
    }

    /// Handles a signal from the coordinator.
    ///
    /// A trigger exactly at the next wake-up runs a step. A trigger for an
    /// earlier time is ignored and counted. A trigger for a later grid
    /// point runs that step and counts the skipped ones; a later time off
    /// the grid is treated as a resync.
    pub fn handle(&mut self, signal: Signal) -> Action {
        if self.stopped {
            return Action::Ignore;
        }
        match signal {
            Signal::Stop => {
                self.stopped = true;
                Action::Stop
            }
            Signal::Start(_) => Action::Ignore,
            Signal::Resync(t) => {
                self.resyncs = self.resyncs.saturating_add(1);
                self.schedule.skip_to(t);
                Action::Report
            }
            Signal::Trigger(t) => {
                let Some(next) = self.schedule.poll_timeout() else {
                    return Action::Ignore;
                };
                if t < next {
                    self.stale_triggers = self.stale_triggers.saturating_add(1);
                    return Action::Ignore;
                }
                if t > next && !self.schedule.grid().contains(t) {
                    self.resyncs = self.resyncs.saturating_add(1);
                    self.schedule.skip_to(t);
                    return Action::Report;
                }
                let skipped = self.schedule.skip_to(t);
                match self.schedule.handle_timeout(t) {
                    Some(tick) => Action::Step(Tick {
                        deadline: tick.deadline,
                        missed: tick.missed.saturating_add(skipped),
                    }),
                    None => Action::Ignore,
                }
            }
        }
    }

    /// Counters.
    pub fn status(&self) -> ParticipantCounters {
        ParticipantCounters {
            schedule: self.schedule.status(),
            stale_triggers: self.stale_triggers,
            resyncs: self.resyncs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::TimeDelta;

    fn ts(n: i64) -> Timestamp {
        Timestamp::from_nanos(n)
    }

    fn part(p: i64, o: i64) -> SimParticipant {
        let g = Grid::new(TimeDelta::from_nanos(p), TimeDelta::from_nanos(o)).unwrap();
        SimParticipant::new(g, Timestamp::EPOCH).unwrap()
    }

    #[test]
    fn triggers_before_next_are_ignored() {
        let mut p = part(10, 5);
        assert_eq!(p.next(), Some(ts(5)));
        assert_eq!(p.handle(Signal::Trigger(ts(3))), Action::Ignore);
        assert_eq!(p.handle(Signal::Trigger(ts(4))), Action::Ignore);
        assert_eq!(p.status().stale_triggers, 2);
        assert_eq!(
            p.handle(Signal::Trigger(ts(5))),
            Action::Step(Tick {
                deadline: ts(5),
                missed: 0
            })
        );
        assert_eq!(p.next(), Some(ts(15)));
    }

    #[test]
    fn later_triggers_skip_or_resync() {
        let mut p = part(10, 0);
        assert_eq!(
            p.handle(Signal::Trigger(ts(30))),
            Action::Step(Tick {
                deadline: ts(30),
                missed: 3
            })
        );
        assert_eq!(p.handle(Signal::Trigger(ts(47))), Action::Report);
        assert_eq!(p.next(), Some(ts(50)));
        assert_eq!(p.handle(Signal::Resync(ts(71))), Action::Report);
        assert_eq!(p.next(), Some(ts(80)));
        assert_eq!(p.status().resyncs, 2);
    }

    #[test]
    fn stop_is_final() {
        let mut p = part(10, 0);
        assert_eq!(p.handle(Signal::Stop), Action::Stop);
        assert_eq!(p.next(), None);
        assert_eq!(p.handle(Signal::Trigger(ts(0))), Action::Ignore);
        assert_eq!(p.handle(Signal::Start(ts(0))), Action::Ignore);
    }
}
