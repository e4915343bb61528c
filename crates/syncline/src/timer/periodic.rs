//! [`PeriodicTimer`]: CPM Lab's `cpm::Timer` on syncline's cores. Real
//! time: a dedicated thread wakes precisely on the grid `offset + n *
//! period` (system clock, never early). Simulated time: the thread steps
//! when the timing coordinator triggers it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use futures::FutureExt;
use tokio::sync::mpsc;

use super::bus::BusParticipant;
use super::participant::{Ended, HEARTBEAT, run_simulated};
use super::precise::{DEFAULT_SPIN, PreciseTicker, system_now};
use super::sim_clock::SimClock;
use super::stop::StopSignal;
use super::transport::{Outbound, ParticipantTransport};
use syncline_core::timer::{Grid, ScheduleError, Signal, SimParticipant};
use syncline_core::{TimeDelta, Timestamp};

/// The parameters of a [`PeriodicTimer`] (CPM's `Timer::create`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimerConfig {
    /// The participant name used with the coordinator.
    pub node_id: String,
    /// The period (> 0).
    pub period: TimeDelta,
    /// The offset of the grid (`0 <= offset < period`).
    pub offset: TimeDelta,
    /// Real time: wait for the coordinator's start signal before ticking.
    pub wait_for_start: bool,
    /// Whether this program may run in simulated time at all.
    pub simulated_time_allowed: bool,
    /// Run in simulated time (requires `simulated_time_allowed`).
    pub simulated_time: bool,
    /// Real time: how long before a deadline the thread stops parking and
    /// spins on the system clock.
    pub spin: Duration,
    /// Real time with a coordinator, after the start: how often the timer
    /// tells the coordinator it is alive (from its tick loop, so a timer
    /// whose callback hangs falls silent and is reported). Default
    /// [`HEARTBEAT`].
    pub heartbeat: Duration,
}

impl TimerConfig {
    /// A real-time timer that starts at once (no coordinator needed).
    pub fn new(node_id: impl Into<String>, period: TimeDelta, offset: TimeDelta) -> Self {
        TimerConfig {
            node_id: node_id.into(),
            period,
            offset,
            wait_for_start: false,
            simulated_time_allowed: false,
            simulated_time: false,
            spin: DEFAULT_SPIN,
            heartbeat: HEARTBEAT,
        }
    }

    /// Sets `wait_for_start`.
    pub fn wait_for_start(mut self, wait: bool) -> Self {
        self.wait_for_start = wait;
        self
    }

    /// Allows simulated time and selects it (`simulated`) or real time.
    pub fn simulated(mut self, allowed: bool, simulated: bool) -> Self {
        self.simulated_time_allowed = allowed;
        self.simulated_time = simulated;
        self
    }
}

