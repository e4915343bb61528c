//! A stamped stream between two processes: this test binary runs itself
//! again as the publisher (`SYNCLINE_ROLE=publisher`), on its own port.

use std::process::{Command, Stdio};
use std::time::Duration;

use futures::StreamExt;
use syncline::{Stamped, Timestamp};
use syncline_zenoh::{
    ClockId, ClockPolicy, NetConfig, OnPublisherLost, StampedPublisher, StampedSubscriber,
    SubscriberConfig,
};

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct Imu {
    gyro: [f64; 3],
    label: String,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A session listening on a free loopback port, and a key of this test's
/// own (`test/PID/name`): `(endpoint, key, session)`.
async fn listening(name: &str) -> (String, String, zenoh::Session) {
    let ep = format!("tcp/127.0.0.1:{}", free_port());
    let key = format!("test/{}/{name}", std::process::id());
    let session = NetConfig::new().listen(&ep).open().await.unwrap();
    (ep, key, session)
}

/// The stamp and value of sample `i` (irregular stamps, varied values).
fn sample(i: u64) -> Stamped<Imu> {
    let stamp = 1_700_000_000_000_000_000 + i as i64 * 1_000_003 + (i as i64 * 7919) % 5003;
    Stamped::new(
        Timestamp::from_nanos(stamp),
        Imu {
            gyro: [i as f64 * 0.5, -(i as f64), 1.0 / (i as f64 + 1.0)],
            label: format!("s{}", i % 17),
        },
    )
}

/// The publisher process: connects, waits until the subscriber is
/// matched, publishes N samples, then either exits or hangs until killed.
#[test]
fn publisher_role() {
    let Ok(role) = std::env::var("SYNCLINE_ROLE") else {
        return; // run only as the child of the tests below
    };
    let ep = std::env::var("SYNCLINE_EP").unwrap();
    let key = std::env::var("SYNCLINE_KEY").unwrap();
    let n: u64 = std::env::var("SYNCLINE_N").unwrap().parse().unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let session = NetConfig::new().connect(&ep).open().await.unwrap();
        let mut publisher = StampedPublisher::new(&session, &key, ClockId::named("test"))
            .await
            .unwrap();
        // The subscriber's declaration reaches us shortly after connecting.
        tokio::time::sleep(Duration::from_millis(300)).await;
        publisher
            .publish_all(futures::stream::iter((0..n).map(sample)))
            .await
            .unwrap();
        println!("published {}", publisher.published());
        if role == "hang" {
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
        // Wait until the subscriber has everything: the link's content is
        // lost when the session closes under a subscriber far behind.
        let finished = publisher.finish(Duration::from_secs(120)).await.unwrap();
        assert_eq!((finished.published, finished.behind), (n, 0));
        assert!(finished.subscribers >= 1);
        session.close().await.unwrap();
    });
}

fn spawn_publisher(role: &str, ep: &str, key: &str, n: u64) -> std::process::Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "publisher_role",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("SYNCLINE_ROLE", role)
        .env("SYNCLINE_EP", ep)
        .env("SYNCLINE_KEY", key)
        .env("SYNCLINE_N", n.to_string())
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_arrives_complete_in_order_with_stamps_unchanged() {
    let (ep, key, session) = listening("imu").await;
    let config = SubscriberConfig {
        on_publisher_lost: OnPublisherLost::End,
        ..SubscriberConfig::default()
    };
    let mut sub = StampedSubscriber::<Imu>::new(&session, &key, config)
        .await
        .unwrap();
    let n = 20_000;
    let mut child = spawn_publisher("exit", &ep, &key, n);
    let mut got = 0u64;
    while let Some(s) = tokio::time::timeout(Duration::from_secs(60), sub.next())
        .await
        .expect("samples keep coming")
    {
        let want = sample(got);
        assert_eq!(s.value.seq, got + 1, "in order");
        assert_eq!(s.stamp, want.stamp, "stamp unchanged");
        assert_eq!(s.value.value, want.value);
        assert_eq!(s.value.clock, ClockId::named("test"));
        got += 1;
    }
    // The publisher exited: the stream ended after its last sample.
    assert_eq!(got, n);
    let stats = sub.stats();
    assert_eq!(
        (
            stats.delivered,
            stats.lost,
            stats.duplicates,
            stats.malformed
        ),
        (n, 0, 0, 0)
    );
    assert_eq!(stats.publishers_lost, 1);
    assert!(child.wait().unwrap().success());
    session.close().await.unwrap();
}

