//! CSV input as INTERFACE.md fixes it: a header row found after any comment
//! or blank lines, columns found by name in any order, cells trimmed of
//! surrounding spaces, RFC 4180 quoting (a quoted cell may hold commas,
//! doubled quotes and line breaks), empty cells absent, lines that are blank
//! or start with `#` skipped, row ids counted among data rows only, and
//! errors naming the file and the 1-based physical line.
//!
//! Records are split by `csv-core` (the `csv` crate's parser: RFC 4180
//! quoting, CRLF, a byte-order mark), driven here into fixed buffers: no
//! allocation per row in steady state, and a record longer than
//! [`MAX_RECORD`] bytes is an error rather than unbounded memory. Like
//! `csv`, it prefers a reading to an error: a quote inside an unquoted cell
//! is text, text after a closing quote is glued on, and an unterminated
//! quote runs to the end of the input (or to the record limit). Comment and
//! blank lines are skipped here, before the parser, so that each row's line
//! is the physical line where it starts. The reader streams one row at a
//! time, so a command writes its output for earlier rows before a bad row
//! ends the run.

use std::io::{BufRead, BufReader, Read};

use csv_core::ReadRecordResult;

use crate::error::CliError;

/// The longest record the reader accepts, in bytes of input (1 MiB).
pub const MAX_RECORD: usize = 1 << 20;

/// The most cells a record may have.
pub const MAX_CELLS: usize = 1 << 16;

/// The UTF-8 byte-order mark, stripped before the first line.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// At most this many characters of a cell are quoted in an error message.
const SHOWN: usize = 40;

/// A cell as an error message shows it: at most [`SHOWN`] characters.
pub fn shown(cell: &[u8]) -> String {
    let text = String::from_utf8_lossy(&cell[..cell.len().min(4 * SHOWN)]);
    if text.chars().count() > SHOWN || cell.len() > 4 * SHOWN {
        let cut: String = text.chars().take(SHOWN).collect();
        format!("{cut}... ({} bytes)", cell.len())
    } else {
        text.into_owned()
    }
}

/// A streaming CSV reader over a file or standard input (`-`).
pub struct CsvInput {
    source: Box<dyn BufRead>,
    parser: csv_core::Reader,
    file: String,
    header: Vec<Vec<u8>>,
    header_line: u64,
    /// The current record's unquoted cell contents, back to back; its
    /// length is the parser's output room, grown up to [`MAX_RECORD`].
    cells: Vec<u8>,
    /// The end of each cell in `cells`; grown up to [`MAX_CELLS`].
    ends: Vec<usize>,
    /// How many cells the current record has.
    len: usize,
    next_id: u64,
}

/// The position of the current row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowPos {
    /// 0-based id among data rows.
    pub id: u64,
    /// 1-based physical line where the row starts.
    pub line: u64,
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if is_space(*first) {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if is_space(*last) {
            s = rest;
        } else {
            break;
        }
    }
    s
}

/// What the start of a line is, seen before the parser gets it.
enum LineStart {
    /// A line break (the end of a blank line, or the `\n` of a `\r\n`).
    Break(u8),
    /// A comment: spaces, then `#`.
    Comment,
    /// Anything else, the start of a record (or the end of the input).
    Record,
}

impl CsvInput {
    /// Reads CSV from any reader; `name` is used in error messages.
    pub fn from_reader(name: &str, source: Box<dyn Read>) -> Result<Self, CliError> {
        let mut input = CsvInput {
            source: Box::new(BufReader::with_capacity(1 << 16, source)),
            parser: csv_core::Reader::new(),
            file: name.to_string(),
            header: Vec::new(),
            header_line: 1,
            cells: vec![0; 1 << 12],
            ends: vec![0; 16],
            len: 0,
            next_id: 0,
        };
        let buf = input.fill()?;
        if buf.starts_with(BOM) {
            input.source.consume(BOM.len());
        }
        match input.read_record()? {
            None => return Err(input.error_at(None, "empty input: no header row")),
            Some(line) => input.header_line = line,
        }
        input.header = (0..input.len)
            .map(|c| input.cell(c).unwrap_or_default().to_vec())
            .collect();
        for (i, name) in input.header.iter().enumerate() {
            if !name.is_empty() && input.header[..i].contains(name) {
                return Err(input.error_at(
                    Some(input.header_line),
                    format!("duplicated column `{}`", shown(name)),
                ));
            }
        }
        Ok(input)
    }

