//! Stamped events from a recording, for the replay subcommands (`sync`,
//! `align`, `estimate`): an event CSV (`topic,stamp_ns[,arrival_ns]`, as
//! INTERFACE.md fixes it) or an MCAP file, whose messages of the chosen
//! topics become events: the stamp from the `std_msgs/Header` where the
//! schema starts with one (else `log_time`), the arrival from `log_time`.
//! An MCAP event's id is its 0-based position among the chosen topics'
//! messages, in file order.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use syncline_log::{LogError, McapReader, looks_like_mcap};

use crate::error::CliError;
use crate::input::{CsvInput, RowPos};

/// One event: its position, the index of its topic in the caller's list,
/// its stamp and its arrival (when known).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Event {
    /// Id and line (line 0 for MCAP).
    pub pos: RowPos,
    /// Index in the topic list passed to [`EventInput::next`].
    pub topic: usize,
    /// Stamp, ns.
    pub stamp: i64,
    /// Arrival, ns, when known.
    pub arrival: Option<i64>,
}

struct Csv {
    input: CsvInput,
    topic: usize,
    stamp: usize,
    arrival: Option<usize>,
}

/// Events from a CSV or an MCAP file.
pub struct EventInput(Inner);

enum Inner {
    Csv(Box<Csv>),
    Mcap {
        reader: Box<McapReader<Box<dyn BufRead>>>,
        /// Events so far.
        next_id: u64,
        /// Channel index -> topic index (`None`: not chosen), filled lazily.
        topic_of: Vec<Option<usize>>,
    },
}

/// Opens `path` (`-`: standard input) for reading, buffered.
pub fn open_buffered(path: &str) -> Result<Box<dyn BufRead>, CliError> {
    let source: Box<dyn Read> = if path == "-" {
        Box::new(io::stdin().lock())
    } else {
        Box::new(File::open(path).map_err(|source| CliError::Io {
            file: path.to_string(),
            source,
        })?)
    };
    Ok(Box::new(BufReader::with_capacity(1 << 18, source)))
}

/// Whether the buffered input is MCAP: its magic, or a `.mcap` name.
pub fn sniff_mcap(path: &str, input: &mut dyn BufRead) -> Result<bool, CliError> {
    let head = input.fill_buf().map_err(|source| CliError::Io {
        file: path.to_string(),
        source,
    })?;
    Ok(looks_like_mcap(head) || path.to_ascii_lowercase().ends_with(".mcap"))
}

/// A damaged MCAP file as a CLI error (exit 2 naming the file and offset).
pub fn mcap_error(e: LogError) -> CliError {
    match e {
        LogError::Malformed {
            file,
            offset,
            message,
        } => CliError::Input {
            file,
            line: None,
            message: format!("at byte offset {offset}: {message}"),
        },
        LogError::Io { file, source } => CliError::Io { file, source },
    }
}

impl EventInput {
    /// Opens `path`: MCAP when it starts with the MCAP magic (or is named
    /// `*.mcap`), else a CSV with columns `topic`, `stamp_ns` and
    /// `arrival_ns` (required when `need_arrival`).
    pub fn open(path: &str, need_arrival: bool) -> Result<Self, CliError> {
        let mut input = open_buffered(path)?;
        if sniff_mcap(path, input.as_mut())? {
            return Ok(Self::mcap(path, input));
        }
        let input = CsvInput::from_reader(path, input)?;
        let topic = input.require("topic")?;
        let stamp = input.require("stamp_ns")?;
        let arrival = if need_arrival {
            Some(input.require("arrival_ns")?)
        } else {
            input.column("arrival_ns")
        };
        Ok(EventInput(Inner::Csv(Box::new(Csv {
            input,
            topic,
            stamp,
            arrival,
        }))))
    }

    /// Events from an MCAP recording in `input`.
    pub fn mcap(path: &str, input: Box<dyn BufRead>) -> Self {
        EventInput(Inner::Mcap {
            reader: Box::new(McapReader::new(path, input)),
            next_id: 0,
            topic_of: Vec::new(),
        })
    }

    /// The next event whose topic is one of `topics`. In a CSV, a row of
    /// another topic is an error (`unknown topic `x`` followed by
    /// `unknown_note`); in MCAP, other topics are skipped.
    pub fn next(&mut self, topics: &[&str], unknown_note: &str) -> Result<Option<Event>, CliError> {
        match &mut self.0 {
            Inner::Csv(c) => {
                let Some(pos) = c.input.next_row()? else {
                    return Ok(None);
                };
                let Some(name) = c.input.cell(c.topic) else {
                    return Err(c.input.row_error(pos, "column `topic` is empty"));
                };
                let Some(topic) = topics.iter().position(|t| t.as_bytes() == name) else {
                    let name = String::from_utf8_lossy(name).into_owned();
                    return Err(c
                        .input
                        .row_error(pos, format!("unknown topic `{name}`{unknown_note}")));
                };
                let stamp = c.input.required_i64(c.stamp, pos)?;
                let arrival = match c.arrival {
                    Some(col) => c.input.i64_cell(col, pos)?,
                    None => None,
                };
                Ok(Some(Event {
                    pos,
                    topic,
                    stamp,
                    arrival,
                }))
            }
            Inner::Mcap {
                reader,
                next_id,
                topic_of,
            } => loop {
                let Some(msg) = reader.next_message().map_err(mcap_error)? else {
                    return Ok(None);
                };
                let (chi, stamp, log_time) = (msg.channel.index, msg.stamp, msg.log_time);
                while topic_of.len() <= chi {
                    topic_of.push(None);
                }
                let topic = match topic_of[chi] {
                    Some(t) => t,
                    None => {
                        let name = &reader.channels()[chi].topic;
                        match topics.iter().position(|t| t == name) {
                            Some(t) => {
                                topic_of[chi] = Some(t);
                                t
                            }
                            None => continue,
                        }
                    }
                };
                let id = *next_id;
                *next_id += 1;
                let stamp = stamp.map_err(|e| CliError::Input {
                    file: reader.file().to_string(),
                    line: None,
                    message: format!(
                        "message {id} on {}: no readable header stamp ({e:?})",
                        reader.channels()[chi].topic
                    ),
                })?;
                return Ok(Some(Event {
                    pos: RowPos { id, line: 0 },
                    topic,
                    stamp,
                    arrival: Some(i64::try_from(log_time).unwrap_or(i64::MAX)),
                }));
            },
        }
    }

    /// An error about the event at `pos`.
    pub fn row_error(&self, pos: RowPos, message: impl Into<String>) -> CliError {
        match &self.0 {
            Inner::Csv(c) => c.input.row_error(pos, message),
            Inner::Mcap { reader, .. } => CliError::Input {
                file: reader.file().to_string(),
                line: None,
                message: format!("message {}: {}", pos.id, message.into()),
            },
        }
    }

    /// Topics the caller asked for that an MCAP file has no channel of
    /// (call at the end of input); empty for CSV.
    pub fn missing_topics<'t>(&self, topics: &[&'t str]) -> Vec<&'t str> {
        match &self.0 {
            Inner::Csv(_) => Vec::new(),
            Inner::Mcap { reader, .. } => topics
                .iter()
                .filter(|t| !reader.channels().iter().any(|c| c.topic == **t))
                .copied()
                .collect(),
        }
    }
}
