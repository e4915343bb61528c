//! Interpolation at a time: the [`Interpolate`] trait and the bounded
//! per-stream [`LookupBuffer`].
//!
//! This is the "evaluate one stream at another's time" part of capability 3
//! (Match), as in the lidar-centred synchronisation where IMU, velocity and
//! GNSS samples are interpolated at each lidar scan's stamp (see the async
//! combinator `syncline::interpolated`).
//!
//! * [`Interpolate`]: linear for `f32`/`f64` and fixed-size arrays of them,
//!   spherical (slerp) for unit quaternions of `glam` (feature `glam`) and
//!   `nalgebra` (feature `nalgebra`); implement it for your own types.
//! * [`LookupBuffer`]: a preallocated ring of time-ordered samples with
//!   queries before / after / nearest a time and an interpolated value with a
//!   maximum bracket gap. Extrapolation and non-finite results are typed
//!   errors ([`LookupError`]), never panics.
//!
//! ```
//! use syncline_core::interp::{BufferConfig, LookupBuffer, LookupError};
//! use syncline_core::{TimeDelta, Timestamp};
//!
//! let ms = |n: i64| Timestamp::from_nanos(n * 1_000_000);
//! let mut speed = LookupBuffer::new(BufferConfig::new(8).max_gap(TimeDelta::from_millis(50)));
//! speed.insert(ms(0), 1.0_f64);
//! speed.insert(ms(20), 2.0);
//! assert_eq!(speed.interpolate(ms(5)), Ok(1.25));
//! assert!(matches!(speed.interpolate(ms(30)), Err(LookupError::AfterNewest { .. })));
//! ```

mod buffer;
#[cfg(any(feature = "glam", feature = "nalgebra"))]
mod linalg;

pub use buffer::{
    BufferConfig, BufferStatus, Insert, LookupBuffer, LookupError, OnDuplicate, OnOutOfOrder,
    RejectReason,
};

/// A value that can be evaluated between two samples of itself.
///
/// `interpolate(a, b, t)` is the value a fraction `t` of the way from `a`
/// (at `t = 0`) to `b` (at `t = 1`). Callers pass `t` in `[0, 1]`;
/// implementations must return `a` at `t = 0` and `b` at `t = 1`.
/// [`is_finite`](Interpolate::is_finite) lets the [`LookupBuffer`] refuse a
/// NaN or infinite result with a typed error instead of handing it on.
///
/// Implement it for your own types by combining the fields:
///
/// ```
/// use syncline_core::interp::Interpolate;
///
/// #[derive(Clone, Debug, PartialEq)]
/// struct Odom { pos: [f64; 2], speed: f32 }
///
/// impl Interpolate for Odom {
///     fn interpolate(&self, other: &Self, t: f64) -> Self {
///         Odom {
///             pos: self.pos.interpolate(&other.pos, t),
///             speed: self.speed.interpolate(&other.speed, t),
///         }
///     }
///     fn is_finite(&self) -> bool {
///         self.pos.is_finite() && self.speed.is_finite()
///     }
/// }
///
/// let a = Odom { pos: [0.0, 0.0], speed: 1.0 };
/// let b = Odom { pos: [2.0, 4.0], speed: 3.0 };
/// assert_eq!(a.interpolate(&b, 0.5), Odom { pos: [1.0, 2.0], speed: 2.0 });
/// ```
pub trait Interpolate: Sized {
    /// The value a fraction `t` (in `[0, 1]`) of the way from `self` to `other`.
    fn interpolate(&self, other: &Self, t: f64) -> Self;

    /// False when the value holds a NaN or an infinity (an interpolated
    /// value that fails this check is reported as
    /// [`LookupError::NotFinite`]).
    fn is_finite(&self) -> bool;
}

