//! The precise real-time wait: park the thread until shortly before the
//! deadline, then spin on the system clock until it reads the deadline.
//! Never early (the tick is handed out only once `SystemTime::now()` has
//! reached the deadline), late only by the final clock read and by
//! scheduling latency.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use syncline_core::timer::{Grid, Schedule, ScheduleError, ScheduleStatus, Tick};
use syncline_core::{TimeDelta, Timestamp};

/// The longest single park, so that a stepped clock or a stop is noticed
/// even without an unpark.
const MAX_PARK: Duration = Duration::from_millis(100);

/// The default spin margin: the thread parks until this long before the
/// deadline and spins (reading the system clock) for the rest.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(200);

/// Reads the system clock as a [`Timestamp`] (saturating far outside the
/// ±292-year range).
pub fn system_now() -> Timestamp {
    Timestamp::from_system_time(SystemTime::now()).unwrap_or(Timestamp::MAX)
}

/// A [`Schedule`] driven by the system clock with a park-then-spin wait.
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use syncline::core::timer::Grid;
/// use syncline::timer::{PreciseTicker, system_now};
/// use syncline::TimeDelta;
///
/// let grid = Grid::new(TimeDelta::from_millis(1), TimeDelta::ZERO).unwrap();
/// let mut ticker = PreciseTicker::new(grid, system_now()).unwrap();
/// let stop = AtomicBool::new(false);
/// let (tick, woke) = ticker.wait(&stop).unwrap();
/// assert!(woke >= tick.deadline); // never early
/// ```
#[derive(Debug, Clone)]
pub struct PreciseTicker {
    schedule: Schedule,
    spin: Duration,
}

impl PreciseTicker {
    /// A ticker whose first deadline is the first grid point at or after
    /// `start`, with the [`DEFAULT_SPIN`] margin.
    pub fn new(grid: Grid, start: Timestamp) -> Result<Self, ScheduleError> {
        Ok(PreciseTicker {
            schedule: Schedule::starting_at(grid, start)?,
            spin: DEFAULT_SPIN,
        })
    }

    /// Sets the spin margin (zero: park only, like a plain sleep).
    pub fn spin(mut self, spin: Duration) -> Self {
        self.spin = spin;
        self
    }

    /// The next deadline.
    pub fn next_deadline(&self) -> Option<Timestamp> {
        self.schedule.poll_timeout()
    }

    /// The schedule's counters (ticks, missed, clock steps).
    pub fn status(&self) -> ScheduleStatus {
        self.schedule.status()
    }

    /// Blocks the calling thread until the system clock reaches the next
    /// deadline; returns the tick and the clock reading that reached it.
    /// `None` when `stop` is set (checked at least every 100 ms and on
    /// every `Thread::unpark`) or when the schedule has ended.
    pub fn wait(&mut self, stop: &AtomicBool) -> Option<(Tick, Timestamp)> {
        let spin = i128::try_from(self.spin.as_nanos()).unwrap_or(i128::MAX);
        loop {
            if stop.load(Ordering::Acquire) {
                return None;
            }
            let now = system_now();
            if let Some(tick) = self.schedule.handle_timeout(now) {
                return Some((tick, now));
            }
            let remaining = self.schedule.poll_timeout()?.nanos_since_wide(now);
            if remaining > spin {
                let park = u64::try_from(remaining - spin).unwrap_or(u64::MAX);
                std::thread::park_timeout(Duration::from_nanos(park).min(MAX_PARK));
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

/// The lateness `woke - deadline` in nanoseconds, saturating.
pub fn lateness(tick: &Tick, woke: Timestamp) -> i64 {
    woke.checked_since(tick.deadline)
        .map(TimeDelta::as_nanos)
        .unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_never_early_and_on_grid() {
        let grid = Grid::new(TimeDelta::from_micros(500), TimeDelta::from_micros(100)).unwrap();
        let mut t = PreciseTicker::new(grid, system_now()).unwrap();
        let stop = AtomicBool::new(false);
        for _ in 0..5 {
            let (tick, woke) = t.wait(&stop).unwrap();
            assert!(woke >= tick.deadline);
            assert!(grid.contains(tick.deadline));
            assert!(lateness(&tick, woke) >= 0);
        }
        assert_eq!(t.status().ticks, 5);
    }

    #[test]
    fn stop_flag_ends_the_wait() {
        let grid = Grid::new(TimeDelta::from_secs(3600), TimeDelta::ZERO).unwrap();
        let mut t = PreciseTicker::new(grid, system_now()).unwrap();
        let stop = AtomicBool::new(true);
        assert_eq!(t.wait(&stop), None);
    }
}
