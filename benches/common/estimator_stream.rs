//! The stream of `benches/estimator_speed.rs`, shared with the callgrind
//! harness `crates/syncline-core/examples/estimator_instructions.rs` (its
//! instruction counts are of the same arrivals). The including file brings
//! `Timestamp` into scope.

use super::Timestamp;

/// The stream's first sample time (ns).
pub const T0: i64 = 1_700_000_000_000_000_000;

/// `n` arrivals of a 100 Hz stream from sample `offset` on: 1 ms latency,
/// exponential-like jitter, 2 % losses and a 30 ms stall every 997 samples.
pub fn arrivals(n: usize, offset: usize) -> Vec<Timestamp> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut last = 0i64;
    let mut out = Vec::with_capacity(n);
    for k in offset..offset + n * 102 / 100 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let u = (x >> 11) as f64 / (1u64 << 53) as f64;
        if u < 0.02 || out.len() == n {
            continue;
        }
        let jitter = (-300_000.0 * (1.0 - u).ln()) as i64;
        let stall = if k % 997 == 0 { 30_000_000 } else { 0 };
        let q = (T0 + k as i64 * 10_000_000 + 1_000_000 + jitter + stall).max(last + 40_000);
        last = q;
        out.push(Timestamp::from_nanos(q));
    }
    out
}
