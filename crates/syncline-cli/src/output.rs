//! Fast JSON Lines output: a buffered writer with helpers to write integers
//! and known-safe keys without going through a serializer on the hot path.

use std::fs::File;
use std::io::{self, BufWriter, Write};

use crate::error::CliError;

/// Buffered output to standard output or an `--output` file.
pub struct Output {
    inner: BufWriter<Box<dyn Write>>,
    int: itoa::Buffer,
}

impl Output {
    /// Standard output when `path` is `None` or `-`, else a new file.
    pub fn open(path: Option<&str>) -> Result<Self, CliError> {
        let sink: Box<dyn Write> = match path {
            None | Some("-") => Box::new(io::stdout().lock()),
            Some(p) => Box::new(File::create(p).map_err(|source| CliError::Io {
                file: p.to_string(),
                source,
            })?),
        };
        Ok(Self::new(sink))
    }

    /// Wraps any writer (tests write to a `Vec<u8>`).
    pub fn new(sink: Box<dyn Write>) -> Self {
        Output {
            inner: BufWriter::with_capacity(1 << 16, sink),
            int: itoa::Buffer::new(),
        }
    }

    /// Writes raw bytes (JSON punctuation and keys the caller knows are safe).
    #[inline]
    pub fn raw(&mut self, s: &[u8]) -> Result<(), CliError> {
        self.inner.write_all(s).map_err(CliError::output)
    }

    /// Writes an integer.
    #[inline]
    pub fn int(&mut self, v: impl itoa::Integer) -> Result<(), CliError> {
        let s = self.int.format(v);
        self.inner.write_all(s.as_bytes()).map_err(CliError::output)
    }

    /// Writes `s` as a JSON string literal, escaped.
    pub fn string(&mut self, s: &str) -> Result<(), CliError> {
        serde_json::to_writer(&mut self.inner, s).map_err(|e| CliError::output(io::Error::other(e)))
    }

    /// Writes any serde value as JSON (status lines and other cold paths).
    pub fn json<T: serde::Serialize + ?Sized>(&mut self, v: &T) -> Result<(), CliError> {
        serde_json::to_writer(&mut self.inner, v).map_err(|e| CliError::output(io::Error::other(e)))
    }

    /// Flushes everything written so far.
    pub fn flush(&mut self) -> Result<(), CliError> {
        self.inner.flush().map_err(CliError::output)
    }
}
