//! Memory of `exact_time` while one message is held forever: a message of
//! topic `a` whose stamp no other topic ever matches stays in the
//! synchronizer, while 200 000 pairs of 1 KiB messages are matched around
//! it. Prints the growth of the process's resident memory (Linux) and the
//! messages the stream keeps alive at the end.
//!
//! ```text
//! cargo run --release --example exact_time_memory
//! ```

use std::pin::Pin;
use std::task::{Context, Poll};

use futures::Stream;
use syncline::sync::{ExactSettings, exact_time};
use syncline::{Stamped, Timestamp};

/// Resident memory in KiB, from /proc (0 where it is not available).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

fn main() {
    const PAIRS: i64 = 200_000;
    type Msg = Stamped<[u8; 1024]>;
    let (a_tx, a) = futures::channel::mpsc::unbounded::<Msg>();
    let (b_tx, b) = futures::channel::mpsc::unbounded::<Msg>();
    let mut sets = exact_time(vec![a, b], ExactSettings::default());
    // Polled by hand: the inputs are channels, always ready or pending.
    let mut cx = Context::from_waker(std::task::Waker::noop());
    let held_forever = Stamped::new(Timestamp::MAX, [0; 1024]);
    a_tx.unbounded_send(held_forever).expect("open");
    let before = rss_kib();
    let mut emitted = 0u64;
    for k in 0..PAIRS {
        let t = Timestamp::from_nanos(k);
        a_tx.unbounded_send(Stamped::new(t, [1; 1024]))
            .expect("open");
        b_tx.unbounded_send(Stamped::new(t, [2; 1024]))
            .expect("open");
        while let Poll::Ready(Some(_)) = Pin::new(&mut sets).poll_next(&mut cx) {
            emitted += 1;
        }
    }
    let growth = rss_kib().saturating_sub(before);
    println!(
        "{} messages, {emitted} sets, {} kept alive, resident memory +{:.1} MB",
        2 * PAIRS + 1,
        sets.stored(),
        growth as f64 / 1024.0
    );
}
