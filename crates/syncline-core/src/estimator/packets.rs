//! Stage 1 (numbering), packets of a fixed size: a device or driver that
//! sends `m` samples per packet sends each packet when its last slot is
//! ready, whether or not every slot holds a sample. A loss inside a packet
//! leaves the packet short; counted one after the other, the packet's
//! samples then end a number short of the packet's last slot, and the
//! packet's last sample (the one the clock line is fitted on, the least
//! delayed) sits a whole period above the line. Read as a hold, every such
//! loss put the numbering a period behind for good.
//!
//! [`Packets`] learns the packets' [`Lattice`] from the bursts themselves:
//! among the newest [`PACKET_RUN`] bursts none is longer than the longest,
//! `m ≥ 2` samples, at least half of them are that long, and every start
//! (the next burst's included) lies within `Tuning::packet_tol` of a
//! period of the lattice of packets `m` periods apart (their median phase
//! on it: the typical delay). Once learned, the size is kept while no burst
//! is longer and all but [`PACKET_STRAYS`] starts lie on the lattice.
//! Bursts of other kinds (a stall's backlog, the bunching of a wide
//! jitter, an arrival clock's tick) do not keep that pattern; a USB
//! adapter's latency timer that sends a packet before it fills does for a
//! while, but its short packet shifts the packets after it off the
//! lattice, which [`Packets::strike`] catches. While the lattice holds,
//! bursts are numbered on it (`Estimator::number_packets`): a burst's
//! first sample takes its packet's first number, whole packets after the
//! newest burst so numbered ([`Packets::memory`]); a burst of `k < m`
//! samples followed on the lattice held `m − k` losses, and its last sample
//! takes the packet's last number.

/// How many bursts the packet size is learned over (a data layout value:
/// the ring's length). Eight: half of them must be whole packets to learn
/// it, which at 10 % loss and 8 samples per packet (a whole packet 43 % of
/// the time) a run of eight has with a probability of 0.48 (learned within
/// a few runs), and a run of lone samples with a bunched pair or two never.
pub(super) const PACKET_RUN: usize = 8;

/// How many of the newest bursts' starts may stray from the lattice once
/// the size is learned: a packet whose last sample is delayed beyond
/// `Tuning::packet_tol` (exponential delays of a tenth of a period pass
/// 0.3 periods once in 20 packets).
pub(super) const PACKET_STRAYS: usize = 2;

/// How many packets after the newest burst numbered on the lattice a burst
/// may start and still be numbered from it (`Estimator::number_packets`):
/// the period's error, at most a few parts in 10^5 once learned, moves a
/// lattice 64 packets of 8 on by under a tenth of a period.
pub(super) const LATTICE_REACH: i64 = 64;

/// How many bursts in a row must all start on the lattice before a burst
/// that starts a whole packet or more after the next packet is numbered as
/// after lost packets (`Estimator::number_packets`): where packets are
/// ever delayed beyond `Tuning::packet_tol`, a delay of about a packet (a
/// heavy tail's) may look like a lost one, and the loss stage judges it
/// (`family_draws.py --seed 2 --kinds packets --first 72 --draws 1`:
/// Pareto delays of 0.42 periods, two packets delayed about a packet each
/// read as lost ones without it, 2.2 × Rock's RMS; 0.008 × with it).
pub(super) const CALM_RUN: u64 = 64;

/// The newest bursts' first arrivals and sizes (see the module docs), and
/// the lattice the bursts are numbered on.
#[derive(Debug, Clone, Default)]
pub(super) struct Packets {
    starts: [i64; PACKET_RUN],
    sizes: [u32; PACKET_RUN],
    /// Bursts recorded (saturating at `PACKET_RUN`).
    len: usize,
    /// The slot the next burst goes in.
    head: usize,
    /// Bursts of two samples or more in the ring (lone samples alone are
    /// no packets: the steady path of a stream without bursts stops here).
    multi: usize,
    /// A first number on the lattice and its packet's time there (see
    /// [`Lattice`]): of the newest burst numbered on it, kept while the
    /// packets are not seen, to number them on the same lattice again.
    pub memory: Option<(i64, i64)>,
    /// The packet size while learned.
    size: Option<u32>,
    /// Bursts recorded, and the count at the latest strike (see
    /// [`Self::strike`]).
    bursts: u64,
    struck: u64,
    /// The count of bursts when the newest bursts last held a stray start.
    stray_at: u64,
}

