//! The timing messages' binary encoding (sans-IO): one fixed 41-byte frame
//! per message, little-endian.
//!
//! | bytes  | field    | meaning                                                        |
//! |--------|----------|----------------------------------------------------------------|
//! | 0      | kind     | 1 ready, 2 stop request (up); 16 trigger, 17 start, 18 resync, 19 stop (down) |
//! | 1..9   | from     | the sender's instance id (random, non-zero, one per process run) |
//! | 9..17  | to       | the addressee's instance id (0: whoever is there)                |
//! | 17..25 | seq      | the sender's sequence number towards this addressee (from 1)     |
//! | 25..33 | ack      | the highest sequence number the sender has taken from the addressee |
//! | 33..41 | time     | the message's time in ns since the epoch (0 when it has none)    |
//!
//! `seq` makes delivery exactly-once across reconnections (a receiver drops
//! a number it has already taken, and counts gaps); `ack` lets the sender
//! forget messages, and re-send the others when the link comes back.

use syncline::timer::Outbound;
use syncline_core::Timestamp;
use syncline_core::timer::Signal;

/// The length of every timing frame.
pub const FRAME_LEN: usize = 41;

/// What a frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body {
    /// Participant to coordinator.
    Up(Outbound),
    /// Coordinator to participant.
    Down(Signal),
}

/// One timing message with its delivery header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// The sender's instance id.
    pub from: u64,
    /// The addressee's instance id (0: any).
    pub to: u64,
    /// The sender's sequence number towards `to`.
    pub seq: u64,
    /// The highest sequence number the sender has taken from `to`.
    pub ack: u64,
    /// The message.
    pub body: Body,
}

/// A frame that cannot be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Not [`FRAME_LEN`] bytes long.
    #[error("timing frame of {0} bytes (expected 41)")]
    Length(usize),
    /// An unknown kind byte.
    #[error("unknown timing message kind {0}")]
    Kind(u8),
}

fn u64_at(b: &[u8; FRAME_LEN], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

impl Frame {
    /// Encodes the frame.
    pub fn encode(&self) -> [u8; FRAME_LEN] {
        let (kind, time) = match self.body {
            Body::Up(Outbound::Ready(t)) => (1u8, t.as_nanos()),
            Body::Up(Outbound::StopRequest) => (2, 0),
            Body::Down(Signal::Trigger(t)) => (16, t.as_nanos()),
            Body::Down(Signal::Start(t)) => (17, t.as_nanos()),
            Body::Down(Signal::Resync(t)) => (18, t.as_nanos()),
            Body::Down(Signal::Stop) => (19, 0),
        };
        let mut b = [0u8; FRAME_LEN];
        b[0] = kind;
        b[1..9].copy_from_slice(&self.from.to_le_bytes());
        b[9..17].copy_from_slice(&self.to.to_le_bytes());
        b[17..25].copy_from_slice(&self.seq.to_le_bytes());
        b[25..33].copy_from_slice(&self.ack.to_le_bytes());
        b[33..41].copy_from_slice(&time.to_le_bytes());
        b
    }

    /// Decodes a frame.
    pub fn decode(bytes: &[u8]) -> Result<Frame, WireError> {
        let b: &[u8; FRAME_LEN] = bytes
            .try_into()
            .map_err(|_| WireError::Length(bytes.len()))?;
        let t = Timestamp::from_nanos(u64_at(b, 33) as i64);
        let body = match b[0] {
            1 => Body::Up(Outbound::Ready(t)),
            2 => Body::Up(Outbound::StopRequest),
            16 => Body::Down(Signal::Trigger(t)),
            17 => Body::Down(Signal::Start(t)),
            18 => Body::Down(Signal::Resync(t)),
            19 => Body::Down(Signal::Stop),
            k => return Err(WireError::Kind(k)),
        };
        Ok(Frame {
            from: u64_at(b, 1),
            to: u64_at(b, 9),
            seq: u64_at(b, 17),
            ack: u64_at(b, 25),
            body,
        })
    }
}

/// What a receiver does with an incoming sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqVerdict {
    /// New: take it (`gap` numbers were skipped before it).
    Take {
        /// Numbers never seen between the last taken one and this one.
        gap: u64,
    },
    /// Already taken: drop it.
    Duplicate,
}

/// The receiving side of one sender's sequence numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SeqIn {
    /// The highest number taken (0: none yet).
    pub last: u64,
}

impl SeqIn {
    /// Judges `seq` and records it when taken.
    pub fn take(&mut self, seq: u64) -> SeqVerdict {
        if seq <= self.last {
            return SeqVerdict::Duplicate;
        }
        let gap = if self.last == 0 {
            0
        } else {
            seq - self.last - 1
        };
        self.last = seq;
        SeqVerdict::Take { gap }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn body() -> impl Strategy<Value = Body> {
        let t = any::<i64>().prop_map(Timestamp::from_nanos);
        prop_oneof![
            t.clone().prop_map(|t| Body::Up(Outbound::Ready(t))),
            Just(Body::Up(Outbound::StopRequest)),
            t.clone().prop_map(|t| Body::Down(Signal::Trigger(t))),
            t.clone().prop_map(|t| Body::Down(Signal::Start(t))),
            t.prop_map(|t| Body::Down(Signal::Resync(t))),
            Just(Body::Down(Signal::Stop)),
        ]
    }

    proptest! {
        #[test]
        fn frames_round_trip(from: u64, to: u64, seq: u64, ack: u64, body in body()) {
            let f = Frame { from, to, seq, ack, body };
            prop_assert_eq!(Frame::decode(&f.encode()), Ok(f));
        }

        #[test]
        fn garbage_is_an_error_or_a_frame_never_a_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            match Frame::decode(&bytes) {
                Ok(f) => prop_assert_eq!(Frame::decode(&f.encode()), Ok(f)),
                Err(WireError::Length(n)) => prop_assert!(n != FRAME_LEN),
                Err(WireError::Kind(k)) => prop_assert!(![1, 2, 16, 17, 18, 19].contains(&k)),
            }
        }

        #[test]
        fn sequence_numbers_are_taken_once_and_gaps_counted(seqs in proptest::collection::vec(1u64..50, 0..40)) {
            let mut s = SeqIn::default();
            let mut taken = vec![];
            let mut gaps = 0;
            for &q in &seqs {
                if let SeqVerdict::Take { gap } = s.take(q) {
                    taken.push(q);
                    gaps += gap;
                }
            }
            // Strictly increasing, so never a number twice.
            prop_assert!(taken.windows(2).all(|w| w[0] < w[1]));
            if let (Some(first), Some(last)) = (taken.first(), taken.last()) {
                prop_assert_eq!(gaps, last - first + 1 - taken.len() as u64);
            }
        }
    }

    #[test]
    fn the_layout_is_the_documented_one() {
        let f = Frame {
            from: 0x0102,
            to: 3,
            seq: 4,
            ack: 5,
            body: Body::Down(Signal::Trigger(Timestamp::from_nanos(6))),
        };
        let b = f.encode();
        assert_eq!(b[0], 16);
        assert_eq!(&b[1..3], &[2, 1]);
        assert_eq!(b[9], 3);
        assert_eq!(b[17], 4);
        assert_eq!(b[25], 5);
        assert_eq!(b[33], 6);
    }
}