/// Errors of [`PeriodicTimer`].
#[derive(Debug, thiserror::Error)]
pub enum TimerError {
    /// Period or offset invalid.
    #[error(transparent)]
    Schedule(#[from] ScheduleError),
    /// The period is below the timer's resolution.
    #[error("the period {period_ns} ns is below the minimum of {min_ns} ns")]
    PeriodTooShort {
        /// The period given.
        period_ns: i64,
        /// The minimum.
        min_ns: i64,
    },
    /// Simulated time requested but not allowed for this program.
    #[error("simulated time requested but not allowed")]
    SimulatedNotAllowed,
    /// Simulated time or waiting for the start needs a coordinator link.
    #[error("this timer needs a coordinator transport (simulated time or wait-for-start)")]
    NeedsCoordinator,
    /// `start` was called twice.
    #[error("the timer cannot be started twice")]
    AlreadyStarted,
    /// The blocking `start` was called from async code; use `start_async`.
    #[error("the blocking start cannot run inside a tokio runtime; use start_async")]
    InsideRuntime,
    /// The coordinator went away before the start signal.
    #[error("the coordinator is gone")]
    CoordinatorGone,
    /// The timer thread or its runtime could not be created.
    #[error("timer thread: {0}")]
    Thread(#[from] std::io::Error),
}

/// Counters of a [`PeriodicTimer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct TimerStats {
    /// Callbacks run.
    pub ticks: u64,
    /// Deadlines skipped (late wake-ups or overruns; never replayed).
    pub missed: u64,
    /// Callbacks that panicked (the timer went on).
    pub panics: u64,
    /// Callbacks that ran past the next deadline.
    pub overruns: u64,
    /// Ticks dropped because a channel consumer was behind.
    pub dropped: u64,
}

#[derive(Debug)]
struct Shared {
    ticks: AtomicU64,
    missed: AtomicU64,
    panics: AtomicU64,
    overruns: AtomicU64,
    dropped: AtomicU64,
    start_time: AtomicI64,
    clock: SimClock,
}

const UNKNOWN: i64 = i64::MIN;

type Callback = Box<dyn FnMut(Timestamp) + Send>;
type StopCallback = Box<dyn FnMut() + Send>;

/// A periodic timer (CPM's `cpm::Timer`).
///
/// The callback receives the deadline it was scheduled for (not the
/// measured time), so all participants compute with identical grid times.
/// A callback that panics is counted and logged and the timer goes on; one
/// that runs past the next deadline is counted as an overrun and the
/// deadlines it covered are skipped (never replayed).
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use syncline::timer::{PeriodicTimer, TimerConfig};
/// use syncline::TimeDelta;
///
/// let config = TimerConfig::new("demo", TimeDelta::from_millis(2), TimeDelta::ZERO);
/// let timer = Arc::new(PeriodicTimer::standalone(config).unwrap());
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let (t, s) = (timer.clone(), seen.clone());
/// timer.start_async(move |deadline| {
///     let mut seen = s.lock().unwrap();
///     seen.push(deadline);
///     if seen.len() == 3 { t.stop_async(); }
/// }).unwrap();
/// timer.join();
/// let seen = seen.lock().unwrap();
/// assert_eq!(seen.len(), 3);
/// assert!(seen.windows(2).all(|w| (w[1].as_nanos() - w[0].as_nanos()) % 2_000_000 == 0));
/// ```
pub struct PeriodicTimer<T: ParticipantTransport = BusParticipant> {
    config: TimerConfig,
    grid: Grid,
    transport: Mutex<Option<T>>,
    started: AtomicBool,
    stop: StopSignal,
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<Result<Ended, TimerError>>>>,
}

impl<T: ParticipantTransport> std::fmt::Debug for PeriodicTimer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeriodicTimer")
            .field("config", &self.config)
            .field("stats", &self.stats())
            .finish()
    }
}

impl PeriodicTimer {
    /// A real-time timer without a coordinator (it starts at once; for
    /// `wait_for_start` or simulated time use [`PeriodicTimer::new`] with a
    /// transport).
    pub fn standalone(config: TimerConfig) -> Result<Self, TimerError> {
        PeriodicTimer::new(config, None)
    }
}

impl<T: ParticipantTransport> PeriodicTimer<T> {
    /// A timer; `transport` links it to the coordinator (required for
    /// simulated time and for `wait_for_start`).
    pub fn new(config: TimerConfig, transport: Option<T>) -> Result<Self, TimerError> {
        let grid = Grid::new(config.period, config.offset)?;
        if config.simulated_time && !config.simulated_time_allowed {
            return Err(TimerError::SimulatedNotAllowed);
        }
        if (config.simulated_time || config.wait_for_start) && transport.is_none() {
            return Err(TimerError::NeedsCoordinator);
        }
        Ok(PeriodicTimer {
            config,
            grid,
            transport: Mutex::new(transport),
            started: AtomicBool::new(false),
            stop: StopSignal::new(),
            shared: Arc::new(Shared {
                ticks: AtomicU64::new(0),
                missed: AtomicU64::new(0),
                panics: AtomicU64::new(0),
                overruns: AtomicU64::new(0),
                dropped: AtomicU64::new(0),
                start_time: AtomicI64::new(UNKNOWN),
                clock: SimClock::default(),
            }),
            thread: Mutex::new(None),
        })
    }

