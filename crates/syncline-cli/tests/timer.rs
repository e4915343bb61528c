//! `syncline timer` end to end: output structure, grid alignment, and the
//! never-early property (no lateness thresholds: the machine may be busy).

mod common;

use serde_json::Value;

use common::json_lines as lines;

/// Runs `syncline ARGS` (the first argument is the subcommand).
fn syncline(args: &[&str]) -> std::process::Output {
    let (subcommand, rest) = args.split_first().expect("a subcommand");
    common::syncline(subcommand, rest, "")
}

fn check_run(extra: &[&str]) -> Value {
    let period = 2_000_000i64;
    let offset = 300_000i64;
    let mut args = vec![
        "timer",
        "--period-ns",
        "2000000",
        "--count",
        "25",
        "--offset-ns",
        "300000",
    ];
    args.extend_from_slice(extra);
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    let out = syncline(&args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines = lines(&out);
    assert_eq!(lines.len(), 26);
    let mut prev_deadline = i64::MIN;
    let mut missed = 0;
    let first_deadline = lines[0]["deadline_ns"].as_i64().unwrap();
    for (k, line) in lines[..25].iter().enumerate() {
        assert_eq!(line["n"].as_u64(), Some(k as u64));
        let d = line["deadline_ns"].as_i64().unwrap();
        let w = line["woke_ns"].as_i64().unwrap();
        let l = line["lateness_ns"].as_i64().unwrap();
        assert_eq!(l, w - d);
        assert_eq!(d.rem_euclid(period), offset, "deadline on the grid");
        if prev_deadline != i64::MIN {
            assert!(d > prev_deadline);
            missed += (d - prev_deadline) / period - 1;
        }
        prev_deadline = d;
    }
    let summary = &lines[25]["summary"];
    assert_eq!(summary["ticks"].as_u64(), Some(25));
    // Deadlines between the start (after `before`) and the first tick
    // (a process not scheduled in time) are missed too.
    let missed_before = summary["missed"].as_i64().unwrap() - missed;
    assert!(
        (0..=(first_deadline - before) / period).contains(&missed_before),
        "{missed_before} missed before the first tick"
    );
    let (p50, p99, max) = (
        summary["p50_ns"].as_i64().unwrap(),
        summary["p99_ns"].as_i64().unwrap(),
        summary["max_ns"].as_i64().unwrap(),
    );
    assert!(p50 <= p99 && p99 <= max);
    let early = lines[..25]
        .iter()
        .filter(|l| l["lateness_ns"].as_i64().unwrap() < 0)
        .count();
    assert_eq!(summary["early"].as_u64(), Some(early as u64));
    summary.clone()
}

#[test]
fn syncline_timer_is_never_early() {
    let summary = check_run(&[]);
    assert_eq!(summary["early"].as_u64(), Some(0));
    assert!(summary["p50_ns"].as_i64().unwrap() >= 0);
}

#[test]
fn tokio_baseline_has_the_same_structure() {
    let summary = check_run(&["--baseline", "tokio"]);
    assert_eq!(summary["timer"], "tokio");
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    // Each case: `--period-ns`, `--count`, further flags, and the flag the
    // error must name.
    for (period, count, more, flag) in [
        ("0", "3", &[][..], "--period-ns"),
        ("-5", "3", &[], "--period-ns"),
        ("10", "0", &[], "--count"),
        ("10", "3", &["--offset-ns", "10"], "--offset-ns"),
        ("10", "3", &["--offset-ns", "-1"], "--offset-ns"),
        ("10", "3", &["--baseline", "x"], "--baseline"),
    ] {
        let mut args = vec!["timer", "--period-ns", period, "--count", count];
        args.extend(more);
        let out = syncline(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(!err.contains("panicked"));
    }
}
