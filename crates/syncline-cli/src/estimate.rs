//! `syncline estimate`: the timestamp estimator replayed on a CSV of
//! arrival events (INTERFACE.md).

use crate::input::flag_ns;
use clap::Args;
use syncline::core::estimator::{Estimator, EstimatorConfig, EstimatorError};
use syncline::{TimeDelta, Timestamp};

use crate::error::CliError;
use crate::events::{EventInput, open_buffered, sniff_mcap};
use crate::input::CsvInput;
use crate::output::Output;

/// Arguments of `syncline estimate`.
#[derive(Debug, Args)]
pub struct EstimateArgs {
    /// Base estimation window in ns (> 0) (integer ns, or with a unit: 5s, 10ms, 250us).
    #[arg(long = "window-ns", allow_hyphen_values = true, value_parser = flag_ns)]
    window_ns: i64,
    /// Expected period in ns (> 0), used until the estimator measured its own.
    #[arg(long = "period-ns", allow_hyphen_values = true, value_parser = flag_ns)]
    period_ns: Option<i64>,
    /// Loss threshold K: a late sample is numbered after a loss at once when
    /// the odds of a loss against a delay reach 2^(K-2) (0: whenever the gap
    /// fits a loss; 4294967295: never from arrival times).
    #[arg(long = "loss-threshold", default_value_t = 2)]
    loss_threshold: u32,
    /// Known minimum latency in ns (>= 0), subtracted from every estimate.
    #[arg(
        long = "min-latency-ns",
        default_value = "0",
        value_parser = flag_ns,
        allow_hyphen_values = true
    )]
    min_latency_ns: i64,
    /// Width of the device counter in the `index` column, in bits (1..=64);
    /// default: inferred from the largest index seen when it wraps.
    #[arg(long = "counter-bits")]
    counter_bits: Option<u32>,
    /// Print the final estimator status as a last line `{"status": {...}}`.
    #[arg(long)]
    status: bool,
    /// Write to FILE instead of standard output.
    #[arg(long)]
    output: Option<String>,
    /// With an MCAP input: the topic whose arrivals (log_time) are the
    /// samples; each output line also carries the message's `stamp_ns`
    /// (its header stamp, else its log_time) and `arrival_ns`.
    #[arg(long, value_name = "TOPIC")]
    topics: Option<String>,
    /// Input: a CSV of events (`event,time_ns[,index]`; `-` for standard
    /// input) or an MCAP recording (with --topics).
    input: String,
}

fn config(args: &EstimateArgs) -> Result<EstimatorConfig, CliError> {
    let mut c = EstimatorConfig::new(TimeDelta::from_nanos(args.window_ns))
        .with_loss_threshold(args.loss_threshold)
        .with_min_latency(TimeDelta::from_nanos(args.min_latency_ns));
    c.counter_bits = args.counter_bits;
    c.period = args.period_ns.map(TimeDelta::from_nanos);
    Estimator::new(c).map(|_| c).map_err(|e| {
        let flag = match e {
            EstimatorError::NonPositiveWindow(_) | EstimatorError::WindowNotAbovePeriod { .. } => {
                "--window-ns"
            }
            EstimatorError::NonPositivePeriod(_) => "--period-ns",
            EstimatorError::NegativeLatency(_) => "--min-latency-ns",
            _ => "--counter-bits",
        };
        CliError::flag(flag, e.to_string())
    })
}

