//! Recording a live pipeline to MCAP off the async hot path.
//!
//! [`Recorder`] hands each message to a writer thread over a bounded
//! channel: [`Recorder::write`] never blocks and never allocates beyond the
//! message itself; when the channel is full (the disk is slower than the
//! pipeline) or the writer has failed, the message is **counted** as
//! unwritten instead. [`Recorder::finish`] closes the channel, lets the
//! writer drain it and finish the file (summary, indexes), and returns the
//! counts or the writer's error. Dropping a recorder without `finish`
//! still finishes the file on the writer thread, but nobody sees its error.
//!
//! Stamped values and statuses go in as JSON ([`Recorder::write_json`]):
//! `log_time` is when they were recorded, `publish_time` their stamp.
//! Messages that already are ROS 2 CDR go in as they are
//! ([`Recorder::write`]), and `syncline analyze` reads their header stamps.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, SyncSender, TrySendError};
use std::thread::JoinHandle;

use mcap::records::MessageHeader;
use syncline::{Stamped, Timestamp};

use crate::error::LogError;

/// How many messages wait for the writer at most, by default.
pub const DEFAULT_RECORD_QUEUE: usize = 4096;

/// A channel of the recording, from [`Recorder::channel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordChannel(u16);

enum Cmd {
    Channel {
        reply: mpsc::Sender<Result<u16, String>>,
        topic: String,
        schema_name: String,
        schema_encoding: String,
        schema: Vec<u8>,
        message_encoding: String,
    },
    Message {
        channel: u16,
        log_time: u64,
        publish_time: u64,
        data: Vec<u8>,
    },
}

/// What a finished recording holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordSummary {
    /// Messages written.
    pub written: u64,
    /// Messages handed to the recorder that are not in the file (the queue
    /// was full, or the writer had failed).
    pub unwritten: u64,
}

/// Writes MCAP on its own thread, fed by a bounded channel.
pub struct Recorder {
    tx: Option<SyncSender<Cmd>>,
    thread: Option<JoinHandle<Result<u64, LogError>>>,
    unwritten: Arc<AtomicU64>,
    file: String,
}

fn ns(t: Timestamp) -> u64 {
    u64::try_from(t.as_nanos()).unwrap_or(0)
}

impl Recorder {
    /// Creates the file at `path` (chunked, zstd, profile `ros2`) with a
    /// queue of [`DEFAULT_RECORD_QUEUE`] messages.
    pub fn create(path: impl AsRef<Path>) -> Result<Self, LogError> {
        Self::with_queue(path, DEFAULT_RECORD_QUEUE)
    }

