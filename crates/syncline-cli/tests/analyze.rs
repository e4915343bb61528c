//! `syncline analyze` (INTERFACE.md) as a process: on the real ROS 2
//! recordings of `../shared/data/real/mcap`, on MCAP files this test writes
//! with the `mcap` writer with known stamps, losses, out-of-order stamps,
//! duplicates and latency that the report must recover exactly, on event
//! CSV, and on damaged files.

mod common;

use std::collections::BTreeMap;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mcap::records::MessageHeader;
use proptest::prelude::*;
use serde_json::Value;
use syncline_log::cdr::encode_header_message;

use common::scratch_file;

/// The shared data folder: `SYNCLINE_SHARED`, else `../shared` beside the workspace.
fn shared() -> PathBuf {
    std::env::var_os("SYNCLINE_SHARED").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        PathBuf::from,
    )
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_syncline"))
        .arg("analyze")
        .args(args)
        .output()
        .expect("run syncline")
}

fn json(args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        common::stderr(&out)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

fn topic<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["topic"] == name)
        .unwrap_or_else(|| panic!("no topic {name} in {report}"))
}

fn real(name: &str) -> String {
    let path = shared().join("data/real/mcap").join(name);
    path.to_str().unwrap().to_string()
}

fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Topic, schema, count, stamp source.
type Expected = (&'static str, &'static str, u64, &'static str);

#[test]
fn real_recordings_counts_schemas_and_stamp_sources() {
    // Counts and schemas from the recordings' README (the MCAP statistics).
    let cases: &[(&str, &[Expected])] = &[
        (
            "rsn_vectornav_gps_going_in_circles1_0.mcap",
            &[
                ("/imu", "custom_interfaces/msg/Vectornav", 2983, "header"),
                ("/gps", "custom_msg/msg/Customgps", 74, "header"),
            ],
        ),
        (
            "rsn_gps_open_data_0.mcap",
            &[("/gps", "gps_driver/msg/GpsMsg", 283, "header")],
        ),
        (
            "evo_nav2_turtlebot.mcap",
            &[
                ("/odom", "nav_msgs/msg/Odometry", 2639, "header"),
                ("/tf", "tf2_msgs/msg/TFMessage", 5422, "log_time"),
                ("/tf_static", "tf2_msgs/msg/TFMessage", 1, "log_time"),
                (
                    "/amcl_pose",
                    "geometry_msgs/msg/PoseWithCovarianceStamped",
                    135,
                    "header",
                ),
            ],
        ),
        (
            "rosbag2_talker.mcap",
            &[
                ("/rosout", "rcl_interfaces/msg/Log", 10, "log_time"),
                (
                    "/parameter_events",
                    "rcl_interfaces/msg/ParameterEvent",
                    0,
                    "log_time",
                ),
                ("/topic", "std_msgs/msg/String", 10, "log_time"),
            ],
        ),
        (
            "rosbag2_cdr_test_0.mcap",
            &[
                ("/test_topic", "test_msgs/msg/BasicTypes", 3, "log_time"),
                ("/array_topic", "test_msgs/msg/Arrays", 4, "log_time"),
            ],
        ),
        (
            "rosbag2_wrong_rmw_test_0.mcap",
            &[("/test_topic", "test_msgs/msg/BasicTypes", 3, "log_time")],
        ),
        (
            "rosbag2_test_bag_for_seek_0.mcap",
            &[("topic1", "test_msgs/BasicTypes", 5, "log_time")],
        ),
        (
            "rosbag2_topics_and_services.mcap",
            &[
                (
                    "/add_two_ints/_service_event",
                    "example_interfaces/srv/AddTwoInts_Event",
                    6,
                    "log_time",
                ),
                ("/rosout", "rcl_interfaces/msg/Log", 0, "log_time"),
            ],
        ),
    ];
    for (file, topics) in cases {
        let report = json(&[&real(file)]);
        for (name, schema, count, source) in *topics {
            let t = topic(&report, name);
            assert_eq!(t["schema"], *schema, "{file} {name}");
            assert_eq!(t["count"], *count, "{file} {name}");
            assert_eq!(t["stamp_source"], *source, "{file} {name}");
            assert_eq!(t.get("latency_ns").is_some(), *source == "header");
        }
    }
}

#[test]
fn real_vectornav_rates_and_latency_match_the_readme() {
    let report = json(&[
        "--topics",
        "/imu,/gps",
        &real("rsn_vectornav_gps_going_in_circles1_0.mcap"),
    ]);
    let names: Vec<&str> = report["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["topic"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["/imu", "/gps"], "--topics order");
    let imu = topic(&report, "/imu");
    let gps = topic(&report, "/gps");
    // README: 39.973 Hz from stamps over the span (losses included), lag
    // 0.341 / 0.600 / 1.352 ms; the robust period sees the 40 Hz clock.
    let rate = imu["rate_hz"].as_f64().unwrap();
    assert!((rate - 40.0).abs() < 0.01, "{rate}");
    let close = |v: &Value, ms: f64| (v.as_f64().unwrap() / 1e6 - ms).abs() <= 0.0005;
    assert!(close(&imu["latency_ns"]["min"], 0.341), "{imu}");
    assert!(close(&imu["latency_ns"]["median"], 0.600), "{imu}");
    assert!(close(&imu["latency_ns"]["max"], 1.352), "{imu}");
    assert!(close(&gps["latency_ns"]["min"], 0.313), "{gps}");
    assert!(close(&gps["latency_ns"]["max"], 0.923), "{gps}");
    assert!((gps["rate_hz"].as_f64().unwrap() - 1.0).abs() < 0.001);
    assert_eq!(imu["out_of_order"], 0);
    // GPS stamps are UTC time of day: the lag is the date plus 263..272 ms.
    let open = json(&[&real("rsn_gps_open_data_0.mcap")]);
    let lag = topic(&open, "/gps")["latency_ns"]["min"].as_i64().unwrap();
    assert!((lag - 1_770_422_400_263_000_000).abs() < 1_000_000, "{lag}");
}

#[test]
fn table_for_people_and_unknown_topic() {
    let file = real("evo_nav2_turtlebot.mcap");
    let out = run(&[&file]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("/odom") && text.contains("nav_msgs/msg/Odometry"));
    assert!(text.lines().nth(1).unwrap().starts_with("topic"));
    let out = run(&["--topics", "/nope", &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(common::stderr(&out).contains("/nope"));
}

/// One generated topic: what was written and what the report must say.
#[derive(Debug, Clone)]
struct Plan {
    period: i64,
    /// Stamps in file order.
    stamps: Vec<i64>,
    latencies: Vec<i64>,
    gaps: u64,
    lost: u64,
}

/// `n` stamps every `period` from `start`, with runs of losses, duplicates
/// (a stamp sent twice) and out-of-order pairs (two neighbours swapped) at
/// positions drawn from `choices`, and a latency for each.
fn plan(period: i64, start: i64, n: usize, choices: &[(u8, u8, i64)]) -> Plan {
    let mut stamps = Vec::new();
    let (mut gaps, mut lost) = (0, 0);
    let mut k = 0i64;
    let mut latencies = Vec::new();
    let mut c = choices.iter().cycle();
    while stamps.len() < n {
        let &(kind, amount, lat) = c.next().unwrap();
        let t = start + k * period;
        match kind % 8 {
            // A run of `amount` losses before this sample (not at the start).
            0 if !stamps.is_empty() => {
                let run = i64::from(amount % 4 + 1);
                k += run;
                gaps += 1;
                lost += run as u64;
                stamps.push(start + k * period);
            }
            1 => {
                stamps.push(t);
                stamps.push(t);
                latencies.push(lat);
            }
            2 => {
                stamps.push(t + period);
                stamps.push(t);
                latencies.push(lat);
                k += 1;
            }
            _ => stamps.push(t),
        }
        latencies.push(lat);
        k += 1;
    }
    Plan {
        period,
        stamps,
        latencies,
        gaps,
        lost,
    }
}

const MSG_SCHEMA: &str = "std_msgs/Header header\nfloat64 x\n================================================================================\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";
const IDL_SCHEMA: &str = "module geometry_msgs {\n  module msg {\n    struct PointStamped {\n      std_msgs::msg::Header header;\n      double x;\n    };\n  };\n};\n";

#[derive(Debug, Clone, Copy)]
struct Layout {
    compression: u8,
    chunked: bool,
    chunk_size: u64,
    little_endian: bool,
    idl: bool,
}

/// Writes the header topic `/cam` from `plan` and a log_time topic `/chatter`.
fn write_mcap(plan: &Plan, layout: Layout, chatter: &[u64]) -> Vec<u8> {
    let compression = match layout.compression % 3 {
        0 => None,
        1 => Some(mcap::Compression::Zstd),
        _ => Some(mcap::Compression::Lz4),
    };
    let mut w = mcap::WriteOptions::new()
        .profile("ros2")
        .compression(compression)
        .use_chunks(layout.chunked)
        .chunk_size(Some(layout.chunk_size))
        .compression_threads(0)
        .create(Cursor::new(Vec::new()))
        .unwrap();
    let (enc, text) = if layout.idl {
        ("ros2idl", IDL_SCHEMA)
    } else {
        ("ros2msg", MSG_SCHEMA)
    };
    let schema = w
        .add_schema("geometry_msgs/msg/PointStamped", enc, text.as_bytes())
        .unwrap();
    let cam = w
        .add_channel(schema, "/cam", "cdr", &BTreeMap::new())
        .unwrap();
    let string = w
        .add_schema("std_msgs/msg/String", "ros2msg", b"string data\n")
        .unwrap();
    let chat = w
        .add_channel(string, "/chatter", "cdr", &BTreeMap::new())
        .unwrap();
    let mut chatter = chatter.iter().peekable();
    for (i, (&t, &lat)) in plan.stamps.iter().zip(&plan.latencies).enumerate() {
        let log_time = (t + lat) as u64;
        while let Some(&&c) = chatter.peek() {
            if c > log_time {
                break;
            }
            w.write_to_known_channel(
                &MessageHeader {
                    channel_id: chat,
                    sequence: 0,
                    log_time: c,
                    publish_time: c,
                },
                &[0, 1, 0, 0, 1, 0, 0, 0, 0],
            )
            .unwrap();
            chatter.next();
        }
        let data = encode_header_message(
            (t.div_euclid(1_000_000_000)) as i32,
            t.rem_euclid(1_000_000_000) as u32,
            "cam_link",
            layout.little_endian,
            &[0; 12],
        );
        w.write_to_known_channel(
            &MessageHeader {
                channel_id: cam,
                sequence: i as u32,
                log_time,
                publish_time: log_time,
            },
            &data,
        )
        .unwrap();
    }
    // Chatter after the last camera message.
    for &c in chatter {
        w.write_to_known_channel(
            &MessageHeader {
                channel_id: chat,
                sequence: 0,
                log_time: c,
                publish_time: c,
            },
            &[0, 1, 0, 0, 1, 0, 0, 0, 0],
        )
        .unwrap();
    }
    w.finish().unwrap();
    w.into_inner().into_inner()
}

/// Nearest rank, as the report defines percentiles.
fn rank(sorted: &[i64], percent: usize) -> i64 {
    let n = sorted.len();
    let r = (percent * n).div_ceil(100).clamp(1, n);
    sorted[r - 1]
}

fn check(report: &Value, plan: &Plan) {
    let cam = topic(report, "/cam");
    assert_eq!(cam["stamp_source"], "header");
    assert_eq!(cam["count"], plan.stamps.len() as u64);
    assert_eq!(cam["period_ns"], plan.period, "{cam}");
    assert_eq!(cam["jitter_ns"]["rms"], 0);
    assert_eq!(cam["jitter_ns"]["p99"], 0);
    assert_eq!(cam["gaps"], plan.gaps, "{cam}");
    assert_eq!(cam["lost"], plan.lost, "{cam}");
    let (mut ooo, mut dup) = (0u64, 0u64);
    for w in plan.stamps.windows(2) {
        ooo += u64::from(w[1] < w[0]);
        dup += u64::from(w[1] == w[0]);
    }
    assert_eq!(cam["out_of_order"], ooo);
    assert_eq!(cam["duplicates"], dup);
    let mut lat = plan.latencies.clone();
    lat.sort_unstable();
    let l = &cam["latency_ns"];
    assert_eq!(l["min"], lat[0]);
    assert_eq!(l["median"], rank(&lat, 50));
    assert_eq!(l["p99"], rank(&lat, 99));
    assert_eq!(l["max"], *lat.last().unwrap());
}

fn layout_strategy() -> impl Strategy<Value = Layout> {
    (
        0u8..3,
        any::<bool>(),
        200u64..20_000,
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(compression, chunked, chunk_size, little_endian, idl)| Layout {
                compression,
                chunked,
                chunk_size,
                little_endian,
                idl,
            },
        )
}

fn plan_strategy() -> impl Strategy<Value = Plan> {
    (
        1_000_000i64..200_000_000,
        -2_000_000_000_000i64..2_000_000_000_000_000_000,
        2usize..1500,
        prop::collection::vec((any::<u8>(), any::<u8>(), -1_000_000i64..50_000_000), 1..64),
    )
        .prop_map(|(period, start, n, choices)| plan(period, start, n, &choices))
        // The period is identifiable: most intervals (in stamp order) are
        // one period (a lone interval across a loss is not).
        .prop_filter("the median interval is the period", |p| {
            let mut sorted = p.stamps.clone();
            sorted.sort_unstable();
            let mut dts: Vec<i64> = sorted
                .windows(2)
                .map(|w| w[1] - w[0])
                .filter(|&d| d > 0)
                .collect();
            dts.sort_unstable();
            !dts.is_empty() && dts[dts.len() / 2] == p.period
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn generated_recordings_are_recovered_exactly(
        plan in plan_strategy(),
        layout in layout_strategy(),
        chatter_n in 0usize..50,
    ) {
        let first = plan.stamps.iter().min().unwrap() + 1_000;
        let chatter: Vec<u64> = (0..chatter_n as u64).map(|i| first as u64 + i * 7_000_000).collect();
        let bytes = write_mcap(&plan, layout, &chatter);
        let path = scratch_file("gen.mcap", &bytes);
        let report = json(&[p(&path)]);
        check(&report, &plan);
        let chat = topic(&report, "/chatter");
        prop_assert_eq!(&chat["count"], chatter_n as u64);
        prop_assert_eq!(&chat["stamp_source"], "log_time");
        prop_assert!(chat.get("latency_ns").is_none());
        if chatter_n >= 2 {
            prop_assert_eq!(&chat["period_ns"], 7_000_000);
        }
        // The same events as CSV give the same figures.
        let mut csv = String::from("# generated\ntopic,stamp_ns,arrival_ns\n");
        for (t, l) in plan.stamps.iter().zip(&plan.latencies) {
            csv.push_str(&format!("/cam,{t},{}\n", t + l));
        }
        let csv_path = scratch_file("gen.csv", csv.as_bytes());
        let from_csv = json(&[p(&csv_path)]);
        check(&from_csv, &plan);
        prop_assert_eq!(&topic(&from_csv, "/cam")["schema"], &Value::Null);
    }
}

/// A chunked file with several chunks, for the damage tests.
fn sample_file(compression: u8) -> (Plan, Vec<u8>) {
    let choices: Vec<(u8, u8, i64)> = (0..40u8)
        .map(|i| (i.wrapping_mul(37), i, 1_000 * i64::from(i)))
        .collect();
    let plan = plan(10_000_000, 1_700_000_000_000_000_000, 600, &choices);
    let layout = Layout {
        compression,
        chunked: true,
        chunk_size: 4096,
        little_endian: true,
        idl: false,
    };
    let bytes = write_mcap(&plan, layout, &[]);
    (plan, bytes)
}

fn assert_damage_reported(path: &Path, what: &str) {
    let out = run(&["--json", p(path)]);
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert!(
        err.contains(p(path)) && err.contains("byte offset"),
        "{what}: {err}"
    );
    assert!(!err.contains("panicked"), "{what}: {err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn truncated_files_name_the_offset_and_partial_reports_what_was_read(
        cut in 0.0f64..1.0,
        compression in 0u8..3,
    ) {
        let (plan, bytes) = sample_file(compression);
        let at = ((bytes.len() - 1) as f64 * cut) as usize;
        let path = scratch_file(&format!("cut{compression}.mcap"), &bytes[..at]);
        assert_damage_reported(&path, "truncated");
        let out = run(&["--json", "--partial", p(&path)]);
        prop_assert_eq!(out.status.code(), Some(0));
        prop_assert!(common::stderr(&out).contains("warning"));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        let count = report["topics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["topic"] == "/cam")
            .map_or(0, |t| t["count"].as_u64().unwrap());
        prop_assert!(count <= plan.stamps.len() as u64);
    }
}

#[test]
fn bad_magic_empty_and_bad_crc() {
    let (plan, bytes) = sample_file(0);
    let mut bad = bytes.clone();
    bad[1] = b'X';
    assert_damage_reported(&scratch_file("magic.mcap", &bad), "bad magic");
    assert_damage_reported(&scratch_file("empty.mcap", &[]), "empty");
    // Flip a bit of a frame id inside the second chunk: its CRC fails.
    let hits: Vec<usize> = bytes
        .windows(8)
        .enumerate()
        .filter(|(_, w)| w == b"cam_link")
        .map(|(i, _)| i)
        .collect();
    let mut crc = bytes.clone();
    crc[hits[hits.len() / 2]] ^= 1;
    let path = scratch_file("crc.mcap", &crc);
    assert_damage_reported(&path, "bad CRC");
    let out = run(&["--json", "--partial", p(&path)]);
    assert_eq!(out.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let count = topic(&report, "/cam")["count"].as_u64().unwrap();
    assert!(count > 0 && count < plan.stamps.len() as u64, "{count}");
    assert!(report["damaged"].as_str().unwrap().contains("CRC"));
    // A CSV that is not MCAP is read as CSV: a missing column is exit 2.
    let out = run(&[p(&scratch_file("x.csv", b"a,b\n1,2\n"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(common::stderr(&out).contains("topic"));
}

#[test]
fn shell_completions_know_the_subcommands() {
    for shell in ["bash", "zsh", "fish"] {
        let out = Command::new(env!("CARGO_BIN_EXE_syncline"))
            .args(["completions", shell])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0));
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("analyze") && text.contains("partial"),
            "{shell}"
        );
    }
}
