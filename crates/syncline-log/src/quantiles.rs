//! Quantiles of a stream of integers in bounded memory.
//!
//! The first [`EXACT_CAP`] values are kept as they are, and quantiles of up
//! to that many values are exact (nearest rank). Beyond, the values move to
//! a log-linear histogram: values of magnitude below 512 keep their own
//! bucket (exact), larger ones share a bucket with those within 1/256 of
//! them, and a quantile is its bucket's midpoint, within 0.2 % of the true
//! value. The minimum and maximum are always exact. Memory: at most 64 KiB
//! exact, then 114 KiB per sign in use.

/// How many values are kept exactly before the histogram takes over.
pub const EXACT_CAP: usize = 8192;

const SUB_BITS: u32 = 8;
const SUB: u64 = 1 << SUB_BITS;
const BUCKETS: usize = ((64 - SUB_BITS as usize) * SUB as usize) + SUB as usize;

fn bucket(v: u64) -> usize {
    if v < 2 * SUB {
        return v as usize;
    }
    let shift = 63 - v.leading_zeros() - SUB_BITS;
    (u64::from(shift) * SUB + (v >> shift)) as usize
}

/// The smallest value and the width of bucket `i`.
fn bucket_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < 2 * SUB {
        return (i, 1);
    }
    let shift = i / SUB - 1;
    let mantissa = i - shift * SUB;
    (mantissa << shift, 1 << shift)
}

/// Quantiles of `i64` values: exact for up to [`EXACT_CAP`] values, then
/// within 0.2 % (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct Quantiles {
    exact: Vec<i64>,
    sorted: bool,
    /// Counts of non-negative values by bucket of the value.
    pos: Vec<u64>,
    /// Counts of negative values by bucket of the magnitude.
    neg: Vec<u64>,
    count: u64,
    min: i64,
    max: i64,
}

impl Quantiles {
    /// No values yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many values were pushed.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Adds a value.
    #[inline]
    pub fn push(&mut self, v: i64) {
        if self.count == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.count += 1;
        if self.pos.is_empty() && self.neg.is_empty() {
            if self.exact.len() < EXACT_CAP {
                self.exact.push(v);
                self.sorted = false;
                return;
            }
            for x in std::mem::take(&mut self.exact) {
                self.bin(x);
            }
        }
        self.bin(v);
    }

    fn bin(&mut self, v: i64) {
        let (counts, mag) = if v < 0 {
            (&mut self.neg, v.unsigned_abs())
        } else {
            (&mut self.pos, v as u64)
        };
        if counts.is_empty() {
            counts.resize(BUCKETS, 0);
        }
        counts[bucket(mag)] += 1;
    }

    /// The smallest value.
    pub fn min(&self) -> Option<i64> {
        (self.count > 0).then_some(self.min)
    }

    /// The largest value.
    pub fn max(&self) -> Option<i64> {
        (self.count > 0).then_some(self.max)
    }

    /// Whether [`Quantiles::quantile`] is exact.
    pub fn is_exact(&self) -> bool {
        self.pos.is_empty() && self.neg.is_empty()
    }

    /// The `q`-quantile (`0 <= q <= 1`) by nearest rank: the value of rank
    /// `ceil(q * n)` (at least 1) in increasing order. `None` when empty.
    pub fn quantile(&mut self, q: f64) -> Option<i64> {
        let n = self.count;
        self.by_rank(((q.clamp(0.0, 1.0) * n as f64).ceil() as u64).clamp(1, n.max(1)))
    }

    /// The `p`-th percentile (`p <= 100`) by nearest rank: the value of rank
    /// `ceil(p * n / 100)` (at least 1), in integer arithmetic.
    pub fn percentile(&mut self, p: u32) -> Option<i64> {
        let n = self.count;
        let rank = (u128::from(p.min(100)) * u128::from(n)).div_ceil(100) as u64;
        self.by_rank(rank.clamp(1, n.max(1)))
    }

    fn by_rank(&mut self, rank: u64) -> Option<i64> {
        if self.count == 0 {
            return None;
        }
        if self.is_exact() {
            if !self.sorted {
                self.exact.sort_unstable();
                self.sorted = true;
            }
            return Some(self.exact[(rank - 1) as usize]);
        }
        // Negative values first, from the largest magnitude down.
        let mut seen = 0u64;
        for (i, &c) in self.neg.iter().enumerate().rev() {
            seen += c;
            if c > 0 && seen >= rank {
                let (lo, w) = bucket_range(i);
                let mid = -((lo + (w - 1) / 2) as i128);
                return Some(self.clamp(mid));
            }
        }
        for (i, &c) in self.pos.iter().enumerate() {
            seen += c;
            if c > 0 && seen >= rank {
                let (lo, w) = bucket_range(i);
                return Some(self.clamp((lo + (w - 1) / 2) as i128));
            }
        }
        Some(self.max)
    }

    fn clamp(&self, v: i128) -> i64 {
        v.clamp(i128::from(self.min), i128::from(self.max)) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn buckets_are_contiguous_and_cover_u64() {
        let mut prev_end = 0u64;
        for i in 0..BUCKETS {
            let (lo, w) = bucket_range(i);
            assert_eq!(lo, prev_end, "bucket {i}");
            assert_eq!(bucket(lo), i);
            assert_eq!(bucket(lo + (w - 1)), i);
            prev_end = lo.wrapping_add(w);
        }
        assert_eq!(prev_end, 0, "the last bucket ends at 2^64");
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn exact_nearest_rank() {
        let mut q = Quantiles::new();
        assert_eq!(q.quantile(0.5), None);
        for v in [5, 1, 4, 2, 3] {
            q.push(v);
        }
        assert_eq!(q.quantile(0.5), Some(3));
        assert_eq!(q.quantile(0.99), Some(5));
        assert_eq!(q.quantile(0.0), Some(1));
        assert_eq!((q.min(), q.max()), (Some(1), Some(5)));
    }

    proptest! {
        #[test]
        fn histogram_quantiles_within_documented_precision(
            values in prop::collection::vec(-5_000_000_000i64..5_000_000_000, EXACT_CAP + 1..EXACT_CAP + 3000),
            q in 0.0f64..1.0,
        ) {
            let mut h = Quantiles::new();
            for &v in &values {
                h.push(v);
            }
            prop_assert!(!h.is_exact());
            let mut sorted = values.clone();
            sorted.sort_unstable();
            let n = sorted.len() as u64;
            let rank = ((q * n as f64).ceil() as u64).clamp(1, n);
            let want = sorted[(rank - 1) as usize];
            let got = h.quantile(q).unwrap();
            let tol = (want.unsigned_abs() / 256).max(1) as i64;
            prop_assert!((got - want).abs() <= tol, "q {q}: got {got}, want {want}");
            prop_assert_eq!(h.min(), sorted.first().copied());
            prop_assert_eq!(h.max(), sorted.last().copied());
        }
    }
}