/// The packets' lattice the newest bursts show: `m` samples per packet,
/// `packet` ns apart, a packet's burst due at `origin` plus whole packets
/// (the median of the bursts' phases: their typical delay included).
#[derive(Debug, Clone, Copy)]
pub(super) struct Lattice {
    pub m: u32,
    pub packet: f64,
    pub origin: i64,
    /// How far from its packet's time a burst may start and still be on
    /// the lattice (ns).
    pub tol: f64,
    /// Whether any of the newest [`CALM_RUN`] bursts' starts lay further
    /// than `tol` from their median phase (a delay of a packet's last
    /// sample beyond the jitter's core).
    pub strayed: bool,
    /// Whether a short burst was followed off the lattice within the
    /// newest [`CALM_RUN`] bursts (see [`Packets::strike`]).
    pub struck: bool,
}

impl Lattice {
    /// The packets from the origin to the one a burst starting at `t`
    /// belongs to (the nearest), and whether `t` is within `tol` of its
    /// time.
    pub fn place(&self, t: i64) -> (i64, bool) {
        let x = t.saturating_sub(self.origin) as f64;
        let w = (x / self.packet).round();
        (w as i64, (x - w * self.packet).abs() <= self.tol)
    }

    /// The time of the packet `w` packets from the origin.
    pub fn time(&self, w: i64) -> i64 {
        self.origin.saturating_add((w as f64 * self.packet) as i64)
    }
}

impl Packets {
    /// Forgets the bursts (after a restart).
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// Whether the ring holds lone samples only: a lone sample's burst
    /// then need not be recorded (it changes nothing the lattice is
    /// learned from; the stale starts it would have replaced only make the
    /// next bursts' phases stray, the safe side).
    pub fn idle(&self) -> bool {
        self.multi == 0
    }

    /// A short burst was followed off the lattice: the second time within
    /// `PACKET_RUN` bursts, the packet size (kept otherwise while no burst
    /// is longer) and the lattice's memory are forgotten, to be learned
    /// again from a run of whole packets; either way the lattice reports
    /// the strike for `CALM_RUN` bursts (`Lattice::struck`).
    pub fn strike(&mut self) {
        if self.bursts.saturating_sub(self.struck) <= PACKET_RUN as u64 && self.struck > 0 {
            (self.size, self.memory) = (None, None);
        }
        self.struck = self.bursts;
    }

