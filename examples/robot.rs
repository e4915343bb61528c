//! A robot: five sensor drivers, one aligner, three consumers, a 100 Hz
//! controller.
//!
//! | sensor | rate | latency | consumers |
//! |---|---|---|---|
//! | IMU (8-bit wrapping counter) | 200 Hz | 1-20 ms | fusion, recorder |
//! | camera | 30 Hz | 5-15 ms | vision, sync, recorder |
//! | lidar | 10 Hz | 10-30 ms | fusion, sync, recorder |
//! | GPS | 5 Hz | 40-80 ms | recorder |
//! | odometry | 50 Hz | 2-6 ms | fusion, recorder |
//!
//! Each driver is a task that hands every sample over to a
//! [`Source`](syncline::source::Source) when it would arrive (its
//! acquisition time plus its latency): the arrival is stamped there,
//! whatever the pipeline is doing,
//! and `.timestamped()` turns it into an acquisition-time estimate, keeping
//! the hand-over time with it: the router's latency bound (the timeout, 100
//! ms) counts from that hand-over, not from when the router read the
//! sample. One router aligns the five inputs and feeds the consumers, each
//! through one ordered queue:
//!
//! * **fusion** (IMU, lidar, odometry; backpressure, 256 deep, 20 ms
//!   deadline): fast; interpolates the IMU's angular rate at every lidar
//!   scan's stamp (`LookupBuffer::interpolate`) and feeds the controller;
//! * **vision** (camera; keep the newest 2): 40 ms of work per 33 ms frame,
//!   so it keeps only the newest frames (`--vision stuck`: never reads;
//!   `--vision fast`: no work);
//! * **sync** (camera, lidar; keep newest 64): camera-lidar
//!   ApproximateTime sets (`ApproximateTime`, ROS's policy);
//! * **recorder** (everything; keep newest 1024).
//!
//! A 100 Hz controller ticks on a `ClockTimer` and reads fusion's newest
//! state. At the end a short summary: the stamp error of every sensor
//! against the simulation's truth, order violations, drops by reason and
//! latency (hand-over to delivery) per consumer.
//!
//! ```text
//! cargo run --release --example robot                 # 3 s of real time
//! cargo run --release --example robot -- --sim        # simulated (paused) time
//! cargo run --release --example robot -- --sim --seconds 20 --vision stuck --summary-json
//! ```
//!
//! With `--summary-json` the last line is one JSON object,
//! `{"summary": {"order_violations": N, "sensors": {...}, "consumers": {...}}}`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt;
use syncline::aligner::{
    AlignedStatus, AlignerConfig, Consumer, QueuePolicy, RouterBuilder, StreamConfig,
};
use syncline::clock::ClockTimer;
use syncline::core::interp::{BufferConfig, LookupBuffer};
use syncline::core::sync::{ApproximateConfig, ApproximateTime};
use syncline::prelude::*;

/// How the vision consumer behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vision {
    /// 40 ms of work per frame (frames come every 33 ms).
    Slow,
    /// Never reads.
    Stuck,
    /// No work.
    Fast,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Tokio's paused clock instead of real time.
    pub sim: bool,
    /// How long the sensors run.
    pub seconds: f64,
    /// The vision consumer.
    pub vision: Vision,
    /// Print the summary as JSON on the last line.
    pub json: bool,
}

/// A sensor's simulation: period, latency range, counter.
#[derive(Debug, Clone, Copy)]
struct Spec {
    name: &'static str,
    period_ns: i64,
    latency_ms: (i64, i64),
    seed: u64,
}

const SPECS: [Spec; 5] = [
    Spec {
        name: "imu",
        period_ns: 5_000_000,
        latency_ms: (1, 20),
        seed: 1,
    },
    Spec {
        name: "camera",
        period_ns: 33_333_333,
        latency_ms: (5, 15),
        seed: 2,
    },
    Spec {
        name: "lidar",
        period_ns: 100_000_000,
        latency_ms: (10, 30),
        seed: 3,
    },
    Spec {
        name: "gps",
        period_ns: 200_000_000,
        latency_ms: (40, 80),
        seed: 4,
    },
    Spec {
        name: "odometry",
        period_ns: 20_000_000,
        latency_ms: (2, 6),
        seed: 5,
    },
];

