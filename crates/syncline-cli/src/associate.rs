//! `syncline associate`: offline association of two TUM-format timestamp
//! lists, printing exactly what the TUM RGB-D benchmark's `associate.py`
//! prints (`--method greedy`, the default) or an optimal non-crossing
//! matching (`--method optimal`).
//!
//! Parsing follows `read_file_list` of the script under Python 3: `\r\n`
//! and `\r` end lines (text mode), `,` and tabs become spaces; empty lines and lines whose first character is `#` are skipped;
//! tokens are split on spaces and stripped; lines with fewer than two tokens
//! are skipped; the first token is the stamp in float seconds; a repeated
//! stamp keeps its first place and its last line's data. One deliberate
//! difference: a line whose stamp does not parse *before any data line*
//! (such as the `timestamp filename` header of some copies of the TUM files)
//! is skipped with a note on standard error, where the script would fail;
//! after a data line it is an error naming the file and line (exit 2).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Read;

use clap::{Args, ValueEnum};
use syncline::core::associate::{associate_greedy, associate_optimal};

use crate::error::CliError;
use crate::output::Output;

/// The matching algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// TUM `associate.py`: greedy by smallest difference.
    Greedy,
    /// Maximum non-crossing matching of minimal total difference.
    Optimal,
}

/// Arguments of `syncline associate`.
#[derive(Debug, Args)]
pub struct AssociateArgs {
    /// First TUM-format file (`stamp_seconds data...` per line; `-`: stdin).
    first: String,
    /// Second TUM-format file.
    second: String,
    /// Seconds added to the second list's stamps for matching.
    #[arg(long = "offset-s", default_value_t = 0.0, allow_hyphen_values = true)]
    offset_s: f64,
    /// Largest difference (seconds, strict) of a matched pair.
    #[arg(
        long = "max-difference-s",
        default_value_t = 0.02,
        allow_hyphen_values = true
    )]
    max_difference_s: f64,
    /// Matching algorithm.
    #[arg(long, value_enum, default_value_t = Method::Greedy)]
    method: Method,
    /// Print only the first file's stamp and data of each pair.
    #[arg(long)]
    first_only: bool,
    /// Write to this file instead of standard output.
    #[arg(long)]
    output: Option<String>,
}

/// One parsed TUM list: stamps and the space-joined data of each.
#[derive(Debug, Default, PartialEq)]
struct TumList {
    stamps: Vec<f64>,
    data: Vec<String>,
}

/// Python's `str.strip()` for the characters that can occur here.
fn py_strip(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || ('\x1c'..='\x1f').contains(&c))
}

/// Parses a TUM list like `read_file_list` of `associate.py`.
fn parse_tum(file: &str, text: &str) -> Result<TumList, CliError> {
    // Python 3's text mode reads `\r\n` and `\r` as line ends.
    let text = text.replace("\r\n", "\n").replace(['\r'], "\n");
    let text = text.replace([',', '\t'], " ");
    let mut list = TumList::default();
    // Python dict semantics: equal keys (0.0 == -0.0) merge; NaN never does.
    let mut index: HashMap<u64, usize> = HashMap::new();
    for (n, line) in text.split('\n').enumerate() {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut tokens = line.split(' ').map(py_strip).filter(|t| !t.is_empty());
        let (Some(stamp_text), Some(first_data)) = (tokens.next(), tokens.next()) else {
            continue;
        };
        let Ok(stamp) = stamp_text.parse::<f64>() else {
            let line_no = n as u64 + 1;
            if list.stamps.is_empty() {
                eprintln!("syncline: note: {file}:{line_no}: skipping header line");
                continue;
            }
            return Err(CliError::Input {
                file: file.to_string(),
                line: Some(line_no),
                message: format!("stamp {stamp_text:?} is not a number"),
            });
        };
        let mut data = first_data.to_string();
        for t in tokens {
            data.push(' ');
            data.push_str(t);
        }
        let key = (stamp + 0.0).to_bits();
        match index.get(&key) {
            Some(&i) if !stamp.is_nan() => {
                if let Some(d) = list.data.get_mut(i) {
                    *d = data;
                }
            }
            _ => {
                index.insert(key, list.stamps.len());
                list.stamps.push(stamp);
                list.data.push(data);
            }
        }
    }
    Ok(list)
}

fn read_tum(path: &str) -> Result<TumList, CliError> {
    let io_err = |source| CliError::Io {
        file: path.to_string(),
        source,
    };
    let bytes = if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin().read_to_end(&mut buf).map_err(io_err)?;
        buf
    } else {
        std::fs::read(path).map_err(io_err)?
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let line = e
            .as_bytes()
            .get(..valid)
            .map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count());
        CliError::Input {
            file: path.to_string(),
            line: Some(line as u64 + 1),
            message: "not valid UTF-8 text".into(),
        }
    })?;
    parse_tum(path, &text)
}

/// Runs `syncline associate`.
pub fn run(args: AssociateArgs) -> Result<(), CliError> {
    let first = read_tum(&args.first)?;
    let second = read_tum(&args.second)?;
    let (offset, max_diff) = (args.offset_s, args.max_difference_s);
    let pairs = match args.method {
        Method::Greedy => associate_greedy(&first.stamps, &second.stamps, offset, max_diff),
        Method::Optimal => associate_optimal(&first.stamps, &second.stamps, offset, max_diff),
    };
    let mut out = Output::open(args.output.as_deref())?;
    let mut line = String::new();
    for (i, j) in pairs {
        let (Some(a), Some(da)) = (first.stamps.get(i), first.data.get(i)) else {
            continue;
        };
        let (Some(b), Some(db)) = (second.stamps.get(j), second.data.get(j)) else {
            continue;
        };
        line.clear();
        // `"%f %s %f %s" % (a, data_a, b - offset, data_b)`, as the script
        // prints it (the second stamp minus the offset: its quirk).
        if args.first_only {
            writeln!(line, "{a:.6} {da}")
        } else {
            writeln!(line, "{a:.6} {da} {:.6} {db}", b - offset)
        }
        .map_err(|e| CliError::output(std::io::Error::other(e)))?;
        out.raw(line.as_bytes())?;
    }
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_like_read_file_list() {
        let text = "# c\n\n 1.5 x\n2.0,a\tb  c\n3.0\n2.0 d\n-0.0 z\n0.0 y\n";
        let l = parse_tum("f", text).unwrap();
        assert_eq!(l.stamps, [1.5, 2.0, -0.0]);
        assert_eq!(l.data, ["x", "d", "y"]);
        // A header before any data is skipped; after data it is an error.
        let l = parse_tum("f", "timestamp filename\n1 a\r\n2 b\r#3 c\r4 d").unwrap();
        assert_eq!(l.stamps, [1.0, 2.0, 4.0]);
        assert_eq!(l.data, ["a", "b", "d"]);
        let e = parse_tum("f", "1 a\n\nx b\n").unwrap_err();
        assert_eq!(e.to_string(), "f:3: stamp \"x\" is not a number");
        assert_eq!(e.exit_code(), 2);
    }
}