    /// Uses `clock` as this timer's simulated clock (share one clock among
    /// the timers and components of a simulated pipeline).
    pub fn with_sim_clock(mut self, clock: SimClock) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.clock = clock;
        }
        self
    }

    /// The simulated clock this timer advances (simulated time only).
    pub fn sim_clock(&self) -> SimClock {
        self.shared.clock.clone()
    }

    /// The current time: the system clock in real time, the current
    /// simulated time in simulated time.
    pub fn time(&self) -> Timestamp {
        if self.config.simulated_time {
            crate::clock::Clock::now(&self.shared.clock)
        } else {
            system_now()
        }
    }

    /// The first deadline once known (real time); the epoch in simulated
    /// time.
    pub fn start_time(&self) -> Option<Timestamp> {
        if self.config.simulated_time {
            return Some(Timestamp::EPOCH);
        }
        match self.shared.start_time.load(Ordering::Acquire) {
            UNKNOWN => None,
            t => Some(Timestamp::from_nanos(t)),
        }
    }

    /// The counters.
    pub fn stats(&self) -> TimerStats {
        let s = &self.shared;
        TimerStats {
            ticks: s.ticks.load(Ordering::Relaxed),
            missed: s.missed.load(Ordering::Relaxed),
            panics: s.panics.load(Ordering::Relaxed),
            overruns: s.overruns.load(Ordering::Relaxed),
            dropped: s.dropped.load(Ordering::Relaxed),
        }
    }

    fn take(&self) -> Result<Run<T>, TimerError> {
        if self.started.swap(true, Ordering::AcqRel) {
            return Err(TimerError::AlreadyStarted);
        }
        let transport = self.transport.lock().ok().and_then(|mut t| t.take());
        Ok(Run {
            config: self.config.clone(),
            grid: self.grid,
            transport,
            stop: self.stop.clone(),
            shared: self.shared.clone(),
        })
    }

    /// Runs the timer in the calling thread until it is stopped (by
    /// [`stop_async`](Self::stop_async) from the callback or another
    /// thread, or by the coordinator). Not from async code: use
    /// [`start_async`](Self::start_async) there.
    pub fn start(
        &self,
        callback: impl FnMut(Timestamp) + Send + 'static,
    ) -> Result<Ended, TimerError> {
        self.start_with_stop(callback, None::<fn()>)
    }

    /// Like [`start`](Self::start); a stop signal from the coordinator
    /// calls `on_stop` instead of stopping the timer.
    pub fn start_with_stop<S: FnMut() + Send + 'static>(
        &self,
        callback: impl FnMut(Timestamp) + Send + 'static,
        on_stop: Option<S>,
    ) -> Result<Ended, TimerError> {
        if tokio::runtime::Handle::try_current().is_ok() {
            return Err(TimerError::InsideRuntime);
        }
        let run = self.take()?;
        run.run(
            Box::new(callback),
            on_stop.map(|f| Box::new(f) as StopCallback),
        )
    }

    /// Runs the timer on a new thread. Errors if already started.
    pub fn start_async(
        &self,
        callback: impl FnMut(Timestamp) + Send + 'static,
    ) -> Result<(), TimerError> {
        self.start_async_with_stop(callback, None::<fn()>)
    }

    /// [`start_async`](Self::start_async) with a stop callback (see
    /// [`start_with_stop`](Self::start_with_stop)).
    pub fn start_async_with_stop<S: FnMut() + Send + 'static>(
        &self,
        callback: impl FnMut(Timestamp) + Send + 'static,
        on_stop: Option<S>,
    ) -> Result<(), TimerError> {
        let run = self.take()?;
        let cb: Callback = Box::new(callback);
        let stop_cb = on_stop.map(|f| Box::new(f) as StopCallback);
        let handle = std::thread::Builder::new()
            .name(format!("timer-{}", self.config.node_id))
            .spawn(move || run.run(cb, stop_cb))?;
        if let Ok(mut t) = self.thread.lock() {
            *t = Some(handle);
        }
        Ok(())
    }

    /// Runs the timer on a new thread and delivers each deadline on a
    /// channel of `capacity` (for async consumers). A tick that finds the
    /// channel full is dropped and counted in `dropped`.
    pub fn start_channel(&self, capacity: usize) -> Result<mpsc::Receiver<Timestamp>, TimerError> {
        let (tx, rx) = mpsc::channel(capacity.max(1));
        let shared = self.shared.clone();
        self.start_async(move |t| {
            if tx.try_send(t).is_err() {
                shared.dropped.fetch_add(1, Ordering::Relaxed);
            }
        })?;
        Ok(rx)
    }

    /// Asks the timer to stop and returns at once: a parked real-time
    /// timer wakes immediately, a simulated one leaves its wait at once.
    /// A callback already running finishes first. Safe from the callback.
    pub fn stop_async(&self) {
        self.stop.stop();
    }

    /// Waits for a timer started with `start_async` to end, and returns how
    /// it ended (`None` if it was not started asynchronously or was
    /// already joined).
    pub fn join(&self) -> Option<Result<Ended, TimerError>> {
        let handle = self.thread.lock().ok()?.take()?;
        if handle.thread().id() == std::thread::current().id() {
            return None; // called from its own callback: cannot join itself
        }
        match handle.join() {
            Ok(r) => Some(r),
            Err(p) => std::panic::resume_unwind(p),
        }
    }

    /// Stops the timer and waits for its thread (like CPM's `stop()`, but
    /// prompt: it does not wait for the next tick, and it does not hang
    /// when the coordinator is gone).
    pub fn stop(&self) -> Option<Result<Ended, TimerError>> {
        self.stop_async();
        self.join()
    }
}