/// A reading with the simulation's truth, to score the pipeline.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    /// Sample number.
    k: u64,
    /// The device counter (8 bits for the IMU, wraps every 1.28 s).
    counter: u8,
    /// True acquisition time, ns after the clock's origin.
    acquired: i64,
    /// When the driver handed it over, ns after the clock's origin: the
    /// source's arrival stamp, filled in by the pipeline.
    handed: i64,
    /// A measured value (the IMU's angular rate: `sin(t)`).
    value: f64,
}

/// Deterministic uniform numbers in [0, 1) (xorshift).
fn uniform(state: &mut u64) -> f64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// The driver of `spec`: hands each reading over at acquisition + latency
/// (in order, as a FIFO link would), for `seconds`.
async fn driver(
    spec: Spec,
    source: Source<Reading>,
    clock: TokioClock,
    origin: Timestamp,
    seconds: f64,
) {
    // Times are counted from the clock's origin, for every driver alike.
    let start = clock.instant_at(origin).expect("origin in tokio's range");
    let mut rng = 0x9E37_79B9_7F4A_7C15u64 ^ (spec.seed * 0x1234_5678_9ABC_DEF1);
    let phase = (spec.seed as i64) * 1_300_000;
    let n = ((seconds * 1e9) as i64 / spec.period_ns) as u64;
    let mut last = 0i64;
    for k in 0..n {
        let acquired = phase + k as i64 * spec.period_ns;
        let (lo, hi) = spec.latency_ms;
        let latency = (lo as f64 + (hi - lo) as f64 * uniform(&mut rng)) * 1e6;
        let due = (acquired + latency as i64).max(last);
        last = due;
        tokio::time::sleep_until(start + Duration::from_nanos(due as u64)).await;
        let reading = Reading {
            k,
            counter: k as u8,
            acquired,
            handed: 0,
            value: (acquired as f64 * 1e-9).sin(),
        };
        if source.send(reading).is_err() {
            return;
        }
    }
}

/// What fusion receives, in one global order.
#[derive(Debug)]
enum Fusion {
    Imu(Stamped<Reading>),
    Lidar(Stamped<Reading>),
    Odometry(Stamped<Reading>),
}

/// What the camera-lidar synchronizer receives.
#[derive(Debug)]
enum Pair {
    Camera(Stamped<Reading>),
    Lidar(Stamped<Reading>),
}

/// One consumer's record: per sample, its stamp and its latency (ns from
/// hand-over to delivery).
#[derive(Debug, Default)]
struct Record {
    stamps: Vec<Timestamp>,
    latencies: Vec<i64>,
}

impl Record {
    fn note(&mut self, stamp: Timestamp, reading: &Reading, now: i64) {
        self.stamps.push(stamp);
        self.latencies.push(now - reading.handed);
    }

    fn order_violations(&self) -> usize {
        self.stamps.windows(2).filter(|w| w[1] < w[0]).count()
    }
}

type Shared<T> = Arc<Mutex<T>>;

fn elapsed(clock: &TokioClock, origin: Timestamp) -> i64 {
    clock.now().nanos_since_wide(origin) as i64
}

