//! `syncline ros2 topics | hz | record` (INTERFACE.md) as processes, against
//! the stand-in ROS 2 node of `tests/ros2/rmw_node.py` (rmw_zenoh's wire
//! format written without syncline's code, in Python with the PyPI package
//! `eclipse-zenoh`), over real sockets on loopback.
//!
//! Where Python's zenoh is missing the tests say so and pass, unless
//! `SYNCLINE_REQUIRE_INTEROP=1` (CI sets it and installs the package).

#[path = "../../../tests/ros2/stand_in.rs"]
mod stand_in;

use stand_in::{free_endpoint, python_zenoh, script};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

fn syncline(args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_syncline"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run syncline")
}

/// The stand-in publishes `count` Imu messages every 5 ms on
/// `/robot1/imu`, connecting to `endpoint`, skipping sequence numbers
/// `skip`; returns what it sent.
fn stand_in(endpoint: &str, count: usize, skip: &str) -> Vec<Value> {
    // syncline listens first: give its process time to bind.
    std::thread::sleep(Duration::from_millis(1500));
    let out = Command::new("python3")
        .arg(script())
        .args([
            "pub",
            "--endpoint",
            endpoint,
            "--topic",
            "/robot1/imu",
            "--namespace",
            "/robot1",
        ])
        .args([
            "--count",
            &count.to_string(),
            "--period-ms",
            "5",
            "--skip",
            skip,
            "--wait-s",
            "1.5",
        ])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn finish(child: Child) -> String {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "syncline failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn hz_reports_rate_losses_by_sequence_and_latency() {
    if !python_zenoh() {
        return;
    }
    let ep = free_endpoint();
    let hz = syncline(&[
        "ros2",
        "hz",
        "/robot1/imu",
        "--listen",
        &ep,
        "--duration-s",
        "7",
        "--json",
    ]);
    let sent = stand_in(&ep, 300, "20,21,22,150");
    let report: Value = serde_json::from_str(finish(hz).trim()).unwrap();
    let t = &report["topics"][0];
    assert_eq!(t["topic"], "/robot1/imu");
    assert_eq!(t["schema"], "sensor_msgs/msg/Imu");
    assert_eq!(t["stamp_source"], "header");
    assert_eq!(t["count"].as_u64().unwrap(), sent.len() as u64);
    assert_eq!(t["lost_seq"], 4);
    assert_eq!(t["period_ns"], 5_000_000);
    assert_eq!(t["gaps"], 2);
    assert_eq!(t["lost"], 4);
    assert_eq!(t["out_of_order"], 0);
    assert_eq!(t["duplicates"], 0);
    for key in ["latency_ns", "source_latency_ns"] {
        let l = &t[key];
        assert!(
            l["min"].as_i64().unwrap() <= l["median"].as_i64().unwrap(),
            "{key}"
        );
        assert!(
            l["p99"].as_i64().unwrap() <= l["max"].as_i64().unwrap(),
            "{key}"
        );
    }
}

#[test]
fn record_writes_an_mcap_that_analyze_reads() {
    if !python_zenoh() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("syncline-ros2-record-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("imu.mcap");
    let ep = free_endpoint();
    let rec = syncline(&[
        "ros2",
        "record",
        file.to_str().unwrap(),
        "/robot1/imu",
        "--listen",
        &ep,
        "--duration-s",
        "7",
    ]);
    let sent = stand_in(&ep, 200, "50");
    finish(rec);
    let out = Command::new(env!("CARGO_BIN_EXE_syncline"))
        .args(["analyze", "--json", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let t = &report["topics"][0];
    assert_eq!(t["topic"], "/robot1/imu");
    assert_eq!(t["schema"], "sensor_msgs/msg/Imu");
    assert_eq!(t["stamp_source"], "header");
    assert_eq!(t["count"].as_u64().unwrap(), sent.len() as u64);
    assert_eq!(t["lost"], 1);
    assert_eq!(t["period_ns"], 5_000_000);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn topics_lists_the_stand_ins_publisher() {
    if !python_zenoh() {
        return;
    }
    let ep = free_endpoint();
    // The stand-in listens this time and publishes long enough to be seen.
    let mut node = Command::new("python3")
        .arg(script())
        .args([
            "pub",
            "--endpoint",
            &ep,
            "--listen",
            "--topic",
            "/robot1/imu",
            "--namespace",
            "/robot1",
        ])
        .args(["--count", "1000", "--period-ms", "5", "--wait-s", "0"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let topics = syncline(&[
        "ros2",
        "topics",
        "--connect",
        &ep,
        "--json",
        "--wait-s",
        "2",
    ]);
    let out = finish(topics);
    node.kill().ok();
    node.wait().ok();
    let report: Value = serde_json::from_str(out.trim()).unwrap();
    let list = report["topics"].as_array().unwrap();
    let imu = list
        .iter()
        .find(|t| t["topic"] == "/robot1/imu")
        .unwrap_or_else(|| panic!("no /robot1/imu in {out}"));
    assert_eq!(imu["type"], "sensor_msgs/msg/Imu");
    assert_eq!(imu["publishers"], 1);
    assert_eq!(imu["subscribers"], 0);
}
