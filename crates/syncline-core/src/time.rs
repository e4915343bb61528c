//! Time types: [`Timestamp`] (an instant) and [`TimeDelta`] (a signed
//! difference), both integer nanoseconds.
//!
//! There is no floating point in stored times and no arithmetic that wraps or
//! panics: every operation that can overflow is `checked_*` and returns a
//! [`TimeError`], or is explicitly `saturating_*`. Conversions to and from
//! [`std::time::Duration`], [`std::time::SystemTime`] and float seconds are
//! provided and checked.
//!
//! The operators saturate, in debug and release builds alike, as the
//! `saturating_*` methods do: `Timestamp ± TimeDelta -> Timestamp`,
//! `Timestamp - Timestamp -> TimeDelta`, `TimeDelta ± TimeDelta`,
//! `TimeDelta * i64` and `-TimeDelta` clamp to the ±292-year range instead
//! of overflowing. Use `checked_*` where reaching the range's end must be
//! an error.
//!
//! ```
//! use syncline_core::{TimeDelta, Timestamp};
//!
//! let t = Timestamp::from_nanos(1_000_000_000);
//! let period = TimeDelta::from_millis(10);
//! let next = t + period;
//! assert_eq!(next - t, period);
//! assert_eq!(next - period * 3, t - TimeDelta::from_millis(20));
//! let mut u = t;
//! u += period;
//! u -= -period;
//! assert_eq!(u, t + period * 2);
//! // Saturating at the ends of the range, never a panic:
//! assert_eq!(Timestamp::MAX + period, Timestamp::MAX);
//! assert_eq!(Timestamp::MIN - Timestamp::MAX, TimeDelta::MIN);
//! ```

use core::fmt;
use core::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

const NANOS_PER_SEC: i64 = 1_000_000_000;

/// Errors of time arithmetic and conversions.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum TimeError {
    /// The result does not fit in a signed 64-bit count of nanoseconds.
    #[error("time arithmetic overflowed the i64 nanosecond range")]
    Overflow,
    /// A negative difference cannot become a [`std::time::Duration`].
    #[error("a negative time difference cannot be a std::time::Duration")]
    Negative,
    /// A float value was NaN or infinite.
    #[error("time value {0} is not finite")]
    NotFinite(f64),
}

/// An instant: signed nanoseconds since the Unix epoch (1970-01-01T00:00:00Z).
///
/// The same type serves real and simulated time: a simulated clock simply
/// starts wherever its coordinator says. The range is about ±292 years
/// around 1970. Serialises as a bare integer.
///
/// ```
/// use syncline_core::{TimeDelta, Timestamp};
///
/// let t = Timestamp::from_secs_f64(1.5).unwrap();
/// assert_eq!(t.as_nanos(), 1_500_000_000);
/// assert!(Timestamp::MAX.checked_add(TimeDelta::from_nanos(1)).is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(i64);

/// A signed difference between two [`Timestamp`]s, in nanoseconds.
///
/// Constructors from coarser units (`from_secs`, `from_millis`,
/// `from_micros`) saturate at [`TimeDelta::MIN`] / [`TimeDelta::MAX`]
/// (±292 years), so they never panic; arithmetic is checked.
///
/// ```
/// use std::time::Duration;
/// use syncline_core::TimeDelta;
///
/// let d = TimeDelta::from_millis(10);
/// assert_eq!(Duration::try_from(d).unwrap(), Duration::from_millis(10));
/// assert!(Duration::try_from(TimeDelta::from_millis(-1)).is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TimeDelta(i64);

/// Converts float seconds to integer nanoseconds, rounding to the nearest.
fn secs_f64_to_nanos(secs: f64) -> Result<i64, TimeError> {
    if !secs.is_finite() {
        return Err(TimeError::NotFinite(secs));
    }
    let nanos = (secs * NANOS_PER_SEC as f64).round();
    // i64::MAX as f64 rounds up to 2^63, which is out of range: exclusive bound.
    if nanos >= i64::MAX as f64 || nanos < i64::MIN as f64 {
        return Err(TimeError::Overflow);
    }
    Ok(nanos as i64)
}

