//! `syncline coordinator` (INTERFACE.md): the timing coordinator of
//! participants in other processes or on other hosts, over zenoh. Drives
//! the coordinator core itself (rather than `TimingCoordinator`) to print
//! its events, count steps and stop after N of them.

use crate::input::{flag_ms, flag_ns};
use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use syncline::core::timer::{
    Coordinator, CoordinatorConfig, Event, ParticipantId, Phase, Recipient, Report,
};
use syncline::timer::{CoordinatorTransport, Inbound, PeerKey, system_now};
use syncline::{TimeDelta, Timestamp};
use syncline_zenoh::{NetConfig, TimingConfig, ZenohCoordinator};

use crate::error::CliError;

/// What the coordinator does when a participant is lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnLeave {
    /// Go on without it (it may join again later).
    Continue,
    /// Stop the run.
    Stop,
    /// Hold simulated time until it is back (a lost link); nothing it
    /// should have received is lost, nothing is repeated.
    Wait,
}

/// Arguments of `syncline coordinator`.
#[derive(Debug, Args)]
pub struct CoordinatorArgs {
    /// Zenoh endpoint to listen on (`tcp/127.0.0.1:7447`).
    #[arg(long)]
    listen: Vec<String>,
    /// Zenoh endpoint to connect to (a peer or router), repeatable.
    #[arg(long)]
    connect: Vec<String>,
    /// Participants to wait for before starting, comma-separated.
    #[arg(long, value_delimiter = ',', required = true)]
    expect: Vec<String>,
    /// Simulated time: advance from the participants' ready reports.
    #[arg(long, conflicts_with = "realtime", requires = "steps")]
    sim: bool,
    /// Real time: send a start instant, stop after `--duration-ns`.
    #[arg(long, requires = "duration_ns")]
    realtime: bool,
    /// Simulated time: stop after this many steps (distinct times).
    #[arg(long)]
    steps: Option<u64>,
    /// Real time: stop this long after the start instant (integer ns, or with a unit: 5s, 10ms, 250us).
    #[arg(long = "duration-ns", value_parser = flag_ns)]
    duration_ns: Option<i64>,
    /// Real time: the start instant lies this far after the moment every
    /// expected participant is ready.
    #[arg(long = "start-offset-ns", default_value = "1s", value_parser = flag_ns)]
    start_offset_ns: i64,
    /// What to do when a participant is lost.
    #[arg(long = "on-leave", value_enum, default_value_t = OnLeave::Continue)]
    on_leave: OnLeave,
    /// Simulated time: how long a triggered participant may take to report.
    #[arg(long = "answer-timeout-ms", default_value = "3000", value_parser = flag_ms)]
    answer_timeout_ms: u64,
    /// How long a silent link lives before its peer is declared lost.
    #[arg(long = "lease-ms", default_value = "1000", value_parser = flag_ms)]
    lease_ms: u64,
    /// Print a status line (simulated time, steps, participants) this often.
    #[arg(long = "status-ms", value_parser = flag_ms)]
    status_ms: Option<u64>,
    /// Key expression prefix of the timing messages.
    #[arg(long, default_value = "syncline/timing")]
    prefix: String,
    /// A zenoh configuration file (JSON5) instead of the endpoint flags.
    #[arg(long = "zenoh-config")]
    zenoh_config: Option<String>,
}

