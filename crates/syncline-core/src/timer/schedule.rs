//! The periodic schedule: deadlines on the grid `offset + n * period`
//! counted from the Unix epoch, never early, missed deadlines skipped and
//! counted (never replayed in a burst).

use serde::{Deserialize, Serialize};

use crate::time::{TimeDelta, Timestamp};

/// Errors of grid and schedule construction and arithmetic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// The period must be strictly positive.
    #[error("the period must be positive, got {0} ns")]
    PeriodNotPositive(i64),
    /// The offset must satisfy `0 <= offset < period`.
    #[error(
        "the offset must satisfy 0 <= offset < period, got offset {offset} ns, period {period} ns"
    )]
    OffsetOutOfRange {
        /// The offset given, in nanoseconds.
        offset: i64,
        /// The period given, in nanoseconds.
        period: i64,
    },
    /// The requested grid point lies beyond [`Timestamp::MAX`].
    #[error("no grid point is representable at or after the given time")]
    OutOfRange,
}

/// A validated grid: the instants `offset + n * period` for every integer
/// `n`, with `period > 0` and `0 <= offset < period`.
///
/// Every machine with the same grid and synchronised clocks fires at the
/// same instants, since the grid is anchored at the Unix epoch.
///
/// ```
/// use syncline_core::timer::Grid;
/// use syncline_core::{TimeDelta, Timestamp};
///
/// let grid = Grid::new(TimeDelta::from_millis(10), TimeDelta::from_millis(2)).unwrap();
/// let t = Timestamp::from_nanos(25_000_000);
/// assert_eq!(grid.at_or_after(t).unwrap(), Timestamp::from_nanos(32_000_000));
/// assert!(Grid::new(TimeDelta::ZERO, TimeDelta::ZERO).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Grid {
    period: TimeDelta,
    offset: TimeDelta,
}

impl Grid {
    /// A grid, or a typed error for `period <= 0` or an offset outside
    /// `0 ..= period - 1`.
    pub fn new(period: TimeDelta, offset: TimeDelta) -> Result<Self, ScheduleError> {
        if !period.is_positive() {
            return Err(ScheduleError::PeriodNotPositive(period.as_nanos()));
        }
        if offset.is_negative() || offset >= period {
            return Err(ScheduleError::OffsetOutOfRange {
                offset: offset.as_nanos(),
                period: period.as_nanos(),
            });
        }
        Ok(Grid { period, offset })
    }

    /// The period.
    pub const fn period(&self) -> TimeDelta {
        self.period
    }

    /// The offset.
    pub const fn offset(&self) -> TimeDelta {
        self.offset
    }

    /// The index `n` of the last grid point at or before `t` (floor).
    fn index_at_or_before(&self, t: Timestamp) -> i128 {
        let rel = t.as_nanos() as i128 - self.offset.as_nanos() as i128;
        rel.div_euclid(self.period.as_nanos() as i128)
    }

    fn point_wide(&self, n: i128) -> i128 {
        n * self.period.as_nanos() as i128 + self.offset.as_nanos() as i128
    }

    fn point(&self, n: i128) -> Result<Timestamp, ScheduleError> {
        i64::try_from(self.point_wide(n))
            .map(Timestamp::from_nanos)
            .map_err(|_| ScheduleError::OutOfRange)
    }

    /// The first grid point at or after `t`.
    pub fn at_or_after(&self, t: Timestamp) -> Result<Timestamp, ScheduleError> {
        let n = self.index_at_or_before(t);
        if self.point_wide(n) == t.as_nanos() as i128 {
            Ok(t)
        } else {
            self.point(n + 1)
        }
    }

    /// The first grid point strictly after `t`.
    pub fn after(&self, t: Timestamp) -> Result<Timestamp, ScheduleError> {
        self.point(self.index_at_or_before(t) + 1)
    }

    /// True when `t` is a grid point.
    pub fn contains(&self, t: Timestamp) -> bool {
        self.point(self.index_at_or_before(t)) == Ok(t)
    }
}

/// One tick of a [`Schedule`]: the deadline it is for, and how many grid
/// points before it were skipped because they had passed unserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tick {
    /// The grid point this tick is for (never later than the `now` that
    /// produced it).
    pub deadline: Timestamp,
    /// Grid points between the previous tick and this one that were
    /// skipped (the caller woke too late or a callback overran).
    pub missed: u64,
}

/// The schedule's counters, cheap to take at any time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleStatus {
    /// The period in nanoseconds.
    pub period_ns: i64,
    /// The offset in nanoseconds.
    pub offset_ns: i64,
    /// The next deadline, `None` once past the representable range.
    pub next: Option<Timestamp>,
    /// Ticks delivered.
    pub ticks: u64,
    /// Deadlines skipped in total.
    pub missed: u64,
    /// Times the clock was seen going back before the last tick (the
    /// schedule re-aligned to the grid at the new time).
    pub clock_steps: u64,
}