    fn fill(&mut self) -> Result<&[u8], CliError> {
        self.source.fill_buf().map_err(|source| CliError::Io {
            file: self.file.clone(),
            source,
        })
    }

    /// The physical line the parser is on (1-based).
    fn line(&self) -> u64 {
        self.parser.line()
    }

    fn too_long(&self) -> CliError {
        self.error_at(
            Some(self.line()),
            format!("record too long (more than {MAX_RECORD} bytes)"),
        )
    }

    /// Skips one comment line, which may be longer than the buffer (but not
    /// than [`MAX_RECORD`]).
    fn skip_comment(&mut self) -> Result<(), CliError> {
        let mut skipped = 0;
        loop {
            let buf = self.fill()?;
            if buf.is_empty() {
                return Ok(());
            }
            let (n, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            self.source.consume(n);
            skipped += n;
            if done {
                self.parser.set_line(self.line() + 1);
                return Ok(());
            }
            if skipped > MAX_RECORD {
                return Err(self.too_long());
            }
        }
    }

    /// Reads the next record that is not blank or a comment into `cells`
    /// and `ends`. Returns the line it starts on, `None` at end of input.
    fn read_record(&mut self) -> Result<Option<u64>, CliError> {
        loop {
            // Line breaks and comments before the record: here, so that the
            // record's line is known when the parser starts on it.
            let buf = self.fill()?;
            let start = match buf.first() {
                Some(&b @ (b'\n' | b'\r')) => LineStart::Break(b),
                Some(_) if trim(buf).first() == Some(&b'#') => LineStart::Comment,
                _ => LineStart::Record,
            };
            match start {
                LineStart::Break(b) => {
                    self.source.consume(1);
                    if b == b'\n' {
                        self.parser.set_line(self.line() + 1);
                    }
                    continue;
                }
                LineStart::Comment => {
                    self.skip_comment()?;
                    continue;
                }
                LineStart::Record => {}
            }
            let line = self.line();
            if !self.parse_record()? {
                return Ok(None);
            }
            // A line of spaces only is blank too.
            if self.len == 1 && self.cell(0).is_none() {
                continue;
            }
            return Ok(Some(line));
        }
    }

    /// Runs the parser over one record; false at end of input.
    fn parse_record(&mut self) -> Result<bool, CliError> {
        let (mut read, mut out, mut cells) = (0, 0, 0);
        loop {
            let input = self.source.fill_buf().map_err(|source| CliError::Io {
                file: self.file.clone(),
                source,
            })?;
            let (result, nin, nout, nend) =
                self.parser
                    .read_record(input, &mut self.cells[out..], &mut self.ends[cells..]);
            self.source.consume(nin);
            (read, out, cells) = (read + nin, out + nout, cells + nend);
            if read > MAX_RECORD {
                return Err(self.too_long());
            }
            match result {
                ReadRecordResult::InputEmpty => {}
                // Output never outgrows the input read, so `cells` stays
                // within the record limit.
                ReadRecordResult::OutputFull => {
                    let room = (2 * self.cells.len()).min(MAX_RECORD);
                    self.cells.resize(room.max(out + 1), 0);
                }
                ReadRecordResult::OutputEndsFull => {
                    if self.ends.len() >= MAX_CELLS {
                        return Err(self.error_at(
                            Some(self.line()),
                            format!("more than {MAX_CELLS} cells in a record"),
                        ));
                    }
                    self.ends.resize(2 * self.ends.len(), 0);
                }
                ReadRecordResult::Record => {
                    self.len = cells;
                    return Ok(true);
                }
                ReadRecordResult::End => {
                    self.len = 0;
                    return Ok(false);
                }
            }
        }
    }

    /// The index of the column named `name`, if the header has it.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name.as_bytes())
    }

    /// The index of the required column `name`, or an error naming the
    /// header line.
    pub fn require(&self, name: &str) -> Result<usize, CliError> {
        self.column(name).ok_or_else(|| {
            self.error_at(
                Some(self.header_line),
                format!("missing required column `{name}`"),
            )
        })
    }

    /// Advances to the next data row; `None` at end of input.
    pub fn next_row(&mut self) -> Result<Option<RowPos>, CliError> {
        let Some(line) = self.read_record()? else {
            return Ok(None);
        };
        let id = self.next_id;
        self.next_id += 1;
        Ok(Some(RowPos { id, line }))
    }