/// A subscriber that falls seconds behind still gets every sample of a
/// publisher that exits: the publisher's `finish` waits for it before the
/// session closes (without it, what was still on the link was lost).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_subscriber_gets_everything_a_finished_publisher_sent() {
    let (ep, key, session) = listening("slow").await;
    let config = SubscriberConfig {
        on_publisher_lost: OnPublisherLost::End,
        capacity: 64,
        ..SubscriberConfig::default()
    };
    let mut sub = StampedSubscriber::<Imu>::new(&session, &key, config)
        .await
        .unwrap();
    let n = 10_000;
    let mut child = spawn_publisher("exit", &ep, &key, n);
    let mut got = 0u64;
    while let Some(s) = tokio::time::timeout(Duration::from_secs(60), sub.next())
        .await
        .expect("samples keep coming")
    {
        assert_eq!(s.value.seq, got + 1, "in order, none missing");
        got += 1;
        // About 10 s to take all: far behind a publisher done in a blink.
        if got.is_multiple_of(10) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    assert_eq!(got, n);
    let stats = sub.stats();
    assert_eq!(
        (stats.delivered, stats.lost, stats.publishers_lost),
        (n, 0, 1)
    );
    assert!(child.wait().unwrap().success());
    session.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_publisher_is_reported_and_the_stream_waits_or_ends() {
    for policy in [OnPublisherLost::Wait, OnPublisherLost::End] {
        let (ep, key, session) = listening(&format!("kill/{policy:?}")).await;
        let config = SubscriberConfig {
            on_publisher_lost: policy,
            clock: ClockPolicy::Only(ClockId::named("test")),
            ..SubscriberConfig::default()
        };
        let mut sub = StampedSubscriber::<Imu>::new(&session, &key, config)
            .await
            .unwrap();
        let n = 100;
        let mut child = spawn_publisher("hang", &ep, &key, n);
        for i in 0..n {
            let s = tokio::time::timeout(Duration::from_secs(60), sub.next())
                .await
                .unwrap()
                .unwrap();
            assert_eq!(s.stamp, sample(i).stamp);
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let next = tokio::time::timeout(Duration::from_secs(3), sub.next()).await;
        match policy {
            // Ends once the loss is seen.
            OnPublisherLost::End => assert!(matches!(next, Ok(None)), "ends"),
            // Still waiting for samples.
            OnPublisherLost::Wait => {
                assert!(next.is_err(), "waits");
                assert_eq!(sub.stats().publishers_lost, 1, "the loss is reported");
                assert_eq!(sub.publishers_alive(), 0);
            }
        }
        session.close().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_clock_domain_is_refused_unless_told() {
    let (ep, key, session) = listening("clock").await;
    let strict = SubscriberConfig {
        clock: ClockPolicy::Only(ClockId::named("other")),
        ..SubscriberConfig::default()
    };
    let any = SubscriberConfig {
        clock: ClockPolicy::Any,
        on_publisher_lost: OnPublisherLost::End,
        ..SubscriberConfig::default()
    };
    let mut refused = StampedSubscriber::<Imu>::new(&session, &key, strict)
        .await
        .unwrap();
    let mut taken = StampedSubscriber::<Imu>::new(&session, &key, any)
        .await
        .unwrap();
    let mut child = spawn_publisher("exit", &ep, &key, 10);
    let all: Vec<_> =
        tokio::time::timeout(Duration::from_secs(60), (&mut taken).collect::<Vec<_>>())
            .await
            .unwrap();
    assert_eq!(all.len(), 10);
    assert!(child.wait().unwrap().success());
    // The strict one saw the same ten and refused them all.
    let pending = tokio::time::timeout(Duration::from_millis(200), refused.next()).await;
    assert!(pending.is_err());
    assert_eq!(refused.stats().foreign_clock, 10);
    assert_eq!(refused.stats().delivered, 0);
    session.close().await.unwrap();
}