/// The periodic schedule as a sans-IO state machine.
///
/// `poll_timeout()` gives the next deadline; the shell sleeps until then and
/// calls `handle_timeout(now)`, which yields a [`Tick`] only when `now` has
/// reached a deadline (never early). When `now` is past several deadlines,
/// the tick is for the latest of them and the others are counted as missed;
/// they are never replayed.
///
/// ```
/// use syncline_core::timer::{Grid, Schedule};
/// use syncline_core::{TimeDelta, Timestamp};
///
/// let grid = Grid::new(TimeDelta::from_nanos(100), TimeDelta::from_nanos(10)).unwrap();
/// let mut s = Schedule::starting_at(grid, Timestamp::from_nanos(15)).unwrap();
/// assert_eq!(s.poll_timeout(), Some(Timestamp::from_nanos(110)));
/// assert_eq!(s.handle_timeout(Timestamp::from_nanos(109)), None); // never early
/// let tick = s.handle_timeout(Timestamp::from_nanos(330)).unwrap();
/// assert_eq!((tick.deadline.as_nanos(), tick.missed), (310, 2));
/// assert_eq!(s.poll_timeout(), Some(Timestamp::from_nanos(410)));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    grid: Grid,
    next: Option<Timestamp>,
    last: Option<Timestamp>,
    ticks: u64,
    missed: u64,
    clock_steps: u64,
}

impl Schedule {
    /// A schedule whose first deadline is the first grid point at or after
    /// `start`.
    pub fn starting_at(grid: Grid, start: Timestamp) -> Result<Self, ScheduleError> {
        Ok(Schedule {
            grid,
            next: Some(grid.at_or_after(start)?),
            last: None,
            ticks: 0,
            missed: 0,
            clock_steps: 0,
        })
    }

    /// The grid.
    pub const fn grid(&self) -> Grid {
        self.grid
    }

    /// The next deadline; `None` once the grid has left the representable
    /// range (the schedule has ended).
    pub const fn poll_timeout(&self) -> Option<Timestamp> {
        self.next
    }

    /// The deadline of the last tick delivered.
    pub const fn last_tick(&self) -> Option<Timestamp> {
        self.last
    }

    /// The shell woke at `now`: a tick for the latest deadline `<= now`, or
    /// `None` when no deadline has been reached yet.
    ///
    /// A `now` earlier than the last tick means the clock was stepped back:
    /// the schedule re-aligns to the first grid point at or after `now`
    /// (counted in `clock_steps`), so it does not stall until the old time
    /// comes round again.
    pub fn handle_timeout(&mut self, now: Timestamp) -> Option<Tick> {
        if self.last.is_some_and(|last| now < last) {
            self.clock_steps = self.clock_steps.saturating_add(1);
            self.next = self.grid.at_or_after(now).ok();
        }
        let next = self.next?;
        if now < next {
            return None;
        }
        let period = self.grid.period.as_nanos() as i128;
        // Whole periods behind (>= 0); the common on-time case needs no division.
        let late = now.nanos_since_wide(next);
        let behind = if late < period { 0 } else { late / period };
        let deadline_wide = next.as_nanos() as i128 + behind * period;
        // `deadline_wide <= now`, so it fits in i64.
        let deadline = Timestamp::from_nanos(i64::try_from(deadline_wide).unwrap_or(i64::MAX));
        let missed = u64::try_from(behind).unwrap_or(u64::MAX);
        self.next = deadline.checked_add(self.grid.period).ok();
        self.last = Some(deadline);
        self.ticks = self.ticks.saturating_add(1);
        self.missed = self.missed.saturating_add(missed);
        Some(Tick { deadline, missed })
    }

    /// Moves the next deadline to the first grid point at or after `t`
    /// (later only; an earlier `t` changes nothing). Returns the number of
    /// grid points skipped, which are counted as missed.
    pub fn skip_to(&mut self, t: Timestamp) -> u64 {
        let Some(next) = self.next else { return 0 };
        if t <= next {
            return 0;
        }
        let target = self.grid.at_or_after(t).ok();
        let skipped = match target {
            Some(target) => target.nanos_since_wide(next) / self.grid.period.as_nanos() as i128,
            None => 0,
        };
        let skipped = u64::try_from(skipped).unwrap_or(u64::MAX);
        self.next = target;
        self.missed = self.missed.saturating_add(skipped);
        skipped
    }

