//! Clocks: where the async shell gets the time it passes into the cores.
//!
//! A [`Clock`] answers "what time is it" as a [`Timestamp`] and gives a
//! future that completes at a [`Timestamp`]. Everything timed in syncline
//! (the estimator adapter, the aligner, timers) takes a clock, so the same
//! pipeline runs on the system clock, on tokio's paused test clock, or in
//! simulated time driven by a coordinator.
//!
//! * [`SystemClock`]: wall time (`SystemTime`), sleeping with tokio timers.
//! * [`TokioClock`]: tokio's monotonic clock anchored to a fixed instant, so
//!   it follows `tokio::time::pause` / `advance` in tests and never jumps
//!   when the wall clock is stepped.
//! * [`SimClock`]: simulated time, advanced by the timing coordinator's
//!   triggers (defined in [`crate::timer`], re-exported here). Give it to
//!   any part of a pipeline and the whole pipeline runs in simulated time.
//!
//! ```
//! use syncline::clock::{Clock, SimClock};
//! use syncline::Timestamp;
//!
//! // Code written against `Clock` runs unchanged in simulated time.
//! fn age(clock: &impl Clock, stamp: Timestamp) -> i128 {
//!     clock.now().nanos_since_wide(stamp)
//! }
//! let clock = SimClock::new(Timestamp::from_nanos(1_000));
//! assert_eq!(age(&clock, Timestamp::EPOCH), 1_000);
//! clock.advance_to(Timestamp::from_nanos(5_000)); // a coordinator trigger does this
//! assert_eq!(age(&clock, Timestamp::EPOCH), 5_000);
//! ```

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::SystemTime;

use syncline_core::{TimeDelta, Timestamp};

pub use crate::timer::SimClock;

/// The future returned by [`Clock::sleep_until`].
pub type ClockSleep = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A source of time for the async shell.
///
/// Implementations must be cheap to call; `now` must never go backwards for
/// monotonic clocks (the [`SystemClock`] can, when the wall clock is
/// stepped, which the cores handle as bad input, not a panic).
///
/// ```
/// use syncline::clock::{Clock, TokioClock};
/// use syncline::{TimeDelta, Timestamp};
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let clock = TokioClock::starting_at(Timestamp::from_nanos(1_000));
/// let t0 = clock.now();
/// clock.sleep_until(t0.saturating_add(TimeDelta::from_millis(5))).await;
/// // Tokio's timer has millisecond ticks: the sleep ends at the deadline or
/// // up to one tick after it.
/// assert!(clock.now().checked_since(t0).unwrap() >= TimeDelta::from_millis(5));
/// # }
/// ```
pub trait Clock: Send + Sync + 'static {
    /// The current time on this clock.
    fn now(&self) -> Timestamp;

    /// A future that completes once this clock reads `deadline` or later.
    /// A deadline in the past completes at once.
    fn sleep_until(&self, deadline: Timestamp) -> ClockSleep;

    /// The tokio instant at which this clock will read `deadline`, for
    /// clocks that run at tokio's pace (then a [`ClockTimer`] resets one
    /// `tokio::time::Sleep` instead of creating a future per deadline);
    /// `None` (the default) for clocks that do not, such as simulated time.
    fn tokio_instant(&self, deadline: Timestamp) -> Option<tokio::time::Instant> {
        let _ = deadline;
        None
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
    fn sleep_until(&self, deadline: Timestamp) -> ClockSleep {
        (**self).sleep_until(deadline)
    }
    fn tokio_instant(&self, deadline: Timestamp) -> Option<tokio::time::Instant> {
        (**self).tokio_instant(deadline)
    }
}

impl<C: Clock + ?Sized> Clock for Box<C> {
    fn now(&self) -> Timestamp {
        (**self).now()
    }
    fn sleep_until(&self, deadline: Timestamp) -> ClockSleep {
        (**self).sleep_until(deadline)
    }
    fn tokio_instant(&self, deadline: Timestamp) -> Option<tokio::time::Instant> {
        (**self).tokio_instant(deadline)
    }
}

/// One resettable timer on a [`Clock`] (quinn's pattern): a driver keeps
/// one `ClockTimer` and polls it with its current deadline; on a tokio-paced
/// clock one `tokio::time::Sleep` is reset when the deadline moves (no
/// allocation), on other clocks a new [`Clock::sleep_until`] future is made
/// only when the deadline moves.
pub struct ClockTimer {
    clock: Arc<dyn Clock>,
    armed: Option<Timestamp>,
    tokio: Option<Pin<Box<tokio::time::Sleep>>>,
    other: Option<ClockSleep>,
}

