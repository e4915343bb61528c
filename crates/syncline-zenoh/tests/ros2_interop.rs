//! syncline's ROS 2 layer against two independent implementations of
//! rmw_zenoh's wire format, over real sockets on loopback: the stand-in
//! node of `tests/ros2/rmw_node.py` (Python, the PyPI package
//! `eclipse-zenoh`, none of syncline's code), and a node built on hiroz
//! (ZettaScaleLabs' ROS-free Rust ROS 2, `interop/hiroz`).
//!
//! Where Python's zenoh or the hiroz node is missing the tests say so and
//! pass, unless `SYNCLINE_REQUIRE_INTEROP=1` / `SYNCLINE_REQUIRE_HIROZ=1`
//! (CI sets both, installs the package and builds the node).

#[path = "../../../tests/ros2/stand_in.rs"]
mod stand_in;

use stand_in::{free_endpoint, hex, python_zenoh, script};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures::StreamExt;
use syncline_ros2::attachment::Attachment;
use syncline_ros2::cdr::{CdrWriter, HeaderStamp, header_stamp};
use syncline_ros2::types::builtin_interfaces::Time;
use syncline_ros2::types::nav_msgs::Odometry;
use syncline_ros2::types::sensor_msgs::Imu;
use syncline_ros2::types::std_msgs::Header;
use syncline_zenoh::ros2::{Ros2Config, Ros2Error, Ros2Node, StampSource, SubscribeOptions};

/// The hiroz stand-in node (`interop/hiroz`, its own workspace so that
/// hiroz's zenoh features stay out of syncline's build): at
/// `SYNCLINE_HIROZ_NODE`, else `interop/hiroz/target/release/hiroz-node`;
/// `None` (the test skips) where it is not built, unless
/// `SYNCLINE_REQUIRE_HIROZ=1` (`.ci/run` builds it and sets that).
fn node_binary() -> Option<PathBuf> {
    let path = std::env::var_os("SYNCLINE_HIROZ_NODE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../interop/hiroz/target/release/hiroz-node")
        });
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var("SYNCLINE_REQUIRE_HIROZ").as_deref() != Ok("1"),
        "{} is missing: cargo build --release --manifest-path interop/hiroz/Cargo.toml",
        path.display()
    );
    eprintln!(
        "skipped: the hiroz stand-in node is not built \
         (cargo build --release --manifest-path interop/hiroz/Cargo.toml)"
    );
    None
}

fn listening(endpoint: &str) -> Ros2Config {
    Ros2Config {
        domain: 0,
        connect: vec![],
        listen: vec![endpoint.to_owned()],
        ..Ros2Config::default()
    }
}

/// A node listening on a fresh loopback endpoint, and that endpoint.
async fn loopback_node(name: &str, namespace: &str) -> (Ros2Node, String) {
    let endpoint = free_endpoint();
    let node = Ros2Node::new(&listening(&endpoint), name, namespace)
        .await
        .unwrap();
    (node, endpoint)
}

/// The stream's next item, which must come within 10 s.
async fn next<S: futures::Stream + Unpin>(stream: &mut S) -> S::Item {
    tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .expect("the next message arrives within 10 s")
        .expect("the stream goes on")
}

fn stand_in(args: &[&str]) -> Child {
    let mut python = Command::new("python3");
    python.arg(script());
    spawn(python, args)
}

fn spawn(mut program: Command, args: &[&str]) -> Child {
    program
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the stand-in node runs")
}

