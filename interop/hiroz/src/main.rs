//! `hiroz-node pub|sub --endpoint E --topic T [--count N] [--period-ms P]
//! [--timeout-s S]`: publishes `sensor_msgs/Imu` with header stamps
//! `1.7e18 + k · P ms` (k = 0..N), printing `{"seq", "stamp_ns"}` per
//! message, or subscribes and prints `{"stamp_ns", "frame_id", "gyro_x"}`
//! per message until N arrived or S seconds passed. Peer mode, multicast
//! scouting off, connected to E only: loopback, no discovery traffic.

use std::time::Duration;

use hiroz::Builder;
use hiroz::context::ZContextBuilder;
use hiroz_msgs::builtin_interfaces::Time;
use hiroz_msgs::sensor_msgs::Imu;
use hiroz_msgs::std_msgs::Header;

struct Args {
    mode: String,
    endpoint: String,
    topic: String,
    count: u64,
    period_ms: u64,
    timeout_s: f64,
}

fn args() -> Args {
    let mut a = Args {
        mode: String::new(),
        endpoint: "tcp/127.0.0.1:7447".into(),
        topic: "/imu".into(),
        count: 20,
        period_ms: 5,
        timeout_s: 10.0,
    };
    let mut it = std::env::args().skip(1);
    a.mode = it.next().expect("pub or sub");
    while let Some(flag) = it.next() {
        let v = it.next().expect("a value after each flag");
        match flag.as_str() {
            "--endpoint" => a.endpoint = v,
            "--topic" => a.topic = v,
            "--count" => a.count = v.parse().expect("--count N"),
            "--period-ms" => a.period_ms = v.parse().expect("--period-ms P"),
            "--timeout-s" => a.timeout_s = v.parse().expect("--timeout-s S"),
            _ => panic!("unknown flag {flag}"),
        }
    }
    a
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> hiroz::Result<()> {
    let a = args();
    let ctx = ZContextBuilder::default()
        .with_mode("peer")
        .disable_multicast_scouting()
        .with_listen_endpoints(Vec::<String>::new())
        .with_connect_endpoints([a.endpoint.clone()])
        .build()?;
    let start: i64 = 1_700_000_000_000_000_000;
    match a.mode.as_str() {
        "pub" => {
            let node = ctx.create_node("hiroz_talker").build()?;
            let publisher = node.create_pub::<Imu>(&a.topic).build()?;
            // Let the peer see the publisher's liveliness and declare its
            // subscription interest before the first message.
            tokio::time::sleep(Duration::from_millis(1500)).await;
            for k in 0..a.count {
                let stamp = start + (k * a.period_ms * 1_000_000) as i64;
                let mut msg = Imu {
                    header: Header {
                        stamp: Time {
                            sec: (stamp / 1_000_000_000) as i32,
                            nanosec: (stamp % 1_000_000_000) as u32,
                        },
                        frame_id: "hiroz_imu".into(),
                    },
                    ..Default::default()
                };
                msg.angular_velocity.x = 0.5 * k as f64;
                publisher.async_publish(&msg).await?;
                println!("{}", serde_json::json!({"seq": k + 1, "stamp_ns": stamp}));
                tokio::time::sleep(Duration::from_millis(a.period_ms)).await;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        "sub" => {
            let node = ctx.create_node("hiroz_listener").build()?;
            let sub = node.create_sub::<Imu>(&a.topic).build()?;
            let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(a.timeout_s);
            let mut got = 0;
            while got < a.count {
                let Ok(Ok(msg)) = tokio::time::timeout_at(deadline, sub.async_recv()).await else {
                    break;
                };
                let stamp = i64::from(msg.header.stamp.sec) * 1_000_000_000
                    + i64::from(msg.header.stamp.nanosec);
                println!(
                    "{}",
                    serde_json::json!({
                        "stamp_ns": stamp,
                        "frame_id": msg.header.frame_id,
                        "gyro_x": msg.angular_velocity.x,
                    })
                );
                got += 1;
            }
        }
        other => panic!("mode {other}: pub or sub"),
    }
    Ok(())
}
