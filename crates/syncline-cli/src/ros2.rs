//! `syncline ros2 topics | hz | record`: live ROS 2 topics over rmw_zenoh,
//! without a ROS installation (INTERFACE.md, section `syncline ros2`).
//!
//! * `topics` lists the graph's topics like `ros2 topic list -t`, with
//!   publisher and subscriber counts, from the liveliness tokens.
//! * `hz` is the timing report `ros2 topic hz` and `ros2 topic delay`
//!   should have been: per topic the fields of `syncline analyze` (rate
//!   from a robust fit of the header stamps, jitter, gaps, presumed losses,
//!   order, latency from the header stamp), plus the messages the
//!   publishers' sequence numbers say never arrived and the latency from
//!   the publishers' source timestamps.
//! * `record` writes a ROS 2 MCAP (profile `ros2`, encoding `cdr`, schemas
//!   of the shipped definitions where known) that `ros2 bag` and
//!   `syncline analyze` read.

use crate::input::flag_s;
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use futures::StreamExt;
use serde::Serialize;
use syncline::Stamped;
use syncline_log::TopicTiming;
use syncline_log::quantiles::Quantiles;
use syncline_log::record::{RecordChannel, Recorder};
use syncline_zenoh::ros2::{
    Ros2Config, Ros2Message, Ros2Node, Ros2Subscription, StampSource, StatusHandle,
    SubscribeOptions,
};

use crate::error::CliError;
use crate::output::Output;

/// Where to find the ROS 2 graph (shared by every `ros2` subcommand).
#[derive(Debug, Args)]
pub struct Connection {
    /// A zenoh endpoint to connect to (repeatable; default: the rmw_zenohd
    /// router, tcp/localhost:7447).
    #[arg(long, value_name = "ENDPOINT")]
    connect: Vec<String>,
    /// A zenoh endpoint to listen on, for peers to connect to (repeatable).
    #[arg(long, value_name = "ENDPOINT")]
    listen: Vec<String>,
    /// ROS_DOMAIN_ID (default: the environment's, else 0).
    #[arg(long, value_name = "D")]
    domain: Option<u32>,
    /// Connect as a zenoh client (to a router on another host) instead of
    /// a peer.
    #[arg(long)]
    client: bool,
}

impl Connection {
    fn config(&self) -> Ros2Config {
        let mut config = Ros2Config::default();
        if let Some(d) = self.domain {
            config.domain = d;
        }
        if !self.connect.is_empty() || !self.listen.is_empty() {
            config.connect = self.connect.clone();
        }
        if !self.listen.is_empty() {
            config.listen = self.listen.clone();
        }
        config.client = self.client;
        config
    }
}

/// Arguments of `syncline ros2`.
#[derive(Debug, Args)]
pub struct Ros2Args {
    #[command(subcommand)]
    command: Ros2Command,
}

#[derive(Debug, Subcommand)]
enum Ros2Command {
    /// List topics with their types and publisher / subscriber counts
    /// (like `ros2 topic list -t`).
    Topics(TopicsArgs),
    /// Live timing of topics: rate, jitter, gaps, losses (by sequence
    /// number too), order, latency from the header stamp and from the
    /// publisher's send time (what `ros2 topic hz` and `delay` miss).
    Hz(HzArgs),
    /// Record topics to a ROS 2 MCAP file (`ros2 bag record`, without ROS).
    Record(RecordArgs),
}

/// Arguments of `syncline ros2 topics`.
#[derive(Debug, Args)]
pub struct TopicsArgs {
    #[command(flatten)]
    connection: Connection,
    /// How long to wait for the graph's answers, in seconds.
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    wait_s: f64,
    /// Print one JSON object instead of a list.
    #[arg(long)]
    json: bool,
}

