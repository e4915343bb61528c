//! The device's sample counter: its steps in samples, its stride, its
//! wraps, and a sample delivered twice.

use super::{Ambiguous, DivisorRun, Estimate, Estimator};

/// Stage 1's device counter state: the last value and the sample it
/// numbered, the largest value seen (the wrap width when inferred), and
/// the stride learned from the counter's steps.
#[derive(Debug, Clone, Copy)]
pub(super) struct Counter {
    /// The last counter value.
    pub last: Option<u64>,
    /// The number of the sample that carried `last`.
    pub last_n: Option<i64>,
    /// The largest value seen.
    pub max: u64,
    /// The counter's step per sample: 1, or the stride learned from its
    /// steps (a counter of bytes, or one shared by two channels, counts by
    /// 2; see `Estimator::note_counter_step`).
    pub stride: u64,
    /// Counter steps in a row sharing a divisor above 1.
    pub stride_run: DivisorRun,
    /// Counter steps in a row that were not multiples of the stride.
    pub stride_misses: u32,
}

impl Default for Counter {
    fn default() -> Self {
        Counter {
            last: None,
            last_n: None,
            max: 0,
            stride: 1,
            stride_run: DivisorRun::default(),
            stride_misses: 0,
        }
    }
}

impl Counter {
    /// The state of a new estimator (no counter seen).
    #[cfg(test)]
    pub fn reset(&mut self) {
        *self = Counter::default();
    }
}

impl Estimator {
    /// Counter difference to the previous index (mod 2^bits); records the index.
    pub(super) fn index_delta(&mut self, index: u64) -> Option<i64> {
        if self.cfg.counter_bits.is_none() {
            self.counter.max |= index;
        }
        let mask = self.counter_mask(index);
        let index = index & mask;
        let prev = self.counter.last.replace(index)?;
        let raw = index.wrapping_sub(prev) & mask;
        let mut d = match self.in_samples(raw) {
            Some(d) => d,
            None => self.stride_missed(raw)?,
        };
        if self.counter.stride != 1 {
            self.counter.stride_misses = 0;
        }
        if d != 1 || self.counter.stride_run.len != 0 {
            d = self.note_counter_step(d);
        }
        i64::try_from(d).ok().filter(|d| (1..(1 << 40)).contains(d))
    }

    /// A counter step that is not a multiple of the learned stride (an
    /// anomaly). After `Tuning::stride_run` in a row the stride is forgotten (it
    /// was a pattern of losses) and this step counts as it is.
    #[cold]
    fn stride_missed(&mut self, raw: u64) -> Option<u64> {
        self.counter.stride_misses += 1;
        if self.counter.stride_misses < self.cfg.tuning.stride_run {
            return None;
        }
        self.counter.stride = 1;
        (self.counter.stride_misses, self.counter.stride_run) = (0, DivisorRun::default());
        Some(raw)
    }

    /// Learns the counter's stride: after `Tuning::stride_run` steps in a row
    /// that share a divisor `s ≥ 2` (a counter of bytes, or one shared by
    /// two channels; a counter that counts by one and loses half its
    /// samples in such a pattern is far less likely), its steps are
    /// divided by `s` from then on. Returns step `d` in the stride it
    /// knows now.
    #[cold]
    fn note_counter_step(&mut self, d: u64) -> u64 {
        if d == 0 {
            // A repeated value: an anomaly, not a step.
            return d;
        }
        self.counter.stride_run.push(d);
        if self.counter.stride_run.len < self.cfg.tuning.stride_run {
            return d;
        }
        let s = std::mem::take(&mut self.counter.stride_run).gcd;
        self.counter.stride = self.counter.stride.saturating_mul(s);
        d / s
    }

    /// A counter difference in samples: divided by the counter's stride,
    /// `None` if not a multiple of it.
    #[inline]
    fn in_samples(&self, d: u64) -> Option<u64> {
        match self.counter.stride {
            1 => Some(d),
            s => d.is_multiple_of(s).then_some(d / s),
        }
    }

