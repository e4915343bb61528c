//! ROS 2 CDR: whether a schema starts with a `std_msgs/Header`, and the
//! header's stamp read straight from a message's bytes.
//!
//! A ROS 2 message whose first field is `std_msgs/Header header` serialises
//! as the 4-byte encapsulation header (representation id, options), then the
//! body, whose first 8 bytes are `int32 stamp.sec` and `uint32
//! stamp.nanosec` in the byte order the representation id names (its low
//! bit set: little-endian). XCDR2's delimited encoding (`D_CDR2`) puts a
//! 4-byte length (DHEADER) before the body. Parameter-list encodings
//! (`PL_CDR`, `PL_CDR2`) are not read: their stamps count as unreadable.

/// The schema encodings whose text [`schema_has_header`] understands.
pub const ROS2_SCHEMA_ENCODINGS: [&str; 2] = ["ros2msg", "ros2idl"];

/// Whether the first field of a ROS 2 schema is a `std_msgs/Header`.
///
/// `encoding` is the MCAP schema encoding: `ros2msg` (the `.msg` text,
/// followed by its dependencies after a line of `=`) or `ros2idl` (IDL
/// text, the schema's own struct first). Any other encoding gives `false`.
pub fn schema_has_header(encoding: &str, text: &str) -> bool {
    match encoding {
        "ros2msg" => msg_first_field_type(text).is_some_and(is_header_type),
        "ros2idl" => idl_first_member_type(text).is_some_and(is_header_type),
        _ => false,
    }
}

fn is_header_type(ty: &str) -> bool {
    matches!(
        ty,
        "Header" | "std_msgs/Header" | "std_msgs/msg/Header" | "std_msgs::msg::Header"
    )
}

/// The type of the first field of a `.msg` text: the first line that is
/// not blank, not a comment and not a constant (`TYPE NAME=VALUE`).
fn msg_first_field_type(text: &str) -> Option<&str> {
    for line in text.lines() {
        if line.starts_with("===") {
            // The main definition ended without a field.
            return None;
        }
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let ty = words.next()?;
        let rest: String = words.collect::<Vec<_>>().join(" ");
        if rest.contains('=') {
            continue; // a constant
        }
        return Some(ty);
    }
    None
}

/// The type of the first member of the first `struct` of an IDL text
/// (annotations, comments and `#include`/`#pragma` lines skipped).
fn idl_first_member_type(text: &str) -> Option<&str> {
    let start = text.find("struct ")?;
    let body = &text[start..];
    let open = body.find('{')?;
    let mut rest = &body[open + 1..];
    loop {
        rest = rest.trim_start();
        if rest.starts_with("//") {
            rest = rest.split_once('\n').map_or("", |(_, r)| r);
        } else if rest.starts_with("/*") {
            rest = rest.split_once("*/").map_or("", |(_, r)| r);
        } else if let Some(after_at) = rest.strip_prefix('@') {
            // `@verbatim (...)`, `@default (value=0)`, `@key`: skip the
            // annotation's name and any parenthesised arguments.
            let name_end = after_at
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(after_at.len());
            rest = after_at[name_end..].trim_start();
            if rest.starts_with('(') {
                rest = skip_parens(rest);
            }
        } else {
            break;
        }
    }
    let end = rest.find(|c: char| c.is_whitespace() || c == ';' || c == '<')?;
    let ty = &rest[..end];
    (!ty.is_empty() && ty != "}").then_some(ty)
}

/// Skips a balanced `( ... )` group (with string literals) at the start.
fn skip_parens(s: &str) -> &str {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut prev = '\0';
    for (i, c) in s.char_indices() {
        match c {
            '"' if prev != '\\' => in_str = !in_str,
            '(' if !in_str => depth += 1,
            ')' if !in_str => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return &s[i + 1..];
                }
            }
            _ => {}
        }
        prev = c;
    }
    ""
}

/// Why a header stamp could not be read from a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StampError {
    /// Fewer bytes than the encapsulation header and the stamp need.
    TooShort,
    /// A parameter-list or unknown representation id.
    Unsupported(u16),
    /// `nanosec` is 1e9 or more.
    BadNanosec,
}

/// The `std_msgs/Header` stamp of a CDR message in nanoseconds since the
/// epoch (`sec * 1e9 + nanosec`), read from `data`, which starts with the
/// 4-byte encapsulation header.
#[inline]
pub fn header_stamp(data: &[u8]) -> Result<i64, StampError> {
    let Some(&[hi, lo, _, _]) = data.first_chunk::<4>() else {
        return Err(StampError::TooShort);
    };
    let id = u16::from_be_bytes([hi, lo]);
    let body = match id {
        // CDR_BE/LE, PLAIN_CDR2 BE/LE.
        0x0000 | 0x0001 | 0x0006 | 0x0007 => 4,
        // D_CDR2 BE/LE: a u32 DHEADER first.
        0x0008 | 0x0009 => 8,
        other => return Err(StampError::Unsupported(other)),
    };
    let Some(stamp) = data.get(body..body + 8) else {
        return Err(StampError::TooShort);
    };
    let (sec, nsec) = stamp.split_at(4);
    let (sec, nsec) = (
        <[u8; 4]>::try_from(sec).map_err(|_| StampError::TooShort)?,
        <[u8; 4]>::try_from(nsec).map_err(|_| StampError::TooShort)?,
    );
    let (sec, nsec) = if lo & 1 == 1 {
        (i32::from_le_bytes(sec), u32::from_le_bytes(nsec))
    } else {
        (i32::from_be_bytes(sec), u32::from_be_bytes(nsec))
    };
    if nsec >= 1_000_000_000 {
        return Err(StampError::BadNanosec);
    }
    Ok(i64::from(sec) * 1_000_000_000 + i64::from(nsec))
}