    /// A burst of `k` samples whose first arrived at `first` ended, and the
    /// next one starts at `next`; `p` is the period. Returns the lattice
    /// while the newest bursts show packets of one size (see the module
    /// docs), their starts within `tol` of a period of it.
    pub fn note(&mut self, first: i64, k: u32, next: i64, p: f64, tol: f64) -> Option<Lattice> {
        let old = std::mem::replace(&mut self.sizes[self.head], k);
        self.multi = self.multi + usize::from(k > 1) - usize::from(old > 1);
        self.starts[self.head] = first;
        self.bursts += 1;
        self.head = (self.head + 1) % PACKET_RUN;
        self.len = (self.len + 1).min(PACKET_RUN);
        if self.multi * 4 < PACKET_RUN || self.len < PACKET_RUN || p.is_nan() || p <= 0.0 {
            self.size = None;
            return None;
        }
        // Learned once half the bursts are whole packets; kept while no
        // burst is longer (at 10 % loss, eight packets of eight hold no
        // whole one once in 90 runs).
        let m = self
            .sizes
            .iter()
            .copied()
            .max()?
            .max(self.size.unwrap_or(0));
        let whole = self.sizes.iter().filter(|&&s| s == m).count();
        let learned = self.size == Some(m);
        if m < 2 || (!learned && whole * 2 < PACKET_RUN) {
            self.size = None;
            return None;
        }
        let packet = f64::from(m) * p;
        // Each start's phase on the packets from the oldest's (the next
        // burst's included): all within `tol` of their median to learn the
        // lattice, all but `PACKET_STRAYS` to keep it. A lattice of whole
        // packets is fixed: bursts paced by something else drift off it,
        // however close their gaps are to whole packets.
        let oldest = self.starts[self.head];
        let mut phases = [0.0; PACKET_RUN + 1];
        for (i, ph) in phases.iter_mut().enumerate().skip(1) {
            let s = match i {
                PACKET_RUN => next,
                _ => self.starts[(self.head + i) % PACKET_RUN],
            };
            let x = s.saturating_sub(oldest) as f64;
            *ph = x - (x / packet).round() * packet;
        }
        let mut sorted = phases;
        sorted.sort_unstable_by(f64::total_cmp);
        let median = sorted[PACKET_RUN / 2];
        let strays = phases
            .iter()
            .filter(|&&ph| (ph - median).abs() > tol * p)
            .count();
        if strays > 0 {
            self.stray_at = self.bursts;
        }
        let allowed = if learned { PACKET_STRAYS } else { 0 };
        self.size = (strays <= allowed).then_some(m);
        self.size.map(|m| Lattice {
            m,
            packet,
            origin: oldest.saturating_add(median as i64),
            tol: tol * p,
            strayed: self.stray_at > 0 && self.bursts - self.stray_at < CALM_RUN,
            struck: self.struck > 0 && self.bursts - self.struck < CALM_RUN,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: f64 = 1_000_000.0;

    /// Bursts of `sizes`, starting `spacing` periods apart from 0, and the
    /// size `note` returns at the last one.
    fn run(sizes: &[u32], spacing: &[f64]) -> Option<u32> {
        let mut pk = Packets::default();
        let mut t = 0.0;
        let mut out = None;
        for (i, &k) in sizes.iter().enumerate() {
            let next = t + spacing[i % spacing.len()] * P;
            out = pk.note(t as i64, k, next as i64, P, 0.3).map(|l| l.m);
            t = next;
        }
        out
    }

    #[test]
    fn packets_of_one_size_are_learned_after_a_full_run() {
        assert_eq!(run(&[4; PACKET_RUN - 1], &[4.0]), None);
        assert_eq!(run(&[4; PACKET_RUN], &[4.0]), Some(4));
        // Short packets (losses inside) and a lost packet (8 periods).
        assert_eq!(
            run(&[4, 3, 4, 2, 4, 4, 3, 4], &[4.0, 4.1, 8.0, 3.9]),
            Some(4)
        );
    }

    #[test]
    fn bursts_of_other_kinds_are_not_packets() {
        // Lone samples.
        assert_eq!(run(&[1; 10], &[1.0]), None);
        // Sizes that vary with starts off the packet lattice (a latency
        // timer firing before the packets fill, a stall's backlog).
        assert_eq!(run(&[4, 3, 4, 3, 4, 3, 4, 3], &[3.5]), None);
        assert_eq!(run(&[2, 2, 2, 7, 2, 2, 2, 2], &[2.0, 2.0, 2.0, 7.0]), None);
        // One whole packet in eight is too few to learn the size (not to
        // keep it).
        assert_eq!(run(&[4, 3, 3, 3, 3, 3, 3, 3], &[4.0]), None);
        assert_eq!(
            run(&[4, 4, 4, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3], &[4.0]),
            Some(4)
        );
        // More than `PACKET_STRAYS` gaps off the lattice.
        assert_eq!(run(&[4; 8], &[4.0, 4.6]), None);
    }

    #[test]
    fn the_next_bursts_start_is_part_of_the_pattern() {
        let mut pk = Packets::default();
        for i in 0..PACKET_RUN as i64 - 1 {
            pk.note(i * 4_000_000, 4, (i + 1) * 4_000_000, P, 0.3);
        }
        let last = (PACKET_RUN as i64 - 1) * 4_000_000;
        assert_eq!(
            pk.clone()
                .note(last, 3, last + 4_000_000, P, 0.3)
                .map(|l| l.m),
            Some(4)
        );
        // Not learned with a stray start; once learned, one is a delay,
        // three are no packets.
        assert_eq!(
            pk.clone()
                .note(last, 3, last + 2_500_000, P, 0.3)
                .map(|l| l.m),
            None
        );
        assert_eq!(
            pk.note(last, 4, last + 4_000_000, P, 0.3).map(|l| l.m),
            Some(4)
        );
        let last = last + 4_000_000;
        assert_eq!(
            pk.clone()
                .note(last, 3, last + 2_500_000, P, 0.3)
                .map(|l| l.m),
            Some(4)
        );
        let mut t = last;
        for _ in 0..3 {
            pk.note(t, 4, t + 4_600_000, P, 0.3);
            t += 4_600_000;
        }
        assert_eq!(pk.note(t, 4, t + 4_000_000, P, 0.3).map(|l| l.m), None);
    }

    #[test]
    fn bursts_are_placed_on_the_lattice() {
        let l = Lattice {
            m: 4,
            packet: 4.0 * P,
            origin: 1_000_000,
            tol: 0.3 * P,
            strayed: false,
            struck: false,
        };
        // Within `tol` of a packet's time, early or late: on the lattice.
        assert_eq!(l.place(9_200_000), (2, true));
        assert_eq!(l.place(8_800_000), (2, true));
        assert_eq!(l.place(-3_100_000), (-1, true));
        // Further (a latency timer's short packet moves the packets after
        // it a period or more early): off it.
        assert_eq!(l.place(10_500_000), (2, false));
        assert_eq!(l.place(7_000_000), (2, false));
        assert_eq!(l.time(3), 13_000_000);
    }

    #[test]
    fn reset_forgets_the_bursts() {
        let mut pk = Packets::default();
        for i in 0..PACKET_RUN as i64 {
            pk.note(i * 4_000_000, 4, (i + 1) * 4_000_000, P, 0.3);
        }
        pk.reset();
        assert_eq!(pk.note(0, 4, 4_000_000, P, 0.3).map(|l| l.m), None);
    }
}