pub(crate) fn net_error(e: impl std::fmt::Display) -> CliError {
    CliError::Io {
        file: "<zenoh>".into(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// Opens the zenoh session of a coordinator or participant.
pub(crate) async fn open_session(
    listen: &[String],
    connect: &[String],
    lease_ms: u64,
    file: Option<&str>,
) -> Result<zenoh::Session, CliError> {
    match file {
        Some(path) => syncline_zenoh::open_file(std::path::Path::new(path))
            .await
            .map_err(net_error),
        None => {
            let mut net = NetConfig::new().lease(Duration::from_millis(lease_ms.max(100)));
            net.listen = listen.to_vec();
            net.connect = connect.to_vec();
            net.open().await.map_err(net_error)
        }
    }
}

/// Runs this process again with zenoh's tasks on one thread
/// (`ZENOH_RUNTIME` = [`syncline_zenoh::ONE_THREAD_RUNTIME`]) unless the
/// variable is set already (a user's own choice, e.g. `ZENOH_RUNTIME='()'`
/// for zenoh's defaults). Zenoh reads the variable once, at its first use,
/// and setting it from inside the process would need `unsafe`: the process
/// replaces itself (same pid, same standard streams) before anything else
/// runs. Returns only where that is not possible (then nothing changes).
pub(crate) fn one_zenoh_thread() {
    const VAR: &str = "ZENOH_RUNTIME";
    #[cfg(unix)]
    if std::env::var_os(VAR).is_none()
        && let Ok(exe) = std::env::current_exe()
    {
        use std::os::unix::process::CommandExt;
        let e = std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env(VAR, syncline_zenoh::ONE_THREAD_RUNTIME)
            .exec();
        tracing::debug!("zenoh's runtime left as it is: {e}");
    }
}

/// Runs `fut` to its end as a task on zenoh's own runtime
/// ([`syncline_zenoh::zenoh_runtime`]; with [`one_zenoh_thread`], zenoh's
/// one thread): a message from a zenoh callback to the task, and a put
/// from the task to zenoh's sending task, then stay on one thread instead
/// of waking another.
pub(crate) fn on_zenoh<F>(fut: F) -> Result<(), CliError>
where
    F: std::future::Future<Output = Result<(), CliError>> + Send + 'static,
{
    let rt = syncline_zenoh::zenoh_runtime();
    match rt.block_on(rt.spawn(fut)) {
        Ok(result) => result,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        Err(e) => Err(CliError::Io {
            file: "<runtime>".into(),
            source: std::io::Error::other(e.to_string()),
        }),
    }
}

/// Runs `syncline coordinator`.
pub fn run(args: CoordinatorArgs) -> Result<(), CliError> {
    one_zenoh_thread();
    if args.listen.is_empty() && args.connect.is_empty() && args.zenoh_config.is_none() {
        return Err(CliError::flag("--listen", "give --listen or --connect"));
    }
    if !args.sim && !args.realtime {
        return Err(CliError::flag("--sim", "give --sim or --realtime"));
    }
    for name in &args.expect {
        syncline_zenoh::check_name(name).map_err(|e| CliError::flag("--expect", e.to_string()))?;
    }
    if args.duration_ns.is_some_and(|d| d < 0) {
        return Err(CliError::flag("--duration-ns", "must not be negative"));
    }
    if args.start_offset_ns < 0 {
        return Err(CliError::flag("--start-offset-ns", "must not be negative"));
    }
    let mut config = if args.sim {
        CoordinatorConfig::simulated()
    } else {
        CoordinatorConfig::real_time(TimeDelta::from_nanos(args.start_offset_ns))
    };
    config = config
        .expect(args.expect.iter().cloned())
        .answer_timeout(TimeDelta::from_millis(
            args.answer_timeout_ms.clamp(1, i64::MAX as u64 / 1_000_000) as i64,
        ));
    let core = Coordinator::new(config)
        .map_err(|e| CliError::flag("--answer-timeout-ms", e.to_string()))?;
    on_zenoh(async move {
        let session = open_session(
            &args.listen,
            &args.connect,
            args.lease_ms,
            args.zenoh_config.as_deref(),
        )
        .await?;
        let timing = TimingConfig::default().prefix(args.prefix.clone());
        let transport = ZenohCoordinator::new(&session, &timing)
            .await
            .map_err(net_error)?;
        let result = Shell::new(core, transport, &args).run().await;
        let _ = session.close().await;
        result
    })
}

/// Prints one JSON line and flushes it (events are rare; a watcher reads
/// them as they happen).
fn emit(v: &serde_json::Value) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, v).map_err(|e| CliError::output(std::io::Error::other(e)))?;
    out.write_all(b"\n").map_err(CliError::output)?;
    out.flush().map_err(CliError::output)
}

struct Shell {
    core: Coordinator,
    transport: ZenohCoordinator,
    on_leave: OnLeave,
    /// Simulated time: stop after this many steps.
    steps_limit: Option<u64>,
    /// Real time: stop this long after the start instant.
    duration: Option<TimeDelta>,
    status_every: Option<Duration>,
    by_key: Vec<Option<ParticipantId>>,
    by_id: Vec<Option<PeerKey>>,
    /// Participants lost under `--on-leave wait`.
    absent: Vec<ParticipantId>,
    /// Shell time excluded while participants were absent (wait policy).
    paused: Duration,
    paused_since: Option<Instant>,
    steps: u64,
    last_current: Option<Timestamp>,
    started_at: Option<Instant>,
    stopped_at: Option<Instant>,
    /// Real time: the start instant sent.
    start_at: Option<Timestamp>,
}

impl Shell {
    fn new(core: Coordinator, transport: ZenohCoordinator, args: &CoordinatorArgs) -> Self {
        Shell {
            core,
            transport,
            on_leave: args.on_leave,
            steps_limit: args.steps.filter(|_| args.sim),
            duration: args
                .duration_ns
                .filter(|_| args.realtime)
                .map(TimeDelta::from_nanos),
            status_every: args.status_ms.map(|ms| Duration::from_millis(ms.max(10))),
            by_key: Vec::new(),
            by_id: Vec::new(),
            absent: Vec::new(),
            paused: Duration::ZERO,
            paused_since: None,
            steps: 0,
            last_current: None,
            started_at: None,
            stopped_at: None,
            start_at: None,
        }
    }

    /// The shell time passed to the core: the system clock, less the time
    /// spent waiting for absent participants (so their answer timeouts do
    /// not run while the link is down).
    fn now(&self) -> Timestamp {
        let paused = self.paused + self.paused_since.map_or(Duration::ZERO, |s| s.elapsed());
        system_now().saturating_sub(TimeDelta::from_nanos(paused.as_nanos() as i64))
    }

    fn link(&mut self, key: PeerKey, id: ParticipantId) {
        let (k, i) = (key.0 as usize, id.0 as usize);
        if self.by_key.len() <= k {
            self.by_key.resize(k + 1, None);
        }
        if self.by_id.len() <= i {
            self.by_id.resize(i + 1, None);
        }
        self.by_key[k] = Some(id);
        self.by_id[i] = Some(key);
    }

    fn id(&self, key: PeerKey) -> Option<ParticipantId> {
        self.by_key.get(key.0 as usize).copied().flatten()
    }

    fn handle(&mut self, msg: Inbound) -> Result<(), CliError> {
        let now = self.now();
        match msg {
            Inbound::Join { peer, name } => self.join(peer, name)?,
            Inbound::Leave(peer) => {
                let Some(id) = self.by_key.get_mut(peer.0 as usize).and_then(Option::take) else {
                    return Ok(());
                };
                if let Some(k) = self.by_id.get_mut(id.0 as usize) {
                    *k = None;
                }
                let name = self.core.name(id).unwrap_or("?").to_string();
                if self.core.phase() != Phase::Stopped {
                    emit(&serde_json::json!({
                        "event": "left", "name": name, "reason": "liveliness token lost",
                    }))?;
                }
                match self.on_leave {
                    OnLeave::Continue => drop(self.core.deregister(id, now)),
                    OnLeave::Stop => {
                        drop(self.core.deregister(id, now));
                        self.core.stop();
                    }
                    OnLeave::Wait => {
                        self.absent.push(id);
                        self.paused_since.get_or_insert_with(Instant::now);
                    }
                }
            }
            Inbound::Ready { peer, next } => {
                if let Some(from) = self.id(peer) {
                    drop(self.core.handle(Report::Ready { from, next }, now));
                }
            }
            Inbound::StopRequest(peer) => match self.id(peer) {
                Some(from) => drop(self.core.handle(Report::StopRequest { from }, now)),
                None => self.core.stop(),
            },
        }
        self.after_input();
        Ok(())
    }

    fn join(&mut self, peer: PeerKey, name: Arc<str>) -> Result<(), CliError> {
        // Back under the wait policy: the core never saw it leave.
        if let Some(pos) = self
            .absent
            .iter()
            .position(|&id| self.core.name(id) == Some(&*name))
        {
            let id = self.absent.swap_remove(pos);
            self.link(peer, id);
            if self.absent.is_empty()
                && let Some(since) = self.paused_since.take()
            {
                self.paused += since.elapsed();
            }
        } else {
            match self.core.register(&name) {
                Ok(id) => self.link(peer, id),
                Err(e) => {
                    eprintln!("syncline: coordinator: {e}");
                    return Ok(());
                }
            }
        }
        emit(&serde_json::json!({"event": "joined", "name": &*name}))
    }

    /// Counts steps; stops after the last one (its triggers go out first,
    /// then the stop: every participant runs every step it was due).
    fn after_input(&mut self) {
        let current = self.core.current();
        if current.is_some() && current != self.last_current {
            self.last_current = current;
            self.steps += 1;
            if self.steps_limit.is_some_and(|n| self.steps >= n) {
                self.core.stop();
            }
        }
    }

    fn flush(&mut self) -> Result<(), CliError> {
        let by_id = &self.by_id;
        let absent = &self.absent;
        let core = &mut self.core;
        let start_at = &mut self.start_at;
        let signals = std::iter::from_fn(|| {
            loop {
                let cmd = core.poll_command()?;
                if let syncline::core::timer::Signal::Start(at) = cmd.signal {
                    *start_at = Some(at);
                }
                match cmd.to {
                    Recipient::All => return Some((None, cmd.signal)),
                    Recipient::One(id) => {
                        if let Some(key) = by_id.get(id.0 as usize).copied().flatten() {
                            return Some((Some(key), cmd.signal));
                        }
                        if absent.contains(&id) {
                            tracing::debug!(?id, "signal for an absent participant");
                        }
                    }
                }
            }
        });
        self.transport.send_all(signals);
        while let Some(e) = self.core.poll_event() {
            match e {
                Event::Started { .. } => {
                    self.started_at = Some(Instant::now());
                    emit(&serde_json::json!({"event": "started"}))?;
                }
                Event::Stopped => {
                    self.stopped_at = Some(Instant::now());
                    emit(&serde_json::json!({"event": "stopped"}))?;
                }
                Event::Unresponsive { participant, .. } | Event::Silent { participant, .. } => {
                    emit(&serde_json::json!({
                        "event": "unresponsive", "name": self.core.name(participant),
                    }))?;
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn status_line(&self) -> serde_json::Value {
        let status = self.core.status();
        let participants: Vec<_> = status
            .participants
            .iter()
            .map(|p| serde_json::json!({"name": p.name, "state": p.state}))
            .collect();
        serde_json::json!({
            "event": "status",
            "phase": status.phase,
            "t_ns": status.current.map(Timestamp::as_nanos),
            "steps": self.steps,
            "participants": participants,
        })
    }

    async fn run(mut self) -> Result<(), CliError> {
        let mut status_tick = self.status_every.map(|d| {
            let mut i = tokio::time::interval(d);
            i.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
            i
        });
        let sleep = tokio::time::sleep(Duration::ZERO);
        tokio::pin!(sleep);
        let mut armed: Option<tokio::time::Instant> = None;
        // Registered once (not per message).
        let interrupt = tokio::signal::ctrl_c();
        tokio::pin!(interrupt);
        let mut interrupted = false;
        loop {
            self.flush()?;
            if self.core.phase() == Phase::Stopped {
                break;
            }
            // The core's timeout (not while waiting for absent participants).
            let mut wake: Option<Timestamp> = if self.paused_since.is_some() {
                None
            } else {
                self.core.poll_timeout()
            };
            // Real time: the stop instant (system clock).
            let stop_at = match (self.duration, self.start_at) {
                (Some(d), Some(at)) => Some(at.saturating_add(d)),
                _ => None,
            };
            let until = |t: Timestamp, now: Timestamp| {
                Duration::from_nanos(t.nanos_since_wide(now).clamp(0, u64::MAX as i128) as u64)
            };
            let wait = match (
                wake.take().map(|t| until(t, self.now())),
                stop_at.map(|s| until(s, system_now())),
            ) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            // One timer for the run, moved only to an earlier deadline (a
            // later one is checked when it fires; an early wake-up is
            // harmless): no timer-wheel work per step.
            match wait.map(|d| tokio::time::Instant::now() + d) {
                Some(at) if armed.is_none_or(|a| at < a) => {
                    sleep.as_mut().reset(at);
                    armed = Some(at);
                }
                Some(_) => {}
                None => armed = None,
            }
            let status = async {
                match status_tick.as_mut() {
                    Some(i) => {
                        i.tick().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                m = self.transport.recv() => {
                    let Some(m) = m else { break };
                    self.handle(m)?;
                    while let Some(m) = self.transport.try_recv() {
                        self.handle(m)?;
                        self.flush()?;
                    }
                }
                () = &mut sleep, if armed.is_some() => {
                    armed = None;
                    let now = self.now();
                    if stop_at.is_some_and(|s| system_now() >= s) {
                        self.core.stop();
                    } else {
                        self.core.handle_timeout(now);
                        self.after_input();
                    }
                }
                () = status => emit(&self.status_line())?,
                _ = &mut interrupt, if !interrupted => {
                    interrupted = true;
                    self.core.stop();
                }
            }
        }
        self.flush()?;
        self.linger().await;
        self.summary()
    }

    /// After the stop: gives the participants up to 2 s to take it and
    /// leave, so the stop is delivered before this process closes.
    async fn linger(&mut self) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        while self.transport.alive().next().is_some() {
            match tokio::time::timeout_at(deadline, self.transport.recv()).await {
                Ok(Some(Inbound::Join { peer, .. })) => {
                    // A late (or returning) joiner is told to stop.
                    let _ = self
                        .transport
                        .send(Some(peer), syncline::core::timer::Signal::Stop);
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
    }

    fn summary(&self) -> Result<(), CliError> {
        let status = self.core.status();
        let elapsed = match (self.started_at, self.stopped_at) {
            (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
            _ => 0.0,
        };
        let rate = if elapsed > 0.0 {
            self.steps as f64 / elapsed
        } else {
            0.0
        };
        let participants: Vec<_> = status
            .participants
            .iter()
            .map(|p| serde_json::json!({"name": p.name, "state": p.state}))
            .collect();
        emit(&serde_json::json!({"summary": {
            "steps": self.steps,
            "steps_per_s": (rate * 10.0).round() / 10.0,
            "participants": participants,
            "t_ns": status.current.map(Timestamp::as_nanos),
            "start_ns": status.start_at.map(Timestamp::as_nanos),
            "triggers": status.triggers,
            "unresponsive": status.unresponsive,
            "link": self.transport.stats(),
        }}))
    }
}
