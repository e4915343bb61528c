//! A stop signal that wakes both async waiters and a parked timer thread.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Waker};
use std::thread::Thread;

#[derive(Debug, Default)]
struct Inner {
    flag: AtomicBool,
    /// Async waiters by key (few: one per task waiting on this signal).
    waiters: Mutex<Vec<(u64, Waker)>>,
    next_key: AtomicU64,
    thread: Mutex<Option<Thread>>,
}

impl Inner {
    fn waiters(&self) -> MutexGuard<'_, Vec<(u64, Waker)>> {
        self.waiters.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A cloneable "stop now" flag: [`StopSignal::stop`] wakes async waiters
/// ([`StopSignal::stopped`]) and the timer thread parked in a precise wait.
#[derive(Debug, Clone, Default)]
pub struct StopSignal {
    inner: Arc<Inner>,
}

impl StopSignal {
    /// A signal not yet raised.
    pub fn new() -> Self {
        Self::default()
    }

    /// Raises the signal (idempotent).
    pub fn stop(&self) {
        self.inner.flag.store(true, Ordering::Release);
        for (_, w) in self.inner.waiters().drain(..) {
            w.wake();
        }
        if let Ok(guard) = self.inner.thread.lock()
            && let Some(t) = guard.as_ref()
        {
            t.unpark();
        }
    }

    /// True once raised.
    pub fn is_stopped(&self) -> bool {
        self.inner.flag.load(Ordering::Acquire)
    }

    /// The flag, for [`PreciseTicker::wait`](super::PreciseTicker::wait).
    pub(crate) fn flag(&self) -> &AtomicBool {
        &self.inner.flag
    }

    /// Makes `stop` unpark the calling thread.
    pub(crate) fn attach_current_thread(&self) {
        if let Ok(mut guard) = self.inner.thread.lock() {
            *guard = Some(std::thread::current());
        }
    }

    /// Completes once the signal is raised. Cheap to poll again and again
    /// from a `select!` loop: after the first poll, a poll from the same
    /// task is one atomic load (no lock).
    pub fn stopped(&self) -> impl Future<Output = ()> + Send + '_ {
        Stopped {
            inner: &self.inner,
            registered: None,
        }
    }
}

/// The future of [`StopSignal::stopped`].
struct Stopped<'a> {
    inner: &'a Inner,
    /// Our key in `waiters` and the waker stored there.
    registered: Option<(u64, Waker)>,
}

impl Future for Stopped<'_> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.inner.flag.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        if let Some((_, w)) = &self.registered
            && w.will_wake(cx.waker())
        {
            return Poll::Pending;
        }
        let inner = self.inner;
        let mut waiters = inner.waiters();
        let key = match &self.registered {
            Some((key, _)) => *key,
            None => inner.next_key.fetch_add(1, Ordering::Relaxed),
        };
        let waker = cx.waker().clone();
        match waiters.iter_mut().find(|(k, _)| *k == key) {
            Some(entry) => entry.1 = waker.clone(),
            None => waiters.push((key, waker.clone())),
        }
        drop(waiters);
        self.registered = Some((key, waker));
        // Raised between the first check and the registration: `stop`
        // may have drained the list before we were in it.
        if inner.flag.load(Ordering::Acquire) {
            return Poll::Ready(());
        }
        Poll::Pending
    }
}

impl Drop for Stopped<'_> {
    fn drop(&mut self) {
        if let Some((key, _)) = self.registered.take() {
            self.inner.waiters().retain(|(k, _)| *k != key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn stop_wakes_every_waiter_once_and_waiters_clean_up() {
        let stop = StopSignal::new();
        let tasks: Vec<_> = (0..3)
            .map(|_| {
                let s = stop.clone();
                tokio::spawn(async move { s.stopped().await })
            })
            .collect();
        // A waiter that gives up leaves no entry behind.
        {
            let gone = stop.stopped();
            tokio::pin!(gone);
            assert!(futures::poll!(gone.as_mut()).is_pending());
            assert!(futures::poll!(gone.as_mut()).is_pending()); // no second entry
        }
        tokio::task::yield_now().await;
        assert_eq!(stop.inner.waiters().len(), 3);
        assert!(tasks.iter().all(|t| !t.is_finished()));
        stop.stop();
        for t in tasks {
            t.await.unwrap();
        }
        assert!(stop.inner.waiters().is_empty());
        // Once raised, a new waiter completes at once.
        stop.stopped().await;
    }
}