    /// The counters.
    pub fn status(&self) -> ScheduleStatus {
        ScheduleStatus {
            period_ns: self.grid.period.as_nanos(),
            offset_ns: self.grid.offset.as_nanos(),
            next: self.next,
            ticks: self.ticks,
            missed: self.missed,
            clock_steps: self.clock_steps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ts(n: i64) -> Timestamp {
        Timestamp::from_nanos(n)
    }

    fn grid(p: i64, o: i64) -> Grid {
        Grid::new(TimeDelta::from_nanos(p), TimeDelta::from_nanos(o)).unwrap()
    }

    #[test]
    fn bad_grids_are_typed_errors() {
        let d = TimeDelta::from_nanos;
        assert_eq!(
            Grid::new(d(0), d(0)),
            Err(ScheduleError::PeriodNotPositive(0))
        );
        assert_eq!(
            Grid::new(d(-5), d(0)),
            Err(ScheduleError::PeriodNotPositive(-5))
        );
        assert_eq!(
            Grid::new(d(10), d(10)),
            Err(ScheduleError::OffsetOutOfRange {
                offset: 10,
                period: 10
            })
        );
        assert!(Grid::new(d(10), d(-1)).is_err());
        assert!(Grid::new(d(10), d(9)).is_ok());
    }

    #[test]
    fn grid_points_around_zero_and_negative_times() {
        let g = grid(10, 3);
        assert_eq!(g.at_or_after(ts(0)), Ok(ts(3)));
        assert_eq!(g.at_or_after(ts(3)), Ok(ts(3)));
        assert_eq!(g.after(ts(3)), Ok(ts(13)));
        assert_eq!(g.at_or_after(ts(-8)), Ok(ts(-7)));
        assert_eq!(g.at_or_after(ts(-7)), Ok(ts(-7)));
        assert!(g.contains(ts(-17)) && !g.contains(ts(-16)));
    }

    #[test]
    fn grid_end_of_range_is_an_error_not_a_panic() {
        let g = grid(1_000, 0);
        assert_eq!(
            g.at_or_after(Timestamp::MAX),
            Err(ScheduleError::OutOfRange)
        );
        assert!(g.at_or_after(Timestamp::MIN).is_ok());
        let mut s = Schedule::starting_at(g, ts(i64::MAX - 1_000)).unwrap();
        let last = s.poll_timeout().unwrap();
        assert!(s.handle_timeout(Timestamp::MAX).is_some());
        assert_eq!(s.poll_timeout(), None);
        assert_eq!(s.handle_timeout(Timestamp::MAX), None);
        assert!(last <= Timestamp::MAX);
    }

    #[test]
    fn late_wake_skips_and_counts() {
        let mut s = Schedule::starting_at(grid(100, 0), ts(0)).unwrap();
        assert_eq!(
            s.handle_timeout(ts(0)),
            Some(Tick {
                deadline: ts(0),
                missed: 0
            })
        );
        // woke at 350: deadlines 100, 200 missed, tick for 300.
        assert_eq!(
            s.handle_timeout(ts(350)),
            Some(Tick {
                deadline: ts(300),
                missed: 2
            })
        );
        assert_eq!(s.handle_timeout(ts(399)), None);
        assert_eq!(s.status().missed, 2);
        assert_eq!(s.status().ticks, 2);
    }

    #[test]
    fn backward_clock_step_realigns() {
        let mut s = Schedule::starting_at(grid(100, 0), ts(1_000)).unwrap();
        assert!(s.handle_timeout(ts(1_000)).is_some());
        assert_eq!(s.handle_timeout(ts(450)), None);
        assert_eq!(s.poll_timeout(), Some(ts(500)));
        assert_eq!(s.status().clock_steps, 1);
        assert_eq!(s.handle_timeout(ts(500)).map(|t| t.deadline), Some(ts(500)));
    }

    #[test]
    fn skip_to_moves_forward_only() {
        let mut s = Schedule::starting_at(grid(10, 5), ts(0)).unwrap();
        assert_eq!(s.skip_to(ts(0)), 0);
        assert_eq!(s.skip_to(ts(31)), 3);
        assert_eq!(s.poll_timeout(), Some(ts(35)));
        assert_eq!(s.status().missed, 3);
    }

    proptest! {
        #[test]
        fn ticks_are_on_grid_never_early_and_skips_are_counted(
            period in 1i64..1_000_000,
            offset_frac in 0.0f64..1.0,
            start in -1_000_000_000i64..1_000_000_000,
            wakes in proptest::collection::vec(0i64..3_000_000, 1..50),
        ) {
            let offset = ((period as f64) * offset_frac) as i64 % period;
            let g = grid(period, offset);
            let mut s = Schedule::starting_at(g, ts(start)).unwrap();
            let first = s.poll_timeout().unwrap();
            prop_assert!(first >= ts(start) && first.as_nanos() - start < period);
            let mut now = start;
            let mut served = 0u64;
            let mut last: Option<Timestamp> = None;
            for w in wakes {
                now += w;
                let before = s.poll_timeout().unwrap();
                match s.handle_timeout(ts(now)) {
                    Some(tick) => {
                        served += 1;
                        prop_assert!(g.contains(tick.deadline));
                        prop_assert!(tick.deadline <= ts(now)); // never early
                        prop_assert!(tick.deadline.as_nanos() + period > now); // the latest due
                        let skipped = (tick.deadline.as_nanos() - before.as_nanos()) / period;
                        prop_assert_eq!(tick.missed, skipped as u64);
                        if let Some(l) = last { prop_assert!(tick.deadline > l); }
                        last = Some(tick.deadline);
                    }
                    None => prop_assert!(ts(now) < before),
                }
            }
            // Every grid point from the first to the last tick is served or missed.
            let st = s.status();
            prop_assert_eq!(st.ticks, served);
            if let Some(l) = last {
                let span = ((l.as_nanos() - first.as_nanos()) / period + 1) as u64;
                prop_assert_eq!(st.ticks + st.missed, span);
            }
        }
    }
}
