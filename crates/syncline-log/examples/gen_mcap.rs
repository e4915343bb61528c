//! Writes a large ROS 2 MCAP of small header-stamped messages, for the
//! speed figure of `syncline analyze`:
//!
//! ```sh
//! cargo run --release -p syncline-log --example gen_mcap -- /tmp/big.mcap 1000 none
//! ```
//!
//! Arguments: the output path, the size in MB (10^6 bytes, approximate)
//! and the chunk compression (`none`, `zstd` or `lz4`). Four topics
//! (`/imu` 400 Hz, `/imu2` 200 Hz, `/odom` 100 Hz, `/gps` 10 Hz) of
//! `geometry_msgs/msg/Vector3Stamped`-like messages (a header with a
//! 9-byte frame id, three f64) with 1 in 500 samples lost and a latency
//! of 0.3-1.3 ms; default chunk size (768 KiB) with message indexes and a
//! summary, as rosbag2 writes them.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;

use mcap::records::MessageHeader;
use syncline_log::cdr::encode_header_message;

const SCHEMA: &str = "std_msgs/Header header\nfloat64 x\nfloat64 y\nfloat64 z\n================================================================================\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (path, mb, compression) = match args.as_slice() {
        [_, p, mb, c] => (p.clone(), mb.parse::<u64>()?, c.clone()),
        _ => return Err("usage: gen_mcap OUT.mcap SIZE_MB none|zstd|lz4".into()),
    };
    let compression = match compression.as_str() {
        "none" => None,
        "zstd" => Some(mcap::Compression::Zstd),
        "lz4" => Some(mcap::Compression::Lz4),
        other => return Err(format!("unknown compression {other}").into()),
    };
    let mut w = mcap::WriteOptions::new()
        .profile("ros2")
        .compression(compression)
        .compression_threads(0)
        .create(BufWriter::with_capacity(1 << 20, File::create(&path)?))?;
    let schema = w.add_schema(
        "geometry_msgs/msg/Vector3Stamped",
        "ros2msg",
        SCHEMA.as_bytes(),
    )?;
    let topics = [
        ("/imu", 2_500_000i64),
        ("/imu2", 5_000_000),
        ("/odom", 10_000_000),
        ("/gps", 100_000_000),
    ];
    let mut channels = Vec::new();
    for (name, _) in topics {
        channels.push(w.add_channel(schema, name, "cdr", &BTreeMap::new())?);
    }
    let start = 1_700_000_000_000_000_000i64;
    let target = mb * 1_000_000;
    let mut written = 0u64;
    let mut seq = 0u32;
    let mut tick = 0i64;
    // A tick every 2.5 ms: each topic publishes on its own multiples.
    while written < target {
        let now = start + tick * 2_500_000;
        for (i, (_, period)) in topics.iter().enumerate() {
            if (now - start) % period != 0 {
                continue;
            }
            let k = (now - start) / period;
            if k % 500 == 499 {
                continue; // lost
            }
            let latency = 300_000 + (k * 7919 % 1000) * 1000;
            let data = encode_header_message(
                (now / 1_000_000_000) as i32,
                (now % 1_000_000_000) as u32,
                "imu_link",
                true,
                &[0u8; 27],
            );
            let log_time = (now + latency) as u64;
            w.write_to_known_channel(
                &MessageHeader {
                    channel_id: channels[i],
                    sequence: seq,
                    log_time,
                    publish_time: log_time,
                },
                &data,
            )?;
            seq = seq.wrapping_add(1);
            written += 31 + data.len() as u64 + 16; // record, header, index entry
        }
        tick += 1;
    }
    w.finish()?;
    Ok(())
}
