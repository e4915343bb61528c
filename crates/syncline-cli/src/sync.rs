//! `syncline sync`: replays a recording through the ApproximateTime,
//! ExactTime or LatestTime synchronizer (INTERFACE.md).

use clap::Args;
use syncline::core::sync::{
    ApproximateConfig, ApproximateTime, ExactConfig, ExactTime, LatestConfig, LatestTime, Output,
    StallAction, StallConfig, SyncPolicy,
};
use syncline::{TimeDelta, Timestamp};

use crate::error::CliError;
use crate::events::EventInput;
use crate::output::Output as Out;

/// Arguments of `syncline sync`.
#[derive(Debug, Args)]
pub struct SyncArgs {
    /// The policy: approximate, exact or latest.
    #[arg(long, value_name = "POLICY")]
    policy: String,
    /// The topics, comma-separated (at least 2, each once); they fix the
    /// order of `ids` and `stamps_ns`.
    #[arg(long, value_name = "A,B,...")]
    topics: String,
    /// approximate: messages held per topic (>= 1, default 10); exact:
    /// pending timestamps over all topics (default 10, 0 = unbounded).
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    queue_size: Option<String>,
    /// approximate: the maximum interval of a set, in ns (>= 0; or with a
    /// unit: `20ms`).
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    max_interval_ns: Option<String>,
    /// approximate: the age penalty (finite, >= 0, default 0.1).
    #[arg(long, value_name = "X", allow_hyphen_values = true)]
    age_penalty: Option<String>,
    /// approximate: inter-message lower bound of a topic, `TOPIC=D` in ns
    /// (repeatable, once per topic).
    #[arg(long, value_name = "TOPIC=D", allow_hyphen_values = true)]
    lower_bound_ns: Vec<String>,
    /// approximate: a topic that holds nothing and whose newest stamp is
    /// more than D ns behind the newest stamp seen stops blocking the
    /// others (see --stall-action).
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    stall_timeout_ns: Option<String>,
    /// approximate, with --stall-timeout-ns: `report` (drop held messages
    /// older than the timeout, reason `stalled`; default) or `partial`
    /// (emit sets without the stalled topic, its id and stamp `null`).
    #[arg(long, value_name = "ACTION")]
    stall_action: Option<String>,
    /// Report every message that leaves without being in a set.
    #[arg(long)]
    report_drops: bool,
    /// After the last row, print the synchronizer's counters as one line
    /// `{"status": {...}}` (sets, drops by reason, messages held).
    #[arg(long)]
    status: bool,
    /// Write to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    output: Option<String>,
    /// The input: an event CSV (`-` for standard input) or an MCAP
    /// recording (stamps from the header, arrival from log_time; the
    /// messages of the --topics only).
    #[arg(value_name = "INPUT")]
    input: String,
}

fn int_flag(flag: &str, v: &str, min: i64) -> Result<i64, CliError> {
    // Durations (`-ns` flags) may carry a unit: `5ms`, `1.5s`.
    let parsed = if flag.ends_with("-ns") {
        crate::input::parse_duration_ns(v.trim().as_bytes())
    } else {
        crate::input::parse_i64(v.trim().as_bytes())
    };
    match parsed {
        Some(x) if x >= min => Ok(x),
        Some(_) => Err(CliError::flag(flag, format!("`{v}` must be >= {min}"))),
        None => Err(CliError::flag(flag, format!("`{v}` is not an integer"))),
    }
}

fn forbid(flag: &str, given: bool, policy: &str) -> Result<(), CliError> {
    if given {
        Err(CliError::flag(
            flag,
            format!("not an option of --policy {policy}"),
        ))
    } else {
        Ok(())
    }
}

fn parse_topics(s: &str) -> Result<Vec<String>, CliError> {
    let topics: Vec<String> = s.split(',').map(|t| t.trim().to_string()).collect();
    if topics.len() < 2 {
        return Err(CliError::flag("--topics", "name at least 2 topics"));
    }
    for (k, t) in topics.iter().enumerate() {
        if t.is_empty() {
            return Err(CliError::flag("--topics", "empty topic name"));
        }
        if topics[..k].contains(t) {
            return Err(CliError::flag("--topics", format!("`{t}` is listed twice")));
        }
    }
    Ok(topics)
}

fn approximate_config(a: &SyncArgs, topics: &[String]) -> Result<ApproximateConfig, CliError> {
    let mut c = ApproximateConfig::new(topics.len()).report_drops(a.report_drops);
    if let Some(q) = &a.queue_size {
        c = c.queue_size(int_flag("--queue-size", q, 1)? as usize);
    }
    if let Some(d) = &a.max_interval_ns {
        c = c.max_interval(TimeDelta::from_nanos(int_flag("--max-interval-ns", d, 0)?));
    }
    if let Some(x) = &a.age_penalty {
        match x.trim().parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => c = c.age_penalty(v),
            _ => {
                return Err(CliError::flag(
                    "--age-penalty",
                    format!("`{x}` is not a finite number >= 0"),
                ));
            }
        }
    }
    let mut seen = vec![false; topics.len()];
    for lb in &a.lower_bound_ns {
        let flag = "--lower-bound-ns";
        let Some((name, d)) = lb.split_once('=') else {
            return Err(CliError::flag(flag, format!("`{lb}` is not TOPIC=D")));
        };
        let Some(k) = topics.iter().position(|t| t == name.trim()) else {
            return Err(CliError::flag(flag, format!("`{name}` is not in --topics")));
        };
        if std::mem::replace(&mut seen[k], true) {
            return Err(CliError::flag(flag, format!("`{name}` is given twice")));
        }
        c = c.lower_bound(k, TimeDelta::from_nanos(int_flag(flag, d, 0)?));
    }
    let action = match a.stall_action.as_deref().map(str::trim) {
        None | Some("report") => StallAction::Report,
        Some("partial") => StallAction::Partial,
        Some(x) => {
            return Err(CliError::flag(
                "--stall-action",
                format!("`{x}` is not report or partial"),
            ));
        }
    };
    match &a.stall_timeout_ns {
        Some(d) => {
            let timeout = TimeDelta::from_nanos(int_flag("--stall-timeout-ns", d, 0)?);
            c = c.stall(StallConfig { timeout, action });
        }
        None => forbid(
            "--stall-action",
            a.stall_action.is_some(),
            "approximate without --stall-timeout-ns",
        )?,
    }
    Ok(c)
}