impl std::fmt::Debug for ClockTimer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClockTimer")
            .field("armed", &self.armed)
            .finish()
    }
}

impl ClockTimer {
    /// A disarmed timer on `clock`.
    pub fn new(clock: Arc<dyn Clock>) -> Self {
        ClockTimer {
            clock,
            armed: None,
            tokio: None,
            other: None,
        }
    }

    /// The clock it runs on.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.clock
    }

    /// Disarms the timer (nothing will wake the task for it).
    pub fn disarm(&mut self) {
        self.armed = None;
        self.other = None;
    }

    /// Polls the timer for `deadline` (re-arming it if the deadline moved):
    /// `Ready` once the clock reads `deadline` or later, else the task is
    /// woken then. The clock is read first, so an elapsed deadline is
    /// `Ready` even when tokio's cooperative budget would delay the sleep.
    pub fn poll_at(
        &mut self,
        cx: &mut std::task::Context<'_>,
        deadline: Timestamp,
    ) -> std::task::Poll<()> {
        use std::task::Poll;
        if self.clock.now() >= deadline {
            self.disarm();
            return Poll::Ready(());
        }
        if self.armed != Some(deadline) {
            self.armed = Some(deadline);
            self.other = None;
            match self.clock.tokio_instant(deadline) {
                Some(at) => match self.tokio.as_mut() {
                    Some(sleep) => sleep.as_mut().reset(at),
                    None => self.tokio = Some(Box::pin(tokio::time::sleep_until(at))),
                },
                None => self.other = Some(self.clock.sleep_until(deadline)),
            }
        }
        let fired = match (self.other.as_mut(), self.tokio.as_mut()) {
            (Some(sleep), _) => sleep.as_mut().poll(cx).is_ready(),
            (None, Some(sleep)) => sleep.as_mut().poll(cx).is_ready(),
            (None, None) => false,
        };
        if fired {
            self.disarm();
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// Wall-clock time (`SystemTime::now()`), sleeping with tokio timers.
///
/// Use it where stamps must agree across machines with synchronised clocks
/// (PTP, chrony). Its reading can jump when the system clock is stepped.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

/// Converts a `SystemTime` reading, saturating outside the ±292-year range
/// (a clock that far off is reported as the extreme instant, never a panic).
fn system_now() -> Timestamp {
    Timestamp::from_system_time(SystemTime::now()).unwrap_or(Timestamp::MAX)
}

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        system_now()
    }

    fn sleep_until(&self, deadline: Timestamp) -> ClockSleep {
        let wait = deadline.nanos_since_wide(system_now());
        Box::pin(sleep_nanos(wait))
    }

    fn tokio_instant(&self, deadline: Timestamp) -> Option<tokio::time::Instant> {
        let wait = deadline.nanos_since_wide(system_now()).max(0);
        let wait = u64::try_from(wait).ok()?;
        tokio::time::Instant::now().checked_add(std::time::Duration::from_nanos(wait))
    }
}

async fn sleep_nanos(wait: i128) {
    if wait <= 0 {
        return;
    }
    match u64::try_from(wait) {
        Ok(ns) => tokio::time::sleep(std::time::Duration::from_nanos(ns)).await,
        Err(_) => std::future::pending::<()>().await,
    }
}

/// Tokio's monotonic clock, reported as a [`Timestamp`] relative to an
/// origin: `now() = origin + (tokio::time::Instant::now() - start)`.
///
/// Under `tokio::time::pause()` it stands still until the runtime advances
/// it, so tests of timed behaviour are exact and never sleep for real.
#[derive(Debug, Clone, Copy)]
pub struct TokioClock {
    start: tokio::time::Instant,
    origin: Timestamp,
}

impl TokioClock {
    /// A clock that reads the current wall time now and advances with
    /// tokio's monotonic clock from then on.
    pub fn new() -> Self {
        Self::starting_at(system_now())
    }

    /// A clock that reads `origin` now (handy for deterministic tests and
    /// simulated epochs).
    pub fn starting_at(origin: Timestamp) -> Self {
        TokioClock {
            start: tokio::time::Instant::now(),
            origin,
        }
    }