fn nanos_to_secs_f64(nanos: i64) -> f64 {
    let secs = nanos.div_euclid(NANOS_PER_SEC);
    let sub = nanos.rem_euclid(NANOS_PER_SEC);
    secs as f64 + sub as f64 / NANOS_PER_SEC as f64
}

fn fmt_nanos(nanos: i64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let sign = if nanos < 0 { "-" } else { "" };
    let abs = nanos.unsigned_abs();
    let ns = NANOS_PER_SEC as u64;
    write!(f, "{sign}{}.{:09}s", abs / ns, abs % ns)
}

impl Timestamp {
    /// The Unix epoch, 1970-01-01T00:00:00Z.
    pub const EPOCH: Timestamp = Timestamp(0);
    /// The earliest representable instant.
    pub const MIN: Timestamp = Timestamp(i64::MIN);
    /// The latest representable instant.
    pub const MAX: Timestamp = Timestamp(i64::MAX);

    /// The instant `nanos` nanoseconds after the epoch.
    #[inline]
    pub const fn from_nanos(nanos: i64) -> Self {
        Timestamp(nanos)
    }

    /// Nanoseconds since the epoch.
    #[inline]
    pub const fn as_nanos(self) -> i64 {
        self.0
    }

    /// The instant `secs` seconds after the epoch, rounded to the nearest
    /// nanosecond. NaN, infinities and out-of-range values are errors.
    pub fn from_secs_f64(secs: f64) -> Result<Self, TimeError> {
        secs_f64_to_nanos(secs).map(Timestamp)
    }

    /// Seconds since the epoch as a float (loses precision below about
    /// 0.2 µs for present-day instants; for display and plotting only).
    pub fn as_secs_f64(self) -> f64 {
        nanos_to_secs_f64(self.0)
    }

    /// `self + delta`, or [`TimeError::Overflow`].
    #[inline]
    pub const fn checked_add(self, delta: TimeDelta) -> Result<Self, TimeError> {
        match self.0.checked_add(delta.0) {
            Some(n) => Ok(Timestamp(n)),
            None => Err(TimeError::Overflow),
        }
    }

    /// `self - delta`, or [`TimeError::Overflow`].
    #[inline]
    pub const fn checked_sub(self, delta: TimeDelta) -> Result<Self, TimeError> {
        match self.0.checked_sub(delta.0) {
            Some(n) => Ok(Timestamp(n)),
            None => Err(TimeError::Overflow),
        }
    }

    /// The signed difference `self - earlier`, or [`TimeError::Overflow`]
    /// when the two instants are more than ±292 years apart.
    #[inline]
    pub const fn checked_since(self, earlier: Timestamp) -> Result<TimeDelta, TimeError> {
        match self.0.checked_sub(earlier.0) {
            Some(n) => Ok(TimeDelta(n)),
            None => Err(TimeError::Overflow),
        }
    }

    /// The exact signed difference `self - earlier` in nanoseconds, which
    /// always fits in an `i128`.
    #[inline]
    pub const fn nanos_since_wide(self, earlier: Timestamp) -> i128 {
        self.0 as i128 - earlier.0 as i128
    }

    /// `self + delta`, clamped to [`Timestamp::MIN`] ..= [`Timestamp::MAX`].
    #[inline]
    pub const fn saturating_add(self, delta: TimeDelta) -> Self {
        Timestamp(self.0.saturating_add(delta.0))
    }

    /// `self - delta`, clamped to [`Timestamp::MIN`] ..= [`Timestamp::MAX`].
    #[inline]
    pub const fn saturating_sub(self, delta: TimeDelta) -> Self {
        Timestamp(self.0.saturating_sub(delta.0))
    }

    /// Converts a [`SystemTime`]; instants before the epoch are negative.
    pub fn from_system_time(t: SystemTime) -> Result<Self, TimeError> {
        match t.duration_since(UNIX_EPOCH) {
            Ok(after) => TimeDelta::try_from(after).map(|d| Timestamp(d.0)),
            Err(before) => {
                let d = TimeDelta::try_from(before.duration())?;
                d.checked_neg().map(|d| Timestamp(d.0))
            }
        }
    }

