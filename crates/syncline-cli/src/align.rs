//! `syncline align`: replays a recording through the stream aligner core
//! (INTERFACE.md, "syncline align").

use syncline::core::aligner::{Aligner, AlignerConfig, DropReason, Push, StreamConfig};
use syncline::{TimeDelta, Timestamp};

use crate::error::CliError;
use crate::events::EventInput;
use crate::input::{parse_duration_ns, parse_i64};
use crate::output::Output;

/// Replay streams in timestamp order (Rock's StreamAligner rule).
#[derive(Debug, clap::Args)]
pub struct AlignArgs {
    /// Maximum latency in nanoseconds (`> 0`; or with a unit: `200ms`), in
    /// sample time; with `--wall-timeout` also after each sample's arrival.
    #[arg(long = "timeout-ns", value_name = "T", allow_hyphen_values = true)]
    timeout_ns: String,
    /// A stream, `NAME=PERIOD_NS[,capacity=C][,priority=P]` (the period in
    /// ns, or with a unit: `imu=5ms`), once per stream, in registration order.
    #[arg(long = "stream", value_name = "SPEC", required = true)]
    streams: Vec<String>,
    /// Use the `arrival_ns` column as the clock of the live-mode bound.
    #[arg(long = "wall-timeout")]
    wall_timeout: bool,
    /// After the events, print the aligner's final status as one extra line
    /// `{"status": {...}}`.
    #[arg(long = "status")]
    status: bool,
    /// Write the output here instead of standard output.
    #[arg(long = "output", value_name = "FILE")]
    output: Option<String>,
    /// The input: an event CSV (`-` for standard input) or an MCAP
    /// recording (stamps from the header, arrival from log_time; the
    /// messages of the --stream topics only).
    input: String,
}

/// One `--stream` flag, parsed.
#[derive(Debug, PartialEq, Eq)]
struct StreamSpec {
    name: String,
    config: StreamConfig,
}

fn stream_error(spec: &str, message: impl std::fmt::Display) -> CliError {
    CliError::flag("--stream", format!("`{spec}`: {message}"))
}

fn parse_int(spec: &str, what: &str, value: &str) -> Result<i64, CliError> {
    parse_i64(value.trim().as_bytes())
        .ok_or_else(|| stream_error(spec, format!("{what} `{value}` is not an integer")))
}

/// `2 * ceil(T / PERIOD)`, at least 1; 64 for period 0.
fn default_capacity(timeout: i64, period: i64) -> usize {
    if period <= 0 {
        return StreamConfig::DEFAULT_CAPACITY;
    }
    let periods = timeout.unsigned_abs().div_ceil(period.unsigned_abs());
    usize::try_from(periods.saturating_mul(2))
        .unwrap_or(usize::MAX)
        .max(1)
}

/// Parses `NAME=PERIOD_NS[,capacity=C][,priority=P]`.
fn parse_stream(spec: &str, timeout: i64) -> Result<StreamSpec, CliError> {
    let mut parts = spec.split(',');
    let head = parts.next().unwrap_or_default();
    let Some((name, period)) = head.split_once('=') else {
        return Err(stream_error(spec, "expected NAME=PERIOD_NS"));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(stream_error(spec, "empty stream name"));
    }
    let period = parse_duration_ns(period.trim().as_bytes()).ok_or_else(|| {
        stream_error(
            spec,
            format!("period `{period}` is not a duration (ns, or with a unit: 10ms)"),
        )
    })?;
    if period < 0 {
        return Err(stream_error(spec, "the period must be >= 0"));
    }
    let (mut capacity, mut priority) = (None, None);
    for part in parts {
        let (key, value) = part
            .split_once('=')
            .ok_or_else(|| stream_error(spec, format!("expected KEY=VALUE, got `{part}`")))?;
        let slot = match key.trim() {
            "capacity" => &mut capacity,
            "priority" => &mut priority,
            other => return Err(stream_error(spec, format!("unknown option `{other}`"))),
        };
        if slot.is_some() {
            return Err(stream_error(spec, format!("`{}` given twice", key.trim())));
        }
        *slot = Some(parse_int(spec, key.trim(), value)?);
    }
    let capacity = match capacity {
        None => default_capacity(timeout, period),
        Some(c) if c >= 1 => usize::try_from(c).unwrap_or(usize::MAX),
        Some(_) => return Err(stream_error(spec, "the capacity must be >= 1")),
    };
    let config = StreamConfig::new(TimeDelta::from_nanos(period))
        .and_then(|c| c.capacity(capacity))
        .map_err(|e| stream_error(spec, e.to_string()))?
        .priority(priority.unwrap_or(0));
    Ok(StreamSpec {
        name: name.to_string(),
        config,
    })
}

/// The validated flags.
fn parse_flags(args: &AlignArgs) -> Result<(i64, Vec<StreamSpec>), CliError> {
    let timeout = parse_duration_ns(args.timeout_ns.trim().as_bytes())
        .filter(|&t| t > 0)
        .ok_or_else(|| {
            CliError::flag(
                "--timeout-ns",
                format!("`{}` is not an integer > 0", args.timeout_ns),
            )
        })?;
    let mut specs: Vec<StreamSpec> = Vec::with_capacity(args.streams.len());
    for spec in &args.streams {
        let s = parse_stream(spec, timeout)?;
        if specs.iter().any(|o| o.name == s.name) {
            return Err(stream_error(
                spec,
                format!("stream `{}` given twice", s.name),
            ));
        }
        specs.push(s);
    }
    Ok((timeout, specs))
}

