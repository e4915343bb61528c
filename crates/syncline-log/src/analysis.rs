//! The timing analysis of one topic, in bounded memory: what
//! `syncline analyze` prints for each topic.
//!
//! Feed every message's stamp (and arrival, where known) in file order to
//! [`TopicTiming::push`], then call [`TopicTiming::finish`].
//!
//! * **Order**: `out_of_order` counts stamps earlier than the previous
//!   message's, `duplicates` stamps equal to it, both in file order.
//! * **Stamp order**: the rest of the analysis sees the stamps sorted, by a
//!   reorder buffer of [`REORDER_CAP`] stamps. A stamp older than one the
//!   buffer already let go (more than [`REORDER_CAP`] messages late) cannot
//!   be sorted in: it is counted in `unsorted` and left out of the fit.
//! * **Period**: the stamps, in stamp order, are numbered: the first
//!   [`BLOCK`] intervals give a robust first period (the median interval),
//!   and each next stamp is `round(interval / period)` numbers after the
//!   previous one (equal stamps share a number). The period is the least
//!   squares slope of stamp on number over the whole topic, so losses
//!   (skipped numbers) and outliers do not bias it as they bias a mean.
//! * **Gaps**: consecutive stamps (in stamp order) more than 1.5 periods
//!   apart; `lost` is the sum over gaps of `round(interval / period) - 1`.
//!   The period used is the one known when the gap is met (the first
//!   block's median at first, then the running fit).
//! * **Jitter**: the deviation of each stamp from a clock line fitted (least
//!   squares on the numbering) to its block of [`BLOCK`] consecutive stamps
//!   (the whole topic when it has fewer), so a slow drift of the clock over
//!   a long recording is not counted as jitter: root mean square and the
//!   99th percentile of the absolute deviation.
//! * **Latency**: arrival minus stamp, min / median / p99 / max
//!   ([`Quantiles`]: exact for up to 8192 messages, then within 0.2 %).
//!
//! Memory per topic: the reorder buffer, one block and two [`Quantiles`],
//! whatever the number of messages.

use std::collections::VecDeque;

use serde::Serialize;

use crate::quantiles::Quantiles;

/// How many stamps the reorder buffer holds.
pub const REORDER_CAP: usize = 4096;
/// How many consecutive stamps share a jitter line (and give the first period).
pub const BLOCK: usize = 4096;

/// The clock line of a block: stamp = `t0 + at_k0 + slope * (k - k0)`.
#[derive(Debug, Clone, Copy)]
struct Line {
    k0: i64,
    t0: i64,
    at_k0: f64,
    slope: f64,
}

/// The timing analysis of one topic (see the module documentation).
#[derive(Debug, Clone, Default)]
pub struct TopicTiming {
    count: u64,
    prev: Option<i64>,
    out_of_order: u64,
    duplicates: u64,
    unreadable: u64,
    unsorted: u64,
    latency: Quantiles,
    jitter: Quantiles,
    /// Sorted stamps not yet numbered.
    reorder: VecDeque<i64>,
    /// The largest stamp let out of the reorder buffer.
    released: Option<i64>,
    /// Stamps of the current block, numbered (`(k, t)`).
    block: Vec<(i64, i64)>,
    /// Stamps waiting for the first period (the first block).
    first: Vec<i64>,
    /// The first block's median interval: the provisional period.
    p0: Option<i64>,
    /// The period numbering uses: `p0`, then the fit at each block's end.
    period: f64,
    /// Numbering origin: the first sorted stamp.
    origin: i64,
    last: Option<(i64, i64)>,
    /// Exact sums over all numbered stamps of `k` and `r = t - origin - k * p0`.
    n: u64,
    sk: i128,
    sr: i128,
    skk: i128,
    skr: i128,
    /// Sum of squared jitter (ns^2).
    sq_jitter: f64,
    jitter_n: u64,
    prev_line: Option<Line>,
    gaps: u64,
    lost: u64,
}

/// Deviation of the stamps from their clock line.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Jitter {
    /// Root mean square, ns.
    pub rms: i64,
    /// 99th percentile of the absolute deviation, ns.
    pub p99: i64,
}

