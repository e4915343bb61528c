//! The ROS 2 example (`examples/ros2_pipeline.rs`) against stand-in ROS 2
//! nodes written without syncline's code (`tests/ros2/rmw_node.py`, Python
//! with the PyPI package `eclipse-zenoh`), over real sockets on loopback:
//! two publishers feed it, a third node records what it republishes.
//!
//! Where Python's zenoh is missing the test says so and passes, unless
//! `SYNCLINE_REQUIRE_INTEROP=1` (CI sets it and installs the package).

#[allow(dead_code)]
#[path = "../examples/ros2_pipeline.rs"]
mod pipeline;

#[path = "ros2/stand_in.rs"]
mod stand_in;

use stand_in::{hex, python_zenoh, script};
use std::process::{Command, Stdio};
use std::time::Duration;

use syncline::TimeDelta;
use syncline_ros2::attachment::Attachment;
use syncline_ros2::cdr::{CdrReader, header_stamp};
use syncline_zenoh::ros2::Ros2Config;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pipeline_restamps_aligns_synchronizes_and_republishes() {
    if !python_zenoh() {
        return;
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ep = format!("tcp/127.0.0.1:{port}");
    // The run and the recorder end when told, not after a guessed time.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let dir = std::env::temp_dir().join(format!("syncline-ros2-pipeline-{port}"));
    std::fs::create_dir_all(&dir).unwrap();
    let stop_file = dir.join("stop");
    let options = pipeline::Options {
        config: Ros2Config {
            domain: 0,
            connect: vec![],
            listen: vec![ep.clone()],
            ..Ros2Config::default()
        },
        imu: "/imu".into(),
        other: "/robot1/imu_slow".into(),
        period: TimeDelta::from_millis(5),
        run_for: Duration::from_secs(120),
        stop: Some(stopped),
    };
    let run = tokio::spawn(pipeline::run(options));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let spawn = |args: &[&str]| {
        Command::new("python3")
            .arg(script())
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let recorder = spawn(&[
        "sub",
        "--endpoint",
        &ep,
        "--key",
        "0/syncline/**",
        "--duration-s",
        "120",
        "--stop-file",
        stop_file.to_str().unwrap(),
    ]);
    let imu = spawn(&[
        "pub",
        "--endpoint",
        &ep,
        "--topic",
        "/imu",
        "--count",
        "600",
        "--period-ms",
        "5",
        "--wait-s",
        "1.5",
    ]);
    let slow = spawn(&[
        "pub",
        "--endpoint",
        &ep,
        "--topic",
        "/robot1/imu_slow",
        "--namespace",
        "/robot1",
        "--node",
        "slow",
        "--stamp-now",
        "--count",
        "60",
        "--period-ms",
        "50",
        "--wait-s",
        "1.5",
    ]);
    let wait = |c: std::process::Child| {
        let out = c.wait_with_output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let sent = tokio::task::spawn_blocking(move || [imu, slow].map(wait))
        .await
        .unwrap();
    // The publishers are done: let the aligner's 100 ms bound release the
    // last samples, then stop the pipeline and, once its last messages are
    // out, the recorder.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    stop.send(true).unwrap();
    let summary = run.await.unwrap().unwrap();
    tokio::time::sleep(Duration::from_millis(1000)).await;
    std::fs::write(&stop_file, b"").unwrap();
    let recorded = tokio::task::spawn_blocking(move || wait(recorder))
        .await
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    let outputs = [sent[0].clone(), sent[1].clone(), recorded];
    let sent_imu = outputs[0].lines().count() as u64;
    let sent_slow = outputs[1].lines().count() as u64;
    assert_eq!(summary.order_violations, 0);
    assert_eq!(summary.imu_lost, 0);
    // Every IMU message comes out restamped, or is counted by the aligner
    // (late under a heavy load, or still held).
    assert_eq!(
        summary.restamped + summary.dropped[0] + summary.pending[0],
        sent_imu,
        "{summary:?}"
    );
    assert!(summary.restamped > 0, "{summary:?}");
    assert_eq!(
        summary.other + summary.dropped[1] + summary.pending[1],
        sent_slow,
        "{summary:?}"
    );
    assert!(summary.sets > 0 && summary.sets <= sent_slow, "{summary:?}");

    let seen: Vec<serde_json::Value> = outputs[2]
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|v: &serde_json::Value| v.get("key").is_some())
        .collect();
    let imu_out: Vec<_> = seen
        .iter()
        .filter(|v| {
            v["key"]
                .as_str()
                .unwrap()
                .starts_with("0/syncline/imu/sensor_msgs::msg::dds_::Imu_/RIHS01_7d9a00ff")
        })
        .collect();
    let sets_out: Vec<_> = seen
        .iter()
        .filter(|v| {
            v["key"]
                .as_str()
                .unwrap()
                .starts_with("0/syncline/sets/std_msgs::msg::dds_::String_/RIHS01_df668c74")
        })
        .collect();
    let status_out: Vec<serde_json::Value> = seen
        .iter()
        .filter(|v| {
            v["key"]
                .as_str()
                .unwrap()
                .starts_with("0/syncline/status/std_msgs::msg::dds_::String_/RIHS01_df668c74")
        })
        .map(|v| {
            let payload = hex(v["payload"].as_str().unwrap());
            let text = CdrReader::new(&payload)
                .unwrap()
                .string()
                .unwrap()
                .to_owned();
            serde_json::from_str(&text).unwrap()
        })
        .collect();
    assert!(!status_out.is_empty() && status_out.len() as u64 <= summary.statuses);
    // The last status the recorder saw counts what the pipeline had taken in.
    let last = status_out.last().unwrap();
    let estimated = last["estimator"]["samples"].as_u64().unwrap();
    assert!(estimated <= summary.restamped, "{last}");
    assert!(
        last["aligner"].is_object() && last["imu_subscription"]["received"].is_u64(),
        "{last}"
    );
    // Publications are best effort under congestion, as rmw_zenoh's
    // KEEP_LAST publishers are (zenoh drops rather than block a slow
    // reader): the recorder sees at most what was published, the
    // attachments' sequence numbers say exactly what it missed.
    assert!(imu_out.len() as u64 <= summary.restamped);
    assert!(sets_out.len() as u64 <= summary.sets);
    let recorded_all = imu_out.len() as u64 == summary.restamped;
    // Restamped headers never go backwards, and the attachments count up
    // from 1, the last being the number published.
    let mut last = i64::MIN;
    let mut last_seq = 0;
    for v in &imu_out {
        let stamp = header_stamp(&hex(v["payload"].as_str().unwrap()))
            .unwrap()
            .as_nanos();
        assert!(stamp > last);
        last = stamp;
        let att = Attachment::decode(&hex(v["attachment"].as_str().unwrap())).unwrap();
        assert!(att.sequence_number > last_seq);
        last_seq = att.sequence_number;
    }
    assert!(last_seq as u64 <= summary.restamped);
    if recorded_all {
        assert_eq!(last_seq as u64, summary.restamped);
    }
    // Each set pairs a republished IMU stamp with a stamp the slow node sent,
    // and says its spread right; sets come out in the order of their stamps.
    let imu_stamps: std::collections::HashSet<i64> = imu_out
        .iter()
        .map(|v| {
            header_stamp(&hex(v["payload"].as_str().unwrap()))
                .unwrap()
                .as_nanos()
        })
        .collect();
    let slow_stamps: std::collections::HashSet<i64> = outputs[1]
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["stamp_ns"]
                .as_i64()
                .unwrap()
        })
        .collect();
    let mut last_other = i64::MIN;
    for v in &sets_out {
        let payload = hex(v["payload"].as_str().unwrap());
        let text = CdrReader::new(&payload)
            .unwrap()
            .string()
            .unwrap()
            .to_owned();
        let set: serde_json::Value = serde_json::from_str(&text).unwrap();
        let (imu, other) = (
            set["imu_stamp_ns"].as_i64().unwrap(),
            set["other_stamp_ns"].as_i64().unwrap(),
        );
        assert!(!recorded_all || imu_stamps.contains(&imu), "{text}");
        assert!(slow_stamps.contains(&other), "{text}");
        assert_eq!(set["spread_ns"].as_i64().unwrap(), (imu - other).abs());
        assert!(other > last_other, "{text}");
        last_other = other;
    }
}