impl<T: ParticipantTransport> Drop for PeriodicTimer<T> {
    fn drop(&mut self) {
        self.stop();
    }
}

struct Run<T> {
    config: TimerConfig,
    grid: Grid,
    transport: Option<T>,
    stop: StopSignal,
    shared: Arc<Shared>,
}

impl<T: ParticipantTransport> Run<T> {
    fn call(&self, callback: &mut Callback, deadline: Timestamp) {
        self.shared.ticks.fetch_add(1, Ordering::Relaxed);
        if catch_unwind(AssertUnwindSafe(|| callback(deadline))).is_err() {
            self.shared.panics.fetch_add(1, Ordering::Relaxed);
            tracing::error!(timer = %self.config.node_id, %deadline, "timer callback panicked; timer goes on");
        }
    }

    fn runtime() -> Result<tokio::runtime::Runtime, TimerError> {
        Ok(tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()?)
    }

    fn run(
        mut self,
        mut callback: Callback,
        mut on_stop: Option<StopCallback>,
    ) -> Result<Ended, TimerError> {
        if self.config.simulated_time {
            let mut transport = self.transport.take().ok_or(TimerError::NeedsCoordinator)?;
            let mut core = SimParticipant::new(self.grid, Timestamp::EPOCH)?;
            let clock = self.shared.clock.clone();
            let rt = Self::runtime()?;
            let stop = self.stop.clone();
            let this = &self;
            let ended = rt.block_on(run_simulated(
                &mut transport,
                &mut core,
                &clock,
                &stop,
                |t| this.call(&mut callback, t),
                on_stop
                    .as_mut()
                    .map(|f| &mut **f as &mut (dyn FnMut() + Send)),
            ));
            let st = core.status();
            self.shared
                .missed
                .store(st.schedule.missed, Ordering::Relaxed);
            return Ok(ended);
        }
        self.run_real_time(callback, on_stop)
    }

