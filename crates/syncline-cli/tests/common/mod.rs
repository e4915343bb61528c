//! Shared by the CLI's integration tests: run the `syncline` binary as a
//! process and read its JSON Lines output.
#![allow(dead_code)] // each test file uses its own subset

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

/// Runs `syncline SUBCOMMAND ARGS...` with `stdin` on standard input (pass
/// `-` among `args` to read it as the input file).
pub fn syncline(subcommand: &str, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_syncline"))
        .arg(subcommand)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn syncline");
    // The process may exit (bad flag) before reading: ignore a broken pipe.
    let _ = child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin.as_bytes());
    child.wait_with_output().expect("wait for syncline")
}

/// Every standard-output line, parsed as JSON.
pub fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Standard error as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A scratch file holding `bytes`, its name ending in `name` (an extension
/// the CLI reads the format by); removed when the returned path drops.
pub fn scratch_file(name: &str, bytes: &[u8]) -> tempfile::TempPath {
    let mut file = tempfile::Builder::new()
        .prefix("syncline-test-")
        .suffix(name)
        .tempfile()
        .expect("temp file");
    file.write_all(bytes).expect("write temp file");
    file.into_temp_path()
}