fn lines(child: Child) -> Vec<serde_json::Value> {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the stand-in node failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespaced_topic_with_skipped_numbers_arrives_stamped_and_counted() {
    if !python_zenoh() {
        return;
    }
    let (node, endpoint) = loopback_node("syncline_test", "").await;
    let mut sub = node
        .subscribe("/robot1/imu", SubscribeOptions::default())
        .await
        .unwrap();
    let publisher = stand_in(&[
        "pub",
        "--endpoint",
        &endpoint,
        "--topic",
        "/robot1/imu",
        "--namespace",
        "/robot1",
        "--count",
        "40",
        "--period-ms",
        "2",
        "--skip",
        "5,6,7,30",
    ]);
    let sent = tokio::task::spawn_blocking(move || lines(publisher))
        .await
        .unwrap();
    assert_eq!(sent.len(), 36);
    let mut got = Vec::new();
    while got.len() < sent.len() {
        let msg = next(&mut sub).await;
        got.push(msg);
    }
    for (msg, line) in got.iter().zip(&sent) {
        assert_eq!(msg.stamp.as_nanos(), line["stamp_ns"].as_i64().unwrap());
        assert_eq!(msg.value.stamp_source, StampSource::Header);
        assert_eq!(msg.value.type_name.as_str(), "sensor_msgs/msg/Imu");
        let attachment = msg.value.attachment.unwrap();
        assert_eq!(attachment.sequence_number, line["seq"].as_i64().unwrap());
        // The typed message reads what the stand-in wrote field by field.
        let imu: Imu = msg.value.decode().unwrap();
        assert_eq!(imu.header.stamp.as_nanos(), msg.stamp.as_nanos());
        assert_eq!(imu.header.frame_id, "imu_link");
        assert_eq!(imu.orientation.w, 1.0);
        let k = attachment.sequence_number as f64;
        assert_eq!(imu.angular_velocity.x, 0.01 * k);
        assert_eq!(imu.linear_acceleration.z, 9.81);
        assert!(matches!(
            msg.value.decode::<Odometry>(),
            Err(Ros2Error::WrongType { .. })
        ));
    }
    let status = sub.status();
    assert_eq!(status.lost_seq, 4);
    assert_eq!(status.received, 36);
    assert_eq!(status.overflow, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn humble_keys_are_understood() {
    if !python_zenoh() {
        return;
    }
    let (node, endpoint) = loopback_node("syncline_test", "").await;
    let mut sub = node
        .subscribe("imu", SubscribeOptions::default())
        .await
        .unwrap();
    let publisher = stand_in(&[
        "pub",
        "--endpoint",
        &endpoint,
        "--topic",
        "/imu",
        "--count",
        "5",
        "--humble",
    ]);
    let sent = tokio::task::spawn_blocking(move || lines(publisher))
        .await
        .unwrap();
    assert!(
        sent[0]["key"]
            .as_str()
            .unwrap()
            .ends_with("/TypeHashNotSupported")
    );
    for line in &sent {
        let msg = next(&mut sub).await;
        assert_eq!(msg.stamp.as_nanos(), line["stamp_ns"].as_i64().unwrap());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_graph_lists_the_stand_ins_topic() {
    if !python_zenoh() {
        return;
    }
    let (node, endpoint) = loopback_node("syncline_test", "").await;
    let mut sub = node
        .subscribe("/robot1/imu", SubscribeOptions::default())
        .await
        .unwrap();
    let publisher = stand_in(&[
        "pub",
        "--endpoint",
        &endpoint,
        "--topic",
        "/robot1/imu",
        "--namespace",
        "/robot1",
        "--count",
        "400",
        "--period-ms",
        "5",
        "--wait-s",
        "0.5",
    ]);
    // Once data flows, the publisher's tokens are declared.
    next(&mut sub).await;
    let graph = node.graph(Duration::from_secs(2)).await.unwrap();
    let topic = &graph.topics["/robot1/imu"];
    assert_eq!(topic.publishers, 1);
    assert!(topic.types.contains("sensor_msgs/msg/Imu"));
    assert!(
        graph.nodes.contains("/robot1/imu_driver"),
        "{:?}",
        graph.nodes
    );
    assert!(graph.nodes.contains("/syncline_test"), "{:?}", graph.nodes);
    drop(tokio::task::spawn_blocking(move || lines(publisher)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_syncline_publishes_another_implementation_reads() {
    if !python_zenoh() {
        return;
    }
    let (node, endpoint) = loopback_node("restamper", "/syncline").await;
    let mut publisher = node
        .publisher("imu_restamped", "sensor_msgs/msg/Imu")
        .await
        .unwrap();
    let recorder = stand_in(&[
        "sub",
        "--endpoint",
        &endpoint,
        "--key",
        "0/**",
        "--duration-s",
        "4",
    ]);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for k in 0..20i64 {
        let mut cdr = CdrWriter::new();
        cdr.header(
            HeaderStamp::from_nanos(1_000_000_000 + k * 5_000_000),
            "imu_link",
        );
        for _ in 0..(4 + 9 + 3 + 9 + 3 + 9) {
            cdr.f64(0.0);
        }
        let cdr = cdr.finish();
        // Every other message goes out typed: the same bytes.
        if k % 2 == 1 {
            let imu = Imu {
                header: Header {
                    stamp: Time::from_nanos(1_000_000_000 + k * 5_000_000),
                    frame_id: "imu_link".into(),
                },
                ..Imu::default()
            };
            assert_eq!(syncline_ros2::types::encode(&imu).unwrap(), cdr);
            publisher.publish_msg(&imu).await.unwrap();
        } else {
            publisher.publish(cdr).await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let seen = tokio::task::spawn_blocking(move || lines(recorder))
        .await
        .unwrap();
    let samples: Vec<_> = seen.iter().filter(|l| l.get("key").is_some()).collect();
    assert_eq!(samples.len(), 20);
    for (k, s) in samples.iter().enumerate() {
        assert_eq!(
            s["key"],
            "0/syncline/imu_restamped/sensor_msgs::msg::dds_::Imu_/RIHS01_7d9a00ff131080897a5ec7e26e315954b8eae3353c3f995c55faf71574000b5b"
        );
        let att = hex(s["attachment"].as_str().unwrap());
        let att = Attachment::decode(&att).unwrap();
        assert_eq!(att.sequence_number, k as i64 + 1);
        assert_eq!(att.gid, publisher.gid());
        let payload = hex(s["payload"].as_str().unwrap());
        assert_eq!(
            header_stamp(&payload).unwrap().as_nanos(),
            1_000_000_000 + k as i64 * 5_000_000
        );
    }
    let tokens: Vec<&str> = seen.iter().filter_map(|l| l["token"].as_str()).collect();
    assert!(
        tokens
            .iter()
            .any(|t| t.contains("/NN/%/%syncline/restamper")),
        "{tokens:?}"
    );
    assert!(
        tokens.iter().any(|t| t.contains("/MP/%/%syncline/restamper/%syncline%imu_restamped/sensor_msgs::msg::dds_::Imu_/RIHS01_7d9a")),
        "{tokens:?}"
    );
}

/// syncline's publisher and subscriber with each other (no Python): the
/// header stamps, the sequence numbers and the type survive the round trip.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn syncline_publishes_to_syncline() {
    let (a, endpoint) = loopback_node("a", "").await;
    let b = Ros2Node::new(
        &Ros2Config {
            domain: 0,
            connect: vec![endpoint.clone()],
            listen: vec![],
            ..Ros2Config::default()
        },
        "b",
        "/ns",
    )
    .await
    .unwrap();
    let mut sub = b
        .subscribe("/ns/chatter_stamped", SubscribeOptions::default())
        .await
        .unwrap();
    let mut publisher = a
        .publisher("/ns/chatter_stamped", "geometry_msgs/msg/PointStamped")
        .await
        .unwrap();
    let mut received = Vec::new();
    for k in 0..200i64 {
        let mut cdr = CdrWriter::new();
        cdr.header(
            HeaderStamp::from_nanos(5_000_000_000 + k * 1_000_000),
            "map",
        );
        cdr.f64(k as f64).f64(0.0).f64(0.0);
        publisher.publish(cdr.finish()).await.unwrap();
        if k == 0 {
            // The first message may go before the subscription is matched:
            // wait for one to arrive, then send the rest.
            loop {
                match tokio::time::timeout(Duration::from_millis(200), sub.next()).await {
                    Ok(Some(m)) => {
                        received.push(m);
                        break;
                    }
                    _ => {
                        let mut cdr = CdrWriter::new();
                        cdr.header(HeaderStamp::from_nanos(5_000_000_000), "map");
                        cdr.f64(0.0).f64(0.0).f64(0.0);
                        publisher.publish(cdr.finish()).await.unwrap();
                    }
                }
            }
        }
    }
    while received.len() < 200 {
        let m = next(&mut sub).await;
        received.push(m);
    }
    let first_seq = received[0].value.attachment.unwrap().sequence_number;
    for (k, m) in received.iter().enumerate().skip(1) {
        assert_eq!(m.stamp.as_nanos(), 5_000_000_000 + k as i64 * 1_000_000);
        assert_eq!(m.value.type_name.as_str(), "geometry_msgs/msg/PointStamped");
        assert_eq!(m.value.stamp_source, StampSource::Header);
        let seq = m.value.attachment.unwrap().sequence_number;
        assert_eq!(seq, first_seq + k as i64);
    }
    assert_eq!(sub.status().overflow, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_hiroz_publishes_syncline_receives_stamped_numbered_and_typed() {
    let Some(binary) = node_binary() else { return };
    let (node, endpoint) = loopback_node("syncline_test", "").await;
    let mut sub = node
        .subscribe("/hiroz/imu", SubscribeOptions::default())
        .await
        .unwrap();
    let publisher = spawn(
        Command::new(&binary),
        &[
            "pub",
            "--endpoint",
            &endpoint,
            "--topic",
            "/hiroz/imu",
            "--count",
            "30",
            "--period-ms",
            "5",
        ],
    );
    let sent = tokio::task::spawn_blocking(move || lines(publisher))
        .await
        .unwrap();
    assert_eq!(sent.len(), 30);
    let mut got = Vec::new();
    while got.len() < sent.len() {
        let msg = tokio::time::timeout(Duration::from_secs(10), sub.next())
            .await
            .expect("every message hiroz sent arrives")
            .unwrap();
        got.push(msg);
    }
    let mut last_seq: Option<i64> = None;
    for (msg, line) in got.iter().zip(&sent) {
        // The header stamp, read by syncline's raw CDR reader.
        assert_eq!(msg.stamp.as_nanos(), line["stamp_ns"].as_i64().unwrap());
        assert_eq!(msg.value.stamp_source, StampSource::Header);
        assert_eq!(msg.value.type_name.as_str(), "sensor_msgs/msg/Imu");
        // Sequence numbers count up by one in hiroz's attachment (from 0;
        // rmw_zenoh_cpp counts from 1: only the steps matter).
        let attachment = msg
            .value
            .attachment
            .expect("hiroz attaches rmw_zenoh's 33 bytes");
        if let Some(last) = last_seq {
            assert_eq!(attachment.sequence_number, last + 1, "{attachment:?}");
        }
        last_seq = Some(attachment.sequence_number);
        // The typed message reads what hiroz's generated type wrote.
        let imu: Imu = msg.value.decode().unwrap();
        assert_eq!(imu.header.frame_id, "hiroz_imu");
        let k = line["seq"].as_i64().unwrap() - 1;
        assert_eq!(imu.angular_velocity.x, 0.5 * k as f64);
    }
    let status = sub.status();
    assert_eq!(status.lost_seq, 0);
    assert_eq!(status.no_attachment, 0);
    assert_eq!(status.bad_header, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_syncline_publishes_hiroz_receives() {
    let Some(binary) = node_binary() else { return };
    let (node, endpoint) = loopback_node("syncline_talker", "").await;
    // hiroz's subscriber keys on the exact type hash: syncline's RIHS01 for
    // sensor_msgs/Imu must equal the one hiroz generated from ROS's .msg.
    let mut publisher = node
        .publisher("/syncline/imu", "sensor_msgs/msg/Imu")
        .await
        .unwrap();
    let subscriber = spawn(
        Command::new(&binary),
        &[
            "sub",
            "--endpoint",
            &endpoint,
            "--topic",
            "/syncline/imu",
            "--count",
            "20",
            "--timeout-s",
            "12",
        ],
    );
    tokio::time::sleep(Duration::from_millis(2500)).await;
    for k in 0..20i64 {
        let mut imu = Imu {
            header: Header {
                stamp: Time::from_nanos(1_000_000_000 + k * 5_000_000),
                frame_id: "syncline_imu".into(),
            },
            ..Imu::default()
        };
        imu.angular_velocity.x = k as f64;
        publisher.publish_msg(&imu).await.unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let seen = tokio::task::spawn_blocking(move || lines(subscriber))
        .await
        .unwrap();
    assert_eq!(seen.len(), 20, "{seen:?}");
    for (k, s) in seen.iter().enumerate() {
        assert_eq!(
            s["stamp_ns"].as_i64().unwrap(),
            1_000_000_000 + k as i64 * 5_000_000
        );
        assert_eq!(s["frame_id"], "syncline_imu");
        assert_eq!(s["gyro_x"].as_f64().unwrap(), k as f64);
    }
}