/// Linear interpolation that returns the endpoints exactly, stays between
/// them and is monotone in `t` (the clamp keeps rounding from stepping past
/// `b`; the fallback keeps huge opposite values from overflowing).
macro_rules! lerp_float {
    ($($f:ty),*) => {$(
        impl Interpolate for $f {
            fn interpolate(&self, other: &Self, t: f64) -> Self {
                let (a, b) = (*self, *other);
                if t <= 0.0 {
                    return a;
                }
                if t >= 1.0 {
                    return b;
                }
                let t = t as $f;
                let span = b - a;
                if !span.is_finite() {
                    return a * (1.0 - t) + b * t;
                }
                let v = a + span * t;
                if a <= b { v.clamp(a, b) } else { v.clamp(b, a) }
            }

            fn is_finite(&self) -> bool {
                <$f>::is_finite(*self)
            }
        }
    )*};
}

lerp_float!(f32, f64);

impl<T: Interpolate, const N: usize> Interpolate for [T; N] {
    fn interpolate(&self, other: &Self, t: f64) -> Self {
        core::array::from_fn(|i| self[i].interpolate(&other[i], t))
    }

    fn is_finite(&self) -> bool {
        self.iter().all(Interpolate::is_finite)
    }
}

/// The fraction of the way `t` lies from `t0` to `t1` (`t0 < t1`), computed
/// from exact integer differences.
pub(crate) fn fraction(t0: i64, t: i64, t1: i64) -> f64 {
    let (num, den) = match (t.checked_sub(t0), t1.checked_sub(t0)) {
        (Some(num), Some(den)) => (num as f64, den as f64),
        // Spans beyond ±292 years: exact in i128, rare, slower.
        _ => (
            (t as i128 - t0 as i128) as f64,
            (t1 as i128 - t0 as i128) as f64,
        ),
    };
    if den <= 0.0 {
        return 0.0;
    }
    (num / den).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn scalars_and_arrays() {
        assert_eq!(1.0_f64.interpolate(&3.0, 0.25), 1.5);
        assert_eq!(3.0_f32.interpolate(&1.0, 0.5), 2.0);
        assert_eq!([0.0, 10.0].interpolate(&[1.0, 20.0], 0.5), [0.5, 15.0]);
        assert_eq!(
            [1.0_f32; 3].interpolate(&[2.0; 3], 1.0),
            [2.0_f32, 2.0, 2.0]
        );
        assert!(!f64::NAN.is_finite());
        assert!(!Interpolate::is_finite(&[1.0, f64::INFINITY]));
        // Huge opposite values do not overflow into infinity.
        let v = (-f64::MAX).interpolate(&f64::MAX, 0.5);
        assert!(v.is_finite());
    }

    #[test]
    fn fraction_is_exact_on_wide_ranges() {
        assert_eq!(fraction(i64::MIN, 0, i64::MAX), 0.5);
        assert_eq!(fraction(0, 5, 10), 0.5);
        assert_eq!(fraction(3, 3, 3), 0.0);
    }

    proptest! {
        #[test]
        fn endpoints_exact(a in -1e12f64..1e12, b in -1e12f64..1e12) {
            prop_assert_eq!(a.interpolate(&b, 0.0), a);
            prop_assert_eq!(a.interpolate(&b, 1.0), b);
            let (af, bf) = (a as f32, b as f32);
            prop_assert_eq!(af.interpolate(&bf, 0.0), af);
            prop_assert_eq!(af.interpolate(&bf, 1.0), bf);
        }

        #[test]
        fn monotone_and_bounded(a in -1e12f64..1e12, b in -1e12f64..1e12,
                                 t1 in 0.0f64..=1.0, t2 in 0.0f64..=1.0) {
            let (lo, hi) = if t1 <= t2 { (t1, t2) } else { (t2, t1) };
            let (v1, v2) = (a.interpolate(&b, lo), a.interpolate(&b, hi));
            prop_assert!(v1 >= a.min(b) && v1 <= a.max(b));
            if a <= b {
                prop_assert!(v1 <= v2);
            } else {
                prop_assert!(v1 >= v2);
            }
        }
    }
}