/// Runs `syncline sync`.
pub fn run(args: SyncArgs) -> Result<(), CliError> {
    let topics = parse_topics(&args.topics)?;
    let approx_only = [
        ("--max-interval-ns", args.max_interval_ns.is_some()),
        ("--age-penalty", args.age_penalty.is_some()),
        ("--lower-bound-ns", !args.lower_bound_ns.is_empty()),
        ("--stall-timeout-ns", args.stall_timeout_ns.is_some()),
        ("--stall-action", args.stall_action.is_some()),
    ];
    let policy = args.policy.trim();
    if policy != "approximate" {
        for (flag, given) in approx_only {
            forbid(flag, given, policy)?;
        }
    }
    let run = |policy: &mut dyn FnMut(&mut EventInput, &mut Out) -> Result<(), CliError>| {
        let mut input = EventInput::open(&args.input, false)?;
        let mut out = Out::open(args.output.as_deref())?;
        let result = policy(&mut input, &mut out);
        let flushed = out.flush();
        result.and(flushed)
    };
    let status = args.status;
    match policy {
        "approximate" => {
            let mut s = ApproximateTime::new(approximate_config(&args, &topics)?)
                .map_err(|e| CliError::flag("--policy approximate", e.to_string()))?;
            run(&mut |i, o| drive(&mut s, &topics, status, i, o))
        }
        "exact" => {
            let q = match &args.queue_size {
                Some(q) => int_flag("--queue-size", q, 0)? as usize,
                None => 10,
            };
            let config = ExactConfig::new(topics.len())
                .queue_size(q)
                .report_drops(args.report_drops);
            let mut s = ExactTime::new(config)
                .map_err(|e| CliError::flag("--policy exact", e.to_string()))?;
            run(&mut |i, o| drive(&mut s, &topics, status, i, o))
        }
        "latest" => {
            forbid("--queue-size", args.queue_size.is_some(), "latest")?;
            let config = LatestConfig::new(topics.len()).report_drops(args.report_drops);
            let mut s = LatestTime::new(config)
                .map_err(|e| CliError::flag("--policy latest", e.to_string()))?;
            run(&mut |i, o| drive(&mut s, &topics, status, i, o))
        }
        other => Err(CliError::flag(
            "--policy",
            format!("`{other}` is not approximate, exact or latest"),
        )),
    }
}

fn drive<P: SyncPolicy<u64>>(
    sync: &mut P,
    topics: &[String],
    status: bool,
    input: &mut EventInput,
    out: &mut Out,
) -> Result<(), CliError> {
    let names: Vec<&str> = topics.iter().map(String::as_str).collect();
    while let Some(ev) = input.next(&names, " (not in --topics)")? {
        let stamp = Timestamp::from_nanos(ev.stamp);
        let arrival = Timestamp::from_nanos(ev.arrival.unwrap_or(ev.stamp));
        // `ev.topic` indexes the topic list, so it is always known.
        let _ = sync.push_at(ev.topic, stamp, ev.pos.id, arrival);
        write_outputs(sync, topics, ev.pos.id, out)?;
    }
    for missing in input.missing_topics(&names) {
        eprintln!("syncline: warning: --topics: the recording has no topic `{missing}`");
    }
    sync.finish_input();
    write_outputs(sync, topics, 0, out)?;
    if status {
        out.raw(b"{\"status\": ")?;
        let mut st = sync.sync_status();
        st.topics = topics.to_vec();
        out.json(&st)?;
        out.raw(b"}\n")?;
    }
    Ok(())
}

fn write_outputs<P: SyncPolicy<u64>>(
    sync: &mut P,
    topics: &[String],
    trigger: u64,
    out: &mut Out,
) -> Result<(), CliError> {
    while let Some(o) = sync.poll_output() {
        match o {
            Output::Set(set) => {
                out.raw(b"{\"trigger\": ")?;
                out.int(trigger)?;
                out.raw(b", \"ids\": [")?;
                for (k, m) in set.members().iter().enumerate() {
                    if k > 0 {
                        out.raw(b", ")?;
                    }
                    match m {
                        Some(m) => out.int(m.value)?,
                        None => out.raw(b"null")?,
                    }
                }
                out.raw(b"], \"stamps_ns\": [")?;
                for (k, m) in set.members().iter().enumerate() {
                    if k > 0 {
                        out.raw(b", ")?;
                    }
                    match m {
                        Some(m) => out.int(m.stamp.as_nanos())?,
                        None => out.raw(b"null")?,
                    }
                }
                out.raw(b"]}\n")?;
            }
            Output::Dropped(d) => {
                out.raw(b"{\"dropped\": ")?;
                out.int(d.message.value)?;
                out.raw(b", \"reason\": \"")?;
                out.raw(d.reason.as_str().as_bytes())?;
                out.raw(b"\", \"topic\": ")?;
                out.string(topics.get(d.topic).map_or("", String::as_str))?;
                out.raw(b"}\n")?;
            }
        }
    }
    Ok(())
}
