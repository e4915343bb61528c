//! `syncline analyze`: the timing report of a recording (INTERFACE.md), an
//! MCAP file or an event CSV (`topic,stamp_ns[,arrival_ns]`).
//!
//! The figures of each topic come from `syncline_log::analysis` (robust
//! period, gaps and presumed losses, order, jitter, latency) in memory
//! bounded per topic, whatever the recording's length.

use std::collections::HashMap;
use std::io::BufRead;

use clap::Args;
use serde::Serialize;
use syncline_log::{LogError, McapReader, StampSource, Timing, TopicTiming};

use crate::error::CliError;
use crate::events::{mcap_error, open_buffered, sniff_mcap};
use crate::input::CsvInput;
use crate::output::Output;

/// Arguments of `syncline analyze`.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// Only these topics, comma-separated (default: every topic, in the
    /// order they appear).
    #[arg(long, value_name = "A,B,...", value_delimiter = ',')]
    topics: Option<Vec<String>>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// On a damaged file, report what was readable before the damage (with
    /// a warning on standard error) instead of failing.
    #[arg(long)]
    partial: bool,
    /// Write to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    output: Option<String>,
    /// The recording: an MCAP file (ROS 2 bag), or an event CSV with columns
    /// `topic,stamp_ns[,arrival_ns]` (`-` for standard input).
    #[arg(value_name = "FILE")]
    file: String,
}

/// One topic's line of the report.
#[derive(Debug, Serialize)]
pub struct TopicReport {
    /// The topic name.
    pub topic: String,
    /// The schema (message type); `null` for CSV input.
    pub schema: Option<String>,
    /// `header` (the message's own stamp) or `log_time` (the recorder's).
    pub stamp_source: &'static str,
    /// The figures.
    #[serde(flatten)]
    pub timing: Timing,
}

#[derive(Serialize)]
struct Report<'a> {
    file: &'a str,
    topics: Vec<TopicReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    damaged: Option<String>,
}

struct Slot {
    topic: String,
    schema: Option<String>,
    source: StampSource,
    timing: TopicTiming,
}

/// Runs `syncline analyze`.
pub fn run(args: AnalyzeArgs) -> Result<(), CliError> {
    let mut input = open_buffered(&args.file)?;
    let mcap = sniff_mcap(&args.file, input.as_mut())?;
    let (slots, damaged) = if mcap {
        read_mcap(&args, input)?
    } else {
        read_csv(&args, input)?
    };
    let mut topics: Vec<TopicReport> = slots
        .into_iter()
        .map(|s| TopicReport {
            topic: s.topic,
            schema: s.schema,
            stamp_source: s.source.as_str(),
            timing: s.timing.finish(),
        })
        .collect();
    if let Some(wanted) = &args.topics {
        let mut ordered = Vec::with_capacity(wanted.len());
        for name in wanted {
            match topics.iter().position(|t| &t.topic == name) {
                Some(i) => ordered.push(topics.swap_remove(i)),
                None => {
                    return Err(CliError::flag(
                        "--topics",
                        format!("unknown topic `{name}`: {} has no such topic", args.file),
                    ));
                }
            }
        }
        topics = ordered;
    }
    let mut out = Output::open(args.output.as_deref())?;
    let report = Report {
        file: &args.file,
        topics,
        damaged,
    };
    if args.json {
        out.json(&report)?;
        out.raw(b"\n")?;
    } else {
        out.raw(table(&report).as_bytes())?;
    }
    out.flush()
}

fn wanted(args: &AnalyzeArgs, topic: &str) -> bool {
    args.topics
        .as_ref()
        .is_none_or(|t| t.iter().any(|w| w == topic))
}

/// The damage `e` ends the run, or with `--partial` becomes a warning.
fn damage(args: &AnalyzeArgs, e: LogError) -> Result<String, CliError> {
    match e {
        LogError::Malformed { .. } if args.partial => {
            eprintln!("syncline: warning: {e}; reporting what was read before it");
            Ok(e.to_string())
        }
        e => Err(mcap_error(e)),
    }
}

type Read_ = (Vec<Slot>, Option<String>);

/// A progress bar on standard error for a run longer than a second
/// (indicatif hides it when standard error is not a terminal).
struct Progress {
    total: Option<u64>,
    started: std::time::Instant,
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    fn new(path: &str) -> Self {
        let total = (path != "-")
            .then(|| std::fs::metadata(path).ok().map(|m| m.len()))
            .flatten();
        Progress {
            total,
            started: std::time::Instant::now(),
            bar: None,
        }
    }

