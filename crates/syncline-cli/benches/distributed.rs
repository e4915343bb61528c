//! Timing across processes over zenoh on loopback, with real processes:
//!
//! * `steps`: simulated-time steps per second, `syncline coordinator` and
//!   three `syncline participant` processes on one 1 ms grid (each step: a
//!   trigger to each participant, their three ready reports back);
//! * `throughput`: stamped samples per second from a publisher process to a
//!   subscriber process (small samples, a `u64` value);
//! * `latency`: stamped samples at 1 kHz; receive time minus publication
//!   time (one host, one clock), p50 / p99 / max;
//! * `lateness`: the real-time tick lateness of a participant started by a
//!   remote coordinator (1 ms period), and of a local timer
//!   (`syncline timer`) under the same conditions.
//!
//! ```sh
//! cargo bench -p syncline-cli --bench distributed            # all, 3 runs each
//! cargo bench -p syncline-cli --bench distributed -- steps   # one figure
//! cargo bench -p syncline-cli --bench distributed -- steps --runs 5
//! ```
//!
//! Not a divan bench: each figure is a property of several processes
//! talking over sockets for seconds (a rate over a whole run, or the
//! distribution of per-message delays at a fixed rate), not of a function
//! that divan can call in a loop in this process. Each run is bounded
//! (at most a few seconds) and its processes are waited for.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt;
use syncline::Stamped;
use syncline::timer::system_now;
use syncline_zenoh::{
    ClockId, NetConfig, OnPublisherLost, PublisherOptions, StampedPublisher, StampedSubscriber,
    SubscriberConfig,
};
use zenoh::qos::Priority;

const BIN: &str = env!("CARGO_BIN_EXE_syncline");
/// Set in the processes this bench starts (running itself again).
const ROLE: &str = "SYNCLINE_BENCH_ROLE";