/// Arguments of `syncline ros2 hz`.
#[derive(Debug, Args)]
pub struct HzArgs {
    /// The topics (`/imu`, `/robot1/scan`, ...).
    #[arg(required = true, value_name = "TOPIC")]
    topics: Vec<String>,
    #[command(flatten)]
    connection: Connection,
    /// How long to listen, in seconds (or with a unit: 500ms, 2min).
    #[arg(long, value_name = "S", value_parser = flag_s)]
    duration_s: f64,
    /// Print one JSON object at the end instead of a live table.
    #[arg(long)]
    json: bool,
}

/// Arguments of `syncline ros2 record`.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// The MCAP file to write.
    #[arg(value_name = "OUT.mcap")]
    out: String,
    /// The topics to record.
    #[arg(required = true, value_name = "TOPIC")]
    topics: Vec<String>,
    #[command(flatten)]
    connection: Connection,
    /// How long to record, in seconds (or with a unit: 500ms, 2min).
    #[arg(long, value_name = "S", value_parser = flag_s)]
    duration_s: f64,
}

fn seconds(flag: &str, s: f64) -> Result<Duration, CliError> {
    Duration::try_from_secs_f64(s)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            CliError::flag(
                flag,
                format!("expected a positive number of seconds, got {s}"),
            )
        })
}

fn failed(what: &str, e: impl std::fmt::Display) -> CliError {
    CliError::Io {
        file: what.to_owned(),
        source: std::io::Error::other(e.to_string()),
    }
}

/// Runs `syncline ros2`.
pub fn run(args: Ros2Args) -> Result<(), CliError> {
    // zenoh needs a multi-thread runtime.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| failed("tokio runtime", e))?;
    let result = runtime.block_on(async {
        match args.command {
            Ros2Command::Topics(a) => topics(a).await,
            Ros2Command::Hz(a) => hz(a).await,
            Ros2Command::Record(a) => record(a).await,
        }
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    result
}

async fn node(connection: &Connection) -> Result<Ros2Node, CliError> {
    let name = format!("syncline_{}", std::process::id());
    Ros2Node::new(&connection.config(), &name, "")
        .await
        .map_err(|e| failed("ros2", e))
}

#[derive(Serialize)]
struct TopicLine {
    topic: String,
    #[serde(rename = "type")]
    type_name: String,
    publishers: usize,
    subscribers: usize,
}

async fn topics(args: TopicsArgs) -> Result<(), CliError> {
    let wait = seconds("--wait-s", args.wait_s)?;
    let node = node(&args.connection).await?;
    let graph = node.graph(wait).await.map_err(|e| failed("ros2", e))?;
    let lines: Vec<TopicLine> = graph
        .topics
        .iter()
        .flat_map(|(topic, t)| {
            t.types.iter().map(move |ty| TopicLine {
                topic: topic.clone(),
                type_name: ty.clone(),
                publishers: t.publishers,
                subscribers: t.subscribers,
            })
        })
        .collect();
    let mut out = Output::open(None)?;
    if args.json {
        out.json(&serde_json::json!({ "topics": lines }))?;
        out.raw(b"\n")?;
    } else {
        for l in &lines {
            let line = format!(
                "{} [{}] {} publisher{}, {} subscriber{}\n",
                l.topic,
                l.type_name,
                l.publishers,
                if l.publishers == 1 { "" } else { "s" },
                l.subscribers,
                if l.subscribers == 1 { "" } else { "s" },
            );
            out.raw(line.as_bytes())?;
        }
    }
    out.flush()
}

/// Latency quantiles, as `analyze` writes them.
#[derive(Debug, Clone, Copy, Serialize)]
struct LatencyLine {
    min: i64,
    median: i64,
    p99: i64,
    max: i64,
}

fn latency(q: &mut Quantiles) -> Option<LatencyLine> {
    Some(LatencyLine {
        min: q.min()?,
        median: q.quantile(0.5)?,
        p99: q.quantile(0.99)?,
        max: q.max()?,
    })
}

struct TopicState {
    name: String,
    schema: Option<String>,
    header: Option<bool>,
    timing: TopicTiming,
    source_latency: Quantiles,
}

impl TopicState {
    fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            schema: None,
            header: None,
            timing: TopicTiming::new(),
            source_latency: Quantiles::new(),
        }
    }

    fn push(&mut self, msg: &Stamped<Ros2Message>) {
        let m = &msg.value;
        self.schema.get_or_insert_with(|| m.type_name.to_string());
        let header = m.stamp_source == StampSource::Header;
        self.header.get_or_insert(header);
        if header {
            self.timing
                .push(msg.stamp.as_nanos(), Some(m.received.as_nanos()));
        } else {
            self.timing.push(m.received.as_nanos(), None);
        }
        if let Some(a) = &m.attachment {
            self.source_latency
                .push(m.received.as_nanos().saturating_sub(a.source_timestamp));
        }
    }

    fn report(&self, sub: &StatusHandle) -> serde_json::Value {
        let status = sub.status();
        let mut value = serde_json::json!({
            "topic": self.name,
            "schema": self.schema,
            "stamp_source": if self.header == Some(true) { "header" } else { "log_time" },
        });
        if let (Some(obj), Ok(serde_json::Value::Object(t))) = (
            value.as_object_mut(),
            serde_json::to_value(self.timing.clone().finish()),
        ) {
            obj.extend(t);
            obj.insert("lost_seq".into(), status.lost_seq.into());
            if let Some(l) = latency(&mut self.source_latency.clone()) {
                obj.insert("source_latency_ns".into(), serde_json::json!(l));
            }
            obj.insert("overflow".into(), status.overflow.into());
            obj.insert("publishers".into(), status.publishers.len().into());
        }
        value
    }
}

