//! A simulated [`Clock`]: it reads whatever simulated time the coordinator
//! last triggered, and its sleeps complete when simulated time reaches them.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use tokio::sync::watch;

use crate::clock::{Clock, ClockSleep};
use syncline_core::Timestamp;

/// Simulated time, advanced by the timing coordinator's triggers (through a
/// simulated [`PeriodicTimer`](super::PeriodicTimer) or
/// [`run_simulated`](super::run_simulated)), never by the wall clock.
///
/// Clones share the same time. Time never goes back: [`SimClock::advance_to`]
/// with an earlier time changes nothing.
///
/// ```
/// use syncline::clock::Clock;
/// use syncline::timer::SimClock;
/// use syncline::Timestamp;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let clock = SimClock::new(Timestamp::EPOCH);
/// let sleeper = clock.sleep_until(Timestamp::from_nanos(10));
/// clock.advance_to(Timestamp::from_nanos(10));
/// sleeper.await; // completes: simulated time reached 10 ns
/// assert_eq!(clock.now(), Timestamp::from_nanos(10));
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct SimClock {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// The time in nanoseconds, for lock-free reads; written only under
    /// the `time` sender's lock, so it never goes back.
    nanos: AtomicI64,
    /// Wakes the sleepers.
    time: watch::Sender<Timestamp>,
}

impl SimClock {
    /// A simulated clock reading `start`.
    pub fn new(start: Timestamp) -> Self {
        SimClock {
            inner: Arc::new(Inner {
                nanos: AtomicI64::new(start.as_nanos()),
                time: watch::Sender::new(start),
            }),
        }
    }

    /// Moves simulated time forward to `t` (never back) and wakes the
    /// sleepers that are due.
    pub fn advance_to(&self, t: Timestamp) {
        // Participants sharing a clock all advance it to the same step time:
        // only the first takes the lock and wakes sleepers.
        if self.now() >= t {
            return;
        }
        self.inner.time.send_if_modified(|now| {
            if t > *now {
                *now = t;
                self.inner.nanos.store(t.as_nanos(), Ordering::Release);
                // Nobody sleeping: no wake-up to send (a sleeper subscribing
                // later reads the new value before it waits).
                self.inner.time.receiver_count() > 0
            } else {
                false
            }
        });
    }
}

impl Default for SimClock {
    fn default() -> Self {
        SimClock::new(Timestamp::EPOCH)
    }
}

impl Clock for SimClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_nanos(self.inner.nanos.load(Ordering::Acquire))
    }

    fn sleep_until(&self, deadline: Timestamp) -> ClockSleep {
        let mut rx = self.inner.time.subscribe();
        Box::pin(async move {
            // The sender lives as long as this clock; if every clone is gone,
            // simulated time can never advance again: sleep forever.
            if rx.wait_for(|t| *t >= deadline).await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn sleepers_wake_in_simulated_time_only() {
        let clock = SimClock::new(Timestamp::from_nanos(5));
        let c2 = clock.clone();
        let task = tokio::spawn(async move {
            c2.sleep_until(Timestamp::from_nanos(100)).await;
            c2.now()
        });
        tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        assert!(!task.is_finished());
        clock.advance_to(Timestamp::from_nanos(50));
        clock.advance_to(Timestamp::from_nanos(20)); // never back
        assert_eq!(clock.now(), Timestamp::from_nanos(50));
        tokio::task::yield_now().await;
        assert!(!task.is_finished());
        clock.advance_to(Timestamp::from_nanos(120));
        assert_eq!(task.await.unwrap(), Timestamp::from_nanos(120));
        // A deadline in the past completes at once.
        clock.sleep_until(Timestamp::from_nanos(0)).await;
    }
}
