//! `syncline coordinator` and `syncline participant` as real processes on
//! loopback (each test on its own free port and key prefix): a full
//! simulated-time run, a participant killed mid-run (both policies), a
//! coordinator killed and restarted, and real time.

mod net;

use net::{
    Proc, Rng, check_grid_prefix, check_on_grid, endpoint, free_port, grid_union_nth, unique_prefix,
};

use std::time::{Duration, Instant};

/// Three participants with random grids; every step until N.
#[test]
fn three_participants_run_1000_simulated_steps_and_see_every_trigger() {
    let mut rng = Rng::seeded();
    let port = free_port();
    let prefix = unique_prefix();
    let ep = endpoint("127.0.0.1", port);
    let grids: Vec<(String, i64, i64)> = ["a", "b", "c"]
        .iter()
        .map(|n| {
            let p = rng.range(1, 8) * 1_000_000;
            (n.to_string(), p, rng.range(0, p))
        })
        .collect();
    eprintln!("grids {grids:?}");
    let steps = 1000;
    let coord = Proc::coordinator(&ep, &prefix, "a,b,c", &["--sim", "--steps", "1000"]);
    let parts: Vec<Proc> = grids
        .iter()
        .map(|(n, p, o)| Proc::participant(&ep, &prefix, n, *p, *o, &[]))
        .collect();
    let c_out = coord.finish(Duration::from_secs(60));
    assert_eq!(c_out.status, Some(0), "coordinator: {}", c_out.stderr);
    let last = grid_union_nth(&grids, steps);
    for (part, (name, p, o)) in parts.into_iter().zip(&grids) {
        let out = part.finish(Duration::from_secs(20));
        assert_eq!(out.status, Some(0), "{name}: {}", out.stderr);
        let ts = out.times(name);
        // Every one of its triggers up to the last step, in order, nothing else.
        check_grid_prefix(name, &ts, *p, *o);
        assert_eq!(
            ts.last().copied(),
            Some(last - (last - o) % p),
            "{name} ends at the last step"
        );
    }
    let events = c_out.events();
    for n in ["a", "b", "c"] {
        assert!(
            events
                .iter()
                .any(|e| e["event"] == "joined" && e["name"] == n),
            "{n} joined"
        );
    }
    assert!(events.iter().any(|e| e["event"] == "started"));
    assert!(events.iter().any(|e| e["event"] == "stopped"));
    let summary = &events.last().expect("a summary")["summary"];
    assert_eq!(summary["steps"], steps);
    assert_eq!(summary["participants"].as_array().map(Vec::len), Some(3));
    assert_eq!(summary["link"]["gaps"], 0);
}

/// The coordinator's output, each survivor's (name, period, offset,
/// output), and how long the loss took to be reported.
type KillRun = (
    net::Finished,
    Vec<(String, i64, i64, net::Finished)>,
    Duration,
);

/// Kills participant `b` after it has run a while; returns the
/// coordinator's output, the survivors' outputs and how long the
/// coordinator took to report the loss.
fn kill_one(policy: &str, steps: u64) -> KillRun {
    let port = free_port();
    let prefix = unique_prefix();
    let ep = endpoint("127.0.0.1", port);
    let grids = [
        ("a", 1_000_000i64, 0i64),
        ("b", 2_000_000, 500_000),
        ("c", 3_000_000, 1_000_000),
    ];
    let steps_s = steps.to_string();
    let coord = Proc::coordinator(
        &ep,
        &prefix,
        "a,b,c",
        &["--sim", "--steps", &steps_s, "--on-leave", policy],
    );
    let mut parts: Vec<_> = grids
        .iter()
        .map(|(n, p, o)| {
            (
                n.to_string(),
                *p,
                *o,
                Proc::participant(&ep, &prefix, n, *p, *o, &["--work-ns", "300000"]),
            )
        })
        .collect();
    let (_, _, _, b) = parts.remove(1);
    assert!(
        b.wait_lines(50, Duration::from_secs(60)),
        "b never ran 50 steps"
    );
    let killed = Instant::now();
    b.kill();
    let reported = coord.wait_event(
        |e| e["event"] == "left" && e["name"] == "b",
        Duration::from_secs(20),
    );
    let delay = reported
        .map(|t| t.duration_since(killed))
        .expect("the loss of b is reported");
    eprintln!("{policy}: loss reported {delay:?} after the kill");
    let c_out = coord.finish(Duration::from_secs(60));
    let outs = parts
        .into_iter()
        .map(|(n, p, o, proc)| (n, p, o, proc.finish(Duration::from_secs(20))))
        .collect();
    (c_out, outs, delay)
}

#[test]
fn a_killed_participant_is_reported_and_the_others_go_on() {
    let (c_out, outs, delay) = kill_one("continue", 3000);
    assert!(delay < Duration::from_secs(1), "reported after {delay:?}");
    assert_eq!(c_out.status, Some(0), "coordinator: {}", c_out.stderr);
    let events = c_out.events();
    let summary = &events.last().expect("a summary")["summary"];
    assert_eq!(summary["steps"], 3000, "the run went on to its end");
    for (name, p, o, out) in outs {
        assert_eq!(out.status, Some(0), "{name}: {}", out.stderr);
        check_grid_prefix(&name, &out.times(&name), p, o);
    }
}

