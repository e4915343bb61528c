//! A value with its acquisition time: [`Stamped<T>`], and [`HasStamp`] for
//! user message types that already carry one (a ROS-style header, say).

use serde::{Deserialize, Serialize};

use crate::time::Timestamp;

/// Anything that knows when it was true in the world: its acquisition
/// timestamp. Implement it for your own message types so that the
/// aligner and the synchronizers can take them directly.
///
/// ```
/// use syncline_core::{HasStamp, Timestamp};
///
/// struct Imu {
///     header_stamp_ns: i64,
///     gyro: [f64; 3],
/// }
///
/// impl HasStamp for Imu {
///     fn stamp(&self) -> Timestamp {
///         Timestamp::from_nanos(self.header_stamp_ns)
///     }
/// }
///
/// let imu = Imu { header_stamp_ns: 42, gyro: [0.0; 3] };
/// assert_eq!(imu.stamp().as_nanos(), 42);
/// ```
pub trait HasStamp {
    /// The acquisition time of this sample.
    fn stamp(&self) -> Timestamp;
}

/// A value and its acquisition timestamp.
///
/// ```
/// use syncline_core::{HasStamp, Stamped, Timestamp};
///
/// let s = Stamped::new(Timestamp::from_nanos(5), [1.0_f64, 2.0]);
/// let doubled = s.map(|v| v.map(|x| x * 2.0));
/// assert_eq!(doubled.stamp(), Timestamp::from_nanos(5));
/// assert_eq!(doubled.value, [2.0, 4.0]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Stamped<T> {
    /// When the value was acquired.
    pub stamp: Timestamp,
    /// The value.
    pub value: T,
}

impl<T> Stamped<T> {
    /// Pairs `value` with its acquisition time `stamp`.
    pub const fn new(stamp: Timestamp, value: T) -> Self {
        Stamped { stamp, value }
    }

    /// Transforms the value, keeping the stamp.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Stamped<U> {
        Stamped {
            stamp: self.stamp,
            value: f(self.value),
        }
    }

    /// A stamped reference to the value.
    pub const fn as_ref(&self) -> Stamped<&T> {
        Stamped {
            stamp: self.stamp,
            value: &self.value,
        }
    }

    /// Splits into stamp and value.
    pub fn into_parts(self) -> (Timestamp, T) {
        (self.stamp, self.value)
    }
}

impl<T> HasStamp for Stamped<T> {
    fn stamp(&self) -> Timestamp {
        self.stamp
    }
}

impl<T: HasStamp + ?Sized> HasStamp for &T {
    fn stamp(&self) -> Timestamp {
        (**self).stamp()
    }
}

impl<T: HasStamp + ?Sized> HasStamp for Box<T> {
    fn stamp(&self) -> Timestamp {
        (**self).stamp()
    }
}

impl<T: HasStamp + ?Sized> HasStamp for std::sync::Arc<T> {
    fn stamp(&self) -> Timestamp {
        (**self).stamp()
    }
}

impl HasStamp for Timestamp {
    fn stamp(&self) -> Timestamp {
        *self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_pass_through_wrappers() {
        let s = Stamped::new(Timestamp::from_nanos(9), "x");
        assert_eq!(std::sync::Arc::new(s).stamp().as_nanos(), 9);
        assert_eq!(Box::new(s).stamp().as_nanos(), 9);
        assert_eq!(HasStamp::stamp(&&s).as_nanos(), 9);
        assert_eq!(s.as_ref().value, &"x");
        assert_eq!(s.into_parts(), (Timestamp::from_nanos(9), "x"));
    }
}
