//! A recording replayed as a stream: every message with its header stamp,
//! at recorded speed on tokio's paused clock, and damage as a last error.

use std::collections::BTreeMap;
use std::io::Cursor;

use futures::StreamExt;
use mcap::records::MessageHeader;
use syncline::Timestamp;
use syncline::clock::TokioClock;
use syncline_log::cdr::encode_header_message;
use syncline_log::replay::{Pace, replay};
use syncline_log::{McapReader, StampSource};

/// `/cam` with header stamps and `/log` without, interleaved; returns the
/// file and the `(topic, stamp, log_time)` written.
fn recording() -> (Vec<u8>, Vec<(&'static str, i64, i64)>) {
    let mut w = mcap::WriteOptions::new()
        .compression(Some(mcap::Compression::Lz4))
        .chunk_size(Some(1000))
        .create(Cursor::new(Vec::new()))
        .unwrap();
    let hdr = w
        .add_schema(
            "sensor_msgs/msg/Image",
            "ros2msg",
            b"std_msgs/Header header\nuint8[] data\n",
        )
        .unwrap();
    let plain = w
        .add_schema("std_msgs/msg/String", "ros2msg", b"string data\n")
        .unwrap();
    let cam = w.add_channel(hdr, "/cam", "cdr", &BTreeMap::new()).unwrap();
    let log = w
        .add_channel(plain, "/log", "cdr", &BTreeMap::new())
        .unwrap();
    let mut written = Vec::new();
    let t0 = 1_700_000_000_000_000_000i64;
    for k in 0..200i64 {
        let stamp = t0 + k * 33_333_333;
        let log_time = stamp + 2_000_000 + (k * 7919 % 5) * 1_000_000;
        let (ch, topic, data) = if k % 4 == 3 {
            (log, "/log", vec![0, 1, 0, 0, 2, 0, 0, 0, b'x', 0])
        } else {
            let d = encode_header_message(
                (stamp / 1_000_000_000) as i32,
                (stamp % 1_000_000_000) as u32,
                "cam",
                k % 2 == 0,
                &[1, 2, 3],
            );
            (cam, "/cam", d)
        };
        w.write_to_known_channel(
            &MessageHeader {
                channel_id: ch,
                sequence: k as u32,
                log_time: log_time as u64,
                publish_time: log_time as u64,
            },
            &data,
        )
        .unwrap();
        written.push((
            topic,
            if topic == "/cam" { stamp } else { log_time },
            log_time,
        ));
    }
    w.finish().unwrap();
    (w.into_inner().into_inner(), written)
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn recorded_speed_on_the_paused_clock() {
    let (bytes, written) = recording();
    let reader = McapReader::new("rec.mcap", Cursor::new(bytes));
    let clock = TokioClock::new();
    let mut stream = replay(reader, Pace::Recorded(clock));
    let start = tokio::time::Instant::now();
    let mut seen = Vec::new();
    while let Some(msg) = stream.next().await {
        let msg = msg.unwrap();
        let elapsed = start.elapsed().as_nanos() as i64;
        seen.push((
            msg.value.topic.to_string(),
            msg.stamp.as_nanos(),
            msg.value.log_time.as_nanos(),
            elapsed,
        ));
        let want = if &*msg.value.topic == "/cam" {
            StampSource::Header
        } else {
            StampSource::LogTime
        };
        assert_eq!(msg.value.stamp_source, want);
    }
    assert_eq!(seen.len(), written.len());
    let first_log = written[0].2;
    for ((topic, stamp, log_time, elapsed), (w_topic, w_stamp, w_log)) in seen.iter().zip(&written)
    {
        assert_eq!(
            (topic.as_str(), *stamp, *log_time),
            (*w_topic, *w_stamp, *w_log)
        );
        // Each message is yielded when the paused clock reaches its offset
        // (tokio timers resolve to the millisecond).
        let due = w_log - first_log;
        assert!(
            *elapsed >= due && *elapsed < due + 1_000_000,
            "{elapsed} vs {due}"
        );
    }
}

#[tokio::test(flavor = "current_thread", start_paused = true)]
async fn as_fast_as_possible_and_damage_is_the_last_item() {
    let (bytes, written) = recording();
    let cut = bytes[..bytes.len() * 2 / 3].to_vec();
    let reader = McapReader::new("cut.mcap", Cursor::new(cut));
    let start = tokio::time::Instant::now();
    let items: Vec<_> = replay(reader, Pace::<TokioClock>::AsFastAsPossible)
        .collect()
        .await;
    assert_eq!(start.elapsed().as_nanos(), 0, "no waiting");
    let (last, ok) = items.split_last().unwrap();
    let err = last.as_ref().unwrap_err().to_string();
    assert!(
        err.contains("cut.mcap") && err.contains("byte offset"),
        "{err}"
    );
    assert!(!ok.is_empty() && ok.len() < written.len());
    for (item, (topic, stamp, _)) in ok.iter().zip(&written) {
        let msg = item.as_ref().unwrap();
        assert_eq!(
            (&*msg.value.topic, msg.stamp),
            (*topic, Timestamp::from_nanos(*stamp))
        );
    }
}
