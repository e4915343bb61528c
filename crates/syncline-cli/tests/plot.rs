//! `syncline plot` as a process: PNG and SVG figures of a real recording
//! and of an event CSV.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn shared() -> PathBuf {
    std::env::var_os("SYNCLINE_SHARED").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        PathBuf::from,
    )
}

/// A scratch directory, removed when the test ends (the figures go to a
/// directory in it that the CLI creates).
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("syncline-plot-")
        .tempdir()
        .unwrap()
}

fn check_figure(path: &Path) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match path.extension().and_then(|e| e.to_str()) {
        Some("png") => assert!(
            bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{}",
            path.display()
        ),
        Some("svg") => assert!(
            String::from_utf8_lossy(&bytes).contains("<svg"),
            "{}",
            path.display()
        ),
        other => panic!("unexpected figure {other:?}"),
    }
}

#[test]
fn figures_of_a_real_recording() {
    let file = shared().join("data/real/mcap/rsn_vectornav_gps_going_in_circles1_0.mcap");
    let tmp = scratch();
    let dir = tmp.path().join("figures");
    let out = Command::new(env!("CARGO_BIN_EXE_syncline"))
        .args(["plot", "--topics", "/imu,/gps", "--out"])
        .arg(&dir)
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let listed: Vec<PathBuf> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(PathBuf::from)
        .collect();
    for stem in [
        "imu_interarrival",
        "imu_latency",
        "imu_jitter",
        "gps_interarrival",
        "gps_latency",
        "gps_jitter",
        "sync_spread",
    ] {
        for ext in ["png", "svg"] {
            let path = dir.join(format!("{stem}.{ext}"));
            assert!(listed.contains(&path), "{} not listed", path.display());
            check_figure(&path);
        }
    }
}

#[test]
fn figures_of_an_event_csv_and_bad_input() {
    let tmp = scratch();
    let dir = tmp.path().join("figures");
    let mut csv = String::from("topic,stamp_ns\n");
    for k in 0..100i64 {
        csv.push_str(&format!("a,{}\n", k * 10_000_000 + (k * 7919 % 13) * 1000));
    }
    let input = tmp.path().join("events.csv");
    std::fs::write(&input, csv).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_syncline"))
        .args(["plot", "--topics", "a", "--out"])
        .arg(&dir)
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    // Stamps only: no latency figure.
    check_figure(&dir.join("a_interarrival.png"));
    check_figure(&dir.join("a_jitter.svg"));
    assert!(!dir.join("a_latency.png").exists());
    let out = Command::new(env!("CARGO_BIN_EXE_syncline"))
        .args(["plot", "--topics", "b", "--out"])
        .arg(&dir)
        .arg(&input)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(common::stderr(&out).contains("unknown topic `a`"));
}
