//! `syncline align` as a process: flags, bad rows, the live wall-clock
//! bound, end of input and the status line.

mod common;

use std::process::Output;

use common::{json_lines as lines, stderr};

/// Runs `syncline align ARGS -` with `csv` on standard input.
fn align(args: &[&str], csv: &str) -> Output {
    let mut all = args.to_vec();
    all.push("-");
    common::syncline("align", &all, csv)
}

/// `(id, event)` of every output line.
fn events(out: &Output) -> Vec<(u64, String)> {
    lines(out)
        .iter()
        .map(|v| {
            (
                v["id"].as_u64().expect("id"),
                v["event"].as_str().expect("event").to_string(),
            )
        })
        .collect()
}

const TWO: [&str; 4] = ["--stream", "imu=10", "--stream", "gps=100"];

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    let csv = "topic,stamp_ns\nimu,1\n";
    let cases: &[(&[&str], &str)] = &[
        (&["--timeout-ns", "0", "--stream", "a=1"], "--timeout-ns"),
        (&["--timeout-ns", "-5", "--stream", "a=1"], "--timeout-ns"),
        (&["--timeout-ns", "1.5", "--stream", "a=1"], "--timeout-ns"),
        (&["--timeout-ns", "100", "--stream", "a=-1"], "--stream"),
        (
            &["--timeout-ns", "100", "--stream", "a=1,capacity=0"],
            "--stream",
        ),
        (
            &["--timeout-ns", "100", "--stream", "a=1,prio=2"],
            "--stream",
        ),
        (
            &["--timeout-ns", "100", "--stream", "a=1", "--stream", "a=2"],
            "--stream",
        ),
        (&["--timeout-ns", "100"], "--stream"),
        (&["--stream", "a=1"], "--timeout-ns"),
        (
            &["--timeout-ns", "100", "--stream", "a=1", "--bogus"],
            "--bogus",
        ),
    ];
    for (args, flag) in cases {
        let out = align(args, csv);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(flag), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("panicked"), "{}", stderr(&out));
    }
}

#[test]
fn bad_rows_exit_2_with_file_and_line_after_earlier_output() {
    let args = [&["--timeout-ns", "1000"][..], &TWO[..]].concat();
    let cases = [
        (
            "# c\ntopic,stamp_ns\nimu,5\ngps,5\nlidar,7\n",
            "-:5:",
            "unknown topic",
        ),
        (
            "topic,stamp_ns\nimu,5\ngps,5\nimu,x\n",
            "-:4:",
            "not an integer",
        ),
        ("topic,stamp_ns\nimu,5\ngps,5\n,7\n", "-:4:", "topic"),
        ("topic,stamp_ns\nimu,5\ngps,5\nimu,\n", "-:4:", "empty"),
        (
            "topic,stamp_ns,arrival_ns\nimu,5,1\ngps,5,1\nimu,6,1e3\n",
            "-:4:",
            "arrival_ns",
        ),
        ("topic\nimu\n", "-:1:", "stamp_ns"),
    ];
    for (csv, location, what) in cases {
        let out = align(&args, csv);
        assert_eq!(out.status.code(), Some(2), "{csv}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(location) && err.contains(what), "{csv}: {err}");
    }
    // Rows before the bad one were already aligned and written.
    let out = align(&args, cases[0].0);
    assert_eq!(
        events(&out),
        [(0, "released".to_string()), (1, "released".to_string())]
    );
}

#[test]
fn wall_timeout_needs_arrivals() {
    let args = [&["--timeout-ns", "1000", "--wall-timeout"][..], &TWO[..]].concat();
    let out = align(&args, "topic,stamp_ns\nimu,5\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("arrival_ns"), "{}", stderr(&out));
    let out = align(&args, "topic,stamp_ns,arrival_ns\nimu,5,\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("-:2:"), "{}", stderr(&out));
}

#[test]
fn wall_timeout_releases_by_arrival_before_the_next_push() {
    // gps (period 100) never delivered before: it expects EPOCH + 100 and
    // holds imu 200 back; the sample-time span (10) stays below T = 1000.
    let csv = "topic,stamp_ns,arrival_ns\nimu,200,1000\nimu,210,2000\ngps,150,2001\n";
    let base = [&["--timeout-ns", "1000"][..], &TWO[..]].concat();
    let released = |id| (id, "released".to_string());
    // Without the flag, arrivals are informational: gps 150 is in time.
    let out = align(&base, csv);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(events(&out), [released(2), released(0), released(1)]);
    // With it, row 1 (arrival 2000) first releases row 0 (arrived at 1000,
    // 1000 + T <= 2000), so gps 150 comes too late.
    let live = [&base[..], &["--wall-timeout"][..]].concat();
    let out = align(&live, csv);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        events(&out),
        [released(0), (2, "dropped_late".to_string()), released(1)]
    );
    // One nanosecond earlier and row 0 still waits.
    let early = csv.replace(",2000", ",1999").replace(",2001", ",1999");
    let out = align(&live, &early);
    assert_eq!(events(&out), [released(2), released(0), released(1)]);
}

#[test]
fn events_overflow_end_of_input_and_status() {
    let args = [
        "--timeout-ns",
        "1000",
        "--stream",
        "a=10,capacity=2",
        "--stream",
        "b=10,capacity=2,priority=-1",
        "--status",
    ];
    let csv = "topic,stamp_ns\na,100\na,110\na,120\nb,120\n";
    let out = align(&args, csv);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v = lines(&out);
    let ev: Vec<_> = v[..4]
        .iter()
        .map(|e| {
            (
                e["id"].as_u64().unwrap(),
                e["event"].as_str().unwrap(),
                e["topic"].as_str().unwrap(),
                e["stamp_ns"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ev,
        [
            (0, "dropped_overflow", "a", 100),
            (1, "released", "a", 110),
            // End of input: equal stamps by priority (b has -1).
            (3, "released", "b", 120),
            (2, "released", "a", 120),
        ]
    );
    let status = &v[4]["status"];
    assert_eq!(status["streams"][0]["dropped_overflow"], 1);
    assert_eq!(status["streams"][0]["received"], 3);
    assert_eq!(status["streams"][1]["released"], 1);
}

#[test]
fn huge_timeouts_capacities_and_extreme_stamps_are_fine() {
    let args = [
        "--timeout-ns",
        "9223372036854775807",
        "--stream",
        "a=1",
        "--stream",
        "b=0,capacity=9223372036854775807",
    ];
    let csv = "topic,stamp_ns\na,-9223372036854775808\nb,9223372036854775807\na,0\n";
    let out = align(&args, csv);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // a@MIN goes at once; b@MAX waits for a (expects MIN + 1) until the
    // span MAX - MIN (computed without overflow) reaches T; a@0 is then late.
    assert_eq!(
        events(&out),
        [
            (0, "released".to_string()),
            (1, "released".to_string()),
            (2, "dropped_late".to_string()),
        ]
    );
}

/// INTERFACE.md: a push earlier than the last released sample is
/// `dropped_late`, however much earlier (the live aligner's clock-step
/// rule is not part of the replay contract).
#[test]
fn a_row_hours_older_than_the_last_release_is_late() {
    let csv = "topic,stamp_ns\na,1000000000\na,2000000000\na,7200000000000\na,3000000000\n";
    let out = align(&["--timeout-ns", "100", "--stream", "a=0"], csv);
    assert!(out.status.success());
    let ev = events(&out);
    assert_eq!(ev[3], (3, "dropped_late".to_string()), "{ev:?}");
}