/// The summary the example prints (and the test checks).
#[derive(Debug, Clone, serde::Serialize)]
pub struct Summary {
    /// Order violations over every consumer.
    pub order_violations: usize,
    /// Per sensor: stamp error against the truth.
    pub sensors: BTreeMap<String, SensorSummary>,
    /// Per consumer: counters and latency.
    pub consumers: BTreeMap<String, ConsumerSummary>,
    /// Camera-lidar ApproximateTime sets.
    pub sets: u64,
    /// IMU rate interpolated at lidar stamps: count and RMS error.
    pub interpolated: u64,
    /// RMS error of the interpolated IMU rate against the truth.
    pub interpolation_rms: f64,
    /// Controller ticks, and the largest tick lateness (ns).
    pub controller_ticks: u64,
    /// The largest lateness of a controller tick (ns).
    pub controller_max_late_ns: i64,
    /// The aligner's drops by stream: `[late, backward, overflow]`.
    pub aligner_drops: BTreeMap<String, [u64; 3]>,
}

/// One sensor's stamp error.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SensorSummary {
    /// Readings stamped.
    pub samples: usize,
    /// RMS of (stamp − true acquisition time), ns.
    pub stamp_rms_ns: f64,
    /// Largest |stamp − true acquisition time|, ns.
    pub stamp_max_ns: i64,
    /// Readings the source dropped (its queue full).
    pub source_overflow: u64,
}

/// One consumer's delivery.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConsumerSummary {
    /// Samples received.
    pub received: u64,
    /// Samples routed to it by the aligner.
    pub routed: u64,
    /// Out-of-order samples it saw.
    pub order_violations: usize,
    /// Drops: `overflow`, `stalled`, `closed`.
    pub dropped: BTreeMap<&'static str, u64>,
    /// Still queued at the end.
    pub queued: usize,
    /// The longest its queue was, and its bound.
    pub max_queued: usize,
    /// Its queue bound.
    pub capacity: usize,
    /// Latency from hand-over to delivery, ns: p50, p99, max.
    pub latency_p50_ns: i64,
    /// p99.
    pub latency_p99_ns: i64,
    /// Max.
    pub latency_max_ns: i64,
}

fn percentile(sorted: &[i64], p: f64) -> i64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// The aligner's timeout (the latency bound of every consumer that keeps
/// up).
pub const TIMEOUT_MS: i64 = 100;

