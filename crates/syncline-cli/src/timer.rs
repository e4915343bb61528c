//! `syncline timer`: timer precision on this machine (INTERFACE.md), like
//! `cyclictest`: runs the real-time periodic timer for N ticks and prints
//! the wake-up lateness of each, then a summary; `--baseline tokio` runs
//! the same schedule with `tokio::time::interval_at` for comparison.

use crate::input::{flag_ns, flag_ns_u64};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use clap::{Args, ValueEnum};
use syncline::core::timer::{Grid, Tick};
use syncline::timer::{PreciseTicker, lateness, system_now};
use syncline::{TimeDelta, Timestamp};
use syncline_log::quantiles::Quantiles;

use crate::error::CliError;
use crate::output::Output;

/// Timer used instead of syncline's precise timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Baseline {
    /// `tokio::time::interval_at` on a current-thread runtime.
    Tokio,
}

/// Arguments of `syncline timer`.
#[derive(Debug, Args)]
pub struct TimerArgs {
    /// Period in nanoseconds (> 0) (integer ns, or with a unit: 5s, 10ms, 250us).
    #[arg(long = "period-ns", allow_hyphen_values = true, value_parser = flag_ns)]
    period_ns: i64,
    /// Number of ticks to run (>= 1).
    #[arg(long)]
    count: u64,
    /// Offset of the grid in nanoseconds (0 <= O < P).
    #[arg(long = "offset-ns", default_value = "0", allow_hyphen_values = true, value_parser = flag_ns)]
    offset_ns: i64,
    /// Run the same schedule on another timer, for comparison.
    #[arg(long, value_enum)]
    baseline: Option<Baseline>,
    /// Spin margin of syncline's timer in nanoseconds: it parks until this
    /// long before the deadline, then spins on the system clock.
    #[arg(long = "spin-ns", default_value = "200us", value_parser = flag_ns_u64)]
    spin_ns: u64,
    /// Write to this file instead of standard output.
    #[arg(long)]
    output: Option<String>,
}

/// Lateness figures over a run, in bounded memory: percentiles exact for
/// the first 8192 ticks, then from a histogram within 0.2 %
/// (`syncline_log::quantiles`); the maximum is always exact.
struct Stats {
    lateness: Quantiles,
    early: u64,
    missed: u64,
}

impl Stats {
    fn new() -> Self {
        Stats {
            lateness: Quantiles::new(),
            early: 0,
            missed: 0,
        }
    }

    fn record(&mut self, out: &mut Output, tick: &Tick, woke: Timestamp) -> Result<(), CliError> {
        let late = lateness(tick, woke);
        let n = self.lateness.count();
        out.raw(b"{\"n\": ")?;
        out.int(n)?;
        out.raw(b", \"deadline_ns\": ")?;
        out.int(tick.deadline.as_nanos())?;
        out.raw(b", \"woke_ns\": ")?;
        out.int(woke.as_nanos())?;
        out.raw(b", \"lateness_ns\": ")?;
        out.int(late)?;
        out.raw(b"}\n")?;
        self.lateness.push(late);
        self.early += u64::from(late < 0);
        self.missed = self.missed.saturating_add(tick.missed);
        Ok(())
    }

    fn summary(mut self, out: &mut Output, timer: &str) -> Result<(), CliError> {
        // Nearest rank: the ceil(p * n / 100)-th smallest value.
        let p50 = self.lateness.percentile(50).unwrap_or(0);
        let p99 = self.lateness.percentile(99).unwrap_or(0);
        let max = self.lateness.max().unwrap_or(0);
        out.raw(b"{\"summary\": {\"ticks\": ")?;
        out.int(self.lateness.count())?;
        for (key, v) in [
            (&b", \"p50_ns\": "[..], p50),
            (b", \"p99_ns\": ", p99),
            (b", \"max_ns\": ", max),
        ] {
            out.raw(key)?;
            out.int(v)?;
        }
        out.raw(b", \"early\": ")?;
        out.int(self.early)?;
        out.raw(b", \"missed\": ")?;
        out.int(self.missed)?;
        out.raw(b", \"timer\": ")?;
        out.string(timer)?;
        out.raw(b"}}\n")?;
        out.flush()
    }
}

/// Runs `syncline timer`.
pub fn run(args: TimerArgs) -> Result<(), CliError> {
    if args.period_ns <= 0 {
        return Err(CliError::flag("--period-ns", "must be positive"));
    }
    if args.count == 0 {
        return Err(CliError::flag("--count", "must be at least 1"));
    }
    let grid = Grid::new(
        TimeDelta::from_nanos(args.period_ns),
        TimeDelta::from_nanos(args.offset_ns),
    )
    .map_err(|e| CliError::flag("--offset-ns", e.to_string()))?;
    let mut out = Output::open(args.output.as_deref())?;
    // Start a little in the future so the first wait is a real one.
    let start = system_now().saturating_add(TimeDelta::from_millis(1));
    match args.baseline {
        None => run_precise(grid, start, &args, &mut out),
        Some(Baseline::Tokio) => run_tokio(grid, start, &args, &mut out),
    }
}

fn run_precise(
    grid: Grid,
    start: Timestamp,
    args: &TimerArgs,
    out: &mut Output,
) -> Result<(), CliError> {
    let mut ticker = PreciseTicker::new(grid, start)
        .map_err(|e| CliError::flag("--period-ns", e.to_string()))?
        .spin(Duration::from_nanos(args.spin_ns));
    let stop = AtomicBool::new(false);
    let mut stats = Stats::new();
    for _ in 0..args.count {
        let Some((tick, woke)) = ticker.wait(&stop) else {
            break; // the grid left the representable time range
        };
        stats.record(out, &tick, woke)?;
    }
    stats.summary(out, "syncline")
}

fn run_tokio(
    grid: Grid,
    start: Timestamp,
    args: &TimerArgs,
    out: &mut Output,
) -> Result<(), CliError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .map_err(|e| CliError::Io {
            file: "<tokio runtime>".into(),
            source: e,
        })?;
    let first = grid
        .at_or_after(start)
        .map_err(|e| CliError::flag("--period-ns", e.to_string()))?;
    let period = Duration::from_nanos(grid.period().as_nanos().unsigned_abs());
    rt.block_on(async {
        // Map the first system-clock deadline onto tokio's monotonic clock.
        let now_sys = system_now();
        let now_mono = tokio::time::Instant::now();
        let ahead = u64::try_from(first.nanos_since_wide(now_sys)).unwrap_or(0);
        let start_mono = now_mono + Duration::from_nanos(ahead);
        let mut interval = tokio::time::interval_at(start_mono, period);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let mut stats = Stats::new();
        let mut expected_index: i128 = 0;
        let period_ns = i128::from(grid.period().as_nanos());
        for _ in 0..args.count {
            let at = interval.tick().await;
            let woke = system_now();
            let since = at.saturating_duration_since(start_mono).as_nanos() as i128;
            let index = since / period_ns;
            let deadline_wide = i128::from(first.as_nanos()) + index * period_ns;
            let deadline = Timestamp::from_nanos(i64::try_from(deadline_wide).unwrap_or(i64::MAX));
            let missed = u64::try_from(index - expected_index).unwrap_or(0);
            expected_index = index + 1;
            stats.record(out, &Tick { deadline, missed }, woke)?;
        }
        stats.summary(out, "tokio")
    })
}