    /// Converts to a [`SystemTime`] (fails only where the platform's
    /// `SystemTime` cannot hold the instant).
    pub fn to_system_time(self) -> Result<SystemTime, TimeError> {
        let magnitude = Duration::from_nanos(self.0.unsigned_abs());
        let t = if self.0 >= 0 {
            UNIX_EPOCH.checked_add(magnitude)
        } else {
            UNIX_EPOCH.checked_sub(magnitude)
        };
        t.ok_or(TimeError::Overflow)
    }
}

impl TimeDelta {
    /// No time at all.
    pub const ZERO: TimeDelta = TimeDelta(0);
    /// The most negative difference.
    pub const MIN: TimeDelta = TimeDelta(i64::MIN);
    /// The largest difference (about 292 years).
    pub const MAX: TimeDelta = TimeDelta(i64::MAX);

    /// A difference of `nanos` nanoseconds.
    #[inline]
    pub const fn from_nanos(nanos: i64) -> Self {
        TimeDelta(nanos)
    }

    /// A difference of `micros` microseconds (saturating).
    pub const fn from_micros(micros: i64) -> Self {
        TimeDelta(micros.saturating_mul(1_000))
    }

    /// A difference of `millis` milliseconds (saturating).
    pub const fn from_millis(millis: i64) -> Self {
        TimeDelta(millis.saturating_mul(1_000_000))
    }

    /// A difference of `secs` seconds (saturating).
    pub const fn from_secs(secs: i64) -> Self {
        TimeDelta(secs.saturating_mul(NANOS_PER_SEC))
    }

    /// A difference of `secs` float seconds, rounded to the nearest
    /// nanosecond. NaN, infinities and out-of-range values are errors.
    pub fn from_secs_f64(secs: f64) -> Result<Self, TimeError> {
        secs_f64_to_nanos(secs).map(TimeDelta)
    }

    /// The difference in nanoseconds.
    #[inline]
    pub const fn as_nanos(self) -> i64 {
        self.0
    }

    /// The difference in float seconds.
    pub fn as_secs_f64(self) -> f64 {
        nanos_to_secs_f64(self.0)
    }

    /// True for a strictly negative difference.
    #[inline]
    pub const fn is_negative(self) -> bool {
        self.0 < 0
    }

    /// True for a strictly positive difference.
    #[inline]
    pub const fn is_positive(self) -> bool {
        self.0 > 0
    }

    /// True for a zero difference.
    #[inline]
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// `self + other`, or [`TimeError::Overflow`].
    #[inline]
    pub const fn checked_add(self, other: TimeDelta) -> Result<Self, TimeError> {
        match self.0.checked_add(other.0) {
            Some(n) => Ok(TimeDelta(n)),
            None => Err(TimeError::Overflow),
        }
    }

    /// `self - other`, or [`TimeError::Overflow`].
    #[inline]
    pub const fn checked_sub(self, other: TimeDelta) -> Result<Self, TimeError> {
        match self.0.checked_sub(other.0) {
            Some(n) => Ok(TimeDelta(n)),
            None => Err(TimeError::Overflow),
        }
    }

    /// `self * factor`, or [`TimeError::Overflow`].
    pub const fn checked_mul(self, factor: i64) -> Result<Self, TimeError> {
        match self.0.checked_mul(factor) {
            Some(n) => Ok(TimeDelta(n)),
            None => Err(TimeError::Overflow),
        }
    }

    /// `-self`, or [`TimeError::Overflow`] for [`TimeDelta::MIN`].
    pub const fn checked_neg(self) -> Result<Self, TimeError> {
        match self.0.checked_neg() {
            Some(n) => Ok(TimeDelta(n)),
            None => Err(TimeError::Overflow),
        }
    }