/// Runs the robot; call it inside a tokio runtime (paused for `sim`).
pub async fn run(opts: &Options) -> Summary {
    let origin = Timestamp::from_nanos(1_700_000_000_000_000_000);
    let clock = TokioClock::starting_at(origin);
    let ms = TimeDelta::from_millis;

    // Sources (stamped at hand-over) and their drivers.
    let mut errors: Vec<Shared<Vec<i64>>> = Vec::new();
    let mut sources = Vec::new();
    let mut stamped = Vec::new();
    for spec in SPECS {
        let (tx, rx) = source::<Reading>(clock, 1024);
        sources.push(rx.stats());
        tokio::spawn(driver(spec, tx, clock, origin, opts.seconds));
        let config = EstimatorConfig::new(TimeDelta::from_secs(2))
            .with_period(TimeDelta::from_nanos(spec.period_ns))
            .with_min_latency(ms(spec.latency_ms.0));
        let config = if spec.name == "imu" {
            config.with_counter_bits(8)
        } else {
            config
        };
        let estimator = Estimator::new(config).expect("valid estimator configuration");
        let err: Shared<Vec<i64>> = Arc::default();
        errors.push(err.clone());
        let s = rx
            .timestamped(estimator)
            .with_index(|r: &Reading| u64::from(r.counter));
        let lookahead = s.lookahead().unwrap_or_default();
        // Items are `Arrived<Stamped<Reading>>`: the estimated stamp and the
        // source's hand-over time, which the router's latency bound counts
        // from; it is also copied into the reading, for the latencies the
        // consumers record.
        let s = s.map(move |mut s| {
            let truth = origin.as_nanos() + s.value.value.acquired;
            err.lock().unwrap().push(s.value.stamp.as_nanos() - truth);
            s.value.value.handed = s.arrival.nanos_since_wide(origin) as i64;
            s
        });
        stamped.push((lookahead, s));
    }
    let mut stamped = stamped.into_iter();
    let mut next = || stamped.next().expect("five sensors");

    // The router. Each input's lookahead comes from its estimator (half its
    // period: estimated stamps wander); queue capacities are derived from
    // the timeout and the lookahead.
    let mut r = RouterBuilder::new(AlignerConfig {
        timeout: ms(TIMEOUT_MS),
    })
    .live(clock);
    let mut add = |r: &mut RouterBuilder, name: &str| {
        let (lookahead, s) = next();
        let config = StreamConfig::lookahead(lookahead).expect("a lookahead >= 0");
        r.input(name, s, config)
    };
    let imu = add(&mut r, "imu");
    let camera = add(&mut r, "camera");
    let lidar = add(&mut r, "lidar");
    let gps = add(&mut r, "gps");
    let odom = add(&mut r, "odometry");
    let fusion = r
        .consumer("fusion", QueuePolicy::backpressure(256, ms(20)))
        .route(imu, Fusion::Imu)
        .route(lidar, Fusion::Lidar)
        .route(odom, Fusion::Odometry)
        .build();
    let vision = r
        .consumer("vision", QueuePolicy::keep_newest(2))
        .route(camera, |s| s)
        .build();
    let sync = r
        .consumer("sync", QueuePolicy::keep_newest(64))
        .route(camera, Pair::Camera)
        .route(lidar, Pair::Lidar)
        .build();
    let recorder = r
        .consumer("recorder", QueuePolicy::keep_newest(1024))
        .route(imu, |s| s)
        .route(camera, |s| s)
        .route(lidar, |s| s)
        .route(gps, |s| s)
        .route(odom, |s| s)
        .build();
    let router = tokio::spawn(r.build());

    // Fusion: IMU rate interpolated at lidar stamps; the newest state for
    // the controller.
    let state: Shared<Option<Timestamp>> = Arc::default();
    let fusion_task = {
        let state = state.clone();
        tokio::spawn(async move {
            let mut fusion: Consumer<Fusion> = fusion;
            let mut rec = Record::default();
            let mut imu_rate = LookupBuffer::new(BufferConfig::new(64));
            let mut scans: Vec<(Timestamp, i64)> = Vec::new();
            let mut interp_err = Vec::new();
            while let Some(item) = fusion.next().await {
                let now = elapsed(&clock, origin);
                let (Fusion::Imu(s) | Fusion::Lidar(s) | Fusion::Odometry(s)) = &item;
                rec.note(s.stamp, &s.value, now);
                *state.lock().unwrap() = Some(s.stamp);
                match item {
                    Fusion::Imu(s) => {
                        let _ = imu_rate.insert(s.stamp, s.value.value);
                        // Scans bracketed by the IMU now: interpolate there.
                        scans.retain(|&(t, acquired)| {
                            if t > s.stamp {
                                return true;
                            }
                            if let Ok(rate) = imu_rate.interpolate(t) {
                                let truth = (acquired as f64 * 1e-9).sin();
                                interp_err.push(rate - truth);
                            }
                            false
                        });
                    }
                    Fusion::Lidar(s) => scans.push((s.stamp, s.value.acquired)),
                    Fusion::Odometry(_) => {}
                }
            }
            (rec, interp_err, fusion)
        })
    };

    // Vision: slow, stuck or fast.
    let vision_mode = opts.vision;
    let vision_task = tokio::spawn(async move {
        let mut vision = vision;
        let mut rec = Record::default();
        if vision_mode == Vision::Stuck {
            // Holds its queue and never reads.
            std::future::pending::<()>().await;
        }
        while let Some(frame) = vision.next().await {
            rec.note(frame.stamp, &frame.value, elapsed(&clock, origin));
            if vision_mode == Vision::Slow {
                tokio::time::sleep(Duration::from_millis(40)).await;
            }
        }
        (rec, vision)
    });

    // Camera-lidar ApproximateTime sets.
    let sync_task = tokio::spawn(async move {
        let mut sync: Consumer<Pair> = sync;
        let mut rec = Record::default();
        let mut sets = 0u64;
        let mut approx = ApproximateTime::new(ApproximateConfig::new(2).queue_size(8))
            .expect("valid synchronizer configuration");
        while let Some(item) = sync.next().await {
            let (topic, s) = match item {
                Pair::Camera(s) => (0, s),
                Pair::Lidar(s) => (1, s),
            };
            rec.note(s.stamp, &s.value, elapsed(&clock, origin));
            if approx.push(topic, s.stamp, s.value.k).is_ok() {
                while approx.poll_set().is_some() {
                    sets += 1;
                }
            }
        }
        (rec, sets, sync)
    });

    let recorder_task = tokio::spawn(async move {
        let mut recorder = recorder;
        let mut rec = Record::default();
        while let Some(s) = recorder.next().await {
            rec.note(s.stamp, &s.value, elapsed(&clock, origin));
        }
        (rec, recorder)
    });

    // The 100 Hz controller, on one resettable timer.
    let controller = {
        let state = state.clone();
        let seconds = opts.seconds;
        tokio::spawn(async move {
            let mut timer = ClockTimer::new(Arc::new(clock));
            let period = TimeDelta::from_millis(10);
            let ticks = (seconds * 100.0) as u64;
            let mut max_late = 0i64;
            for k in 1..=ticks {
                let due =
                    origin.saturating_add(TimeDelta::from_nanos(period.as_nanos() * k as i64));
                std::future::poll_fn(|cx| timer.poll_at(cx, due)).await;
                max_late = max_late.max(clock.now().nanos_since_wide(due) as i64);
                let _newest = *state.lock().unwrap();
            }
            (ticks, max_late)
        })
    };

    let status: AlignedStatus = router.await.expect("router");
    let (fusion_rec, interp_err, fusion) = fusion_task.await.expect("fusion");
    let (sync_rec, sets, sync) = sync_task.await.expect("sync");
    let (recorder_rec, recorder) = recorder_task.await.expect("recorder");
    let (vision_rec, vision_status) = if opts.vision == Vision::Stuck {
        vision_task.abort();
        (Record::default(), None)
    } else {
        let (rec, v) = vision_task.await.expect("vision");
        (rec, Some(v.status()))
    };
    let (controller_ticks, controller_max_late_ns) = controller.await.expect("controller");

    // Summary.
    let mut sensors = BTreeMap::new();
    for (i, spec) in SPECS.iter().enumerate() {
        let errs = errors[i].lock().unwrap();
        let n = errs.len().max(1) as f64;
        let rms = (errs.iter().map(|&e| (e as f64).powi(2)).sum::<f64>() / n).sqrt();
        sensors.insert(
            spec.name.to_string(),
            SensorSummary {
                samples: errs.len(),
                stamp_rms_ns: rms.round(),
                stamp_max_ns: errs.iter().map(|e| e.abs()).max().unwrap_or(0),
                source_overflow: sources[i].overflow(),
            },
        );
    }
    let finals = [
        ("fusion", fusion_rec, Some(fusion.status())),
        ("vision", vision_rec, vision_status),
        ("sync", sync_rec, Some(sync.status())),
        ("recorder", recorder_rec, Some(recorder.status())),
    ];
    let mut consumers = BTreeMap::new();
    let mut order_violations = 0;
    for (k, (name, rec, own)) in finals.into_iter().enumerate() {
        // A consumer's own counters once it has read everything; the
        // router's for a consumer that never reads.
        let c = own.unwrap_or_else(|| status.consumers[k].clone());
        let mut lat = rec.latencies.clone();
        lat.sort_unstable();
        order_violations += rec.order_violations();
        consumers.insert(
            name.to_string(),
            ConsumerSummary {
                received: c.received,
                routed: c.routed,
                order_violations: rec.order_violations(),
                dropped: BTreeMap::from([
                    ("overflow", c.dropped_overflow),
                    ("stalled", c.dropped_stalled),
                    ("closed", c.dropped_closed),
                ]),
                queued: c.queued,
                max_queued: c.max_queued,
                capacity: c.policy.capacity(),
                latency_p50_ns: percentile(&lat, 0.5),
                latency_p99_ns: percentile(&lat, 0.99),
                latency_max_ns: lat.last().copied().unwrap_or(0),
            },
        );
    }
    let interpolation_rms = (interp_err.iter().map(|e: &f64| e * e).sum::<f64>()
        / interp_err.len().max(1) as f64)
        .sqrt();
    let aligner_drops = status
        .aligner
        .streams
        .iter()
        .zip(&status.lanes)
        .map(|(s, l)| {
            let c = s.counters;
            (
                l.name.clone(),
                [c.dropped_late, c.dropped_backward, c.dropped_overflow],
            )
        })
        .collect();
    Summary {
        order_violations,
        sensors,
        consumers,
        sets,
        interpolated: interp_err.len() as u64,
        interpolation_rms,
        controller_ticks,
        controller_max_late_ns,
        aligner_drops,
    }
}