    /// A gap `extra` whole periods longer than the counter's step (its
    /// sample `n` late by them) may hide whole wraps of a narrow counter
    /// (a burst of losses as long as its range) or be a stall: the
    /// counter cannot tell. The sample keeps the counter's number; the
    /// next one decides (on time for the wraps, or queued behind it).
    #[cold]
    pub(super) fn counter_wraps(
        &self,
        n: i64,
        extra: i64,
        index: Option<u64>,
    ) -> Option<Ambiguous> {
        let range = self
            .in_samples(self.counter_mask(index?).checked_add(1)?)
            .and_then(|r| i64::try_from(r).ok())?;
        let wraps = extra / range;
        (wraps >= 1 && range < 1 << 40).then(|| Ambiguous {
            delayed: n,
            lost: n.saturating_add(wraps * range),
            odds: f64::INFINITY,
            wraps: true,
        })
    }

    /// Across a gap longer than the window (`by_gap` whole periods), the
    /// step to a sample with counter value `index`: the counter's step
    /// (less the samples numbered without a counter since its last value)
    /// plus the whole wraps that best match the gap; and whether the
    /// counter is narrow enough to have wrapped in the gap (its range is
    /// at most twice the gap). A stall that ends in a burst keeps its
    /// numbering, where the gap alone would count the stall as lost
    /// samples.
    pub(super) fn counter_periods(&self, index: u64, by_gap: i64) -> Option<(i64, bool)> {
        let (last, last_n) = (self.counter.last?, self.counter.last_n?);
        let mask = self.counter_mask(index);
        let d = i64::try_from(self.in_samples(index.wrapping_sub(last) & mask)?).ok()?;
        let since = self.last_n.map_or(0, |n| n.saturating_sub(last_n));
        let step = d.saturating_sub(since);
        if step < 1 {
            return None;
        }
        // The counter's range in samples.
        let range = mask
            .checked_add(1)
            .and_then(|r| self.in_samples(r))
            .and_then(|r| i64::try_from(r).ok());
        match range {
            Some(r) if r <= 1 << 40 && r / 2 <= by_gap => {
                let wraps = ((by_gap - step) as f64 / r as f64).round().max(0.0);
                Some((step.saturating_add(wraps as i64 * r), true))
            }
            _ => Some((step, false)),
        }
    }

    /// The counter's mask: its configured width, or all ones up to the
    /// highest bit seen (`index` included).
    fn counter_mask(&self, index: u64) -> u64 {
        match self.cfg.counter_bits {
            Some(bits) if bits < 64 => (1u64 << bits) - 1,
            Some(_) => u64::MAX,
            None => u64::MAX
                .checked_shr((self.counter.max | index).leading_zeros())
                .unwrap_or(0),
        }
    }

    /// A sample whose counter repeats the last one's, arriving less than
    /// half a period after it: the driver delivered that sample twice. It
    /// is stamped as the sample it repeats (counted in `index_anomalies`;
    /// the output stage returns it 1 ns after that one) and leaves the numbering and the fits alone; numbered as a new
    /// sample, it would put every later sample one period late.
    pub(super) fn duplicate(&mut self, q: i64, index: Option<u64>) -> Option<Estimate> {
        let (i, n, last) = (index?, self.counter.last_n?, self.last_arrival?);
        // The period only for a repeated counter value (rare).
        if self.counter.last != Some(i & self.counter_mask(i)) {
            return None;
        }
        let p = self.period_f()?;
        if (q.saturating_sub(last) as f64) >= 0.5 * p {
            return None;
        }
        self.st.index_anomalies += 1;
        self.st.samples += 1;
        let stamp = self.estimate_at(n, q, Some(p));
        Some(Estimate {
            stamp,
            sample: n,
            lost_before: 0,
            revised: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Estimator, EstimatorConfig};
    use crate::{TimeDelta, Timestamp};

    #[test]
    fn the_counter_stage_learns_a_stride_and_resets() {
        let cfg =
            EstimatorConfig::new(TimeDelta::from_secs(5)).with_period(TimeDelta::from_millis(10));
        let mut e = Estimator::new(cfg).unwrap();
        let t0 = 1_700_000_000_000_000_000i64;
        // A counter of stride 2 (two channels sharing it), no loss.
        for k in 0..64i64 {
            let q = Timestamp::from_nanos(t0 + k * 10_000_000 + 1_000_000);
            e.update_with_index(q, (2 * k) as u64).unwrap();
        }
        assert_eq!(e.counter.stride, 2);
        assert_eq!(e.counter.last, Some(126));
        assert_eq!(e.status().losses_from_index, 0);
        e.counter.reset();
        assert_eq!(e.counter.stride, 1);
        assert_eq!(e.counter.last, None);
    }
}
