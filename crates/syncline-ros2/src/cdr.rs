//! CDR (XCDR1, "DDS_CDR"), the encoding of every ROS 2 message on the wire
//! and in MCAP recordings: a 4-byte encapsulation header (`00 01 00 00` for
//! little-endian, `00 00 00 00` for big-endian), then the fields, each
//! aligned to its own size counted from the byte after the header.
//!
//! [`header_stamp`] reads the `std_msgs/Header` stamp of a message whose
//! first field is a header, without decoding the rest. [`CdrWriter`] and
//! [`CdrReader`] write and read fields one by one, for the few types a
//! program publishes or decodes by hand; for whole typed messages use a
//! serde CDR crate on the same bytes.

/// The byte order an encapsulation header announces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOrder {
    /// `00 00`: big-endian.
    Big,
    /// `00 01`: little-endian.
    Little,
}

/// CDR bytes that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CdrError {
    /// Fewer bytes than the field at `offset` needs.
    #[error("CDR message too short: {needed} bytes needed at offset {offset}, {len} in all")]
    TooShort {
        /// Where the field starts (from the message's first byte).
        offset: usize,
        /// How many bytes it needs.
        needed: usize,
        /// The message's length.
        len: usize,
    },
    /// An encapsulation other than plain CDR (for example a parameter list).
    #[error("unsupported CDR encapsulation {0:#06x}")]
    Encapsulation(u16),
    /// A string that is not NUL-terminated UTF-8.
    #[error("bad CDR string at offset {0}")]
    BadString(usize),
}

/// The stamp of a `std_msgs/Header`: `builtin_interfaces/Time`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct HeaderStamp {
    /// Whole seconds since the Unix epoch.
    pub sec: i32,
    /// Nanoseconds within the second (ROS keeps it below 1e9; not checked).
    pub nanosec: u32,
}

impl HeaderStamp {
    /// The stamp in nanoseconds since the Unix epoch.
    pub fn as_nanos(self) -> i64 {
        i64::from(self.sec) * 1_000_000_000 + i64::from(self.nanosec)
    }

    /// The stamp of `ns` nanoseconds since the Unix epoch (seconds floored,
    /// so `nanosec` is always in `0..1e9`); saturates outside `i32` seconds.
    pub fn from_nanos(ns: i64) -> Self {
        let sec = ns.div_euclid(1_000_000_000);
        let nanosec = ns.rem_euclid(1_000_000_000) as u32;
        match i32::try_from(sec) {
            Ok(sec) => Self { sec, nanosec },
            Err(_) if sec < 0 => Self {
                sec: i32::MIN,
                nanosec: 0,
            },
            Err(_) => Self {
                sec: i32::MAX,
                nanosec: 999_999_999,
            },
        }
    }
}

/// The byte order of a CDR message, from its encapsulation header.
pub fn encapsulation(bytes: &[u8]) -> Result<ByteOrder, CdrError> {
    let head = bytes.get(..4).ok_or(CdrError::TooShort {
        offset: 0,
        needed: 4,
        len: bytes.len(),
    })?;
    match u16::from_be_bytes([head[0], head[1]]) {
        0 => Ok(ByteOrder::Big),
        1 => Ok(ByteOrder::Little),
        other => Err(CdrError::Encapsulation(other)),
    }
}

/// The header stamp of a message whose first field is a `std_msgs/Header`
/// (its first 12 bytes: encapsulation, `int32 sec`, `uint32 nanosec`).
pub fn header_stamp(bytes: &[u8]) -> Result<HeaderStamp, CdrError> {
    let mut reader = CdrReader::new(bytes)?;
    Ok(HeaderStamp {
        sec: reader.i32()?,
        nanosec: reader.u32()?,
    })
}

/// Overwrites the header stamp of a message whose first field is a
/// `std_msgs/Header`, in its own byte order: a restamped copy of a message
/// without decoding the rest of it.
pub fn set_header_stamp(bytes: &mut [u8], stamp: HeaderStamp) -> Result<(), CdrError> {
    let order = encapsulation(bytes)?;
    let len = bytes.len();
    let head = bytes.get_mut(4..12).ok_or(CdrError::TooShort {
        offset: 4,
        needed: 8,
        len,
    })?;
    let (sec, nanosec) = match order {
        ByteOrder::Little => (stamp.sec.to_le_bytes(), stamp.nanosec.to_le_bytes()),
        ByteOrder::Big => (stamp.sec.to_be_bytes(), stamp.nanosec.to_be_bytes()),
    };
    head[..4].copy_from_slice(&sec);
    head[4..].copy_from_slice(&nanosec);
    Ok(())
}

