//! Support code shared by the workspace's examples, integration tests and
//! benchmarks (the root package is not published).
//!
//! It finds the shared data folder that sits beside the project's root.
#![forbid(unsafe_code)]

use std::path::PathBuf;

/// The `shared/` folder beside the project's root (`../shared` from the
/// workspace), or the folder named by the `SYNCLINE_SHARED` environment
/// variable when it is set.
pub fn shared_dir() -> PathBuf {
    match std::env::var_os("SYNCLINE_SHARED") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

/// The README's code blocks, compiled and run as doctests so that the
/// README's example cannot rot.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// `docs/order.md`'s code blocks, compiled and run as doctests.
#[doc = include_str!("../docs/order.md")]
#[cfg(doctest)]
pub struct OrderGuideDoctests;
