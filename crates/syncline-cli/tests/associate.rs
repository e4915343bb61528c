//! `syncline associate` end to end: the shipped TUM association is
//! reproduced byte for byte; the optimal method and bad input.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::scratch_file;

fn shared() -> PathBuf {
    match std::env::var_os("SYNCLINE_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
    }
}

fn tum(name: &str) -> PathBuf {
    shared().join("data/real/tum_fr1_xyz").join(name)
}

fn syncline(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_syncline"))
        .arg("associate")
        .args(args)
        .output()
        .expect("run syncline")
}

#[test]
fn greedy_reproduces_the_shipped_tum_association() {
    let (rgb, depth) = (tum("rgb.txt"), tum("depth.txt"));
    let out = syncline(&[rgb.as_os_str(), depth.as_os_str()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = std::fs::read(tum("rgb-depth-synced.txt")).expect("shipped association");
    assert_eq!(out.stdout.iter().filter(|&&b| b == b'\n').count(), 792);
    assert!(
        out.stdout == want,
        "output differs from rgb-depth-synced.txt"
    );
}

/// (first stamp, second stamp) of each printed line.
fn pairs(stdout: &[u8]) -> Vec<(f64, f64)> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| {
            let t: Vec<&str> = l.split(' ').collect();
            (t[0].parse().unwrap(), t[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn optimal_finds_the_maximum_matching_without_crossing() {
    let (rgb, depth) = (tum("rgb.txt"), tum("depth.txt"));
    let method = std::ffi::OsStr::new("--method=optimal");
    let out = syncline(&[rgb.as_os_str(), depth.as_os_str(), method]);
    assert!(out.status.success());
    let p = pairs(&out.stdout);
    // Greedy finds 792 pairs; the maximum bipartite matching within 20 ms
    // has 797 (checked independently with augmenting paths): every rgb
    // frame has a depth partner, but two of them compete for one.
    assert_eq!(p.len(), 797);
    assert!(p.iter().all(|(a, b)| (a - b).abs() < 0.02));
    assert!(p.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
}

#[test]
fn offset_is_printed_like_the_script() {
    let a = scratch_file("a.txt", b"1.0 x\n2.0 y\n");
    let b = scratch_file("b.txt", b"0.5 p\n1.5 q\n");
    let out = syncline(&[a.as_os_str(), b.as_os_str(), "--offset-s=0.5".as_ref()]);
    // Matching uses b + 0.5; printing shows b - 0.5 (associate.py's quirk).
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "1.000000 x 0.000000 p\n2.000000 y 1.000000 q\n"
    );
}

#[test]
fn bad_input_names_file_and_line() {
    let a = scratch_file("bad.txt", b"# c\n1.0 x\n\n1.x y\n");
    let b = scratch_file("ok.txt", b"1.0 p\n");
    let out = syncline(&[a.as_os_str(), b.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.txt:4:"), "{err}");
    assert!(out.stdout.is_empty());

    let missing = scratch_file("x", b"").with_file_name("does-not-exist.txt");
    let out = syncline(&[missing.as_os_str(), b.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));

    let out = syncline(&[
        a.as_os_str(),
        b.as_os_str(),
        "--max-difference-s=abc".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-difference-s"));
    let out = syncline(&[a.as_os_str(), b.as_os_str(), "--method=best".as_ref()]);
    assert_eq!(out.status.code(), Some(2));
}