fn print_summary(s: &Summary, opts: &Options) {
    let mode = if opts.sim { "simulated" } else { "real" };
    println!(
        "robot: {:.1} s of {mode} time, vision {:?}, aligner timeout {TIMEOUT_MS} ms",
        opts.seconds, opts.vision
    );
    println!("stamps (estimate - truth):");
    for (name, x) in &s.sensors {
        println!(
            "  {name:<9} {:>5} samples  rms {:>7.3} ms  max {:>7.3} ms  source overflow {}",
            x.samples,
            x.stamp_rms_ns / 1e6,
            x.stamp_max_ns as f64 / 1e6,
            x.source_overflow
        );
    }
    println!("consumers (latency from hand-over):");
    for (name, c) in &s.consumers {
        println!(
            "  {name:<9} {:>5}/{:<5} received  order violations {}  dropped overflow {} stalled {} closed {}  queue max {}/{}  latency p50 {:.1} ms p99 {:.1} ms",
            c.received,
            c.routed,
            c.order_violations,
            c.dropped["overflow"],
            c.dropped["stalled"],
            c.dropped["closed"],
            c.max_queued,
            c.capacity,
            c.latency_p50_ns as f64 / 1e6,
            c.latency_p99_ns as f64 / 1e6,
        );
    }
    println!(
        "aligner drops [late, backward, overflow]: {:?}",
        s.aligner_drops
    );
    println!(
        "camera-lidar sets {}; IMU rate at {} lidar stamps, rms error {:.2e}; controller {} ticks, max {:.2} ms late",
        s.sets,
        s.interpolated,
        s.interpolation_rms,
        s.controller_ticks,
        s.controller_max_late_ns as f64 / 1e6
    );
    println!("order violations: {}", s.order_violations);
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options {
        sim: false,
        seconds: 3.0,
        vision: Vision::Slow,
        json: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--sim" => opts.sim = true,
            "--summary-json" => opts.json = true,
            "--seconds" => {
                let v = args.next().ok_or("--seconds needs a value")?;
                opts.seconds = v.parse().map_err(|e| format!("--seconds {v}: {e}"))?;
                if !(opts.seconds > 0.0 && opts.seconds <= 3600.0) {
                    return Err("--seconds must be in (0, 3600]".into());
                }
            }
            "--vision" => {
                opts.vision = match args.next().as_deref() {
                    Some("slow") => Vision::Slow,
                    Some("stuck") => Vision::Stuck,
                    Some("fast") => Vision::Fast,
                    other => return Err(format!("--vision slow|stuck|fast, got {other:?}")),
                }
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(opts)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let opts = parse_args()?;
    let runtime = if opts.sim {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()?
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_time()
            .build()?
    };
    let summary = runtime.block_on(run(&opts));
    print_summary(&summary, &opts);
    if opts.json {
        println!("{}", serde_json::json!({ "summary": summary }));
    }
    Ok(())
}
