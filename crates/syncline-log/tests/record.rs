//! Recording to MCAP on a writer thread: what was queued is in the file,
//! what was not is counted, and the file reads back (header stamps too).

use std::path::PathBuf;

use syncline::{Stamped, Timestamp};
use syncline_log::cdr::encode_header_message;
use syncline_log::record::Recorder;
use syncline_log::{McapReader, StampSource, TopicTiming};

fn path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "syncline-record-{}-{name}.mcap",
        std::process::id()
    ))
}

#[test]
fn every_message_is_written_or_counted() {
    for queue in [0usize, 1, 8, 4096] {
        let file = path(&format!("q{queue}"));
        let rec = Recorder::with_queue(&file, queue).unwrap();
        let imu = rec
            .channel(
                "/imu",
                "sensor_msgs/msg/Imu",
                "ros2msg",
                b"std_msgs/Header header\nfloat64 x\n",
                "cdr",
            )
            .unwrap();
        let status = rec.json_channel("/syncline/status").unwrap();
        let n = 3000i64;
        let mut queued = 0u64;
        for k in 0..n {
            let stamp = 1_700_000_000_000_000_000 + k * 5_000_000;
            let data = encode_header_message(
                (stamp / 1_000_000_000) as i32,
                (stamp % 1_000_000_000) as u32,
                "imu",
                true,
                &[0; 8],
            );
            let now = Timestamp::from_nanos(stamp + 700_000);
            queued += u64::from(rec.write(imu, now, Timestamp::from_nanos(stamp), data));
            if k % 100 == 0 {
                let value = Stamped::new(now, serde_json::json!({"k": k}));
                queued += u64::from(rec.write_json(status, now, &value));
            }
        }
        let summary = rec.finish().unwrap();
        let attempts = n as u64 + (n as u64).div_ceil(100);
        assert_eq!(summary.written, queued, "queue {queue}");
        assert_eq!(
            summary.written + summary.unwritten,
            attempts,
            "queue {queue}: conservation"
        );
        // The file holds exactly what was written, and reads back.
        let mut reader = McapReader::open(&file).unwrap().keep_data(true);
        let (mut imu_n, mut status_n, mut timing) = (0u64, 0u64, TopicTiming::new());
        while let Some(m) = reader.next_message().unwrap() {
            if m.channel.topic == "/imu" {
                assert_eq!(m.channel.stamp_source, StampSource::Header);
                let s = m.stamp.unwrap();
                assert_eq!(s as u64, m.publish_time);
                timing.push(s, Some(m.log_time as i64));
                imu_n += 1;
            } else {
                assert_eq!(m.channel.message_encoding, "json");
                let v: serde_json::Value = serde_json::from_slice(m.data).unwrap();
                assert!(v["k"].is_i64());
                status_n += 1;
            }
        }
        assert_eq!(imu_n + status_n, summary.written);
        if queue == 4096 {
            assert_eq!(summary.unwritten, 0);
            let t = timing.finish();
            assert_eq!(t.period_ns, Some(5_000_000));
            assert_eq!(t.latency_ns.unwrap().max, 700_000);
        }
        let _ = std::fs::remove_file(&file);
    }
}

#[test]
fn a_file_that_cannot_be_created_is_an_error() {
    let err = Recorder::create("/nonexistent-dir/x.mcap").err().unwrap();
    assert!(err.to_string().contains("/nonexistent-dir/x.mcap"), "{err}");
}