    fn run_real_time(
        mut self,
        mut callback: Callback,
        mut on_stop: Option<StopCallback>,
    ) -> Result<Ended, TimerError> {
        let start = if self.config.wait_for_start {
            let transport = self
                .transport
                .as_mut()
                .ok_or(TimerError::NeedsCoordinator)?;
            let rt = Self::runtime()?;
            match rt.block_on(wait_for_start(transport, &self.stop)) {
                Ok(at) => at,
                Err(ended @ (Ended::Stopped | Ended::StopSignal)) => return Ok(ended),
                Err(Ended::CoordinatorGone) => return Err(TimerError::CoordinatorGone),
            }
        } else {
            system_now()
        };
        let now = system_now();
        if self.config.wait_for_start && start < now {
            tracing::warn!(timer = %self.config.node_id, %start, %now,
                "start time already past; starting at the next grid point");
        }
        let mut ticker = PreciseTicker::new(self.grid, start.max(now))?.spin(self.config.spin);
        if let Some(first) = ticker.next_deadline() {
            self.shared
                .start_time
                .store(first.as_nanos(), Ordering::Release);
        }
        self.stop.attach_current_thread();
        let heartbeat = i128::try_from(self.config.heartbeat.as_nanos()).unwrap_or(i128::MAX);
        let mut last_beat = start.max(now);
        while let Some((tick, _woke)) = ticker.wait(self.stop.flag()) {
            if tick.missed > 0 {
                self.shared.missed.fetch_add(tick.missed, Ordering::Relaxed);
                tracing::warn!(timer = %self.config.node_id, missed = tick.missed, "periods missed");
            }
            self.call(&mut callback, tick.deadline);
            if ticker
                .next_deadline()
                .is_some_and(|next| system_now() >= next)
            {
                self.shared.overruns.fetch_add(1, Ordering::Relaxed);
                tracing::warn!(timer = %self.config.node_id, deadline = %tick.deadline,
                    "callback overran its period");
            }
            // Alive: a heartbeat at most every `heartbeat` (grid time).
            if let Some(transport) = self.transport.as_mut()
                && tick.deadline.nanos_since_wide(last_beat) >= heartbeat
            {
                last_beat = tick.deadline;
                if transport.send(Outbound::Ready(tick.deadline)).is_err() {
                    self.transport = None; // coordinator gone: keep ticking
                }
            }
            // A stop signal from the coordinator (checked without waiting).
            while let Some(transport) = self.transport.as_mut() {
                match transport.recv().now_or_never() {
                    None => break,
                    Some(None) => self.transport = None, // coordinator gone: keep ticking
                    Some(Some(Signal::Stop)) => match on_stop.as_mut() {
                        Some(f) => f(),
                        None => return Ok(Ended::StopSignal),
                    },
                    Some(Some(_)) => {}
                }
            }
        }
        Ok(Ended::Stopped)
    }
}

/// Real time: announce readiness (repeated every [`HEARTBEAT`]) until the
/// coordinator's start signal arrives.
async fn wait_for_start<T: ParticipantTransport>(
    transport: &mut T,
    stop: &StopSignal,
) -> Result<Timestamp, Ended> {
    loop {
        if transport.send(Outbound::Ready(Timestamp::EPOCH)).is_err() {
            return Err(Ended::CoordinatorGone);
        }
        let deadline = tokio::time::sleep(HEARTBEAT);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                biased;
                () = stop.stopped() => return Err(Ended::Stopped),
                s = transport.recv() => match s {
                    None => return Err(Ended::CoordinatorGone),
                    Some(Signal::Start(at)) => return Ok(at),
                    Some(Signal::Stop) => return Err(Ended::StopSignal),
                    Some(_) => continue,
                },
                () = &mut deadline => break,
            }
        }
    }
}