fn main() {
    if let Ok(role) = std::env::var(ROLE) {
        child_process(&role);
        return;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(3usize);
    let all = ["steps", "throughput", "latency", "lateness"];
    let chosen: Vec<&str> = all
        .iter()
        .copied()
        .filter(|n| args.iter().any(|a| a == n))
        .collect();
    let chosen = if chosen.is_empty() {
        all.to_vec()
    } else {
        chosen
    };
    println!("load average: {}", load_average());
    for name in chosen {
        match name {
            "steps" => steps(runs),
            "throughput" => throughput(runs),
            "latency" => latency(runs),
            _ => lateness(runs),
        }
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn free_endpoint() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    format!("tcp/127.0.0.1:{port}")
}

/// `syncline ARGS...`; `zenoh_runtime` is its `ZENOH_RUNTIME` (unset: the
/// coordinator and participant put zenoh on one thread themselves).
fn syncline_with(args: &[&str], stdout: Stdio, zenoh_runtime: Option<&str>) -> Child {
    let mut cmd = Command::new(BIN);
    cmd.env_remove("ZENOH_RUNTIME");
    if let Some(r) = zenoh_runtime {
        cmd.env("ZENOH_RUNTIME", r);
    }
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn syncline")
}

fn syncline(args: &[&str], stdout: Stdio) -> Child {
    syncline_with(args, stdout, None)
}

/// Waits for `child`, killing it after `timeout`; whether it exited 0.
fn finish(mut child: Child, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return s.success(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

/// Every standard-output line of `child` parsed as JSON (until it closes).
fn json_lines(child: &mut Child) -> Vec<serde_json::Value> {
    let out = child.stdout.take().expect("piped stdout");
    BufReader::new(out)
        .lines()
        .map_while(Result::ok)
        .filter_map(|l| serde_json::from_str(&l).ok())
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn quantile(sorted: &[i64], p: f64) -> i64 {
    sorted
        .get(((sorted.len().max(1) - 1) as f64 * p) as usize)
        .copied()
        .unwrap_or(0)
}

const STEPS: u64 = 10_000;

fn steps(runs: usize) {
    // `()`: zenoh's default runtimes (six threads).
    for (label, rt) in [
        ("default runtime", "()"),
        ("one zenoh thread", syncline_zenoh::ONE_THREAD_RUNTIME),
    ] {
        let mut rates = Vec::new();
        for run in 0..runs {
            let rate = steps_run(run, rt);
            println!(
                "steps, {label}: run {run}: {rate:.0} steps/s ({STEPS} steps, 3 participant processes)"
            );
            rates.push(rate);
        }
        println!(
            "steps, {label}: median {:.0} steps/s over {runs} runs (load {})",
            median(rates),
            load_average()
        );
    }
}

/// One run of `STEPS` steps; the coordinator's steps/s.
fn steps_run(run: usize, zenoh_runtime: &str) -> f64 {
    let ep = free_endpoint();
    let prefix = format!("bench/{}/{run}", std::process::id());
    let steps = STEPS.to_string();
    let mut coord = syncline_with(
        &[
            "coordinator",
            "--listen",
            &ep,
            "--expect",
            "a,b,c",
            "--prefix",
            &prefix,
            "--sim",
            "--steps",
            &steps,
        ],
        Stdio::piped(),
        Some(zenoh_runtime),
    );
    let parts: Vec<Child> = ["a", "b", "c"]
        .iter()
        .map(|n| {
            syncline_with(
                &[
                    "participant",
                    "--connect",
                    &ep,
                    "--name",
                    n,
                    "--prefix",
                    &prefix,
                    "--period-ns",
                    "1000000",
                ],
                Stdio::null(),
                Some(zenoh_runtime),
            )
        })
        .collect();
    let lines = json_lines(&mut coord);
    let ok = finish(coord, Duration::from_secs(60));
    let parts_ok = parts
        .into_iter()
        .all(|p| finish(p, Duration::from_secs(20)));
    let summary = &lines.last().expect("a summary")["summary"];
    assert!(ok && parts_ok, "a process failed: {summary}");
    assert_eq!(summary["steps"], STEPS, "{summary}");
    assert_eq!(summary["link"]["gaps"], 0, "{summary}");
    summary["steps_per_s"].as_f64().expect("steps_per_s")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// A process this bench starts (running itself again): `role` is
/// `sub MODE N TASKS` (the subscriber, which starts the publisher and prints
/// its result as one JSON line) or `pub MODE N TASKS ENDPOINT`. `TASKS`:
/// `own` (the bench's code on a runtime of its own), `express` (the same,
/// the publisher in zenoh's express mode at high priority), `zenoh` (as
/// `express`, the subscriber as a task on `syncline_zenoh::zenoh_runtime`).
fn child_process(role: &str) {
    let parts: Vec<String> = role.split(' ').map(str::to_string).collect();
    match parts.as_slice() {
        [sub, mode, n, tasks] if sub == "sub" => {
            let n = n.parse().expect("N");
            let (rate, lost, mut latencies) =
                run_tasks(tasks, subscribe(mode.clone(), n, tasks.clone()));
            if mode != "latency" {
                latencies.clear();
            }
            println!(
                "{}",
                serde_json::json!({"rate": rate, "lost": lost, "latencies": latencies})
            );
        }
        // The publisher always on a runtime of its own: a burst of puts
        // from zenoh's one thread would wait for a sending task that only
        // that thread can run.
        [publ, mode, n, tasks, ep] if publ == "pub" => runtime().block_on(publish(
            mode.clone(),
            n.parse().expect("N"),
            tasks.clone(),
            ep.clone(),
        )),
        _ => panic!("bad {ROLE}: {role:?}"),
    }
}

/// Runs `fut` on a runtime of its own, or as a task on zenoh's runtime.
fn run_tasks<F>(tasks: &str, fut: F) -> F::Output
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    if tasks == "zenoh" {
        let rt = syncline_zenoh::zenoh_runtime();
        rt.block_on(rt.spawn(fut)).expect("the task ends")
    } else {
        runtime().block_on(fut)
    }
}

async fn publish(mode: String, n: u64, tasks: String, ep: String) {
    let session = NetConfig::new().connect(ep).open().await.expect("session");
    let options = if tasks == "own" {
        PublisherOptions::default()
    } else {
        PublisherOptions {
            express: true,
            priority: Priority::DataHigh,
        }
    };
    let mut publisher = StampedPublisher::<u64>::with_options(
        &session,
        "bench/stamped",
        ClockId::system(),
        options,
    )
    .await
    .expect("publisher");
    // The subscriber sees the publisher before the first sample.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    for i in 0..n {
        if mode == "latency" {
            tick.tick().await;
        }
        publisher
            .publish(&Stamped::new(system_now(), i))
            .expect("publish");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    session.close().await.expect("close");
}

/// The subscriber: (samples/s first to last, lost, sorted latencies).
async fn subscribe(mode: String, n: u64, tasks: String) -> (f64, u64, Vec<i64>) {
    let ep = free_endpoint();
    let session = NetConfig::new().listen(&ep).open().await.expect("session");
    let config = SubscriberConfig {
        on_publisher_lost: OnPublisherLost::End,
        ..SubscriberConfig::default()
    };
    let mut sub = StampedSubscriber::<u64>::new(&session, "bench/stamped", config)
        .await
        .expect("subscriber");
    let child = Command::new(std::env::current_exe().expect("exe"))
        .env(ROLE, format!("pub {mode} {n} {tasks} {ep}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .spawn()
        .expect("publisher process");
    let mut first: Option<Instant> = None;
    let mut last = Instant::now();
    let mut latencies = Vec::with_capacity(n as usize);
    let mut got = 0u64;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while let Ok(Some(s)) = tokio::time::timeout_at(deadline, sub.next()).await {
        let now = Instant::now();
        first.get_or_insert(now);
        last = now;
        latencies.push(s.value.received.as_nanos() - s.value.sent.as_nanos());
        got += 1;
        if got == n {
            break;
        }
    }
    // Waited for off the runtime: its thread may be zenoh's, which the
    // publisher's closing still talks to.
    let published = tokio::task::spawn_blocking(move || finish(child, Duration::from_secs(10)));
    assert!(published.await.unwrap_or(false), "publisher failed");
    let lost = sub.stats().lost;
    assert_eq!(got, n, "every sample arrives (lost {lost})");
    let secs = first.map_or(0.0, |f| last.duration_since(f).as_secs_f64());
    latencies.sort_unstable();
    session.close().await.expect("close");
    let rate = if secs > 0.0 {
        got.saturating_sub(1) as f64 / secs
    } else {
        0.0
    };
    (rate, lost, latencies)
}

/// One stamped run in two processes of their own, with zenoh's default
/// runtime or `ZENOH_RUNTIME` = `runtime`.
fn stamped_run(mode: &str, n: u64, runtime: Option<&str>, tasks: &str) -> (f64, u64, Vec<i64>) {
    let mut cmd = Command::new(std::env::current_exe().expect("exe"));
    cmd.env(ROLE, format!("sub {mode} {n} {tasks}"))
        .env_remove("ZENOH_RUNTIME")
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    if let Some(r) = runtime {
        cmd.env("ZENOH_RUNTIME", r);
    }
    let mut child = cmd.spawn().expect("subscriber process");
    let lines = json_lines(&mut child);
    assert!(finish(child, Duration::from_secs(60)), "subscriber failed");
    let v = lines.last().expect("a result line");
    let latencies = v["latencies"]
        .as_array()
        .expect("latencies")
        .iter()
        .filter_map(serde_json::Value::as_i64)
        .collect();
    (
        v["rate"].as_f64().unwrap_or(0.0),
        v["lost"].as_u64().unwrap_or(0),
        latencies,
    )
}

/// How the two processes run: label, their `ZENOH_RUNTIME`, where the
/// bench's code runs and how it publishes (`TASKS` of [`child_process`]).
type Variant = (&'static str, Option<&'static str>, &'static str);

const ONE: Option<&str> = Some(syncline_zenoh::ONE_THREAD_RUNTIME);

/// zenoh's default runtime; all of it on one thread; the same with express
/// publication (latency only, see `throughput`); and with the subscriber's
/// task on zenoh's thread (latency only: a subscriber consumed on zenoh's
/// receiving thread cannot push back on a faster publisher, it counts
/// overflow instead).
const VARIANTS: [Variant; 4] = [
    ("default runtime", None, "own"),
    ("one zenoh thread", ONE, "own"),
    ("one zenoh thread, express", ONE, "express"),
    ("one zenoh thread, express, subscriber on it", ONE, "zenoh"),
];

fn throughput(runs: usize) {
    let n = 1_000_000;
    // Not express: every sample is then a batch of its own, and with
    // zenoh's two batches per link queue the publisher waits for a write
    // per sample (a million did not go through in 30 s on 2 loaded cores).
    for (label, rt, tasks) in &VARIANTS[..2] {
        let mut rates = Vec::new();
        for run in 0..runs {
            let (rate, lost, _) = stamped_run("throughput", n, *rt, tasks);
            println!(
                "throughput, {label}: run {run}: {rate:.0} samples/s, {n} samples, {lost} lost"
            );
            rates.push(rate);
        }
        println!(
            "throughput, {label}: median {:.0} samples/s over {runs} runs (load {})",
            median(rates),
            load_average()
        );
    }
}

fn latency(runs: usize) {
    let n = 3_000;
    for (label, rt, tasks) in VARIANTS {
        let mut p50s = Vec::new();
        let mut p99s = Vec::new();
        for run in 0..runs {
            let (_, _, l) = stamped_run("latency", n, rt, tasks);
            let (p50, p99) = (quantile(&l, 0.5), quantile(&l, 0.99));
            println!(
                "latency, {label}: run {run}: {n} samples at 1 kHz: p50 {} us, p99 {} us, max {} us",
                p50 / 1000,
                p99 / 1000,
                l.last().copied().unwrap_or(0) / 1000
            );
            p50s.push(p50 as f64);
            p99s.push(p99 as f64);
        }
        println!(
            "latency, {label}: median of runs: p50 {:.0} us, p99 {:.0} us over {runs} runs (load {})",
            median(p50s) / 1e3,
            median(p99s) / 1e3,
            load_average()
        );
    }
}

fn lateness(runs: usize) {
    const TICKS: i64 = 2000;
    for run in 0..runs {
        let ep = free_endpoint();
        let prefix = format!("bench/{}/rt{run}", std::process::id());
        let duration = (TICKS * 1_000_000).to_string();
        let coord = syncline(
            &[
                "coordinator",
                "--listen",
                &ep,
                "--expect",
                "rt",
                "--prefix",
                &prefix,
                "--realtime",
                "--duration-ns",
                &duration,
                "--start-offset-ns",
                "300000000",
            ],
            Stdio::null(),
        );
        let mut part = syncline(
            &[
                "participant",
                "--connect",
                &ep,
                "--name",
                "rt",
                "--prefix",
                &prefix,
                "--period-ns",
                "1000000",
                "--lateness",
            ],
            Stdio::piped(),
        );
        let mut late: Vec<i64> = json_lines(&mut part)
            .iter()
            .filter_map(|l| l["late_ns"].as_i64())
            .collect();
        assert!(finish(part, Duration::from_secs(20)), "participant failed");
        assert!(finish(coord, Duration::from_secs(20)), "coordinator failed");
        late.sort_unstable();
        println!(
            "lateness: run {run}: remote start, {} ticks of 1 ms: p50 {} ns, p99 {} ns, max {} ns",
            late.len(),
            quantile(&late, 0.5),
            quantile(&late, 0.99),
            late.last().copied().unwrap_or(0)
        );
        let count = TICKS.to_string();
        let mut local = syncline(
            &["timer", "--period-ns", "1000000", "--count", &count],
            Stdio::piped(),
        );
        let lines = json_lines(&mut local);
        assert!(finish(local, Duration::from_secs(20)), "timer failed");
        let s = &lines.last().expect("a summary")["summary"];
        println!(
            "lateness: run {run}: local timer, {} ticks of 1 ms: p50 {} ns, p99 {} ns, max {} ns",
            s["ticks"], s["p50_ns"], s["p99_ns"], s["max_ns"]
        );
    }
    println!("lateness: load {}", load_average());
}