/// Arrival minus stamp.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Latency {
    /// Smallest, ns.
    pub min: i64,
    /// Median (nearest rank), ns.
    pub median: i64,
    /// 99th percentile (nearest rank), ns.
    pub p99: i64,
    /// Largest, ns.
    pub max: i64,
}

/// The figures of one topic.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timing {
    /// Messages.
    pub count: u64,
    /// 1e9 / `period_ns`; `null` with fewer than two distinct stamps.
    pub rate_hz: Option<f64>,
    /// The estimated sampling period, ns; `null` like `rate_hz`.
    pub period_ns: Option<i64>,
    /// Deviation of the stamps from the fitted clock line; `null` like
    /// `rate_hz`.
    pub jitter_ns: Option<Jitter>,
    /// Intervals (stamp order) longer than 1.5 periods.
    pub gaps: u64,
    /// Presumed lost samples.
    pub lost: u64,
    /// Stamps earlier than the previous message's.
    pub out_of_order: u64,
    /// Stamps equal to the previous message's.
    pub duplicates: u64,
    /// Arrival minus stamp; absent without arrivals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_ns: Option<Latency>,
    /// Messages whose stamp could not be read (left out of everything else).
    #[serde(skip_serializing_if = "is_zero")]
    pub unreadable_stamps: u64,
    /// Stamps too late for the reorder buffer (left out of the fit and gaps).
    #[serde(skip_serializing_if = "is_zero")]
    pub unsorted: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl TopicTiming {
    /// An empty topic.
    pub fn new() -> Self {
        Self::default()
    }

    /// Messages pushed so far (unreadable ones included).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// A message whose stamp could not be read.
    pub fn push_unreadable(&mut self) {
        self.count += 1;
        self.unreadable += 1;
    }

    /// A message with `stamp` that arrived at `arrival` (when known), in
    /// file (arrival) order.
    #[inline]
    pub fn push(&mut self, stamp: i64, arrival: Option<i64>) {
        self.count += 1;
        if let Some(prev) = self.prev {
            if stamp < prev {
                self.out_of_order += 1;
            } else if stamp == prev {
                self.duplicates += 1;
            }
        }
        self.prev = Some(stamp);
        if let Some(a) = arrival {
            let lat = (i128::from(a) - i128::from(stamp))
                .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
            self.latency.push(lat);
        }
        // Into the reorder buffer, in stamp order.
        if self.released.is_some_and(|r| stamp < r) {
            self.unsorted += 1;
            return;
        }
        match self.reorder.back() {
            Some(&b) if stamp < b => {
                let at = self.reorder.partition_point(|&x| x <= stamp);
                self.reorder.insert(at, stamp);
            }
            _ => self.reorder.push_back(stamp),
        }
        if self.reorder.len() > REORDER_CAP
            && let Some(t) = self.reorder.pop_front()
        {
            self.released = Some(t);
            self.sorted(t);
        }
    }

    /// The next stamp in stamp order.
    fn sorted(&mut self, t: i64) {
        let Some(p0) = self.p0 else {
            self.first.push(t);
            if self.first.len() >= BLOCK {
                self.start_numbering();
            }
            return;
        };
        self.number(t, p0);
    }

    /// Sets the provisional period from the first stamps and numbers them.
    fn start_numbering(&mut self) {
        let first = std::mem::take(&mut self.first);
        let mut dts: Vec<i64> = first
            .windows(2)
            .map(|w| w[1].saturating_sub(w[0]))
            .filter(|&d| d > 0)
            .collect();
        if dts.is_empty() {
            // All equal so far: no period yet; keep them waiting.
            self.first = first;
            if self.first.len() >= BLOCK {
                // Bounded memory: keep one representative of the equal stamps.
                self.first.truncate(1);
            }
            return;
        }
        let mid = dts.len() / 2;
        let (_, &mut median, _) = dts.select_nth_unstable(mid);
        self.p0 = Some(median);
        self.period = median as f64;
        self.origin = first[0];
        for t in first {
            self.number(t, median);
        }
    }

    fn fit_period(&self, p0: i64) -> Option<f64> {
        let n = self.n as i128;
        let sxx = n * self.skk - self.sk * self.sk;
        if n < 2 || sxx <= 0 {
            return None;
        }
        let sxy = n * self.skr - self.sk * self.sr;
        Some(p0 as f64 + sxy as f64 / sxx as f64)
    }

    fn number(&mut self, t: i64, p0: i64) {
        let k = match self.last {
            None => 0,
            Some((lk, lt)) => {
                let dt = t.saturating_sub(lt) as f64;
                if dt <= 0.0 {
                    lk
                } else {
                    let p = self.period;
                    let steps = (dt / p).round();
                    if dt > 1.5 * p {
                        self.gaps += 1;
                        self.lost += (steps as u64).saturating_sub(1);
                    }
                    lk.saturating_add(steps as i64)
                }
            }
        };
        self.last = Some((k, t));
        let r = i128::from(t) - i128::from(self.origin) - i128::from(k) * i128::from(p0);
        let k128 = i128::from(k);
        self.n += 1;
        self.sk += k128;
        self.sr += r;
        self.skk += k128 * k128;
        self.skr += k128 * r;
        self.block.push((k, t));
        if self.block.len() >= BLOCK {
            self.close_block(false);
            // From two blocks on, number with the running fit.
            if self.n as usize >= 2 * BLOCK
                && let Some(p) = self.fit_period(p0).filter(|p| p.is_finite() && *p > 0.0)
            {
                self.period = p;
            }
        }
    }

    /// Fits the block's line and accounts its stamps' deviations.
    fn close_block(&mut self, last: bool) {
        let block = std::mem::take(&mut self.block);
        if block.is_empty() {
            return;
        }
        let line = if last && block.len() < BLOCK / 2 && self.prev_line.is_some() {
            self.prev_line
        } else {
            fit_line(&block)
        };
        if let Some(line) = line {
            for &(k, t) in &block {
                let e = (t - line.t0) as f64 - line.at_k0 - line.slope * (k - line.k0) as f64;
                self.sq_jitter += e * e;
                self.jitter_n += 1;
                self.jitter.push(e.abs().round() as i64);
            }
            self.prev_line = Some(line);
        }
        self.block = block;
        self.block.clear();
    }

    /// The figures, once every message was pushed.
    pub fn finish(mut self) -> Timing {
        while let Some(t) = self.reorder.pop_front() {
            self.sorted(t);
        }
        if self.p0.is_none() && !self.first.is_empty() {
            self.start_numbering();
        }
        self.close_block(true);
        let period = self.p0.and_then(|p0| self.fit_period(p0));
        let period = period.filter(|p| p.is_finite() && *p > 0.0);
        let jitter = (self.jitter_n > 0 && period.is_some()).then(|| Jitter {
            rms: (self.sq_jitter / self.jitter_n as f64).sqrt().round() as i64,
            p99: self.jitter.percentile(99).unwrap_or(0),
        });
        let latency = (self.latency.count() > 0).then(|| Latency {
            min: self.latency.min().unwrap_or(0),
            median: self.latency.percentile(50).unwrap_or(0),
            p99: self.latency.percentile(99).unwrap_or(0),
            max: self.latency.max().unwrap_or(0),
        });
        Timing {
            count: self.count,
            rate_hz: period.map(|p| 1e9 / p),
            period_ns: period.map(|p| p.round() as i64),
            jitter_ns: jitter,
            gaps: self.gaps,
            lost: self.lost,
            out_of_order: self.out_of_order,
            duplicates: self.duplicates,
            latency_ns: latency,
            unreadable_stamps: self.unreadable,
            unsorted: self.unsorted,
        }
    }
}