    /// The tokio instant at which this clock reads `t`, or `None` when it
    /// is out of tokio's range (far future).
    pub fn instant_at(&self, t: Timestamp) -> Option<tokio::time::Instant> {
        let offset = t.nanos_since_wide(self.origin);
        if offset <= 0 {
            let back = u64::try_from(-offset).ok()?;
            Some(
                self.start
                    .checked_sub(std::time::Duration::from_nanos(back))
                    .unwrap_or(self.start),
            )
        } else {
            let ahead = u64::try_from(offset).ok()?;
            self.start
                .checked_add(std::time::Duration::from_nanos(ahead))
        }
    }
}

impl Default for TokioClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for TokioClock {
    fn now(&self) -> Timestamp {
        let elapsed = tokio::time::Instant::now().saturating_duration_since(self.start);
        let elapsed = TimeDelta::try_from(elapsed).unwrap_or(TimeDelta::MAX);
        self.origin.saturating_add(elapsed)
    }

    fn sleep_until(&self, deadline: Timestamp) -> ClockSleep {
        match self.instant_at(deadline) {
            Some(at) => Box::pin(tokio::time::sleep_until(at)),
            None => Box::pin(std::future::pending()),
        }
    }

    fn tokio_instant(&self, deadline: Timestamp) -> Option<tokio::time::Instant> {
        self.instant_at(deadline)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn tokio_clock_follows_paused_time() {
        let clock = TokioClock::starting_at(Timestamp::from_nanos(-5));
        assert_eq!(clock.now(), Timestamp::from_nanos(-5));
        tokio::time::advance(std::time::Duration::from_micros(3)).await;
        assert_eq!(clock.now(), Timestamp::from_nanos(2_995));
        // A deadline in the past completes at once; the clock does not move.
        clock.sleep_until(Timestamp::from_nanos(-1_000)).await;
        assert_eq!(clock.now(), Timestamp::from_nanos(2_995));
        clock.sleep_until(Timestamp::from_nanos(1_000_000)).await;
        assert!(clock.now() >= Timestamp::from_nanos(1_000_000));
    }

    #[tokio::test(start_paused = true)]
    async fn far_deadline_never_completes_and_never_panics() {
        let clock = TokioClock::starting_at(Timestamp::from_nanos(0));
        let far = clock.sleep_until(Timestamp::MAX);
        let res = tokio::time::timeout(std::time::Duration::from_secs(3600), far).await;
        assert!(res.is_err());
    }

    #[tokio::test(start_paused = true)]
    async fn shared_clock_via_arc() {
        let clock: Arc<dyn Clock> = Arc::new(TokioClock::starting_at(Timestamp::EPOCH));
        let t = clock.now();
        clock
            .sleep_until(t.saturating_add(TimeDelta::from_secs(1)))
            .await;
        assert_eq!(clock.now(), Timestamp::from_nanos(1_000_000_000));
    }

    #[tokio::test(start_paused = true)]
    async fn resettable_timer_follows_its_deadline() {
        let clock = TokioClock::starting_at(Timestamp::EPOCH);
        let mut timer = ClockTimer::new(Arc::new(clock));
        let at = |ms: i64| Timestamp::from_nanos(ms * 1_000_000);
        // Armed at 50 ms, moved to 20 ms: fires at 20 ms.
        let first = std::future::poll_fn(|cx| {
            let _ = timer.poll_at(cx, at(50));
            timer.poll_at(cx, at(20))
        });
        // (Tokio's timer has millisecond ticks: up to one tick late.)
        let tick = TimeDelta::from_millis(1);
        first.await;
        let t = clock.now();
        assert!(t >= at(20) && t <= at(20).saturating_add(tick), "{t}");
        std::future::poll_fn(|cx| timer.poll_at(cx, at(35))).await;
        let t = clock.now();
        assert!(t >= at(35) && t <= at(35).saturating_add(tick), "{t}");
        // An elapsed deadline is ready at once.
        std::future::poll_fn(|cx| timer.poll_at(cx, at(1))).await;
        assert_eq!(clock.now(), t);
    }

    #[test]
    fn system_clock_reads_present_day() {
        // 2020-01-01 in ns: any machine running this is later.
        assert!(SystemClock.now() > Timestamp::from_nanos(1_577_836_800_000_000_000));
    }
}
