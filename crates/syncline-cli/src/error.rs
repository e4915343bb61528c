//! The CLI's error type and its exit statuses (INTERFACE.md): 2 for bad
//! input or a bad flag, 1 for I/O failures.

use std::fmt;

/// Everything that ends a `syncline` run early.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A flag has a bad value (exit status 2).
    #[error("invalid value for {flag}: {message}")]
    Flag {
        /// The flag, as written on the command line (`--timeout-ns`).
        flag: String,
        /// What is wrong with it.
        message: String,
    },
    /// The input is malformed (exit status 2). `line` is 1-based and
    /// counts physical lines; `None` where no line applies.
    #[error("{}: {message}", Location { file, line: *line })]
    Input {
        /// The input file's name as given (`-` for standard input).
        file: String,
        /// The 1-based physical line, when known.
        line: Option<u64>,
        /// What is wrong.
        message: String,
    },
    /// Reading or writing failed (exit status 1).
    #[error("{file}: {source}")]
    Io {
        /// The file (or `<stdout>`) that failed.
        file: String,
        /// The underlying error.
        source: std::io::Error,
    },
}

struct Location<'a> {
    file: &'a str,
    line: Option<u64>,
}

impl fmt::Display for Location<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}", self.file),
            None => write!(f, "{}", self.file),
        }
    }
}

impl CliError {
    /// A bad flag value.
    pub fn flag(flag: impl Into<String>, message: impl Into<String>) -> Self {
        CliError::Flag {
            flag: flag.into(),
            message: message.into(),
        }
    }

    /// A write to standard output (or `--output`) failed.
    pub fn output(source: std::io::Error) -> Self {
        CliError::Io {
            file: "<output>".into(),
            source,
        }
    }

    /// The process exit status for this error.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Flag { .. } | CliError::Input { .. } => 2,
            CliError::Io { .. } => 1,
        }
    }
}