const RELEASED: &[u8] = b",\"event\":\"released\"}\n";
const LATE: &[u8] = b",\"event\":\"dropped_late\"}\n";
const BACKWARD: &[u8] = b",\"event\":\"dropped_backward\"}\n";
const OVERFLOW: &[u8] = b",\"event\":\"dropped_overflow\"}\n";

/// Writes the events of the replay: `prefixes[k]` is the pre-escaped
/// `,"topic":NAME,"stamp_ns":` of stream `k`.
struct Events {
    out: Output,
    prefixes: Vec<Vec<u8>>,
}

impl Events {
    #[inline]
    fn write(
        &mut self,
        id: u64,
        stream: usize,
        stamp: Timestamp,
        kind: &[u8],
    ) -> Result<(), CliError> {
        self.out.raw(b"{\"id\":")?;
        self.out.int(id)?;
        self.out
            .raw(self.prefixes.get(stream).map_or(&[][..], Vec::as_slice))?;
        self.out.int(stamp.as_nanos())?;
        self.out.raw(kind)
    }

    /// Writes every release the aligner allows now.
    #[inline]
    fn drain(&mut self, aligner: &mut Aligner<u64>) -> Result<(), CliError> {
        while let Some(r) = aligner.poll_release() {
            self.write(r.sample.value, r.stream.slot(), r.sample.stamp, RELEASED)?;
        }
        Ok(())
    }
}

/// Runs `syncline align`.
pub fn run(args: AlignArgs) -> Result<(), CliError> {
    let (timeout, specs) = parse_flags(&args)?;
    let mut input = EventInput::open(&args.input, args.wall_timeout)?;

    // The replay contract (INTERFACE.md) drops every push older than the
    // last release as late, however much older: no clock-step rule.
    let mut aligner = Aligner::new(AlignerConfig {
        timeout: TimeDelta::from_nanos(timeout),
    })
    .with_clock_steps(false);
    let mut prefixes = Vec::with_capacity(specs.len());
    let mut stream_ids = Vec::with_capacity(specs.len());
    for spec in &specs {
        stream_ids.push(aligner.add_stream(spec.config));
        let name = serde_json::to_string(&spec.name)
            .map_err(|e| CliError::flag("--stream", e.to_string()))?;
        prefixes.push(format!(",\"topic\":{name},\"stamp_ns\":").into_bytes());
    }
    let mut events = Events {
        out: Output::open(args.output.as_deref())?,
        prefixes,
    };

    let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
    while let Some(ev) = input.next(&names, "")? {
        let (pos, k) = (ev.pos, ev.topic);
        let stamp = Timestamp::from_nanos(ev.stamp);
        let arrival = ev.arrival;
        let Some(&id) = stream_ids.get(k) else {
            return Err(input.row_error(pos, "internal: no handle for this stream"));
        };
        let outcome = if args.wall_timeout {
            let Some(arrival) = arrival else {
                return Err(input.row_error(
                    pos,
                    "column `arrival_ns` is empty (needed by --wall-timeout)",
                ));
            };
            let now = Timestamp::from_nanos(arrival);
            aligner.handle_timeout(now);
            events.drain(&mut aligner)?;
            aligner.push_arrived(id, stamp, pos.id, now)
        } else {
            aligner.push(id, stamp, pos.id)
        };
        match outcome {
            Push::Queued => {}
            Push::Evicted(e) => events.write(e.value, k, e.stamp, OVERFLOW)?,
            Push::Dropped(DropReason::Late, _) => events.write(pos.id, k, stamp, LATE)?,
            Push::Dropped(DropReason::Backward, _) => events.write(pos.id, k, stamp, BACKWARD)?,
            Push::Dropped(DropReason::UnknownStream, _) => {
                return Err(input.row_error(pos, "internal: stream handle rejected"));
            }
        }
        events.drain(&mut aligner)?;
    }
    for missing in input.missing_topics(&names) {
        eprintln!("syncline: warning: --stream: the recording has no topic `{missing}`");
    }
    aligner.finish();
    events.drain(&mut aligner)?;
    if args.status {
        events.out.raw(b"{\"status\":")?;
        events.out.json(&aligner.status())?;
        events.out.raw(b"}\n")?;
    }
    events.out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_specs_parse_and_validate() {
        let s = parse_stream("imu=10,capacity=3,priority=-2", 100).unwrap();
        assert_eq!(s.name, "imu");
        assert_eq!(s.config.get_capacity(), 3);
        assert_eq!(s.config.get_priority(), -2);
        let s = parse_stream("cam=30", 100).unwrap();
        assert_eq!(s.config.get_capacity(), 8);
        assert_eq!(s.config.get_priority(), 0);
        assert_eq!(parse_stream("l=0", 100).unwrap().config.get_capacity(), 64);
        assert_eq!(
            parse_stream("g=1000", 100).unwrap().config.get_capacity(),
            2
        );
        assert_eq!(
            parse_stream("x=1", i64::MAX).unwrap().config.get_capacity(),
            usize::try_from(u64::MAX - 1).unwrap_or(usize::MAX)
        );
        for bad in [
            "imu",
            "=10",
            "imu=-1",
            "imu=x",
            "imu=10,capacity=0",
            "imu=10,capacity=-3",
            "imu=10,priority=1.5",
            "imu=10,speed=2",
            "imu=10,capacity=1,capacity=2",
            "imu=10,",
        ] {
            let err = parse_stream(bad, 100).unwrap_err();
            assert_eq!(err.exit_code(), 2, "{bad}");
            assert!(err.to_string().contains("--stream"), "{err}");
        }
    }
}
