//! `syncline participant` (INTERFACE.md): a periodic timer driven by a
//! remote `syncline coordinator` over zenoh. Simulated time runs the
//! library's participant shell (`run_simulated`); real time ticks on
//! `O + k*P` since the Unix epoch from the coordinator's start instant, on
//! the precise ticker.

use crate::input::{flag_ms, flag_ns, flag_ns_u64};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use clap::Args;
use syncline::core::timer::{Grid, Signal, SimParticipant};
use syncline::timer::{
    Ended, HEARTBEAT, Outbound, ParticipantTransport, PreciseTicker, SimClock, StopSignal,
    TransportClosed, lateness, run_simulated, system_now,
};
use syncline::{TimeDelta, Timestamp};
use syncline_zenoh::{TimingConfig, ZenohParticipant};

use crate::coordinator::{net_error, on_zenoh, one_zenoh_thread, open_session};
use crate::error::CliError;

/// Arguments of `syncline participant`.
#[derive(Debug, Args)]
pub struct ParticipantArgs {
    /// Zenoh endpoint to connect to (the coordinator's), repeatable.
    #[arg(long)]
    connect: Vec<String>,
    /// Zenoh endpoint to listen on (the coordinator connects here).
    #[arg(long)]
    listen: Vec<String>,
    /// This participant's name (letters, digits, '-', '_', '.').
    #[arg(long)]
    name: String,
    /// Timer period in nanoseconds (> 0) (integer ns, or with a unit: 5s, 10ms, 250us).
    #[arg(long = "period-ns", allow_hyphen_values = true, value_parser = flag_ns)]
    period_ns: i64,
    /// Grid offset in nanoseconds (0 <= O < P); simulated time: the first
    /// callback's time.
    #[arg(long = "offset-ns", default_value = "0", allow_hyphen_values = true, value_parser = flag_ns)]
    offset_ns: i64,
    /// Busy work per callback in nanoseconds.
    #[arg(long = "work-ns", default_value = "0", value_parser = flag_ns_u64)]
    work_ns: u64,
    /// Real time: add each tick's wake-up lateness (`late_ns`) to its line.
    #[arg(long)]
    lateness: bool,
    /// How long to wait for a coordinator that went away (0: for ever).
    #[arg(long = "coordinator-timeout-ms", default_value = "10000", value_parser = flag_ms)]
    coordinator_timeout_ms: u64,
    /// How long a silent link lives before its peer is declared lost.
    #[arg(long = "lease-ms", default_value = "1000", value_parser = flag_ms)]
    lease_ms: u64,
    /// Key expression prefix of the timing messages.
    #[arg(long, default_value = "syncline/timing")]
    prefix: String,
    /// A zenoh configuration file (JSON5) instead of the endpoint flags.
    #[arg(long = "zenoh-config")]
    zenoh_config: Option<String>,
}

/// A transport that first hands out a signal already taken from the
/// inner one (the first signal tells simulated from real time).
struct Primed {
    first: Option<Signal>,
    inner: ZenohParticipant,
}

impl ParticipantTransport for Primed {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn send(&mut self, msg: Outbound) -> Result<(), TransportClosed> {
        self.inner.send(msg)
    }

    async fn recv(&mut self) -> Option<Signal> {
        match self.first.take() {
            Some(s) => Some(s),
            None => self.inner.recv().await,
        }
    }
}

/// One callback's line: `{"name":N,"t_ns":T}` (names need no escaping:
/// they are letters, digits, `-`, `_`, `.`).
struct Lines {
    out: std::io::Stdout,
    prefix: Vec<u8>,
    int: itoa::Buffer,
}

impl Lines {
    fn new(name: &str) -> Self {
        Lines {
            out: std::io::stdout(),
            prefix: format!("{{\"name\":\"{name}\",\"t_ns\":").into_bytes(),
            int: itoa::Buffer::new(),
        }
    }

    fn tick(&mut self, t: Timestamp, late_ns: Option<i64>) -> std::io::Result<()> {
        let mut out = self.out.lock();
        out.write_all(&self.prefix)?;
        out.write_all(self.int.format(t.as_nanos()).as_bytes())?;
        if let Some(l) = late_ns {
            out.write_all(b",\"late_ns\":")?;
            out.write_all(self.int.format(l).as_bytes())?;
        }
        out.write_all(b"}\n")?;
        out.flush()
    }
}

fn busy(work: Duration) {
    if work.is_zero() {
        return;
    }
    let start = Instant::now();
    while start.elapsed() < work {
        std::hint::spin_loop();
    }
}

