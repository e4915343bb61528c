//! The output stage: estimates that never go backwards.
//!
//! The model (numbering, clock line, changes) may move its line back a
//! little when a later arrival shows an earlier one was late, or when a
//! change is detected; an estimate placed on the moved line can then fall
//! before the one returned just before it. A consumer that orders samples
//! by their stamps (the aligner, an interpolation buffer) would drop or
//! misplace such a sample, so by default each estimate is held at 1 ns
//! after the one before it instead, and the hold is counted. The model
//! itself is never fed the held value: the next estimate is its own again
//! as soon as it is later than the last one returned.

use crate::{TimeDelta, Timestamp};

/// The hold of the output stage: the last estimate returned and the
/// number of estimates held at 1 ns after their predecessor.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Monotone {
    /// The last estimate returned since the start or the last step back
    /// of the arrival clock.
    last: Option<Timestamp>,
    /// Estimates the model put at or before their predecessor.
    pub(super) held: u64,
}

impl Monotone {
    /// The stamp to return for the model's `stamp`: itself if later than
    /// the last one returned (or if `enabled` is false), else that one
    /// plus 1 ns (counted in `held`).
    #[inline]
    pub(super) fn pass(&mut self, stamp: Timestamp, enabled: bool) -> Timestamp {
        let out = match self.last {
            Some(last) if enabled && stamp <= last => {
                self.held += 1;
                last.saturating_add(TimeDelta::from_nanos(1))
            }
            _ => stamp,
        };
        self.last = Some(out);
        out
    }

    /// Forgets the last estimate (the arrival clock stepped back: the
    /// estimates follow it back, see [`super::EstimatorConfig::monotonic`]).
    pub(super) fn forget(&mut self) {
        self.last = None;
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Estimator, EstimatorConfig};
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn holds_an_estimate_at_or_before_the_last() {
        let mut m = Monotone::default();
        let t = Timestamp::from_nanos;
        assert_eq!(m.pass(t(100), true), t(100));
        assert_eq!(m.pass(t(90), true), t(101));
        assert_eq!(m.pass(t(101), true), t(102));
        assert_eq!(m.pass(t(200), true), t(200));
        assert_eq!(m.held, 2);
        m.forget();
        assert_eq!(m.pass(t(50), true), t(50));
        assert_eq!(m.pass(t(40), false), t(40));
        assert_eq!(m.held, 2);
    }

    /// Arrival delays of one of the laws a sensor stream shows, in ns, for
    /// a uniform `u` in [0, 1) and a second one `v`.
    fn delay(law: u8, scale: f64, u: f64, v: f64) -> f64 {
        let u = u.clamp(1e-12, 1.0 - 1e-12);
        match law {
            0 => scale * u,
            1 => -scale * (1.0 - u).ln(),
            // Half-normal around a floor (Gaussian jitter, one-sided).
            2 => scale * ((-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()).abs(),
            // Pareto with shape 1.5: heavy-tailed.
            _ => scale * ((1.0 - u).powf(-1.0 / 1.5) - 1.0),
        }
    }

    proptest! {
        /// On sensor streams with jitter of up to 5 periods under four
        /// laws, losses, stalls, packets of several samples and a wrong
        /// configured period, every estimate is strictly later than the
        /// one before; the held ones are counted; and holding leaves the
        /// model alone: each held estimate is what the same estimator
        /// without the guarantee returns, or 1 ns after the last one.
        #[test]
        fn estimates_never_go_backwards(
            period in 500_000i64..1_000_000_000,
            jitter in 0.01f64..5.0,
            law in 0u8..4,
            loss in 0.0f64..0.1,
            stall in 0.0f64..0.02,
            packet in 1u32..6,
            configured in proptest::sample::select(vec![0.5, 1.0, 1.0, 2.0]),
            seed in any::<u64>(),
        ) {
            let c = EstimatorConfig::new(crate::TimeDelta::from_nanos(period * 50))
                .with_period(crate::TimeDelta::from_nanos((period as f64 * configured) as i64));
            let (mut on, mut off) = (
                Estimator::new(c).unwrap(),
                Estimator::new(c.with_monotonic(false)).unwrap(),
            );
            let mut x = seed | 1;
            let mut rand = move || {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 11) as f64 / (1u64 << 53) as f64
            };
            let (mut last_q, mut last, mut held) = (0i64, None::<Timestamp>, 0u64);
            let t0 = 1_700_000_000_000_000_000i64;
            for k in 0..600i64 {
                if rand() < loss {
                    continue;
                }
                let mut d = delay(law, jitter * period as f64, rand(), rand());
                if rand() < stall {
                    d += 20.0 * period as f64 * rand();
                }
                // A packet leaves when its last sample is acquired (FIFO).
                let sent = (k / i64::from(packet) + 1) * i64::from(packet) - 1;
                let q = (t0 + sent * period + d.min(1e12) as i64).max(last_q);
                last_q = q;
                let a = on.update(Timestamp::from_nanos(q)).unwrap().stamp;
                let b = off.update(Timestamp::from_nanos(q)).unwrap().stamp;
                match last {
                    Some(l) if b <= l => {
                        held += 1;
                        prop_assert_eq!(a, Timestamp::from_nanos(l.as_nanos() + 1));
                    }
                    _ => prop_assert_eq!(a, b),
                }
                prop_assert!(last.is_none_or(|l| a > l));
                last = Some(a);
            }
            prop_assert_eq!(on.status().held, held);
            prop_assert_eq!(off.status().held, 0);
            prop_assert_eq!(on.status().last_estimate, last);
        }
    }
}