    /// Like [`Recorder::create`], with a queue of `queue` messages (0: a
    /// message is written only if the writer is waiting for it).
    pub fn with_queue(path: impl AsRef<Path>, queue: usize) -> Result<Self, LogError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let io = |source| LogError::Io {
            file: name.clone(),
            source,
        };
        let file = File::create(path).map_err(io)?;
        let mcap_err = |e: mcap::McapError| LogError::Io {
            file: name.clone(),
            source: std::io::Error::other(e),
        };
        let writer = mcap::WriteOptions::new()
            .profile("ros2")
            .library("syncline-log")
            .compression_threads(0)
            .create(BufWriter::with_capacity(1 << 20, file))
            .map_err(mcap_err)?;
        let (tx, rx) = mpsc::sync_channel::<Cmd>(queue);
        let unwritten = Arc::new(AtomicU64::new(0));
        let thread_name = name.clone();
        let thread = std::thread::spawn(move || {
            let mut w = writer;
            let err = |e: mcap::McapError| LogError::Io {
                file: thread_name.clone(),
                source: std::io::Error::other(e),
            };
            let mut written = 0u64;
            let mut seq = 0u32;
            for cmd in rx {
                match cmd {
                    Cmd::Channel {
                        reply,
                        topic,
                        schema_name,
                        schema_encoding,
                        schema,
                        message_encoding,
                    } => {
                        let id = w
                            .add_schema(&schema_name, &schema_encoding, &schema)
                            .and_then(|s| {
                                w.add_channel(s, &topic, &message_encoding, &BTreeMap::new())
                            })
                            .map_err(|e| e.to_string());
                        let _ = reply.send(id);
                    }
                    Cmd::Message {
                        channel,
                        log_time,
                        publish_time,
                        data,
                    } => {
                        w.write_to_known_channel(
                            &MessageHeader {
                                channel_id: channel,
                                sequence: seq,
                                log_time,
                                publish_time,
                            },
                            &data,
                        )
                        .map_err(err)?;
                        seq = seq.wrapping_add(1);
                        written += 1;
                    }
                }
            }
            w.finish().map_err(err)?;
            Ok(written)
        });
        Ok(Recorder {
            tx: Some(tx),
            thread: Some(thread),
            unwritten,
            file: name,
        })
    }

    /// Adds a channel (waits for the writer: call it at start-up, not on
    /// the hot path). `schema` is the message definition (`ros2msg` text,
    /// a JSON schema, ...); an empty `schema_name` records no schema.
    pub fn channel(
        &self,
        topic: &str,
        schema_name: &str,
        schema_encoding: &str,
        schema: &[u8],
        message_encoding: &str,
    ) -> Result<RecordChannel, LogError> {
        let (reply, answer) = mpsc::channel();
        let failed = |m: String| LogError::Io {
            file: self.file.clone(),
            source: std::io::Error::other(m),
        };
        let tx = self
            .tx
            .as_ref()
            .ok_or_else(|| failed("recorder finished".into()))?;
        tx.send(Cmd::Channel {
            reply,
            topic: topic.into(),
            schema_name: schema_name.into(),
            schema_encoding: schema_encoding.into(),
            schema: schema.to_vec(),
            message_encoding: message_encoding.into(),
        })
        .map_err(|_| failed("the writer has stopped".into()))?;
        match answer.recv() {
            Ok(Ok(id)) => Ok(RecordChannel(id)),
            Ok(Err(m)) => Err(failed(m)),
            Err(_) => Err(failed("the writer has stopped".into())),
        }
    }

    /// A JSON channel for stamped values or statuses (`message_encoding`
    /// `json`, no schema).
    pub fn json_channel(&self, topic: &str) -> Result<RecordChannel, LogError> {
        self.channel(topic, "", "", &[], "json")
    }

    /// Queues one message; false (and counted as unwritten) when the queue
    /// is full or the writer has stopped. Never blocks.
    pub fn write(
        &self,
        channel: RecordChannel,
        log_time: Timestamp,
        publish_time: Timestamp,
        data: Vec<u8>,
    ) -> bool {
        let cmd = Cmd::Message {
            channel: channel.0,
            log_time: ns(log_time),
            publish_time: ns(publish_time),
            data,
        };
        let sent = match &self.tx {
            Some(tx) => match tx.try_send(cmd) {
                Ok(()) => true,
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
            },
            None => false,
        };
        if !sent {
            self.unwritten.fetch_add(1, Ordering::Relaxed);
        }
        sent
    }

    /// Queues a stamped value as JSON, recorded at `now` (`log_time`), its
    /// stamp as `publish_time`; false (and counted) when it cannot be
    /// queued or serialised.
    pub fn write_json<T: serde::Serialize>(
        &self,
        channel: RecordChannel,
        now: Timestamp,
        value: &Stamped<T>,
    ) -> bool {
        match serde_json::to_vec(&value.value) {
            Ok(data) => self.write(channel, now, value.stamp, data),
            Err(_) => {
                self.unwritten.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// Messages counted as unwritten so far.
    pub fn unwritten(&self) -> u64 {
        self.unwritten.load(Ordering::Relaxed)
    }

    /// Closes the queue, waits for the writer to write what it holds and
    /// finish the file, and returns the counts (or the writer's error).
    pub fn finish(mut self) -> Result<RecordSummary, LogError> {
        self.tx = None;
        let written = match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result?,
            Some(Err(_)) | None => {
                return Err(LogError::Io {
                    file: self.file.clone(),
                    source: std::io::Error::other("the writer thread panicked"),
                });
            }
        };
        Ok(RecordSummary {
            written,
            unwritten: self.unwritten(),
        })
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // Without `finish`: the writer still drains and finishes the file.
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
