//! `syncline estimate` against INTERFACE.md: output shape, flags, events,
//! bad input.

mod common;

use std::process::Output;

use common::json_lines as lines;

fn run(args: &[&str], stdin: &str) -> Output {
    common::syncline("estimate", args, stdin)
}

fn stream(n: i64) -> String {
    let mut s = String::from("# a comment\nevent,time_ns,truth\n");
    for k in 0..n {
        s += &format!(
            "sample,{},x\n",
            1_000_000_000 + k * 10_000_000 + (k % 3) * 100_000
        );
    }
    s
}

#[test]
fn one_line_per_sample_in_order_with_status() {
    let o = run(&["--window-ns", "1000000000", "--status", "-"], &stream(50));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let l = lines(&o);
    assert_eq!(l.len(), 51);
    for (k, v) in l[..50].iter().enumerate() {
        assert_eq!(v["id"], k as i64);
        let e = v["estimate_ns"].as_i64().unwrap();
        let arrival = 1_000_000_000 + k as i64 * 10_000_000 + (k as i64 % 3) * 100_000;
        assert!(
            e <= arrival && arrival - e <= 200_000,
            "{k}: {e} vs {arrival}"
        );
    }
    assert_eq!(l[50]["status"]["samples"], 50);
    assert!(l[50]["status"]["period_ns"].as_f64().unwrap() > 9.9e6);
}

#[test]
fn loss_reference_and_index_rows() {
    let csv = "event,time_ns,index\n\
               reference,999000000,\n\
               sample,1000000000,0\n\
               loss,,\n\
               sample,1020000000,2\n\
               sample,1030000000,3\n";
    let o = run(
        &[
            "--window-ns",
            "1000000000",
            "--period-ns",
            "10000000",
            "--status",
            "-",
        ],
        csv,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let l = lines(&o);
    let ids: Vec<_> = l[..3].iter().map(|v| v["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, [1, 3, 4]);
    let st = &l[3]["status"];
    assert_eq!(st["losses_from_index"], 1);
    assert_eq!(st["losses_announced"], 1);
    assert_eq!(st["references"], 1);
}

#[test]
fn backwards_sample_is_reported_not_fatal() {
    let csv = "event,time_ns\nsample,2000\nsample,1000\nsample,3000\n";
    let o = run(&["--window-ns", "1000000", "--status", "-"], csv);
    assert!(o.status.success());
    let l = lines(&o);
    assert_eq!(l[1]["rejected"], "backwards");
    assert_eq!(l[1]["estimate_ns"], 1000);
    assert_eq!(l[3]["status"]["rejected_backwards"], 1);
}

#[test]
fn malformed_input_exits_2_with_file_and_line() {
    let csv = "event,time_ns\nsample,1000\n\nsample,12x\n";
    let o = run(&["--window-ns", "1000000", "-"], csv);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("-:4"), "{err}");
    // Output for earlier rows stays written.
    assert_eq!(lines(&o).len(), 1);
    for (csv, what) in [
        ("event,time_ns\nfoo,1\n", "unknown event"),
        ("event\nsample\n", "time_ns"),
        ("event,time_ns\nsample,\n", "empty"),
        ("event,time_ns,index\nsample,5,-1\n", "negative"),
        (
            "event,time_ns,index\nsample,5,18446744073709551616\n",
            "not an integer",
        ),
    ] {
        let o = run(&["--window-ns", "1000000", "-"], csv);
        assert_eq!(o.status.code(), Some(2), "{csv}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(what), "{csv}");
    }
}

/// A 64-bit device counter uses the whole `u64` range, wrapping at its top.
#[test]
fn a_64_bit_counter_is_read_whole() {
    let mut csv = String::from("event,time_ns,index\n");
    for k in 0..40u64 {
        let index = (u64::MAX - 20).wrapping_add(k);
        csv += &format!("sample,{},{index}\n", 1_000_000_000 + k * 10_000_000);
    }
    let o = run(&["--window-ns", "1000000000", "--status", "-"], &csv);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = lines(&o);
    let st = &out.last().unwrap()["status"];
    assert_eq!(
        (st["samples"].as_u64(), st["index_anomalies"].as_u64()),
        (Some(40), Some(0))
    );
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    for (args, flag) in [
        (vec!["--window-ns", "0"], "--window-ns"),
        (vec!["--window-ns", "-5"], "--window-ns"),
        (vec!["--window-ns", "10", "--period-ns", "0"], "--period-ns"),
        (
            vec!["--window-ns", "10", "--period-ns", "20"],
            "--window-ns",
        ),
        (
            vec!["--window-ns", "10", "--loss-threshold", "x"],
            "--loss-threshold",
        ),
        (
            vec!["--window-ns", "10", "--counter-bits", "65"],
            "--counter-bits",
        ),
    ] {
        let mut a = args.clone();
        a.push("-");
        let o = run(&a, "event,time_ns\n");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(flag),
            "{args:?}"
        );
    }
}

#[test]
fn missing_file_is_an_io_error() {
    let o = run(&["--window-ns", "10", "/nonexistent/x.csv"], "");
    assert_eq!(o.status.code(), Some(1));
}

/// Delays of 1 ms + U(0, 19 ms) on a 10 ms sensor, where the model would
/// put some estimates before the one before: every estimate is later than
/// the one before, and the status counts the held ones.
#[test]
fn estimates_never_go_backwards() {
    let (mut csv, mut last) = (String::from("event,time_ns\n"), 0);
    for k in 0..600i64 {
        let ready = 1_000_000_000 + k * 10_000_000 + 1_000_000 + (k * 7919 % 191) * 100_000;
        // Delivered in order.
        last = ready.max(last + 20_000);
        csv += &format!("sample,{last}\n");
    }
    let o = run(
        &[
            "--window-ns",
            "5000000000",
            "--period-ns",
            "10000000",
            "--status",
            "-",
        ],
        &csv,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let l = lines(&o);
    let stamps: Vec<i64> = l[..600]
        .iter()
        .map(|v| v["estimate_ns"].as_i64().unwrap())
        .collect();
    assert!(stamps.windows(2).all(|w| w[1] > w[0]));
    assert!(l[600]["status"]["held"].as_u64().unwrap() > 0);
}

#[test]
fn duration_flags_take_units() {
    // A unit means the same nanoseconds; a plain number stays nanoseconds.
    let plain = run(
        &["--window-ns", "1000000000", "--period-ns", "10000000", "-"],
        &stream(40),
    );
    let units = run(
        &["--window-ns", "1s", "--period-ns", "10ms", "-"],
        &stream(40),
    );
    assert!(units.status.success(), "{}", common::stderr(&units));
    assert_eq!(plain.stdout, units.stdout);
    let bad = run(&["--window-ns", "1 fortnight", "-"], &stream(5));
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        common::stderr(&bad).contains("--window-ns"),
        "{}",
        common::stderr(&bad)
    );
}