    /// `|self|`, or [`TimeError::Overflow`] for [`TimeDelta::MIN`].
    pub const fn checked_abs(self) -> Result<Self, TimeError> {
        match self.0.checked_abs() {
            Some(n) => Ok(TimeDelta(n)),
            None => Err(TimeError::Overflow),
        }
    }

    /// `self + other`, clamped to the representable range.
    #[inline]
    pub const fn saturating_add(self, other: TimeDelta) -> Self {
        TimeDelta(self.0.saturating_add(other.0))
    }

    /// `self - other`, clamped to the representable range.
    #[inline]
    pub const fn saturating_sub(self, other: TimeDelta) -> Self {
        TimeDelta(self.0.saturating_sub(other.0))
    }
}

impl Timestamp {
    /// `self - earlier`, clamped to [`TimeDelta::MIN`] ..= [`TimeDelta::MAX`]
    /// (what `self - earlier` computes).
    #[inline]
    pub const fn saturating_since(self, earlier: Timestamp) -> TimeDelta {
        TimeDelta(self.0.saturating_sub(earlier.0))
    }
}

impl TimeDelta {
    /// `self * factor`, clamped to the representable range.
    #[inline]
    pub const fn saturating_mul(self, factor: i64) -> Self {
        TimeDelta(self.0.saturating_mul(factor))
    }

    /// `-self`, clamped to the representable range (`-MIN` is `MAX`).
    #[inline]
    pub const fn saturating_neg(self) -> Self {
        TimeDelta(self.0.saturating_neg())
    }
}

/// `Timestamp + TimeDelta`, saturating ([`Timestamp::saturating_add`]).
impl Add<TimeDelta> for Timestamp {
    type Output = Timestamp;
    #[inline]
    fn add(self, rhs: TimeDelta) -> Timestamp {
        self.saturating_add(rhs)
    }
}

/// `Timestamp - TimeDelta`, saturating ([`Timestamp::saturating_sub`]).
impl Sub<TimeDelta> for Timestamp {
    type Output = Timestamp;
    #[inline]
    fn sub(self, rhs: TimeDelta) -> Timestamp {
        self.saturating_sub(rhs)
    }
}

/// `Timestamp - Timestamp`, saturating ([`Timestamp::saturating_since`]).
impl Sub<Timestamp> for Timestamp {
    type Output = TimeDelta;
    #[inline]
    fn sub(self, rhs: Timestamp) -> TimeDelta {
        self.saturating_since(rhs)
    }
}

/// `Timestamp += TimeDelta`, saturating.
impl AddAssign<TimeDelta> for Timestamp {
    #[inline]
    fn add_assign(&mut self, rhs: TimeDelta) {
        *self = self.saturating_add(rhs);
    }
}

/// `Timestamp -= TimeDelta`, saturating.
impl SubAssign<TimeDelta> for Timestamp {
    #[inline]
    fn sub_assign(&mut self, rhs: TimeDelta) {
        *self = self.saturating_sub(rhs);
    }
}

/// `TimeDelta + TimeDelta`, saturating.
impl Add for TimeDelta {
    type Output = TimeDelta;
    #[inline]
    fn add(self, rhs: TimeDelta) -> TimeDelta {
        self.saturating_add(rhs)
    }
}

/// `TimeDelta - TimeDelta`, saturating.
impl Sub for TimeDelta {
    type Output = TimeDelta;
    #[inline]
    fn sub(self, rhs: TimeDelta) -> TimeDelta {
        self.saturating_sub(rhs)
    }
}

/// `TimeDelta += TimeDelta`, saturating.
impl AddAssign for TimeDelta {
    #[inline]
    fn add_assign(&mut self, rhs: TimeDelta) {
        *self = self.saturating_add(rhs);
    }
}

/// `TimeDelta -= TimeDelta`, saturating.
impl SubAssign for TimeDelta {
    #[inline]
    fn sub_assign(&mut self, rhs: TimeDelta) {
        *self = self.saturating_sub(rhs);
    }
}

/// `TimeDelta * i64`, saturating.
impl Mul<i64> for TimeDelta {
    type Output = TimeDelta;
    #[inline]
    fn mul(self, rhs: i64) -> TimeDelta {
        self.saturating_mul(rhs)
    }
}