/// Serialises a message that starts with a `std_msgs/Header` (stamp and
/// `frame_id`) followed by `payload` bytes, in CDR with the given byte
/// order: what a ROS 2 publisher sends. For tests, benchmarks and
/// recordings written by syncline.
pub fn encode_header_message(
    sec: i32,
    nanosec: u32,
    frame_id: &str,
    little_endian: bool,
    payload: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + frame_id.len() + 1 + 3 + payload.len());
    out.extend_from_slice(&[0, u8::from(little_endian), 0, 0]);
    let (s, n, len) = if little_endian {
        (
            sec.to_le_bytes(),
            nanosec.to_le_bytes(),
            (frame_id.len() as u32 + 1).to_le_bytes(),
        )
    } else {
        (
            sec.to_be_bytes(),
            nanosec.to_be_bytes(),
            (frame_id.len() as u32 + 1).to_be_bytes(),
        )
    };
    out.extend_from_slice(&s);
    out.extend_from_slice(&n);
    out.extend_from_slice(&len);
    out.extend_from_slice(frame_id.as_bytes());
    out.push(0);
    out.extend_from_slice(payload);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_page_example_both_byte_orders() {
        let le = [
            0x00, 0x01, 0x00, 0x00, 0x7b, 0xf1, 0x53, 0x65, 0x08, 0x0c, 0x3a, 0x1b, 0x09, 0, 0, 0,
        ];
        let be = [
            0x00, 0x00, 0x00, 0x00, 0x65, 0x53, 0xf1, 0x7b, 0x1b, 0x3a, 0x0c, 0x08, 0, 0, 0, 0x09,
        ];
        let want = 1_700_000_123 * 1_000_000_000 + 456_789_000;
        assert_eq!(header_stamp(&le), Ok(want));
        assert_eq!(header_stamp(&be), Ok(want));
        assert_eq!(
            encode_header_message(1_700_000_123, 456_789_000, "imu_link", true, &[])[..16],
            le
        );
        assert_eq!(
            encode_header_message(1_700_000_123, 456_789_000, "imu_link", false, &[])[..16],
            be
        );
    }

    #[test]
    fn delimited_xcdr2_skips_the_dheader_and_bad_input_is_an_error() {
        let mut d = vec![0x00, 0x09, 0, 0, 99, 0, 0, 0];
        d.extend_from_slice(&(-5i32).to_le_bytes());
        d.extend_from_slice(&7u32.to_le_bytes());
        assert_eq!(header_stamp(&d), Ok(-5_000_000_000 + 7));
        assert_eq!(header_stamp(&[0, 1, 0]), Err(StampError::TooShort));
        assert_eq!(header_stamp(&[0, 1, 0, 0, 1, 2]), Err(StampError::TooShort));
        assert_eq!(
            header_stamp(&[0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(StampError::Unsupported(3))
        );
        let bad = encode_header_message(1, 1_000_000_000, "", true, &[]);
        assert_eq!(header_stamp(&bad), Err(StampError::BadNanosec));
    }

    #[test]
    fn msg_schemas() {
        assert!(schema_has_header(
            "ros2msg",
            "# comment\n\nstd_msgs/Header header\nfloat64 x\n"
        ));
        assert!(schema_has_header(
            "ros2msg",
            "uint8 MODE=1 # constant\nHeader header\n"
        ));
        assert!(!schema_has_header(
            "ros2msg",
            "builtin_interfaces/Time stamp\nstd_msgs/Header header\n"
        ));
        assert!(!schema_has_header(
            "ros2msg",
            "geometry_msgs/TransformStamped[] transforms\n================\nMSG: std_msgs/Header\n"
        ));
        assert!(!schema_has_header("ros2msg", ""));
        assert!(!schema_has_header("jsonschema", "std_msgs/Header header"));
    }

    #[test]
    fn idl_schemas() {
        let idl = "// generated\nmodule sensor_msgs {\n  module msg {\n    @verbatim (language=\"comment\", text=\"An (IMU)\")\n    struct Imu {\n      @verbatim (language=\"comment\", text=\"hdr\")\n      std_msgs::msg::Header header;\n      double x;\n    };\n  };\n};\n";
        assert!(schema_has_header("ros2idl", idl));
        let no = "module m { module msg { struct S { /* c */ double x; std_msgs::msg::Header h; }; }; };";
        assert!(!schema_has_header("ros2idl", no));
        assert!(!schema_has_header("ros2idl", "struct S { };"));
    }
}