#[test]
fn a_killed_participant_stops_the_run_by_configuration() {
    let (c_out, outs, delay) = kill_one("stop", 1_000_000);
    assert!(delay < Duration::from_secs(1), "reported after {delay:?}");
    assert_eq!(c_out.status, Some(0), "coordinator: {}", c_out.stderr);
    let events = c_out.events();
    let left = events
        .iter()
        .position(|e| e["event"] == "left")
        .expect("left");
    let stopped = events
        .iter()
        .position(|e| e["event"] == "stopped")
        .expect("stopped");
    assert!(left < stopped);
    let summary = &events.last().expect("a summary")["summary"];
    assert!(summary["steps"].as_u64().is_some_and(|s| s < 1_000_000));
    for (name, p, o, out) in outs {
        assert_eq!(out.status, Some(0), "{name} stops cleanly: {}", out.stderr);
        check_grid_prefix(&name, &out.times(&name), p, o);
    }
}

/// The coordinator is killed mid-run and started again: the participants
/// find it, repeat their state, and simulated time goes on where it was:
/// no step lost or repeated over both runs.
#[test]
fn participants_recover_when_the_coordinator_restarts() {
    let port = free_port();
    let prefix = unique_prefix();
    let ep = endpoint("127.0.0.1", port);
    let grids = [
        ("a", 1_000_000i64, 0i64),
        ("b", 2_000_000, 0),
        ("c", 5_000_000, 2_000_000),
    ];
    let first = Proc::coordinator(&ep, &prefix, "a,b,c", &["--sim", "--steps", "1000000"]);
    let parts: Vec<_> = grids
        .iter()
        .map(|(n, p, o)| {
            let extra = ["--work-ns", "200000", "--coordinator-timeout-ms", "30000"];
            (
                n.to_string(),
                *p,
                *o,
                Proc::participant(&ep, &prefix, n, *p, *o, &extra),
            )
        })
        .collect();
    assert!(
        parts[0].3.wait_lines(100, Duration::from_secs(60)),
        "a never ran 100 steps"
    );
    first.kill();
    let second = Proc::coordinator(&ep, &prefix, "a,b,c", &["--sim", "--steps", "300"]);
    let c_out = second.finish(Duration::from_secs(60));
    assert_eq!(
        c_out.status,
        Some(0),
        "second coordinator: {}",
        c_out.stderr
    );
    let events = c_out.events();
    assert_eq!(events.last().expect("a summary")["summary"]["steps"], 300);
    for (name, p, o, proc) in parts {
        let out = proc.finish(Duration::from_secs(20));
        assert_eq!(out.status, Some(0), "{name}: {}", out.stderr);
        let ts = out.times(&name);
        check_grid_prefix(&name, &ts, p, o);
        assert!(
            ts.len() > 100 / (p / 1_000_000) as usize,
            "{name} ran on after the restart"
        );
    }
}

/// Real time: the participants tick on `O + k*P` since the epoch from the
/// coordinator's start instant until the stop. The start lies 1 s (the
/// CLI's default) after all are ready: at 200 ms, on a host loaded by a
/// parallel build, one run's participant first ticked a grid point late
/// (the start reached it after its first grid point).
#[test]
fn real_time_participants_tick_on_the_epoch_grid_from_the_start_instant() {
    let port = free_port();
    let prefix = unique_prefix();
    let ep = endpoint("127.0.0.1", port);
    let coord = Proc::coordinator(
        &ep,
        &prefix,
        "a,b",
        &[
            "--realtime",
            "--duration-ns",
            "300000000",
            "--start-offset-ns",
            "1000000000",
        ],
    );
    let a = Proc::participant(&ep, &prefix, "a", 10_000_000, 0, &[]);
    let b = Proc::participant(&ep, &prefix, "b", 20_000_000, 5_000_000, &["--lateness"]);
    let c_out = coord.finish(Duration::from_secs(30));
    assert_eq!(c_out.status, Some(0), "coordinator: {}", c_out.stderr);
    let events = c_out.events();
    let start = events.last().expect("a summary")["summary"]["start_ns"]
        .as_i64()
        .expect("start_ns");
    for (proc, name, p, o) in [
        (a, "a", 10_000_000i64, 0i64),
        (b, "b", 20_000_000, 5_000_000),
    ] {
        let out = proc.finish(Duration::from_secs(20));
        assert_eq!(out.status, Some(0), "{name}: {}", out.stderr);
        let ts = out.times(name);
        assert!(!ts.is_empty(), "{name} ticked");
        assert!(
            ts[0] >= start && ts[0] - start < p,
            "{name} starts at the first grid point after the start"
        );
        check_on_grid(name, &ts, p, o);
        if name == "b" {
            for l in out.events() {
                assert!(
                    l["late_ns"].as_i64().is_some_and(|l| l >= 0),
                    "never early: {l}"
                );
            }
        }
    }
}