/// `-TimeDelta`, saturating (`-TimeDelta::MIN` is `TimeDelta::MAX`).
impl Neg for TimeDelta {
    type Output = TimeDelta;
    #[inline]
    fn neg(self) -> TimeDelta {
        self.saturating_neg()
    }
}

impl TryFrom<Duration> for TimeDelta {
    type Error = TimeError;
    /// Fails with [`TimeError::Overflow`] above about 292 years.
    fn try_from(d: Duration) -> Result<Self, TimeError> {
        i64::try_from(d.as_nanos())
            .map(TimeDelta)
            .map_err(|_| TimeError::Overflow)
    }
}

impl TryFrom<TimeDelta> for Duration {
    type Error = TimeError;
    /// Fails with [`TimeError::Negative`] for a negative difference.
    fn try_from(d: TimeDelta) -> Result<Self, TimeError> {
        u64::try_from(d.0)
            .map(Duration::from_nanos)
            .map_err(|_| TimeError::Negative)
    }
}

impl TryFrom<SystemTime> for Timestamp {
    type Error = TimeError;
    fn try_from(t: SystemTime) -> Result<Self, TimeError> {
        Timestamp::from_system_time(t)
    }
}

impl TryFrom<Timestamp> for SystemTime {
    type Error = TimeError;
    fn try_from(t: Timestamp) -> Result<Self, TimeError> {
        t.to_system_time()
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Timestamp(")?;
        fmt_nanos(self.0, f)?;
        write!(f, ")")
    }
}

/// Seconds since the epoch with nanosecond digits, e.g. `1.500000000s`.
impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_nanos(self.0, f)
    }
}

impl fmt::Debug for TimeDelta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TimeDelta(")?;
        fmt_nanos(self.0, f)?;
        write!(f, ")")
    }
}