    /// The current row's cell in column `col`; `None` when empty or absent.
    pub fn cell(&self, col: usize) -> Option<&[u8]> {
        if col >= self.len {
            return None;
        }
        let start = if col == 0 { 0 } else { self.ends[col - 1] };
        let cell = trim(&self.cells[start..self.ends[col]]);
        (!cell.is_empty()).then_some(cell)
    }

    /// The current row's cell in column `col` as an `i64`, `None` when
    /// absent; a malformed number is an error naming the line and column.
    pub fn i64_cell(&self, col: usize, pos: RowPos) -> Result<Option<i64>, CliError> {
        match self.cell(col) {
            None => Ok(None),
            Some(c) => parse_i64(c).map(Some).ok_or_else(|| {
                self.error_at(
                    Some(pos.line),
                    format!(
                        "column `{}`: `{}` is not an integer",
                        self.header_name(col),
                        shown(c)
                    ),
                )
            }),
        }
    }

    /// The current row's cell in column `col` as a `u64` (a device
    /// counter may use the full 64 bits), `None` when absent; a malformed
    /// or negative number is an error naming the line and column.
    pub fn u64_cell(&self, col: usize, pos: RowPos) -> Result<Option<u64>, CliError> {
        let Some(c) = self.cell(col) else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(&c[..c.len().min(64)]);
        let digits = text.strip_prefix('+').unwrap_or(&text);
        if digits.starts_with(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
            && let Ok(v) = digits.parse::<u64>()
        {
            return Ok(Some(v));
        }
        let why = if parse_i64(c).is_some_and(|v| v < 0) {
            "is negative"
        } else {
            "is not an integer in 0..=18446744073709551615"
        };
        Err(self.error_at(
            Some(pos.line),
            format!("column `{}`: `{}` {why}", self.header_name(col), shown(c)),
        ))
    }

    /// Like [`CsvInput::i64_cell`] but the cell must be present.
    pub fn required_i64(&self, col: usize, pos: RowPos) -> Result<i64, CliError> {
        self.i64_cell(col, pos)?.ok_or_else(|| {
            self.error_at(
                Some(pos.line),
                format!("column `{}` is empty", self.header_name(col)),
            )
        })
    }

    /// The name of column `col` as written in the header.
    pub fn header_name(&self, col: usize) -> String {
        self.header.get(col).map(|h| shown(h)).unwrap_or_default()
    }

    /// An input error at `line` of this file.
    pub fn error_at(&self, line: Option<u64>, message: impl Into<String>) -> CliError {
        CliError::Input {
            file: self.file.clone(),
            line,
            message: message.into(),
        }
    }

    /// An input error at the row `pos`.
    pub fn row_error(&self, pos: RowPos, message: impl Into<String>) -> CliError {
        self.error_at(Some(pos.line), message)
    }
}

/// Parses an optionally signed decimal integer that fits in `i64`; `None`
/// for anything else (empty, spaces inside, overflow, a fraction).
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    // Fast path: up to 19 digits cannot overflow a u64.
    if digits.len() <= 19 {
        let mut acc: u64 = 0;
        for &b in digits {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            acc = acc * 10 + u64::from(d);
        }
        return if neg {
            0i64.checked_sub_unsigned(acc)
        } else {
            i64::try_from(acc).ok()
        };
    }
    // Accumulate negatively so that i64::MIN parses.
    let mut acc: i64 = 0;
    for &b in digits {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        acc = acc.checked_mul(10)?.checked_sub(i64::from(d))?;
    }
    if neg { Some(acc) } else { acc.checked_neg() }
}

/// Parses a duration: integer nanoseconds (`5000000`), or a number with a
/// unit, `ns`, `us` (or `µs`), `ms`, `s`, `min` or `h` (`5ms`, `1.5s`,
/// `-2 us`), that is a whole number of nanoseconds within `i64`.
pub fn parse_duration_ns(s: &[u8]) -> Option<i64> {
    if let Some(v) = parse_i64(s) {
        return Some(v);
    }
    let text = std::str::from_utf8(s).ok()?.trim();
    let split = text.find(|c: char| c.is_alphabetic() || c == '\u{b5}')?;
    let (number, unit) = (text[..split].trim(), text[split..].trim());
    let scale: i128 = match unit {
        "ns" => 1,
        "us" | "\u{b5}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    };
    let (neg, number) = match number.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, number.strip_prefix('+').unwrap_or(number)),
    };
    let (int, frac) = number.split_once('.').unwrap_or((number, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) || frac.len() > 18 {
        return None;
    }
    let int: i128 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let frac_value: i128 = if frac.is_empty() {
        0
    } else {
        frac.parse().ok()?
    };
    let denom = 10i128.pow(frac.len() as u32);
    let scaled_frac = frac_value.checked_mul(scale)?;
    if scaled_frac % denom != 0 {
        return None; // not a whole number of nanoseconds
    }
    let total = int.checked_mul(scale)?.checked_add(scaled_frac / denom)?;
    i64::try_from(if neg { -total } else { total }).ok()
}

