//! ROS 2 without ROS: two live topics through syncline, and results back
//! into the ROS 2 graph.
//!
//! The program joins a ROS 2 graph over rmw_zenoh (no ROS installation),
//! and:
//! 1. **stamps** the IMU topic: each message's acquisition time is
//!    estimated from its receive times (`.timestamped_arrived()`), and the
//!    message is republished on `/syncline/imu` with that stamp in its
//!    header;
//! 2. **aligns** the restamped IMU and a second header-stamped topic into
//!    one timestamp order (the live aligner, a 100 ms latency bound);
//! 3. **synchronizes** them (ApproximateTime) and publishes each set as a
//!    `std_msgs/String` on `/syncline/sets`;
//! 4. publishes the estimator's, the aligner's and the IMU subscription's
//!    statuses once a second as JSON in a `std_msgs/String` on
//!    `/syncline/status`.
//!
//! The second topic's header stamps must be on the same clock as this
//! machine's (ROS time from synchronized system clocks, not simulated
//! time): stamps seconds apart in one order are a clock step to the
//! aligner, which then releases what it holds first, out of order.
//!
//! ```text
//! ros2 run rmw_zenoh_cpp rmw_zenohd          # on the robot, with its nodes on rmw_zenoh
//! cargo run --release --example ros2_pipeline -- --imu /imu --other /scan --seconds 10
//! ros2 topic echo /syncline/sets              # anywhere in the graph
//! ```
//!
//! Options: `--connect ENDPOINT` (default the router at
//! `tcp/localhost:7447`), `--listen ENDPOINT`, `--imu TOPIC`, `--other
//! TOPIC`, `--period-ms P` (the IMU's nominal period, default 5),
//! `--seconds S` (default 10).

use std::time::Duration;

use futures::StreamExt;
use syncline::aligner::{AlignerConfig, OneOf2, StreamConfig};
use syncline::core::estimator::{Estimator, EstimatorConfig};
use syncline::core::sync::{ApproximateConfig, ApproximateTime};
use syncline::prelude::*;
use syncline_ros2::cdr::{HeaderStamp, set_header_stamp};
use syncline_ros2::types::std_msgs::String as RosString;
use syncline_zenoh::ros2::{Ros2Config, Ros2Message, Ros2Node, SubscribeOptions};

/// What the pipeline did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    /// IMU messages restamped and republished.
    pub restamped: u64,
    /// Messages of the other topic.
    pub other: u64,
    /// Synchronized sets published.
    pub sets: u64,
    /// Status messages published.
    pub statuses: u64,
    /// Samples that left the aligner out of timestamp order (always 0).
    pub order_violations: u64,
    /// IMU messages the publishers' sequence numbers say never arrived.
    pub imu_lost: u64,
    /// Messages the aligner dropped (late, backward or overflow: under a
    /// load that delays them past the 100 ms bound), IMU then the other.
    pub dropped: [u64; 2],
    /// Messages still held by the aligner when the run ended, IMU then
    /// the other.
    pub pending: [u64; 2],
}

/// The pipeline's settings.
#[derive(Debug, Clone)]
pub struct Options {
    /// How to reach the graph.
    pub config: Ros2Config,
    /// The IMU topic.
    pub imu: String,
    /// The second topic.
    pub other: String,
    /// The IMU's nominal period.
    pub period: TimeDelta,
    /// How long to run at most.
    pub run_for: Duration,
    /// Ends the run early when it turns `true` (the command line's Ctrl-C).
    pub stop: Option<tokio::sync::watch::Receiver<bool>>,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        config: Ros2Config::default(),
        imu: "/imu".into(),
        other: "/scan".into(),
        period: TimeDelta::from_millis(5),
        run_for: Duration::from_secs(10),
        stop: None,
    };
    let mut args = std::env::args().skip(1);
    let mut connect = Vec::new();
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--connect" => connect.push(value()?),
            "--listen" => o.config.listen = vec![value()?],
            "--imu" => o.imu = value()?,
            "--other" => o.other = value()?,
            "--period-ms" => {
                o.period = TimeDelta::from_millis(value()?.parse().map_err(|e| format!("{e}"))?)
            }
            "--seconds" => {
                o.run_for = Duration::from_secs_f64(value()?.parse().map_err(|e| format!("{e}"))?)
            }
            _ => return Err(format!("unknown option {flag}")),
        }
    }
    if !connect.is_empty() || o.config.listen != Ros2Config::default().listen {
        o.config.connect = connect;
    }
    Ok(o)
}

