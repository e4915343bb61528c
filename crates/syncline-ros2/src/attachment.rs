//! The attachment rmw_zenoh puts on every sample (33 bytes): the
//! publisher's sequence number, the source timestamp and the publisher's
//! GID, written as zenoh-ext serializes `(i64, i64, [u8; 16])`.
//!
//! | offset | bytes | field |
//! |---|---|---|
//! | 0 | 8 | sequence number, `i64` little-endian, from 1 per publisher |
//! | 8 | 8 | source timestamp, `i64` little-endian, ns since the Unix epoch |
//! | 16 | 1 | the GID's length as a LEB128 varint: `0x10` |
//! | 17 | 16 | the publisher's GID |

use sha2::{Digest, Sha256};

/// The length of an attachment.
pub const ATTACHMENT_LEN: usize = 33;

/// A sample's attachment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attachment {
    /// The publisher's sequence number (from 1; a gap is a lost message).
    pub sequence_number: i64,
    /// When the publisher sent it: ns since the Unix epoch, its system clock.
    pub source_timestamp: i64,
    /// The publisher's global id.
    pub gid: Gid,
}

/// A publisher's 16-byte global id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Gid(pub [u8; 16]);

impl Gid {
    /// A GID derived from the publisher's liveliness token (stable and
    /// unique per publisher, which is all rmw_zenoh needs of it; rmw_zenoh
    /// itself takes an XXH3 hash of the same key).
    pub fn from_token(token: &str) -> Self {
        let digest = Sha256::digest(token.as_bytes());
        let mut gid = [0u8; 16];
        gid.copy_from_slice(&digest[..16]);
        Self(gid)
    }
}

/// An attachment that is not rmw_zenoh's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttachmentError {
    /// Not 33 bytes.
    #[error("attachment of {0} bytes, expected 33")]
    Length(usize),
    /// The GID's length byte is not 16.
    #[error("attachment GID length {0}, expected 16")]
    GidLength(u8),
}

impl Attachment {
    /// The 33 bytes of the attachment.
    pub fn encode(&self) -> [u8; ATTACHMENT_LEN] {
        let mut out = [0u8; ATTACHMENT_LEN];
        out[..8].copy_from_slice(&self.sequence_number.to_le_bytes());
        out[8..16].copy_from_slice(&self.source_timestamp.to_le_bytes());
        out[16] = 16;
        out[17..].copy_from_slice(&self.gid.0);
        out
    }

    /// Reads an attachment.
    pub fn decode(bytes: &[u8]) -> Result<Self, AttachmentError> {
        let bytes: &[u8; ATTACHMENT_LEN] = bytes
            .try_into()
            .map_err(|_| AttachmentError::Length(bytes.len()))?;
        if bytes[16] != 16 {
            return Err(AttachmentError::GidLength(bytes[16]));
        }
        let word = |at: usize| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[at..at + 8]);
            i64::from_le_bytes(w)
        };
        let mut gid = [0u8; 16];
        gid.copy_from_slice(&bytes[17..]);
        Ok(Self {
            sequence_number: word(0),
            source_timestamp: word(8),
            gid: Gid(gid),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_layout_is_rmw_zenohs() {
        let a = Attachment {
            sequence_number: 1,
            source_timestamp: 0x0102_0304_0506_0708,
            gid: Gid([0xab; 16]),
        };
        let bytes = a.encode();
        assert_eq!(&bytes[..8], &[1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&bytes[8..16], &[8, 7, 6, 5, 4, 3, 2, 1]);
        assert_eq!(bytes[16], 0x10);
        assert_eq!(&bytes[17..], &[0xab; 16]);
        assert_eq!(Attachment::decode(&bytes), Ok(a));
        assert_eq!(
            Attachment::decode(&bytes[..32]),
            Err(AttachmentError::Length(32))
        );
        let mut bad = bytes;
        bad[16] = 24;
        assert_eq!(
            Attachment::decode(&bad),
            Err(AttachmentError::GidLength(24))
        );
    }

    proptest! {
        #[test]
        fn attachments_round_trip(seq: i64, ts: i64, gid: [u8; 16]) {
            let a = Attachment { sequence_number: seq, source_timestamp: ts, gid: Gid(gid) };
            prop_assert_eq!(Attachment::decode(&a.encode()), Ok(a));
        }

        #[test]
        fn any_bytes_decode_without_panic(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let _ = Attachment::decode(&bytes);
        }
    }
}
