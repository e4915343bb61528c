//! Streaming MCAP reading in bounded memory.
//!
//! [`McapReader`] drives the `mcap` crate's sans-IO
//! [`LinearReader`](mcap::sans_io::LinearReader) over any
//! [`Read`](std::io::Read): it holds one record (or one chunk's compressed
//! bytes and its decompression window) at a time, so memory is bounded by
//! the largest chunk, whatever the file's size. Chunked and unchunked
//! files, zstd, lz4 or uncompressed chunks, with or without a summary and
//! indexes are read the same way, front to back; chunk CRCs are checked.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use mcap::records::op;
use mcap::sans_io::{LinearReadEvent, LinearReader, LinearReaderOptions};

use crate::cdr::{StampError, header_stamp, schema_has_header};
use crate::error::LogError;

/// The 8 bytes every MCAP file starts (and ends) with.
pub const MCAP_MAGIC: &[u8; 8] = b"\x89MCAP0\r\n";

/// The largest record (or chunk, compressed or not) the reader accepts by
/// default: 256 MiB. A damaged length field beyond it is an error instead of
/// an allocation.
pub const DEFAULT_RECORD_LIMIT: usize = 256 << 20;

/// The least the reader reads from its source at a time.
const READ_SIZE: usize = 1 << 16;

/// Where a channel's message stamps come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StampSource {
    /// The `std_msgs/Header` stamp read from the CDR bytes.
    Header,
    /// The record's `log_time` (the recorder's receive time).
    LogTime,
}

impl StampSource {
    /// `"header"` or `"log_time"`, as `syncline analyze --json` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            StampSource::Header => "header",
            StampSource::LogTime => "log_time",
        }
    }
}

/// A channel of the recording.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelInfo {
    /// Dense index in order of appearance (0, 1, ...), for per-channel arrays.
    pub index: usize,
    /// The channel id in the file.
    pub id: u16,
    /// The topic name.
    pub topic: String,
    /// The schema's name (`sensor_msgs/msg/Imu`), empty without a schema.
    pub schema_name: String,
    /// The schema's encoding (`ros2msg`, `ros2idl`, ...).
    pub schema_encoding: String,
    /// The messages' encoding (`cdr`, `json`, ...).
    pub message_encoding: String,
    /// Where stamps come from: a header when the schema is ROS 2, the
    /// encoding CDR, and the first field a `std_msgs/Header`.
    pub stamp_source: StampSource,
}

/// One message, valid until the next call to [`McapReader::next_message`].
#[derive(Debug, Clone, Copy)]
pub struct Message<'a> {
    /// Its channel.
    pub channel: &'a ChannelInfo,
    /// The recorder's sequence number.
    pub sequence: u32,
    /// When it was recorded (receive time), ns since the epoch.
    pub log_time: u64,
    /// When it was published (send time), ns since the epoch.
    pub publish_time: u64,
    /// Its stamp in ns: the header stamp for [`StampSource::Header`]
    /// channels (an error when the bytes do not hold one), else `log_time`
    /// (saturated to `i64::MAX`).
    pub stamp: Result<i64, StampError>,
    /// The message bytes; empty unless [`McapReader::keep_data`] is on.
    pub data: &'a [u8],
}

struct SchemaInfo {
    name: String,
    encoding: String,
    has_header: bool,
}

/// Reads the messages of an MCAP file front to back, in bounded memory.
///
/// ```no_run
/// # fn main() -> Result<(), syncline_log::LogError> {
/// let mut reader = syncline_log::McapReader::open("rig.mcap")?;
/// while let Some(msg) = reader.next_message()? {
///     println!("{} {:?} {}", msg.channel.topic, msg.stamp, msg.log_time);
/// }
/// # Ok(()) }
/// ```
pub struct McapReader<R> {
    source: R,
    file: String,
    reader: LinearReader,
    /// Bytes handed to the linear reader so far: the byte offset reached.
    fed: u64,
    schemas: HashMap<u16, SchemaInfo>,
    channels: Vec<ChannelInfo>,
    /// Channel id -> index, `u32::MAX` where undefined.
    by_id: Vec<u32>,
    keep_data: bool,
    data: Vec<u8>,
    done: bool,
}

impl McapReader<BufReader<File>> {
    /// Opens an MCAP file.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, LogError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let file = File::open(path).map_err(|source| LogError::Io {
            file: name.clone(),
            source,
        })?;
        Ok(Self::new(name, BufReader::with_capacity(1 << 18, file)))
    }
}

impl<R: Read> McapReader<R> {
    /// Reads MCAP from `source`; `name` is used in error messages.
    pub fn new(name: impl Into<String>, source: R) -> Self {
        Self::with_record_limit(name, source, DEFAULT_RECORD_LIMIT)
    }

    /// Like [`McapReader::new`], with the largest record (or chunk) accepted.
    pub fn with_record_limit(name: impl Into<String>, source: R, limit: usize) -> Self {
        let options = LinearReaderOptions::default()
            .with_validate_chunk_crcs(true)
            .with_record_length_limit(limit);
        McapReader {
            source,
            file: name.into(),
            reader: LinearReader::new_with_options(options),
            fed: 0,
            schemas: HashMap::new(),
            channels: Vec::new(),
            by_id: vec![u32::MAX; 1 << 16],
            keep_data: false,
            data: Vec::new(),
            done: false,
        }
    }

    /// Whether [`Message::data`] holds the message bytes (off by default:
    /// the timing analysis needs only the stamp, and skipping the copy
    /// saves time on large messages).
    pub fn keep_data(mut self, keep: bool) -> Self {
        self.keep_data = keep;
        self
    }