/// Runs the pipeline for `options.run_for`.
pub async fn run(options: Options) -> Result<Summary, Box<dyn std::error::Error + Send + Sync>> {
    let node = Ros2Node::new(&options.config, "syncline_pipeline", "").await?;
    let imu = node
        .subscribe(&options.imu, SubscribeOptions::default())
        .await?;
    let imu_status = imu.status_handle();
    let other = node
        .subscribe(&options.other, SubscribeOptions::default())
        .await?;
    let mut restamped_out = node
        .publisher("/syncline/imu", "sensor_msgs/msg/Imu")
        .await?;
    let mut sets_out = node
        .publisher("/syncline/sets", "std_msgs/msg/String")
        .await?;
    let mut status_out = node
        .publisher("/syncline/status", "std_msgs/msg/String")
        .await?;

    // 1. Stamp: the IMU's acquisition times, estimated from when its
    //    messages reached this process (zero added latency).
    let estimator =
        Estimator::new(EstimatorConfig::new(TimeDelta::from_secs(5)).with_period(options.period))?;
    let imu = imu
        .map(|m| Arrived::new(m.value.received, m.value))
        .timestamped_arrived(estimator);
    let estimator_status = imu.status_watch();

    // 2. Order: one timestamp order, waiting at most 100 ms for the
    //    slower topic (lookaheads: half the IMU period, none for the other).
    let lookahead = TimeDelta::from_nanos(options.period.as_nanos() / 2);
    let mut ordered = (imu, other).aligned_live(
        AlignerConfig {
            timeout: TimeDelta::from_millis(100),
        },
        (
            StreamConfig::lookahead(lookahead)?,
            StreamConfig::lookahead(TimeDelta::ZERO)?,
        ),
        SystemClock,
    );

    // 3. Match: ApproximateTime sets of (IMU, other).
    let mut sync: ApproximateTime<Ros2Message> =
        ApproximateTime::new(ApproximateConfig::new(2).queue_size(50))?;

    let mut summary = Summary::default();
    let mut last = Timestamp::MIN;
    let deadline = tokio::time::Instant::now() + options.run_for;
    let mut status_tick = tokio::time::interval(Duration::from_secs(1));
    let mut stop = options.stop.clone();
    let stopped = async move {
        match stop.as_mut() {
            Some(stop) => drop(stop.wait_for(|s| *s).await),
            None => std::future::pending().await,
        }
    };
    tokio::pin!(stopped);
    loop {
        let sample = tokio::select! {
            _ = tokio::time::sleep_until(deadline) => break,
            _ = &mut stopped => break,
            _ = status_tick.tick() => {
                // 4. Statuses, as JSON, for `ros2 topic echo /syncline/status`.
                let json = serde_json::json!({
                    "estimator": *estimator_status.borrow(),
                    "aligner": ordered.status(),
                    "imu_subscription": imu_status.status(),
                });
                status_out.publish_msg(&RosString { data: json.to_string() }).await?;
                summary.statuses += 1;
                continue;
            }
            s = ordered.next() => match s { Some(s) => s, None => break },
        };
        if sample.stamp() < last {
            summary.order_violations += 1;
        }
        last = sample.stamp();
        match sample {
            OneOf2::A(imu) => {
                let mut cdr = imu.value.cdr.clone();
                set_header_stamp(&mut cdr, HeaderStamp::from_nanos(imu.stamp.as_nanos()))?;
                restamped_out.publish(cdr).await?;
                summary.restamped += 1;
                sync.push(0, imu.stamp, imu.value)?;
            }
            OneOf2::B(other) => {
                summary.other += 1;
                sync.push(1, other.stamp, other.value)?;
            }
        }
        while let Some(set) = sync.poll_set() {
            let stamps: Vec<i64> = set
                .members()
                .iter()
                .map(|m| m.as_ref().map_or(0, |m| m.stamp.as_nanos()))
                .collect();
            let text = format!(
                "{{\"imu_stamp_ns\": {}, \"other_stamp_ns\": {}, \"spread_ns\": {}}}",
                stamps[0],
                stamps[1],
                (stamps[0] - stamps[1]).abs()
            );
            sets_out.publish_msg(&RosString { data: text }).await?;
            summary.sets += 1;
        }
    }
    summary.imu_lost = imu_status.status().lost_seq;
    for (k, stream) in ordered.status().aligner.streams.iter().take(2).enumerate() {
        let c = &stream.counters;
        summary.dropped[k] = c.dropped_late + c.dropped_backward + c.dropped_overflow;
        summary.pending[k] = stream.queued as u64;
    }
    Ok(summary)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)] // zenoh needs a multi-thread runtime
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let mut options = parse_args()?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    options.stop = Some(stopped);
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            let _ = stop.send(true);
        }
    });
    let summary = run(options).await?;
    println!(
        "{} IMU messages restamped ({} dropped by the aligner, {} lost on the way), {} of the other topic, {} sets, {} order violations",
        summary.restamped,
        summary.dropped[0],
        summary.imu_lost,
        summary.other,
        summary.sets,
        summary.order_violations
    );
    Ok(())
}