/// Seconds with nanosecond digits, e.g. `-0.010000000s`.
impl fmt::Display for TimeDelta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_nanos(self.0, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_agree_with_the_saturating_methods() {
        let values = [i64::MIN, i64::MIN + 1, -7, 0, 3, i64::MAX - 1, i64::MAX];
        for &a in &values {
            for &b in &values {
                let (t, u, d) = (Timestamp(a), Timestamp(b), TimeDelta(b));
                assert_eq!(t + d, Timestamp(a.saturating_add(b)));
                assert_eq!(t - d, Timestamp(a.saturating_sub(b)));
                assert_eq!(t - u, TimeDelta(a.saturating_sub(b)));
                assert_eq!(TimeDelta(a) + d, TimeDelta(a.saturating_add(b)));
                assert_eq!(TimeDelta(a) - d, TimeDelta(a.saturating_sub(b)));
                assert_eq!(TimeDelta(a) * b, TimeDelta(a.saturating_mul(b)));
                let (mut x, mut y) = (t, TimeDelta(a));
                x += d;
                y -= d;
                assert_eq!((x, y), (t + d, TimeDelta(a) - d));
                // Where it does not saturate, the difference is exact.
                if let Ok(exact) = t.checked_since(u) {
                    assert_eq!(t - u, exact);
                    assert_eq!(u + (t - u), t);
                }
            }
            assert_eq!(-TimeDelta(a), TimeDelta(a.saturating_neg()));
        }
        assert_eq!(-TimeDelta::MIN, TimeDelta::MAX);
    }
    use proptest::prelude::*;

    #[test]
    fn constructors_saturate_instead_of_panicking() {
        assert_eq!(TimeDelta::from_secs(i64::MAX), TimeDelta::MAX);
        assert_eq!(TimeDelta::from_millis(i64::MIN), TimeDelta::MIN);
        assert_eq!(TimeDelta::from_micros(3).as_nanos(), 3_000);
    }

    #[test]
    fn checked_arithmetic_reports_overflow() {
        assert_eq!(
            Timestamp::MAX.checked_add(TimeDelta::from_nanos(1)),
            Err(TimeError::Overflow)
        );
        assert_eq!(
            Timestamp::MIN.checked_sub(TimeDelta::from_nanos(1)),
            Err(TimeError::Overflow)
        );
        assert_eq!(
            Timestamp::MAX.checked_since(Timestamp::MIN),
            Err(TimeError::Overflow)
        );
        assert_eq!(
            Timestamp::MAX.nanos_since_wide(Timestamp::MIN),
            u64::MAX as i128
        );
        assert_eq!(TimeDelta::MIN.checked_neg(), Err(TimeError::Overflow));
        assert_eq!(TimeDelta::MIN.checked_abs(), Err(TimeError::Overflow));
        assert_eq!(TimeDelta::MAX.checked_mul(2), Err(TimeError::Overflow));
        assert_eq!(
            Timestamp::MAX.saturating_add(TimeDelta::MAX),
            Timestamp::MAX
        );
    }

    #[test]
    fn float_conversions() {
        assert_eq!(
            Timestamp::from_secs_f64(-1.25).unwrap().as_nanos(),
            -1_250_000_000
        );
        assert!(matches!(
            Timestamp::from_secs_f64(f64::NAN),
            Err(TimeError::NotFinite(_))
        ));
        assert_eq!(Timestamp::from_secs_f64(1e300), Err(TimeError::Overflow));
        assert_eq!(TimeDelta::from_secs_f64(9.3e9), Err(TimeError::Overflow));
        assert_eq!(TimeDelta::from_nanos(-1_500_000_000).as_secs_f64(), -1.5);
    }

    #[test]
    fn system_time_round_trip_before_and_after_epoch() {
        for n in [0, 1, -1, 1_700_000_000_123_456_789, -86_400_000_000_007] {
            let t = Timestamp::from_nanos(n);
            let st = t.to_system_time().unwrap();
            assert_eq!(Timestamp::try_from(st).unwrap(), t);
        }
    }

    #[test]
    fn duration_conversions() {
        assert_eq!(
            TimeDelta::try_from(Duration::from_secs(u64::MAX)),
            Err(TimeError::Overflow)
        );
        assert_eq!(
            Duration::try_from(TimeDelta::from_nanos(-1)),
            Err(TimeError::Negative)
        );
    }

    #[test]
    fn display_and_serde() {
        assert_eq!(Timestamp::from_nanos(-1_500).to_string(), "-0.000001500s");
        assert_eq!(TimeDelta::from_millis(1500).to_string(), "1.500000000s");
        assert_eq!(
            format!("{:?}", Timestamp::from_nanos(2)),
            "Timestamp(0.000000002s)"
        );
        let json = serde_json::to_string(&Timestamp::from_nanos(42)).unwrap();
        assert_eq!(json, "42");
        let back: TimeDelta = serde_json::from_str("-7").unwrap();
        assert_eq!(back, TimeDelta::from_nanos(-7));
    }

    proptest! {
        #[test]
        fn add_then_since_is_identity(t in any::<i64>(), d in any::<i64>()) {
            let t = Timestamp::from_nanos(t);
            let d = TimeDelta::from_nanos(d);
            match t.checked_add(d) {
                Ok(u) => prop_assert_eq!(u.checked_since(t), Ok(d)),
                Err(e) => {
                    prop_assert_eq!(e, TimeError::Overflow);
                    prop_assert!((t.as_nanos() as i128 + d.as_nanos() as i128) > i64::MAX as i128
                        || (t.as_nanos() as i128 + d.as_nanos() as i128) < i64::MIN as i128);
                }
            }
        }

        #[test]
        fn float_seconds_round_trip_within_precision(n in -4_000_000_000_000_000_000i64..4_000_000_000_000_000_000i64) {
            let t = Timestamp::from_nanos(n);
            let back = Timestamp::from_secs_f64(t.as_secs_f64()).unwrap();
            // f64 has 53 bits: relative error 2^-53 of ~4e18 ns is ~450 ns.
            prop_assert!((back.as_nanos() - n).abs() <= 1024);
        }
    }
}
