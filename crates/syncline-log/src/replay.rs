//! A recording replayed as a `Stream` of [`Stamped`] messages, so that a
//! live pipeline runs on a recording unchanged.
//!
//! A reader thread reads the file ([`McapReader`], bounded memory) and
//! hands messages over a bounded channel of [`REPLAY_QUEUE`] messages; the
//! stream yields them as fast as the consumer takes them
//! ([`Pace::AsFastAsPossible`]) or at the recorded speed on any
//! [`Clock`] ([`Pace::Recorded`]): message `k` is due `log_time[k] -
//! log_time[0]` after the first one was yielded, on that clock, so with
//! [`TokioClock`](syncline::clock::TokioClock) on a paused runtime a
//! one-hour recording replays at recorded speed in no wall time.
//!
//! ```no_run
//! use futures::StreamExt;
//! use syncline::clock::TokioClock;
//! use syncline_log::replay::{Pace, replay_file};
//!
//! # async fn run() -> Result<(), syncline_log::LogError> {
//! let mut imu = replay_file("rig.mcap", Pace::Recorded(TokioClock::new()))?
//!     .filter(|m| std::future::ready(m.as_ref().is_ok_and(|m| &*m.value.topic == "/imu")));
//! while let Some(msg) = imu.next().await {
//!     let msg = msg?;
//!     println!("{} at {}", msg.value.topic, msg.stamp);
//! }
//! # Ok(()) }
//! ```

use std::io::Read;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::Stream;
use syncline::clock::{Clock, ClockSleep};
use syncline::{Stamped, TimeDelta, Timestamp};
use tokio::sync::mpsc;

use crate::error::LogError;
use crate::mcap_reader::{McapReader, StampSource};

/// How many read messages wait for the consumer at most.
pub const REPLAY_QUEUE: usize = 256;

/// One recorded message; its [`Stamped::stamp`] is the header stamp where
/// the schema starts with one and the bytes hold it, else `log_time`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The topic.
    pub topic: Arc<str>,
    /// The schema (message type) name.
    pub schema: Arc<str>,
    /// Where the stamp came from.
    pub stamp_source: StampSource,
    /// When it was recorded.
    pub log_time: Timestamp,
    /// When it was published.
    pub publish_time: Timestamp,
    /// The message bytes (CDR for ROS 2).
    pub data: Vec<u8>,
}

/// The speed of a replay.
#[derive(Debug, Clone)]
pub enum Pace<C> {
    /// Each message as soon as the consumer asks.
    AsFastAsPossible,
    /// The recorded intervals of `log_time`, on this clock.
    Recorded(C),
}

type Item = Result<Stamped<Recorded>, LogError>;

/// The stream of a replayed recording (see the module documentation).
pub struct Replay<C> {
    rx: mpsc::Receiver<Item>,
    pace: Pace<C>,
    /// `(first log_time, the clock's time when it was yielded)`.
    origin: Option<(Timestamp, Timestamp)>,
    waiting: Option<(Item, ClockSleep)>,
}

/// Replays the MCAP file at `path`.
pub fn replay_file<C: Clock>(path: impl AsRef<Path>, pace: Pace<C>) -> Result<Replay<C>, LogError> {
    let reader = McapReader::open(path)?;
    Ok(replay(reader, pace))
}

/// Replays the MCAP read by `reader` (its reading moves to a thread).
pub fn replay<R: Read + Send + 'static, C: Clock>(
    reader: McapReader<R>,
    pace: Pace<C>,
) -> Replay<C> {
    let (tx, rx) = mpsc::channel(REPLAY_QUEUE);
    std::thread::spawn(move || read_into(reader.keep_data(true), tx));
    Replay {
        rx,
        pace,
        origin: None,
        waiting: None,
    }
}

fn ts(ns: u64) -> Timestamp {
    Timestamp::from_nanos(i64::try_from(ns).unwrap_or(i64::MAX))
}

fn read_into<R: Read>(mut reader: McapReader<R>, tx: mpsc::Sender<Item>) {
    let mut names: Vec<(Arc<str>, Arc<str>)> = Vec::new();
    loop {
        let item = match reader.next_message() {
            Ok(None) => return,
            Err(e) => Err(e),
            Ok(Some(m)) => {
                let ch = m.channel;
                while names.len() <= ch.index {
                    names.push((Arc::from(""), Arc::from("")));
                }
                if names[ch.index].0.is_empty() {
                    names[ch.index] = (
                        Arc::from(ch.topic.as_str()),
                        Arc::from(ch.schema_name.as_str()),
                    );
                }
                let (stamp, source) = match (ch.stamp_source, m.stamp) {
                    (StampSource::Header, Ok(s)) => (Timestamp::from_nanos(s), StampSource::Header),
                    _ => (ts(m.log_time), StampSource::LogTime),
                };
                Ok(Stamped::new(
                    stamp,
                    Recorded {
                        topic: names[ch.index].0.clone(),
                        schema: names[ch.index].1.clone(),
                        stamp_source: source,
                        log_time: ts(m.log_time),
                        publish_time: ts(m.publish_time),
                        data: m.data.to_vec(),
                    },
                ))
            }
        };
        let last = item.is_err();
        // The stream was dropped: stop reading.
        if tx.blocking_send(item).is_err() || last {
            return;
        }
    }
}

impl<C: Clock + Unpin> Stream for Replay<C> {
    type Item = Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        let this = &mut *self;
        if let Some((_, sleep)) = &mut this.waiting {
            if sleep.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            return Poll::Ready(this.waiting.take().map(|(item, _)| item));
        }
        let item = match this.rx.poll_recv(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(None) => return Poll::Ready(None),
            Poll::Ready(Some(item)) => item,
        };
        let Pace::Recorded(clock) = &this.pace else {
            return Poll::Ready(Some(item));
        };
        let Ok(msg) = &item else {
            return Poll::Ready(Some(item));
        };
        let log_time = msg.value.log_time;
        let Some((first, start)) = this.origin else {
            this.origin = Some((log_time, clock.now()));
            return Poll::Ready(Some(item));
        };
        let offset =
            TimeDelta::from_nanos(log_time.as_nanos().saturating_sub(first.as_nanos()).max(0));
        let due = start.saturating_add(offset);
        let mut sleep = clock.sleep_until(due);
        if sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(item));
        }
        this.waiting = Some((item, sleep));
        Poll::Pending
    }
}