/// Reads CDR fields in order.
#[derive(Debug, Clone)]
pub struct CdrReader<'a> {
    bytes: &'a [u8],
    pos: usize,
    order: ByteOrder,
}

macro_rules! read_prim {
    ($($name:ident: $ty:ty),* $(,)?) => {$(
        #[doc = concat!("Reads an aligned `", stringify!($ty), "`.")]
        pub fn $name(&mut self) -> Result<$ty, CdrError> {
            const N: usize = std::mem::size_of::<$ty>();
            let raw: [u8; N] = self.take_aligned(N)?.try_into().unwrap_or([0; N]);
            Ok(match self.order {
                ByteOrder::Little => <$ty>::from_le_bytes(raw),
                ByteOrder::Big => <$ty>::from_be_bytes(raw),
            })
        }
    )*};
}

impl<'a> CdrReader<'a> {
    /// A reader after the encapsulation header of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Result<Self, CdrError> {
        let order = encapsulation(bytes)?;
        Ok(Self {
            bytes,
            pos: 4,
            order,
        })
    }

    /// The byte order.
    pub fn order(&self) -> ByteOrder {
        self.order
    }

    /// Bytes left to read.
    pub fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    fn take_aligned(&mut self, n: usize) -> Result<&'a [u8], CdrError> {
        let rel = self.pos - 4;
        let start = self.pos + (n - rel % n) % n;
        let end = start.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(CdrError::TooShort {
            offset: start,
            needed: n,
            len: self.bytes.len(),
        })?;
        self.pos = end;
        Ok(&self.bytes[start..end])
    }

    read_prim!(u8: u8, i8: i8, u16: u16, i16: i16, u32: u32, i32: i32, u64: u64, i64: i64, f32: f32, f64: f64);

    /// Reads a `bool` (one byte, non-zero is true).
    pub fn bool(&mut self) -> Result<bool, CdrError> {
        Ok(self.u8()? != 0)
    }

    /// Reads a `string` (`uint32` length with the NUL, the bytes, the NUL).
    pub fn string(&mut self) -> Result<&'a str, CdrError> {
        let len = self.u32()? as usize;
        let at = self.pos;
        let raw = self.bytes(len)?;
        match raw.split_last() {
            Some((0, text)) => std::str::from_utf8(text).map_err(|_| CdrError::BadString(at)),
            None => Ok(""),
            Some(_) => Err(CdrError::BadString(at)),
        }
    }

    /// Reads `len` raw bytes (no alignment).
    pub fn bytes(&mut self, len: usize) -> Result<&'a [u8], CdrError> {
        let end = self.pos.checked_add(len).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or(CdrError::TooShort {
            offset: self.pos,
            needed: len,
            len: self.bytes.len(),
        })?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// Reads a `std_msgs/Header`: stamp and frame id.
    pub fn header(&mut self) -> Result<(HeaderStamp, &'a str), CdrError> {
        let stamp = HeaderStamp {
            sec: self.i32()?,
            nanosec: self.u32()?,
        };
        Ok((stamp, self.string()?))
    }
}

/// Writes a little-endian CDR message, field by field.
#[derive(Debug, Clone)]
pub struct CdrWriter {
    buf: Vec<u8>,
}

impl Default for CdrWriter {
    fn default() -> Self {
        Self::new()
    }
}

macro_rules! write_prim {
    ($($name:ident: $ty:ty),* $(,)?) => {$(
        #[doc = concat!("Writes an aligned `", stringify!($ty), "`.")]
        pub fn $name(&mut self, value: $ty) -> &mut Self {
            self.align(std::mem::size_of::<$ty>());
            self.buf.extend_from_slice(&value.to_le_bytes());
            self
        }
    )*};
}

impl CdrWriter {
    /// A message with its little-endian encapsulation header written.
    pub fn new() -> Self {
        Self {
            buf: vec![0, 1, 0, 0],
        }
    }

    fn align(&mut self, n: usize) {
        let rel = self.buf.len() - 4;
        let pad = (n - rel % n) % n;
        self.buf.resize(self.buf.len() + pad, 0);
    }

    write_prim!(u8: u8, i8: i8, u16: u16, i16: i16, u32: u32, i32: i32, u64: u64, i64: i64, f32: f32, f64: f64);

    /// Writes a `bool`.
    pub fn bool(&mut self, value: bool) -> &mut Self {
        self.u8(u8::from(value))
    }