    /// The file's name as given.
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Bytes of the file read so far.
    pub fn bytes_read(&self) -> u64 {
        self.fed
    }

    /// The channels seen so far, by [`ChannelInfo::index`].
    pub fn channels(&self) -> &[ChannelInfo] {
        &self.channels
    }

    fn malformed(&mut self, message: impl Into<String>) -> LogError {
        self.done = true;
        LogError::Malformed {
            file: self.file.clone(),
            offset: self.fed,
            message: message.into(),
        }
    }

    /// The next message in file order; `None` at the end of a well-formed
    /// file. After an error (the file is damaged from the reported offset
    /// on), it returns `None`: what came before stays valid.
    pub fn next_message(&mut self) -> Result<Option<Message<'_>>, LogError> {
        if self.done {
            return Ok(None);
        }
        let found = loop {
            let event = match self.reader.next_event() {
                None => {
                    self.done = true;
                    return Ok(None);
                }
                Some(Ok(event)) => event,
                Some(Err(e)) => {
                    let why = match e {
                        mcap::McapError::UnexpectedEof if self.fed == 0 => {
                            "empty file: no MCAP magic".to_string()
                        }
                        mcap::McapError::UnexpectedEof => {
                            "truncated: the file ends inside a record".to_string()
                        }
                        other => other.to_string(),
                    };
                    return Err(self.malformed(why));
                }
            };
            match event {
                LinearReadEvent::ReadRequest(need) => {
                    // Feed at least READ_SIZE: the reader asks for each
                    // record's bytes in turn, and one read per message
                    // would cost more than the message's analysis.
                    let buf = self.reader.insert(need.max(READ_SIZE));
                    let n = loop {
                        match self.source.read(buf) {
                            Ok(n) => break n,
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                            Err(source) => {
                                self.done = true;
                                return Err(LogError::Io {
                                    file: self.file.clone(),
                                    source,
                                });
                            }
                        }
                    };
                    self.reader.notify_read(n);
                    self.fed += n as u64;
                }
                LinearReadEvent::Record { opcode, data } => match opcode {
                    op::MESSAGE => {
                        let Some(head) = data.first_chunk::<22>() else {
                            break Err("message record shorter than its 22-byte header");
                        };
                        let channel_id = u16::from_le_bytes([head[0], head[1]]);
                        let sequence = u32::from_le_bytes([head[2], head[3], head[4], head[5]]);
                        let log_time = u64::from_le_bytes(le8(&head[6..14]));
                        let publish_time = u64::from_le_bytes(le8(&head[14..22]));
                        let index = self.by_id[usize::from(channel_id)];
                        if index == u32::MAX {
                            break Err("message on a channel that was not defined before it");
                        }
                        let index = index as usize;
                        let body = &data[22..];
                        let stamp = match self.channels[index].stamp_source {
                            StampSource::Header => header_stamp(body),
                            StampSource::LogTime => Ok(i64::try_from(log_time).unwrap_or(i64::MAX)),
                        };
                        self.data.clear();
                        if self.keep_data {
                            self.data.extend_from_slice(body);
                        }
                        break Ok((index, sequence, log_time, publish_time, stamp));
                    }
                    op::SCHEMA => match mcap::parse_record(opcode, data) {
                        Ok(mcap::records::Record::Schema { header, data }) => {
                            let text = String::from_utf8_lossy(&data);
                            let has_header = schema_has_header(&header.encoding, &text);
                            self.schemas.insert(
                                header.id,
                                SchemaInfo {
                                    name: header.name,
                                    encoding: header.encoding,
                                    has_header,
                                },
                            );
                        }
                        _ => break Err("malformed schema record"),
                    },
                    op::CHANNEL => match mcap::parse_record(opcode, data) {
                        Ok(mcap::records::Record::Channel(ch)) => {
                            if self.by_id[usize::from(ch.id)] != u32::MAX {
                                // Repeated in the summary section: the first one stands.
                                continue;
                            }
                            let schema = self.schemas.get(&ch.schema_id);
                            if ch.schema_id != 0 && schema.is_none() {
                                break Err("channel refers to a schema not defined before it");
                            }
                            let header = schema.is_some_and(|s| s.has_header)
                                && ch.message_encoding == "cdr";
                            let index = self.channels.len();
                            self.channels.push(ChannelInfo {
                                index,
                                id: ch.id,
                                topic: ch.topic,
                                schema_name: schema.map(|s| s.name.clone()).unwrap_or_default(),
                                schema_encoding: schema
                                    .map(|s| s.encoding.clone())
                                    .unwrap_or_default(),
                                message_encoding: ch.message_encoding,
                                stamp_source: if header {
                                    StampSource::Header
                                } else {
                                    StampSource::LogTime
                                },
                            });
                            self.by_id[usize::from(ch.id)] = index as u32;
                        }
                        _ => break Err("malformed channel record"),
                    },
                    _ => {}
                },
            }
        };
        match found {
            Ok((index, sequence, log_time, publish_time, stamp)) => Ok(Some(Message {
                channel: &self.channels[index],
                sequence,
                log_time,
                publish_time,
                stamp,
                data: &self.data,
            })),
            Err(why) => Err(self.malformed(why)),
        }
    }
}

fn le8(b: &[u8]) -> [u8; 8] {
    let mut out = [0; 8];
    out.copy_from_slice(b);
    out
}

/// Whether `head` (a file's first bytes) starts like an MCAP file.
pub fn looks_like_mcap(head: &[u8]) -> bool {
    head.len() >= 5 && head[..5] == MCAP_MAGIC[..5]
}