/// A duration flag's value in nanoseconds: a number with a unit (`5s`,
/// `10ms`, `250us`, `100ns`, `1.5min`), or a plain number taken in the
/// flag's own unit `plain` (`ns` for the `-ns` flags, as INTERFACE.md fixes
/// them, `ms` for `-ms`, `s` for `-s`). The one parser of every duration
/// flag; `None` for anything else.
pub fn parse_flag_duration(text: &str, plain: &str) -> Option<i64> {
    let text = text.trim();
    if text.contains(|c: char| c.is_alphabetic() || c == '\u{b5}') {
        parse_duration_ns(text.as_bytes())
    } else {
        parse_duration_ns(format!("{text}{plain}").as_bytes())
    }
}

/// What a duration flag accepts, for clap's error messages.
const DURATION_HELP: &str = "a duration: a number with a unit (5s, 10ms, 250us, 100ns)";

/// clap value parser of a `-ns` duration flag (integer nanoseconds, or a
/// number with a unit).
pub fn flag_ns(text: &str) -> Result<i64, String> {
    parse_flag_duration(text, "ns")
        .ok_or_else(|| format!("`{text}` is not {DURATION_HELP} or integer nanoseconds"))
}

/// [`flag_ns`] for a flag that cannot be negative.
pub fn flag_ns_u64(text: &str) -> Result<u64, String> {
    let ns = flag_ns(text)?;
    u64::try_from(ns).map_err(|_| format!("`{text}` is negative"))
}

/// clap value parser of a `-ms` duration flag (integer milliseconds, or a
/// number with a unit that is a whole number of milliseconds).
pub fn flag_ms(text: &str) -> Result<u64, String> {
    let ns = parse_flag_duration(text, "ms")
        .ok_or_else(|| format!("`{text}` is not {DURATION_HELP} or integer milliseconds"))?;
    match u64::try_from(ns) {
        Ok(ns) if ns % 1_000_000 == 0 => Ok(ns / 1_000_000),
        Ok(_) => Err(format!("`{text}` is not a whole number of milliseconds")),
        Err(_) => Err(format!("`{text}` is negative")),
    }
}