/// Subscribes to every topic, timing topics without a header by their
/// receive times.
async fn subscribe_all(
    node: &Ros2Node,
    topics: &[String],
) -> Result<Vec<Ros2Subscription>, CliError> {
    let options = SubscribeOptions {
        fallback: StampSource::ReceiveTime,
        ..SubscribeOptions::default()
    };
    let mut subs = Vec::with_capacity(topics.len());
    for topic in topics {
        let sub = node
            .subscribe(topic, options.clone())
            .await
            .map_err(|e| CliError::flag("TOPIC", e.to_string()))?;
        subs.push(sub);
    }
    Ok(subs)
}

async fn hz(args: HzArgs) -> Result<(), CliError> {
    let duration = seconds("--duration-s", args.duration_s)?;
    let node = node(&args.connection).await?;
    let subs = subscribe_all(&node, &args.topics).await?;
    let handles: Vec<StatusHandle> = subs.iter().map(|s| s.status_handle()).collect();
    let mut states: Vec<TopicState> = subs
        .iter()
        .map(|s| TopicState::new(s.topic().as_str()))
        .collect();
    let mut merged = merge(subs);
    let live = !args.json && std::io::stdout().is_terminal();
    let start = Instant::now();
    let deadline = tokio::time::Instant::now() + duration;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(deadline) => break,
            _ = tick.tick(), if live => print_table(&states, &handles, start.elapsed(), true),
            next = merged.next() => match next {
                Some((i, msg)) => states[i].push(&msg),
                None => break,
            },
        }
    }
    let mut out = Output::open(None)?;
    if args.json {
        let topics: Vec<_> = states
            .iter()
            .zip(&handles)
            .map(|(s, h)| s.report(h))
            .collect();
        out.json(&serde_json::json!({ "duration_s": args.duration_s, "topics": topics }))?;
        out.raw(b"\n")?;
        out.flush()
    } else {
        print_table(&states, &handles, start.elapsed(), false);
        Ok(())
    }
}

/// One stream of `(subscription index, message)` over all subscriptions.
fn merge(
    subs: Vec<Ros2Subscription>,
) -> futures::stream::SelectAll<futures::stream::BoxStream<'static, (usize, Stamped<Ros2Message>)>>
{
    futures::stream::select_all(
        subs.into_iter()
            .enumerate()
            .map(|(i, s)| s.map(move |m| (i, m)).boxed()),
    )
}

fn ms(v: Option<&serde_json::Value>, key: &str) -> String {
    v.and_then(|l| l[key].as_i64())
        .map_or("-".into(), |ns| format!("{:.3}", ns as f64 / 1e6))
}

