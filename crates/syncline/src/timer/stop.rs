//! A stop signal that wakes both async waiters and a parked timer thread.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::Thread;

use tokio::sync::Notify;

#[derive(Debug, Default)]
struct Inner {
    flag: AtomicBool,
    notify: Notify,
    thread: Mutex<Option<Thread>>,
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
        self.inner.notify.notify_waiters();
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

    /// Completes once the signal is raised.
    pub async fn stopped(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.is_stopped() {
                return;
            }
            notified.await;
        }
    }
}