/// Runs `syncline participant`.
pub fn run(args: ParticipantArgs) -> Result<(), CliError> {
    one_zenoh_thread();
    if args.listen.is_empty() && args.connect.is_empty() && args.zenoh_config.is_none() {
        return Err(CliError::flag("--connect", "give --connect or --listen"));
    }
    syncline_zenoh::check_name(&args.name).map_err(|e| CliError::flag("--name", e.to_string()))?;
    let grid = Grid::new(
        TimeDelta::from_nanos(args.period_ns),
        TimeDelta::from_nanos(args.offset_ns),
    )
    .map_err(|e| CliError::flag("--period-ns", e.to_string()))?;
    let timeout = (args.coordinator_timeout_ms > 0)
        .then(|| Duration::from_millis(args.coordinator_timeout_ms));
    on_zenoh(async move {
        let session = open_session(
            &args.listen,
            &args.connect,
            args.lease_ms,
            args.zenoh_config.as_deref(),
        )
        .await?;
        let timing = TimingConfig::default()
            .prefix(args.prefix.clone())
            .coordinator_timeout(timeout);
        let transport = ZenohParticipant::new(&session, &args.name, &timing)
            .await
            .map_err(net_error)?;
        let result = participate(transport, grid, &args).await;
        let _ = session.close().await;
        result
    })
}

fn gone() -> CliError {
    net_error("the coordinator is gone")
}

async fn participate(
    mut transport: ZenohParticipant,
    grid: Grid,
    args: &ParticipantArgs,
) -> Result<(), CliError> {
    let mut core = SimParticipant::new(grid, Timestamp::EPOCH)
        .map_err(|e| CliError::flag("--period-ns", e.to_string()))?;
    let work = Duration::from_nanos(args.work_ns);
    // The first report; repeated until the coordinator answers.
    let first = loop {
        let next = core.next().unwrap_or(Timestamp::EPOCH);
        transport.send(Outbound::Ready(next)).map_err(|_| gone())?;
        match tokio::time::timeout(HEARTBEAT, transport.recv()).await {
            Ok(Some(s)) => break s,
            Ok(None) => return Err(gone()),
            Err(_) => continue,
        }
    };
    match first {
        Signal::Stop => Ok(()),
        Signal::Start(at) => real_time(transport, grid, at, args).await,
        s => {
            let mut link = Primed {
                first: Some(s),
                inner: transport,
            };
            let mut lines = Lines::new(&args.name);
            let mut failed = None;
            let (clock, stop) = (SimClock::default(), StopSignal::new());
            let ended = run_simulated(
                &mut link,
                &mut core,
                &clock,
                &stop,
                |t| {
                    if let Err(e) = lines.tick(t, None) {
                        failed = Some(e);
                        stop.stop();
                    }
                    busy(work);
                },
                None,
            )
            .await;
            if let Some(e) = failed {
                return Err(CliError::output(e));
            }
            match ended {
                Ended::StopSignal | Ended::Stopped => Ok(()),
                Ended::CoordinatorGone => Err(gone()),
            }
        }
    }
}

async fn real_time(
    mut transport: ZenohParticipant,
    grid: Grid,
    start: Timestamp,
    args: &ParticipantArgs,
) -> Result<(), CliError> {
    let stop = Arc::new(AtomicBool::new(false));
    let work = Duration::from_nanos(args.work_ns);
    let (name, with_lateness) = (args.name.clone(), args.lateness);
    let flag = stop.clone();
    let mut ticker = PreciseTicker::new(grid, start.max(system_now()))
        .map_err(|e| CliError::flag("--period-ns", e.to_string()))?;
    let thread = std::thread::Builder::new()
        .name(format!("timer-{name}"))
        .spawn(move || -> std::io::Result<()> {
            let mut lines = Lines::new(&name);
            while let Some((tick, woke)) = ticker.wait(&flag) {
                let late = with_lateness.then(|| lateness(&tick, woke));
                lines.tick(tick.deadline, late)?;
                busy(work);
            }
            Ok(())
        })
        .map_err(|source| CliError::Io {
            file: "<thread>".into(),
            source,
        })?;
    let mut beat = tokio::time::interval(HEARTBEAT);
    beat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let result = loop {
        tokio::select! {
            s = transport.recv() => match s {
                Some(Signal::Stop) => break Ok(()),
                Some(_) => {}
                None => break Err(gone()),
            },
            _ = beat.tick() => {
                // Alive (the coordinator reports a silent participant).
                let _ = transport.send(Outbound::Ready(system_now()));
            }
        }
    };
    stop.store(true, Ordering::Release);
    let ticked = tokio::task::spawn_blocking(move || thread.join())
        .await
        .ok()
        .and_then(Result::ok);
    match ticked {
        Some(Err(e)) => Err(CliError::output(e)),
        _ => result,
    }
}