/// Least squares line of `t` on `k` through the block (computed relative to
/// its first point, so the numbers stay small); `None` when every `k` is equal.
fn fit_line(block: &[(i64, i64)]) -> Option<Line> {
    let (k0, t0) = *block.first()?;
    let n = block.len() as f64;
    let (mut sx, mut sy) = (0.0, 0.0);
    for &(k, t) in block {
        sx += (k - k0) as f64;
        sy += (t - t0) as f64;
    }
    let (mx, my) = (sx / n, sy / n);
    let (mut sxx, mut sxy) = (0.0, 0.0);
    for &(k, t) in block {
        let dx = (k - k0) as f64 - mx;
        sxx += dx * dx;
        sxy += dx * ((t - t0) as f64 - my);
    }
    if sxx <= 0.0 {
        return None;
    }
    let slope = sxy / sxx;
    Some(Line {
        k0,
        t0,
        at_k0: my - slope * mx,
        slope,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A stream longer than a block, the reorder buffer and the exact
    /// quantiles: exact period, losses, order counts, and zero jitter.
    fn long_stream(
        period: i64,
        start: i64,
        n: usize,
        events: &[(u16, u8)],
    ) -> (Vec<i64>, u64, u64) {
        let mut k = 0i64;
        let mut stamps = Vec::with_capacity(n + 16);
        let (mut gaps, mut lost) = (0, 0);
        let mut next_event = events.iter().peekable();
        let mut i = 0usize;
        while stamps.len() < n {
            let mut t = start + k * period;
            if let Some(&&(at, kind)) = next_event.peek()
                && usize::from(at) * 7 <= i
            {
                next_event.next();
                match kind % 3 {
                    0 if !stamps.is_empty() => {
                        let run = i64::from(kind % 5) + 1;
                        k += run;
                        gaps += 1;
                        lost += run as u64;
                        t = start + k * period;
                    }
                    1 => stamps.push(t),
                    _ => {
                        stamps.push(t + period);
                        k += 1;
                    }
                }
            }
            stamps.push(t);
            k += 1;
            i += 1;
        }
        (stamps, gaps, lost)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]

        #[test]
        fn long_streams_are_recovered_exactly(
            period in 100_000i64..100_000_000,
            start in -1_000_000_000_000i64..1_800_000_000_000_000_000,
            n in 9000usize..20_000,
            mut events in prop::collection::vec((0u16..3000, any::<u8>()), 0..200),
        ) {
            events.sort_unstable();
            let (stamps, gaps, lost) = long_stream(period, start, n, &events);
            let mut timing = TopicTiming::new();
            for &t in &stamps {
                timing.push(t, Some(t + 1_000));
            }
            let r = timing.finish();
            let (mut ooo, mut dup) = (0, 0);
            for w in stamps.windows(2) {
                ooo += u64::from(w[1] < w[0]);
                dup += u64::from(w[1] == w[0]);
            }
            prop_assert_eq!(r.count, stamps.len() as u64);
            prop_assert_eq!(r.period_ns, Some(period));
            prop_assert_eq!(r.gaps, gaps);
            prop_assert_eq!(r.lost, lost);
            prop_assert_eq!(r.out_of_order, ooo);
            prop_assert_eq!(r.duplicates, dup);
            prop_assert_eq!(r.unsorted, 0);
            prop_assert_eq!(r.jitter_ns, Some(Jitter { rms: 0, p99: 0 }));
            prop_assert_eq!(r.latency_ns, Some(Latency { min: 1_000, median: 1_000, p99: 1_000, max: 1_000 }));
        }
    }

    #[test]
    fn jitter_of_a_known_pattern_and_stamps_too_late_to_sort() {
        // Deviations +d, -d alternating around a 1 ms clock: rms d, p99 d
        // (within the least squares line's own small tilt).
        let mut timing = TopicTiming::new();
        for k in 0..1000i64 {
            let d = if k % 2 == 0 { 3_000 } else { -3_000 };
            timing.push(k * 1_000_000 + d, None);
        }
        let r = timing.finish();
        assert_eq!(r.period_ns, Some(1_000_000));
        let j = r.jitter_ns.unwrap();
        assert!(
            (j.rms - 3_000).abs() <= 3 && (j.p99 - 3_000).abs() <= 12,
            "{j:?}"
        );
        assert_eq!(r.latency_ns, None);
        // A stamp far older than the reorder buffer reaches is counted.
        let mut timing = TopicTiming::new();
        for k in 0..(REORDER_CAP as i64 + 10) {
            timing.push(1_000 + k * 10, None);
        }
        timing.push(0, None);
        let r = timing.finish();
        assert_eq!((r.unsorted, r.out_of_order), (1, 1));
        assert_eq!(r.period_ns, Some(10));
        // One stamp, or only equal stamps: no period.
        let mut one = TopicTiming::new();
        one.push(5, None);
        one.push(5, None);
        let r = one.finish();
        assert_eq!((r.period_ns, r.duplicates, r.jitter_ns), (None, 1, None));
    }
}