    /// Writes a `string`. A length that does not fit `u32` is cut (no
    /// message is that long).
    pub fn string(&mut self, value: &str) -> &mut Self {
        let len = u32::try_from(value.len() + 1).unwrap_or(u32::MAX);
        self.u32(len);
        self.buf
            .extend_from_slice(&value.as_bytes()[..(len as usize).saturating_sub(1)]);
        self.buf.push(0);
        self
    }

    /// Writes raw bytes (no alignment, no length).
    pub fn bytes(&mut self, value: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(value);
        self
    }

    /// Writes a `std_msgs/Header`.
    pub fn header(&mut self, stamp: HeaderStamp, frame_id: &str) -> &mut Self {
        self.i32(stamp.sec).u32(stamp.nanosec).string(frame_id)
    }

    /// The message's bytes. An empty message gets the one dummy byte ROS 2
    /// writes for it.
    pub fn finish(mut self) -> Vec<u8> {
        if self.buf.len() == 4 {
            self.buf.push(0);
        }
        self.buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn a_header_reads_in_both_byte_orders() {
        let le = [0, 1, 0, 0, 0x10, 0, 0, 0, 0x20, 0, 0, 0, 1, 0, 0, 0, 0];
        assert_eq!(
            header_stamp(&le),
            Ok(HeaderStamp {
                sec: 16,
                nanosec: 32
            })
        );
        let be = [0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0x20];
        assert_eq!(
            header_stamp(&be),
            Ok(HeaderStamp {
                sec: 16,
                nanosec: 32
            })
        );
        assert!(matches!(
            header_stamp(&le[..10]),
            Err(CdrError::TooShort { .. })
        ));
        assert_eq!(header_stamp(&[0, 2, 0, 0]), Err(CdrError::Encapsulation(2)));
        assert!(header_stamp(&[]).is_err());
    }

    /// The head of a `sensor_msgs/Imu` written by the stand-in node of
    /// `tests/ros2/rmw_node.py` (an implementation without syncline's code).
    #[test]
    fn a_message_of_another_implementation_reads() {
        let head = [
            0x00, 0x01, 0x00, 0x00, 0x00, 0xf1, 0x53, 0x65, 0x40, 0x4b, 0x4c, 0x00, 0x09, 0x00,
            0x00, 0x00, b'i', b'm', b'u', b'_', b'l', b'i', b'n', b'k', 0x00,
        ];
        let stamp = header_stamp(&head).unwrap();
        assert_eq!(stamp.as_nanos(), 1_700_000_000_005_000_000);
        assert_eq!(
            CdrReader::new(&head).unwrap().header(),
            Ok((stamp, "imu_link"))
        );
    }

    #[test]
    fn fields_are_aligned_after_the_encapsulation() {
        let mut w = CdrWriter::new();
        w.u8(7).f64(1.5).string("ab").u16(3);
        let bytes = w.finish();
        // u8 at 4, f64 aligned to 8 relative to byte 4: at 12.
        assert_eq!(&bytes[12..20], &1.5f64.to_le_bytes());
        let mut r = CdrReader::new(&bytes).unwrap();
        assert_eq!(r.u8(), Ok(7));
        assert_eq!(r.f64(), Ok(1.5));
        assert_eq!(r.string(), Ok("ab"));
        assert_eq!(r.u16(), Ok(3));
        assert_eq!(r.remaining(), 0);
        assert_eq!(CdrWriter::new().finish(), vec![0, 1, 0, 0, 0]);
    }

    proptest! {
        #[test]
        fn stamps_round_trip(ns in -(1i64 << 60)..(1i64 << 60), frame in "[a-z_/]{0,20}") {
            let stamp = HeaderStamp::from_nanos(ns);
            let mut w = CdrWriter::new();
            w.header(stamp, &frame).f64(2.0);
            let bytes = w.finish();
            prop_assert_eq!(header_stamp(&bytes), Ok(stamp));
            let mut r = CdrReader::new(&bytes).unwrap();
            prop_assert_eq!(r.header(), Ok((stamp, frame.as_str())));
            prop_assert_eq!(r.f64(), Ok(2.0));
            if i32::try_from(ns.div_euclid(1_000_000_000)).is_ok() {
                prop_assert_eq!(stamp.as_nanos(), ns);
            }
        }

        #[test]
        fn any_bytes_read_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = header_stamp(&bytes);
            if let Ok(mut r) = CdrReader::new(&bytes) {
                let _ = r.header();
                let _ = r.string();
                let _ = r.f64();
            }
        }
    }
}
