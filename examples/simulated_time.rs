//! A timing coordinator drives three participants -- a 100 Hz controller, a
//! 20 Hz planner and a 1 Hz logger -- first in simulated time, paced at ten
//! times real time, then the very same program in real time. Both runs
//! produce the same sequence of values.
//!
//! The participants talk through stamped messages (CPM's `stamp_message`):
//! the planner's setpoint becomes valid 10 ms after its tick, the
//! controller's output 5 ms after its tick, and each reader takes the newest
//! sample already valid at its own deadline. That is what makes the result
//! independent of thread scheduling, in simulated and in real time.
//!
//! Run: `cargo run --release --example simulated_time`

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use syncline::clock::{Clock, SystemClock};
use syncline::core::timer::{CoordinatorConfig, Grid, Header, ValidReader};
use syncline::timer::{
    PeriodicTimer, SimClock, TimerConfig, TimingCoordinator, in_process_bus, system_now,
};
use syncline::{TimeDelta, Timestamp};

type Error = Box<dyn std::error::Error>;

const PARTICIPANTS: [(&str, i64); 3] = [("controller", 10), ("planner", 50), ("logger", 1000)];
const SECOND: TimeDelta = TimeDelta::from_secs(1);

/// One value computed by one participant at one deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    /// Deadline, relative to the start of the compared window.
    t_ms: i64,
    who: &'static str,
    value: i64,
}

#[derive(Default)]
struct Shared {
    setpoints: Mutex<Option<ValidReader<i64>>>,
    outputs: Mutex<Option<ValidReader<i64>>>,
    log: Mutex<Vec<(Timestamp, &'static str, i64)>>,
}

fn newest(reader: &Mutex<Option<ValidReader<i64>>>, now: Timestamp) -> Option<i64> {
    let mut guard = reader.lock().ok()?;
    let r = guard.get_or_insert_with(|| ValidReader::with_capacity(64));
    r.newest_valid(now).map(|s| s.value)
}

fn publish(reader: &Mutex<Option<ValidReader<i64>>>, now: Timestamp, delay_ms: i64, value: i64) {
    if let (Ok(mut guard), Ok(header)) = (
        reader.lock(),
        Header::stamp(now, TimeDelta::from_millis(delay_ms)),
    ) {
        let r = guard.get_or_insert_with(|| ValidReader::with_capacity(64));
        r.push(header, value);
    }
}

/// The participants' work: depends only on the deadline and on messages
/// valid at the deadline.
fn step(shared: &Shared, who: &'static str, deadline: Timestamp) {
    let phase_ms = deadline.as_nanos().rem_euclid(SECOND.as_nanos()) / 1_000_000;
    let value = match who {
        "planner" => {
            let setpoint = (phase_ms / 50 % 7) * 100 - 300;
            publish(&shared.setpoints, deadline, 10, setpoint);
            setpoint
        }
        "controller" => {
            let setpoint = newest(&shared.setpoints, deadline).unwrap_or(0);
            let output = 2 * setpoint + phase_ms / 10;
            publish(&shared.outputs, deadline, 5, output);
            output
        }
        _ => newest(&shared.outputs, deadline).unwrap_or(i64::MIN),
    };
    if let Ok(mut log) = shared.log.lock() {
        log.push((deadline, who, value));
    }
}

struct RunResult {
    entries: Vec<Entry>,
    ticks: Vec<(&'static str, u64)>,
    missed: u64,
    wall: Duration,
}

fn run(simulated: bool) -> Result<RunResult, Error> {
    let began = Instant::now();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let _enter = rt.enter();
    let names = PARTICIPANTS.map(|(n, _)| n);
    let config = if simulated {
        CoordinatorConfig::simulated().pace(10, 1) // ten times faster than real time
    } else {
        CoordinatorConfig::real_time(TimeDelta::from_millis(100))
    };
    let (bus, connector) = in_process_bus();
    let coordinator = TimingCoordinator::spawn(config.expect(names), bus, SystemClock)?;
    let clock = SimClock::default();
    let shared = Arc::new(Shared::default());
    let mut timers = Vec::new();
    for (name, period_ms) in PARTICIPANTS {
        let cfg = TimerConfig::new(name, TimeDelta::from_millis(period_ms), TimeDelta::ZERO)
            .simulated(true, simulated)
            .wait_for_start(!simulated);
        let timer =
            PeriodicTimer::new(cfg, Some(connector.connect(name)?))?.with_sim_clock(clock.clone());
        let shared = shared.clone();
        timer.start_async(move |deadline| step(&shared, name, deadline))?;
        timers.push((name, timer));
    }
    // The compared window: one second, starting on a full second with at
    // least 100 ms of history before it.
    let window = if simulated {
        rt.block_on(clock.sleep_until(Timestamp::from_nanos(3_000_000_000)));
        Timestamp::from_nanos(1_000_000_000)
    } else {
        let at = loop {
            match rt.block_on(coordinator.status()).and_then(|s| s.start_at) {
                Some(at) => break at,
                None => std::thread::sleep(Duration::from_millis(5)),
            }
        };
        let w = Grid::new(SECOND, TimeDelta::ZERO)?
            .at_or_after(at.saturating_add(TimeDelta::from_millis(100)))?;
        let end = w
            .saturating_add(SECOND)
            .saturating_add(TimeDelta::from_millis(20));
        let wait = end.checked_since(system_now())?;
        std::thread::sleep(Duration::try_from(wait).unwrap_or_default());
        w
    };
    let mut ticks = Vec::new();
    let mut missed = 0;
    for (name, timer) in &timers {
        timer.stop();
        ticks.push((*name, timer.stats().ticks));
        missed += timer.stats().missed;
    }
    coordinator.stop();
    rt.block_on(coordinator.join());
    let end = window.saturating_add(SECOND);
    let mut entries: Vec<Entry> = shared
        .log
        .lock()
        .map_err(|_| "log poisoned")?
        .iter()
        .filter(|(t, _, _)| *t >= window && *t <= end)
        .map(|&(t, who, value)| Entry {
            t_ms: t.nanos_since_wide(window) as i64 / 1_000_000,
            who,
            value,
        })
        .collect();
    entries.sort();
    Ok(RunResult {
        entries,
        ticks,
        missed,
        wall: began.elapsed(),
    })
}

fn report(label: &str, r: &RunResult) {
    let count = |who| r.entries.iter().filter(|e| e.who == who).count();
    println!(
        "{label}: {:.2} s wall; ticks run {:?}; missed {}; in the compared second: controller {}, planner {}, logger {}",
        r.wall.as_secs_f64(),
        r.ticks,
        r.missed,
        count("controller"),
        count("planner"),
        count("logger"),
    );
}

fn main() -> Result<(), Error> {
    let sim = run(true)?;
    report("simulated time (3 s at 10x)", &sim);
    let real = run(false)?;
    report("real time", &real);
    for e in sim.entries.iter().filter(|e| e.who != "controller").take(6) {
        println!("  t = {:4} ms  {:<10} {}", e.t_ms, e.who, e.value);
    }
    if sim.entries == real.entries {
        println!(
            "same sequence in both runs: {} values identical",
            sim.entries.len()
        );
    } else {
        let first = sim.entries.iter().zip(&real.entries).find(|(a, b)| a != b);
        println!(
            "the runs differ ({} vs {} values; first difference {first:?}); real-time ticks were missed: {}",
            sim.entries.len(),
            real.entries.len(),
            real.missed
        );
        std::process::exit(1);
    }
    Ok(())
}
