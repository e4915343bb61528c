//! Stamped stream speed between two processes on loopback: this program
//! subscribes and runs itself again as the publisher.
//!
//! ```sh
//! cargo run --release -p syncline-zenoh --example stamped_bench -- throughput 1000000
//! cargo run --release -p syncline-zenoh --example stamped_bench -- latency 5000
//! ```
//!
//! `throughput N`: N small samples (a `u64` value) as fast as the publisher
//! can send them; prints samples/s at the subscriber (first to last) and
//! the loss count. `latency N`: N samples at 1 kHz; prints the p50, p99 and
//! max of receive time minus publication time (one host, one clock).

use std::process::Command;
use std::time::{Duration, Instant};

use futures::StreamExt;
use syncline::Stamped;
use syncline::timer::system_now;
use syncline_zenoh::{
    ClockId, NetConfig, OnPublisherLost, StampedPublisher, StampedSubscriber, SubscriberConfig,
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map_or("throughput", String::as_str).to_string();
    let n: u64 = args
        .get(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    match args.get(3) {
        Some(ep) => rt.block_on(publish(&mode, n, ep)),
        None => rt.block_on(subscribe(&mode, n)),
    }
}

async fn publish(mode: &str, n: u64, ep: &str) {
    let session = NetConfig::new().connect(ep).open().await.expect("session");
    let mut publisher = StampedPublisher::<u64>::new(&session, "bench/stamped", ClockId::system())
        .await
        .expect("publisher");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    for i in 0..n {
        if mode == "latency" {
            tick.tick().await;
        }
        publisher
            .publish(&Stamped::new(system_now(), i))
            .expect("publish");
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    session.close().await.expect("close");
}

async fn subscribe(mode: &str, n: u64) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let ep = format!("tcp/127.0.0.1:{port}");
    let session = NetConfig::new().listen(&ep).open().await.expect("session");
    let config = SubscriberConfig {
        on_publisher_lost: OnPublisherLost::End,
        ..SubscriberConfig::default()
    };
    let mut sub = StampedSubscriber::<u64>::new(&session, "bench/stamped", config)
        .await
        .expect("subscriber");
    let mut child = Command::new(std::env::current_exe().expect("exe"))
        .args([mode, &n.to_string(), &ep])
        .spawn()
        .expect("publisher process");
    let mut first: Option<Instant> = None;
    let mut last = Instant::now();
    let mut latencies = Vec::with_capacity(n as usize);
    let mut got = 0u64;
    while let Some(s) = sub.next().await {
        let now = Instant::now();
        first.get_or_insert(now);
        last = now;
        latencies.push(s.value.received.as_nanos() - s.value.sent.as_nanos());
        got += 1;
        if got == n {
            break;
        }
    }
    let _ = child.wait();
    let stats = sub.stats();
    let secs = first.map_or(0.0, |f| last.duration_since(f).as_secs_f64());
    latencies.sort_unstable();
    let q = |p: f64| {
        latencies
            .get(((latencies.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(0)
    };
    println!(
        "{mode}: {got} samples, lost {}, {:.0} samples/s, latency p50 {} ns p99 {} ns max {} ns",
        stats.lost,
        if secs > 0.0 {
            (got.saturating_sub(1)) as f64 / secs
        } else {
            0.0
        },
        q(0.5),
        q(0.99),
        latencies.last().copied().unwrap_or(0)
    );
    session.close().await.expect("close");
}