/// clap value parser of a `-s` duration flag (seconds, fractions allowed,
/// or a number with a unit), in seconds.
pub fn flag_s(text: &str) -> Result<f64, String> {
    parse_flag_duration(text, "s")
        .map(|ns| ns as f64 / 1e9)
        .ok_or_else(|| format!("`{text}` is not {DURATION_HELP} or seconds"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(text: &'static str) -> CsvInput {
        CsvInput::from_reader("t.csv", Box::new(text.as_bytes())).unwrap()
    }

    #[test]
    fn parses_integers_strictly() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"+12"), Some(12));
        assert_eq!(parse_i64(b"9999999999999999999"), None);
        assert_eq!(parse_i64(b"-9223372036854775809"), None);
        assert_eq!(parse_i64(b"-0"), Some(0));
        assert_eq!(parse_i64(b"00000000000000000000042"), Some(42));
        assert_eq!(
            parse_i64(b"1700000000012345678"),
            Some(1_700_000_000_012_345_678)
        );
        for bad in [&b""[..], b"-", b"1.5", b"1e3", b"12a", b" 1"] {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn header_after_comments_columns_by_name_ids_and_lines() {
        let mut inp =
            input("# a comment\n\n  stamp_ns , topic,extra\n 5 , a ,x\n# skipped\n\n\"6\",\"b\"\n");
        let stamp = inp.require("stamp_ns").unwrap();
        let topic = inp.require("topic").unwrap();
        assert!(inp.column("arrival_ns").is_none());
        let r0 = inp.next_row().unwrap().unwrap();
        assert_eq!(r0, RowPos { id: 0, line: 4 });
        assert_eq!(inp.required_i64(stamp, r0).unwrap(), 5);
        assert_eq!(inp.cell(topic), Some(&b"a"[..]));
        let r1 = inp.next_row().unwrap().unwrap();
        assert_eq!(r1, RowPos { id: 1, line: 7 });
        assert_eq!(inp.cell(topic), Some(&b"b"[..]));
        assert_eq!(inp.cell(2), None);
        assert!(inp.next_row().unwrap().is_none());
    }

    #[test]
    fn errors_name_file_and_line() {
        let inp = input("topic\nx\n");
        let err = inp.require("stamp_ns").unwrap_err();
        assert_eq!(err.exit_code(), 2);
        assert_eq!(
            err.to_string(),
            "t.csv:1: missing required column `stamp_ns`"
        );
        let mut inp = input("stamp_ns\n1\nabc\n");
        let col = inp.require("stamp_ns").unwrap();
        let r = inp.next_row().unwrap().unwrap();
        inp.required_i64(col, r).unwrap();
        let r = inp.next_row().unwrap().unwrap();
        let err = inp.required_i64(col, r).unwrap_err();
        assert!(err.to_string().starts_with("t.csv:3: "), "{err}");
        assert!(CsvInput::from_reader("e.csv", Box::new(&b"# only\n"[..])).is_err());
    }

    #[test]
    fn quoted_cells_with_newlines_count_physical_lines() {
        let mut inp = input("a,b\n\"x\ny\",1\n2,3\n");
        let b = inp.require("b").unwrap();
        let r0 = inp.next_row().unwrap().unwrap();
        assert_eq!(r0.line, 2);
        assert_eq!(inp.cell(0), Some(&b"x\ny"[..]));
        let r1 = inp.next_row().unwrap().unwrap();
        assert_eq!((r1.id, r1.line), (1, 4));
        assert_eq!(inp.required_i64(b, r1).unwrap(), 3);
    }

    #[test]
    fn doubled_quotes_crlf_and_lenient_quoting() {
        let mut inp = input("a,b\r\n\" say \"\"hi\"\" \" , 7 \r\n8,9\r\n");
        let r0 = inp.next_row().unwrap().unwrap();
        assert_eq!(inp.cell(0), Some(&b"say \"hi\""[..]));
        assert_eq!(inp.cell(1), Some(&b"7"[..]));
        let r1 = inp.next_row().unwrap().unwrap();
        assert_eq!((r0.line, r1.line), (2, 3));
        // As `csv` reads them: text after a closing quote is glued on, a
        // quote inside an unquoted cell (or after spaces) is text, and an
        // unterminated quote runs to the end of the input.
        let mut inp = input("a,b\n\"x\"y, \"p,q\"\nx\"y\n\"open\n");
        inp.next_row().unwrap().unwrap();
        assert_eq!(inp.cell(0), Some(&b"xy"[..]));
        assert_eq!(inp.cell(1), Some(&b"\"p"[..]));
        inp.next_row().unwrap().unwrap();
        assert_eq!(inp.cell(0), Some(&b"x\"y"[..]));
        let pos = inp.next_row().unwrap().unwrap();
        assert_eq!((pos.line, inp.cell(0)), (4, Some(&b"open\n"[..])));
        assert_eq!(inp.next_row().unwrap(), None);
    }

    #[test]
    fn comments_and_blank_lines_anywhere_keep_physical_lines() {
        let mut inp =
            input("# c\n\n  \t\n  # indented \"comment\n a , b \n\r\n1,2\n# x\n\n\"3\n3\",4");
        assert_eq!(inp.header_line, 5);
        assert_eq!(inp.require("b").unwrap(), 1);
        let r = inp.next_row().unwrap().unwrap();
        assert_eq!((r.id, r.line), (0, 7));
        let r = inp.next_row().unwrap().unwrap();
        assert_eq!((r.id, r.line, inp.cell(0)), (1, 10, Some(&b"3\n3"[..])));
        assert_eq!(inp.cell(1), Some(&b"4"[..]));
        assert_eq!(inp.next_row().unwrap(), None);
        // A comment longer than the reader's buffer.
        let mut text = b"# ".to_vec();
        text.extend(std::iter::repeat_n(b'c', 200_000));
        text.extend_from_slice(b"\na\n5\n");
        let mut inp = CsvInput::from_reader("c.csv", Box::new(std::io::Cursor::new(text))).unwrap();
        assert_eq!(inp.next_row().unwrap().unwrap().line, 3);
        assert_eq!(inp.cell(0), Some(&b"5"[..]));
    }

    #[test]
    fn too_many_cells_is_an_error() {
        let text: &'static str = Box::leak(format!("a\n{}\n", ",".repeat(MAX_CELLS)).into());
        let mut inp = input(text);
        assert!(inp.next_row().unwrap_err().to_string().contains("cells"));
    }

    #[test]
    fn bom_is_stripped_and_duplicated_columns_are_an_error() {
        let mut inp = input("\u{feff}topic,stamp_ns\na,1\n");
        let t = inp.require("topic").unwrap();
        inp.next_row().unwrap().unwrap();
        assert_eq!(inp.cell(t), Some(&b"a"[..]));
        let err = CsvInput::from_reader("d.csv", Box::new(&b"# c\nstamp_ns,topic, stamp_ns\n"[..]))
            .err()
            .unwrap();
        assert_eq!(err.to_string(), "d.csv:2: duplicated column `stamp_ns`");
        assert_eq!(err.exit_code(), 2);
        // A BOM elsewhere is data.
        let mut inp = input("a\n\u{feff}x\n");
        inp.next_row().unwrap().unwrap();
        assert_eq!(inp.cell(0), Some("\u{feff}x".as_bytes()));
    }

    #[test]
    fn a_line_too_long_is_an_error_naming_it_and_cells_are_shown_short() {
        let mut text = b"topic,stamp_ns\na,1\nb,".to_vec();
        text.extend(std::iter::repeat_n(b'7', MAX_RECORD + 10));
        text.extend_from_slice(b"\nc,2\n");
        let mut inp = CsvInput::from_reader("l.csv", Box::new(std::io::Cursor::new(text))).unwrap();
        inp.next_row().unwrap().unwrap();
        let err = inp.next_row().unwrap_err();
        assert!(
            err.to_string().starts_with("l.csv:3: record too long"),
            "{err}"
        );
        // An unterminated quote cannot swallow the input either.
        let mut text = b"a\n\"".to_vec();
        text.extend(b"x\n".repeat(MAX_RECORD));
        let mut inp = CsvInput::from_reader("q.csv", Box::new(std::io::Cursor::new(text))).unwrap();
        assert!(
            inp.next_row()
                .unwrap_err()
                .to_string()
                .contains("record too long")
        );
        // A huge bad cell is quoted short.
        let mut text = b"stamp_ns\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 100_000));
        text.push(b'\n');
        let mut inp = CsvInput::from_reader("h.csv", Box::new(std::io::Cursor::new(text))).unwrap();
        let pos = inp.next_row().unwrap().unwrap();
        let err = inp.required_i64(0, pos).unwrap_err().to_string();
        assert!(err.len() < 200 && err.contains("100000 bytes"), "{err}");
    }

    #[test]
    fn durations_with_units() {
        for (text, ns) in [
            ("5000000", 5_000_000),
            ("5ms", 5_000_000),
            ("1.5s", 1_500_000_000),
            ("10 us", 10_000),
            ("10µs", 10_000),
            ("-2ms", -2_000_000),
            ("7ns", 7),
            ("2min", 120_000_000_000),
            ("1h", 3_600_000_000_000),
            (".5ms", 500_000),
        ] {
            assert_eq!(parse_duration_ns(text.as_bytes()), Some(ns), "{text}");
        }
        for bad in [
            "",
            "ms",
            "1.5",
            "1.5ns",
            "5 m",
            "5sec",
            "1e3ms",
            "99999999999h",
            "1..2s",
            "x5ms",
        ] {
            assert_eq!(parse_duration_ns(bad.as_bytes()), None, "{bad}");
        }
    }

    #[test]
    fn duration_flags_take_their_own_unit_when_plain() {
        assert_eq!(flag_ns("5000"), Ok(5000));
        assert_eq!(flag_ns("10ms"), Ok(10_000_000));
        assert_eq!(flag_ns("-250us"), Ok(-250_000));
        assert!(flag_ns("1.5").is_err());
        assert!(flag_ns("5 parsecs").is_err());
        assert_eq!(flag_ns_u64("100ns"), Ok(100));
        assert!(flag_ns_u64("-1").is_err());
        assert_eq!(flag_ms("250"), Ok(250));
        assert_eq!(flag_ms("1.5s"), Ok(1500));
        assert!(flag_ms("100us").is_err());
        assert!(flag_ms("-1").is_err());
        assert_eq!(flag_s("2"), Ok(2.0));
        assert_eq!(flag_s("0.25"), Ok(0.25));
        assert_eq!(flag_s("500ms"), Ok(0.5));
        assert!(flag_s("soon").is_err());
    }
}