/// Runs `syncline estimate`.
pub fn run(args: EstimateArgs) -> Result<(), CliError> {
    let mut est =
        Estimator::new(config(&args)?).map_err(|e| CliError::flag("--window-ns", e.to_string()))?;
    let mut source = open_buffered(&args.input)?;
    if sniff_mcap(&args.input, source.as_mut())? {
        return run_mcap(&args, est, EventInput::mcap(&args.input, source));
    }
    let mut input = CsvInput::from_reader(&args.input, source)?;
    let mut out = Output::open(args.output.as_deref())?;
    let event_col = input.require("event")?;
    let time_col = input.require("time_ns")?;
    let index_col = input.column("index");
    while let Some(pos) = input.next_row()? {
        let index = match index_col {
            Some(c) => input.u64_cell(c, pos)?,
            None => None,
        };
        match input.cell(event_col) {
            Some(b"sample") => {
                let t = input.required_i64(time_col, pos)?;
                let arrival = Timestamp::from_nanos(t);
                let result = match index {
                    Some(i) => est.update_with_index(arrival, i),
                    None => est.update(arrival),
                };
                out.raw(b"{\"id\": ")?;
                out.int(pos.id)?;
                out.raw(b", \"estimate_ns\": ")?;
                match result {
                    Ok(e) => out.int(e.stamp.as_nanos())?,
                    Err(e) => {
                        // Rejected (counted in the status): the arrival stands.
                        out.int(t)?;
                        let reason = match e {
                            EstimatorError::Backwards { .. } => "backwards",
                            _ => "invalid",
                        };
                        out.raw(b", \"rejected\": ")?;
                        out.string(reason)?;
                    }
                }
                out.raw(b"}\n")?;
            }
            Some(b"loss") => {
                // The time is ignored, but must parse where present.
                input.i64_cell(time_col, pos)?;
                est.update_loss();
            }
            Some(b"reference") => {
                let t = input.required_i64(time_col, pos)?;
                est.update_reference(Timestamp::from_nanos(t));
            }
            Some(other) => {
                return Err(input.row_error(
                    pos,
                    format!(
                        "column `event`: unknown event `{}` (expected sample, loss or reference)",
                        String::from_utf8_lossy(other)
                    ),
                ));
            }
            None => return Err(input.row_error(pos, "column `event` is empty")),
        }
    }
    if args.status {
        #[derive(serde::Serialize)]
        struct Line {
            status: syncline::core::estimator::EstimatorStatus,
        }
        out.json(&Line {
            status: est.status(),
        })?;
        out.raw(b"\n")?;
    }
    out.flush()
}

/// The estimator on one topic of an MCAP recording: each message is a
/// sample that arrived at its `log_time`.
fn run_mcap(
    args: &EstimateArgs,
    mut est: Estimator,
    mut input: EventInput,
) -> Result<(), CliError> {
    let Some(topic) = args.topics.as_deref() else {
        return Err(CliError::flag(
            "--topics",
            "an MCAP input needs the topic to estimate (--topics /imu)",
        ));
    };
    if topic.contains(',') {
        return Err(CliError::flag("--topics", "estimate takes one topic"));
    }
    let mut out = Output::open(args.output.as_deref())?;
    let topics = [topic];
    while let Some(ev) = input.next(&topics, "")? {
        let arrival = ev.arrival.unwrap_or(ev.stamp);
        out.raw(b"{\"id\": ")?;
        out.int(ev.pos.id)?;
        out.raw(b", \"estimate_ns\": ")?;
        match est.update(Timestamp::from_nanos(arrival)) {
            Ok(e) => out.int(e.stamp.as_nanos())?,
            Err(e) => {
                out.int(arrival)?;
                let reason = match e {
                    EstimatorError::Backwards { .. } => "backwards",
                    _ => "invalid",
                };
                out.raw(b", \"rejected\": ")?;
                out.string(reason)?;
            }
        }
        out.raw(b", \"stamp_ns\": ")?;
        out.int(ev.stamp)?;
        out.raw(b", \"arrival_ns\": ")?;
        out.int(arrival)?;
        out.raw(b"}\n")?;
    }
    for missing in input.missing_topics(&topics) {
        eprintln!("syncline: warning: --topics: the recording has no topic `{missing}`");
    }
    if args.status {
        out.raw(b"{\"status\": ")?;
        out.json(&est.status())?;
        out.raw(b"}\n")?;
    }
    out.flush()
}
