//! What the interop tests share about the stand-in ROS 2 node
//! (`tests/ros2/rmw_node.py`, Python with the PyPI package
//! `eclipse-zenoh`). Each test includes this file with
//! `#[path = ".../tests/ros2/stand_in.rs"] mod stand_in;`, since the tests
//! live in three packages (the workspace's, `syncline-zenoh`'s and
//! `syncline-cli`'s).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The stand-in node's script, found from the including package upwards.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|dir| dir.join("tests/ros2/rmw_node.py"))
        .find(|path| path.is_file())
        .expect("tests/ros2/rmw_node.py in the repository")
}

/// Whether the stand-in can run here (`python3 -c 'import zenoh'`); where
/// it cannot, the test says so and passes, unless
/// `SYNCLINE_REQUIRE_INTEROP=1` (CI sets it and installs the package).
pub fn python_zenoh() -> bool {
    let ok = Command::new("python3")
        .args(["-c", "import zenoh"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var("SYNCLINE_REQUIRE_INTEROP").as_deref() != Ok("1"),
            "python3 -c 'import zenoh' fails: pip install eclipse-zenoh"
        );
        eprintln!("skipped: Python's zenoh (pip install eclipse-zenoh) is not installed");
    }
    ok
}

/// A loopback TCP endpoint on a port free a moment ago.
pub fn free_endpoint() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("tcp/127.0.0.1:{}", listener.local_addr().unwrap().port())
}

/// The bytes of a hex string (the stand-in prints payloads and
/// attachments in hex).
pub fn hex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}
