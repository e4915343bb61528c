//! `syncline sync`, `align` and `estimate` read MCAP recordings as they
//! read event CSV: the messages of the chosen topics, stamped by their
//! header (else log_time), arriving at their log_time. The same events
//! written both ways must give the same output, line for line.

mod common;

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcap::records::MessageHeader;
use proptest::prelude::*;
use syncline_log::cdr::encode_header_message;

use common::scratch_file;
use tempfile::TempPath;

const SCHEMA: &str = "std_msgs/Header header\nfloat64 x\n";

fn syncline(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_syncline"))
        .args(args)
        .output()
        .expect("run syncline")
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `(topic, stamp, arrival)` in arrival order, written as MCAP (with an
/// extra unchosen topic `/noise` in between) and as CSV (without it).
fn write_both(name: &str, events: &[(usize, i64, i64)], topics: &[&str]) -> (TempPath, TempPath) {
    let mut w = mcap::WriteOptions::new()
        .profile("ros2")
        .compression(Some(mcap::Compression::Zstd))
        .chunk_size(Some(2048))
        .compression_threads(0)
        .create(Cursor::new(Vec::new()))
        .unwrap();
    let schema = w
        .add_schema(
            "geometry_msgs/msg/PointStamped",
            "ros2msg",
            SCHEMA.as_bytes(),
        )
        .unwrap();
    let channels: Vec<u16> = topics
        .iter()
        .chain(std::iter::once(&"/noise"))
        .map(|t| w.add_channel(schema, t, "cdr", &BTreeMap::new()).unwrap())
        .collect();
    let mut csv = String::from("topic,stamp_ns,arrival_ns\n");
    for (i, &(topic, stamp, arrival)) in events.iter().enumerate() {
        for (ch, t) in [
            (channels[topic], stamp),
            (channels[topics.len()], stamp + 1),
        ] {
            if ch == channels[topics.len()] && i % 3 != 0 {
                continue;
            }
            let data = encode_header_message(
                t.div_euclid(1_000_000_000) as i32,
                t.rem_euclid(1_000_000_000) as u32,
                "f",
                i % 2 == 0,
                &[0; 8],
            );
            w.write_to_known_channel(
                &MessageHeader {
                    channel_id: ch,
                    sequence: i as u32,
                    log_time: arrival as u64,
                    publish_time: arrival as u64,
                },
                &data,
            )
            .unwrap();
        }
        csv.push_str(&format!("{},{stamp},{arrival}\n", topics[topic]));
    }
    w.finish().unwrap();
    let bytes = w.into_inner().into_inner();
    (
        scratch_file(&format!("{name}.mcap"), &bytes),
        scratch_file(&format!("{name}.csv"), csv.as_bytes()),
    )
}

fn same_output(args: &[&str], mcap: &Path, csv: &Path) {
    let mut a = args.to_vec();
    a.push(p(mcap));
    let from_mcap = syncline(&a);
    let mut b = args.to_vec();
    b.push(p(csv));
    let from_csv = syncline(&b);
    assert_eq!(
        from_csv.status.code(),
        Some(0),
        "{}",
        common::stderr(&from_csv)
    );
    assert_eq!(
        from_mcap.status.code(),
        Some(0),
        "{}",
        common::stderr(&from_mcap)
    );
    assert_eq!(
        String::from_utf8_lossy(&from_mcap.stdout),
        String::from_utf8_lossy(&from_csv.stdout),
        "{args:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn sync_and_align_read_mcap_like_csv(
        raw in prop::collection::vec((0usize..2, 0i64..40_000_000, 0i64..5_000_000), 10..200),
    ) {
        // Two topics at 10 ms and 25 ms with jittered stamps, arriving late.
        let mut events: Vec<(usize, i64, i64)> = Vec::new();
        let mut k = [0i64; 2];
        for (topic, jitter, delay) in raw {
            let period = [10_000_000, 25_000_000][topic];
            let stamp = 1_700_000_000_000_000_000 + k[topic] * period + jitter % 1_000_000;
            k[topic] += 1;
            events.push((topic, stamp, stamp + 2_000_000 + delay));
        }
        events.sort_by_key(|e| e.2);
        let (mcap, csv) = write_both("two", &events, &["/imu", "/cam"]);
        same_output(&["sync", "--policy", "approximate", "--topics", "/imu,/cam", "--report-drops"], &mcap, &csv);
        same_output(&["sync", "--policy", "latest", "--topics", "/cam,/imu"], &mcap, &csv);
        same_output(&["align", "--timeout-ns", "30000000", "--stream", "/imu=10000000", "--stream", "/cam=25000000", "--wall-timeout"], &mcap, &csv);
    }
}

#[test]
fn estimate_on_an_mcap_topic_and_errors() {
    let events: Vec<(usize, i64, i64)> = (0..300)
        .map(|k| {
            (
                0,
                1_000_000_000 + k * 5_000_000,
                1_000_000_000 + k * 5_000_000 + 700_000 + (k * 7919 % 300) * 1_000,
            )
        })
        .collect();
    let (mcap, _) = write_both("one", &events, &["/imu"]);
    let out = syncline(&[
        "estimate",
        "--window-ns",
        "1000000000",
        "--topics",
        "/imu",
        "--status",
        p(&mcap),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let lines = common::json_lines(&out);
    assert_eq!(lines.len(), 301);
    for (line, &(_, stamp, arrival)) in lines.iter().zip(&events) {
        assert_eq!(line["stamp_ns"], stamp);
        assert_eq!(line["arrival_ns"], arrival);
        assert!(line["estimate_ns"].is_i64());
    }
    // The estimator finds the 5 ms period from the log_time arrivals.
    let period = lines[300]["status"]["period_ns"].as_f64().unwrap();
    assert!((period - 5e6).abs() < 5e3, "{period}");
    let out = syncline(&["estimate", "--window-ns", "1000000000", p(&mcap)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(common::stderr(&out).contains("--topics"));
    // A topic the recording does not have: a warning, no sets.
    let out = syncline(&[
        "sync",
        "--policy",
        "exact",
        "--topics",
        "/imu,/nope",
        p(&mcap),
    ]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    assert!(common::stderr(&out).contains("warning") && common::stderr(&out).contains("/nope"));
    // Damaged: exit 2 naming the file and the offset.
    let bytes = std::fs::read(&mcap).unwrap();
    let cut = scratch_file("cut.mcap", &bytes[..bytes.len() / 2]);
    let out = syncline(&[
        "sync",
        "--policy",
        "exact",
        "--topics",
        "/imu,/noise",
        p(&cut),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = common::stderr(&out);
    assert!(
        err.contains("cut.mcap") && err.contains("byte offset"),
        "{err}"
    );
}

#[test]
fn sync_on_a_real_recording() {
    let shared = std::env::var_os("SYNCLINE_SHARED").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        PathBuf::from,
    );
    let file = shared.join("data/real/mcap/rsn_vectornav_gps_going_in_circles1_0.mcap");
    let out = syncline(&[
        "sync",
        "--policy",
        "approximate",
        "--topics",
        "/gps,/imu",
        p(&file),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stderr(&out));
    let sets = common::json_lines(&out);
    // 74 GPS fixes, one IMU sample each at most 12.5 ms away (40 Hz).
    assert!(sets.len() >= 70, "{}", sets.len());
    for s in &sets {
        let st = s["stamps_ns"].as_array().unwrap();
        let d = (st[0].as_i64().unwrap() - st[1].as_i64().unwrap()).abs();
        assert!(d <= 12_500_000, "{s}");
    }
}
