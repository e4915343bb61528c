//! [`CoarseTimer`]: a simple periodic task for non-real-time work (GUIs,
//! periodic status), on any [`Clock`], that stops at once.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::task::JoinHandle;

use super::periodic::TimerError;
use super::stop::StopSignal;
use crate::clock::Clock;
use syncline_core::timer::{Grid, Schedule};
use syncline_core::{TimeDelta, Timestamp};

/// A periodic tokio task with millisecond-class precision (tokio's timer),
/// for work that does not need the precise [`PeriodicTimer`](super::PeriodicTimer).
///
/// Deadlines are on the grid `n * period` of its clock (so it also runs in
/// simulated time on a [`SimClock`](super::SimClock) and on tokio's paused
/// clock); late wake-ups skip deadlines rather than replaying them.
/// [`CoarseTimer::stop`] ends it at once (never later than 50 ms, CPM's
/// `SimpleTimer` bound), also while a sleep is pending. A callback that
/// panics is counted ([`CoarseTimer::panics`]) and logged, and the timer
/// goes on on its grid.
///
/// ```
/// use syncline::clock::TokioClock;
/// use syncline::timer::CoarseTimer;
/// use syncline::{TimeDelta, Timestamp};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let clock = TokioClock::starting_at(Timestamp::EPOCH);
/// let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
/// let timer = CoarseTimer::spawn(clock, TimeDelta::from_millis(100), move |t| { let _ = tx.send(t); }).unwrap();
/// assert_eq!(rx.recv().await, Some(Timestamp::EPOCH));
/// assert_eq!(rx.recv().await, Some(Timestamp::from_nanos(100_000_000)));
/// assert_eq!(timer.stop().await, 2);
/// # }
/// ```
#[derive(Debug)]
pub struct CoarseTimer {
    stop: StopSignal,
    task: JoinHandle<u64>,
    panics: Arc<AtomicU64>,
}

impl CoarseTimer {
    /// The shortest period accepted: tokio's timer resolution.
    pub const MIN_PERIOD: TimeDelta = TimeDelta::from_millis(1);

    /// Spawns the timer on the current tokio runtime; `callback` gets each
    /// deadline. A period below [`CoarseTimer::MIN_PERIOD`] is an error.
    pub fn spawn<C: Clock>(
        clock: C,
        period: TimeDelta,
        mut callback: impl FnMut(Timestamp) + Send + 'static,
    ) -> Result<Self, TimerError> {
        if period < Self::MIN_PERIOD {
            return Err(TimerError::PeriodTooShort {
                period_ns: period.as_nanos(),
                min_ns: Self::MIN_PERIOD.as_nanos(),
            });
        }
        let grid = Grid::new(period, TimeDelta::ZERO)?;
        let mut schedule = Schedule::starting_at(grid, clock.now())?;
        let stop = StopSignal::new();
        let stopped = stop.clone();
        let panics = Arc::new(AtomicU64::new(0));
        let panicked = panics.clone();
        let task = tokio::spawn(async move {
            let mut ticks = 0u64;
            while let Some(next) = schedule.poll_timeout() {
                tokio::select! {
                    biased;
                    () = stopped.stopped() => break,
                    () = clock.sleep_until(next) => {}
                }
                if let Some(tick) = schedule.handle_timeout(clock.now()) {
                    if tick.missed > 0 {
                        tracing::debug!(missed = tick.missed, "coarse timer skipped deadlines");
                    }
                    ticks += 1;
                    let deadline = tick.deadline;
                    if catch_unwind(AssertUnwindSafe(|| callback(deadline))).is_err() {
                        panicked.fetch_add(1, Ordering::Relaxed);
                        tracing::error!(%deadline, "coarse timer callback panicked; timer goes on");
                    }
                }
            }
            ticks
        });
        Ok(CoarseTimer { stop, task, panics })
    }

    /// Callbacks that panicked so far (each counted in the ticks too).
    pub fn panics(&self) -> u64 {
        self.panics.load(Ordering::Relaxed)
    }

    /// Stops the timer and returns the number of callbacks it ran.
    pub async fn stop(self) -> u64 {
        self.stop.stop();
        self.task.await.unwrap_or(0)
    }
}