fn print_table(states: &[TopicState], handles: &[StatusHandle], elapsed: Duration, clear: bool) {
    let mut s = String::new();
    if clear {
        s.push_str("\x1b[2J\x1b[H");
    }
    s.push_str(&format!("after {:.0} s\n", elapsed.as_secs_f64()));
    s.push_str(&format!(
        "{:<28} {:>7} {:>10} {:>12} {:>12} {:>9} {:>22} {:>22}\n",
        "topic",
        "count",
        "rate Hz",
        "jitter ms",
        "gaps(lost)",
        "lost seq",
        "latency med/p99 ms",
        "send lat med/p99 ms"
    ));
    for (state, handle) in states.iter().zip(handles) {
        let r = state.report(handle);
        let rate = r["rate_hz"]
            .as_f64()
            .map_or("-".into(), |v| format!("{v:.3}"));
        let jitter = ms(r.get("jitter_ns"), "rms");
        let lat = format!(
            "{}/{}",
            ms(r.get("latency_ns"), "median"),
            ms(r.get("latency_ns"), "p99")
        );
        let src = format!(
            "{}/{}",
            ms(r.get("source_latency_ns"), "median"),
            ms(r.get("source_latency_ns"), "p99")
        );
        s.push_str(&format!(
            "{:<28} {:>7} {:>10} {:>12} {:>12} {:>9} {:>22} {:>22}\n",
            state.name,
            r["count"],
            rate,
            jitter,
            format!("{}({})", r["gaps"], r["lost"]),
            r["lost_seq"],
            lat,
            src
        ));
    }
    print!("{s}");
}

async fn record(args: RecordArgs) -> Result<(), CliError> {
    let duration = seconds("--duration-s", args.duration_s)?;
    let recorder = Recorder::create(&args.out).map_err(|e| failed(&args.out, e))?;
    let node = node(&args.connection).await?;
    let subs = subscribe_all(&node, &args.topics).await?;
    let names: Vec<String> = subs.iter().map(|s| s.topic().to_string()).collect();
    let handles: Vec<StatusHandle> = subs.iter().map(|s| s.status_handle()).collect();
    let mut channels: BTreeMap<(usize, String), RecordChannel> = BTreeMap::new();
    let mut merged = merge(subs);
    let deadline = tokio::time::Instant::now() + duration;
    let mut unrecorded = 0u64;
    loop {
        let (i, msg) = tokio::select! {
            _ = tokio::time::sleep_until(deadline) => break,
            next = merged.next() => match next { Some(m) => m, None => break },
        };
        let ty = msg.value.type_name.to_string();
        let channel = match channels.get(&(i, ty.clone())) {
            Some(c) => *c,
            None => {
                let schema = node.registry().ros2msg_schema(&ty).unwrap_or_default();
                let c = recorder
                    .channel(&names[i], &ty, "ros2msg", schema.as_bytes(), "cdr")
                    .map_err(|e| failed(&args.out, e))?;
                channels.insert((i, ty), c);
                c
            }
        };
        let received = msg.value.received;
        let published = msg.value.attachment.map_or(received, |a| {
            syncline::Timestamp::from_nanos(a.source_timestamp)
        });
        if !recorder.write(channel, received, published, msg.value.cdr) {
            unrecorded += 1;
        }
    }
    drop(merged);
    let summary = recorder.finish().map_err(|e| failed(&args.out, e))?;
    let statuses: Vec<_> = handles.iter().map(|h| h.status()).collect();
    let lost: u64 = statuses.iter().map(|s| s.lost_seq).sum();
    let overflow: u64 = statuses.iter().map(|s| s.overflow).sum();
    eprintln!(
        "syncline: recorded {} messages to {} ({} not written, {} dropped by a full queue, {} never received by sequence number)",
        summary.written,
        args.out,
        summary.unwritten.max(unrecorded),
        overflow,
        lost
    );
    Ok(())
}
