//! The errors of reading and writing recordings.

/// A recording could not be read (or written).
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// Reading or writing the file failed.
    #[error("{file}: {source}")]
    Io {
        /// The file's name as given.
        file: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is damaged (bad magic, a truncated record, a bad CRC or
    /// length): everything from `offset` on is unreadable.
    #[error("{file}: at byte offset {offset}: {message}")]
    Malformed {
        /// The file's name as given.
        file: String,
        /// How far into the file the damage was found (the bytes read when
        /// it was detected).
        offset: u64,
        /// What is wrong.
        message: String,
    },
}