    fn update(&mut self, bytes: u64) {
        if self.bar.is_none() && self.started.elapsed().as_secs() >= 1 {
            let bar = match self.total {
                Some(n) => indicatif::ProgressBar::new(n),
                None => indicatif::ProgressBar::no_length(),
            };
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            ) {
                bar.set_style(style);
            }
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(bytes);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

fn read_mcap(args: &AnalyzeArgs, input: Box<dyn BufRead>) -> Result<Read_, CliError> {
    let mut reader = McapReader::new(args.file.clone(), input);
    let mut progress = Progress::new(&args.file);
    let mut tick = 0u32;
    let mut slots: Vec<Slot> = Vec::new();
    let mut by_topic: HashMap<String, usize> = HashMap::new();
    // Channel index -> slot (None: not a wanted topic).
    let mut slot_of: Vec<Option<usize>> = Vec::new();
    let mut damaged = None;
    loop {
        let next = match reader.next_message() {
            Ok(Some(m)) => Some((m.channel.index, m.stamp, m.log_time)),
            Ok(None) => None,
            Err(e) => {
                damaged = Some(damage(args, e)?);
                None
            }
        };
        // Channels defined since the last message get their slots.
        for ch in &reader.channels()[slot_of.len()..] {
            if !wanted(args, &ch.topic) {
                slot_of.push(None);
                continue;
            }
            let i = *by_topic.entry(ch.topic.clone()).or_insert_with(|| {
                slots.push(Slot {
                    topic: ch.topic.clone(),
                    schema: Some(ch.schema_name.clone()),
                    source: ch.stamp_source,
                    timing: TopicTiming::new(),
                });
                slots.len() - 1
            });
            slot_of.push(Some(i));
        }
        let Some((channel, stamp, log_time)) = next else {
            break;
        };
        tick = tick.wrapping_add(1);
        if tick.is_multiple_of(65_536) {
            progress.update(reader.bytes_read());
        }
        let Some(i) = slot_of[channel] else { continue };
        let slot = &mut slots[i];
        match (slot.source, stamp) {
            (StampSource::Header, Ok(s)) => slot
                .timing
                .push(s, Some(i64::try_from(log_time).unwrap_or(i64::MAX))),
            (StampSource::LogTime, Ok(s)) => slot.timing.push(s, None),
            (_, Err(_)) => slot.timing.push_unreadable(),
        }
    }
    Ok((slots, damaged))
}

fn read_csv(args: &AnalyzeArgs, input: Box<dyn BufRead>) -> Result<Read_, CliError> {
    let mut csv = CsvInput::from_reader(&args.file, input)?;
    let topic_col = csv.require("topic")?;
    let stamp_col = csv.require("stamp_ns")?;
    let arrival_col = csv.column("arrival_ns");
    let mut slots: Vec<Slot> = Vec::new();
    let mut by_topic: HashMap<Vec<u8>, Option<usize>> = HashMap::new();
    let mut damaged = None;
    loop {
        let row = (|| -> Result<_, CliError> {
            let Some(pos) = csv.next_row()? else {
                return Ok(None);
            };
            let Some(topic) = csv.cell(topic_col) else {
                return Err(csv.row_error(pos, "column `topic` is empty"));
            };
            let stamp = csv.required_i64(stamp_col, pos)?;
            let arrival = match arrival_col {
                Some(c) => csv.i64_cell(c, pos)?,
                None => None,
            };
            Ok(Some((topic.to_vec(), stamp, arrival)))
        })();
        let (topic, stamp, arrival) = match row {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e @ CliError::Input { .. }) if args.partial => {
                eprintln!("syncline: warning: {e}; reporting the rows before it");
                damaged = Some(e.to_string());
                break;
            }
            Err(e) => return Err(e),
        };
        let slot = match by_topic.get(&topic) {
            Some(&s) => s,
            None => {
                let name = String::from_utf8_lossy(&topic).into_owned();
                let s = wanted(args, &name).then(|| {
                    slots.push(Slot {
                        topic: name,
                        schema: None,
                        source: StampSource::Header,
                        timing: TopicTiming::new(),
                    });
                    slots.len() - 1
                });
                by_topic.insert(topic, s);
                s
            }
        };
        if let Some(i) = slot {
            slots[i].timing.push(stamp, arrival);
        }
    }
    Ok((slots, damaged))
}

fn ms(ns: i64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// The report as a table for people.
fn table(report: &Report<'_>) -> String {
    let mut rows = vec![[
        "topic".to_string(),
        "type".to_string(),
        "count".to_string(),
        "stamps".to_string(),
        "rate Hz".to_string(),
        "jitter rms/p99 ms".to_string(),
        "gaps (lost)".to_string(),
        "out-of-order/dup".to_string(),
        "latency min/median/p99/max ms".to_string(),
    ]];
    for t in &report.topics {
        let m = &t.timing;
        rows.push([
            t.topic.clone(),
            t.schema.clone().unwrap_or_else(|| "-".into()),
            m.count.to_string(),
            t.stamp_source.to_string(),
            m.rate_hz.map_or("-".into(), |r| format!("{r:.3}")),
            m.jitter_ns
                .map_or("-".into(), |j| format!("{}/{}", ms(j.rms), ms(j.p99))),
            format!("{} ({})", m.gaps, m.lost),
            format!("{}/{}", m.out_of_order, m.duplicates),
            m.latency_ns.map_or("-".into(), |l| {
                format!("{}/{}/{}/{}", ms(l.min), ms(l.median), ms(l.p99), ms(l.max))
            }),
        ]);
    }
    let mut widths = [0usize; 9];
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut s = format!("{}\n", report.file);
    for r in &rows {
        let line: Vec<String> = r
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i < 2 || i == 3 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        s.push_str(line.join("  ").trim_end());
        s.push('\n');
    }
    let notes: Vec<String> = report
        .topics
        .iter()
        .filter(|t| t.timing.unreadable_stamps > 0 || t.timing.unsorted > 0)
        .map(|t| {
            format!(
                "{}: {} stamps unreadable, {} too late to sort",
                t.topic, t.timing.unreadable_stamps, t.timing.unsorted
            )
        })
        .collect();
    for n in notes {
        s.push_str(&n);
        s.push('\n');
    }
    if let Some(d) = &report.damaged {
        s.push_str(&format!("damaged: {d}\n"));
    }
    s
}
