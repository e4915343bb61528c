//! Typed ROS 2 messages: serde types for the shipped definitions, and
//! [`decode`] / [`encode`] between them and CDR bytes.
//!
//! Each type mirrors its `.msg` definition field for field, in order (a
//! test checks every one against the shipped definitions byte for byte),
//! and implements [`Message`], which names its ROS 2 type. Your own types
//! work the same way: derive `Serialize` and `Deserialize` with the fields
//! of the `.msg` in order, implement [`Message`], and add the definition
//! to a [`MessageRegistry`](crate::msg::MessageRegistry) when you publish
//! them (the type hash comes from it).
//!
//! CDR encoding is the `cdr-encoding` crate's (RustDDS's serde CDR). Field
//! mapping: `bool` → `bool`, `intN`/`uintN`/`floatN` → the Rust primitive,
//! `string` → `String`, `T[N]` → `[T; N]` (N > 32 through
//! [`big_array`]), `T[]` → `Vec<T>`, `uint8[]` → [`serde_bytes::ByteBuf`]
//! (one copy, not one visit per byte).
//!
//! ```
//! use syncline_ros2::types::{decode, encode, sensor_msgs::Imu, std_msgs::Header,
//!     builtin_interfaces::Time};
//!
//! let imu = Imu {
//!     header: Header { stamp: Time { sec: 12, nanosec: 5 }, frame_id: "imu_link".into() },
//!     ..Imu::default()
//! };
//! let bytes = encode(&imu)?;
//! // The header stamp is where every ROS 2 tool looks for it.
//! assert_eq!(syncline_ros2::header_stamp(&bytes)?.as_nanos(), 12_000_000_005);
//! let back: Imu = decode(&bytes)?;
//! assert_eq!(back, imu);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::cdr::{ByteOrder, CdrError, encapsulation};

/// A ROS 2 message type: its full type name, `package/msg/Name`.
pub trait Message: Serialize + DeserializeOwned {
    /// The full type name, as in [`MessageRegistry`](crate::msg::MessageRegistry)
    /// (`sensor_msgs/msg/Imu`).
    const TYPE_NAME: &'static str;
}

/// Typed CDR that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TypedError {
    /// The encapsulation header is missing or not plain CDR.
    #[error(transparent)]
    Encapsulation(#[from] CdrError),
    /// The bytes do not hold the type (too short, a bad string or bool).
    #[error("CDR bytes are not a {type_name}: {reason}")]
    Decode {
        /// The type that was asked for.
        type_name: &'static str,
        /// What `cdr-encoding` said.
        reason: String,
    },
    /// The value cannot be written as CDR.
    #[error("cannot write a {type_name} as CDR: {reason}")]
    Encode {
        /// The type.
        type_name: &'static str,
        /// What `cdr-encoding` said.
        reason: String,
    },
}

/// Reads a message from CDR bytes (the encapsulation header included,
/// either byte order). Bytes after the message, such as the alignment
/// padding some writers add, are ignored.
pub fn decode<T: Message>(bytes: &[u8]) -> Result<T, TypedError> {
    let order = encapsulation(bytes)?;
    let body = &bytes[4..];
    let read = match order {
        ByteOrder::Little => {
            cdr_encoding::from_bytes::<T, byteorder::LittleEndian>(body).map(|(v, _)| v)
        }
        ByteOrder::Big => cdr_encoding::from_bytes::<T, byteorder::BigEndian>(body).map(|(v, _)| v),
    };
    read.map_err(|e| TypedError::Decode {
        type_name: T::TYPE_NAME,
        reason: e.to_string(),
    })
}

/// Writes a message as little-endian CDR with its encapsulation header, as
/// ROS 2 publishers do.
pub fn encode<T: Message>(value: &T) -> Result<Vec<u8>, TypedError> {
    let mut bytes = vec![0, 1, 0, 0];
    cdr_encoding::to_writer::<T, byteorder::LittleEndian, _>(&mut bytes, value).map_err(|e| {
        TypedError::Encode {
            type_name: T::TYPE_NAME,
            reason: e.to_string(),
        }
    })?;
    if bytes.len() == 4 {
        // An empty message: ROS 2 writes one dummy byte.
        bytes.push(0);
    }
    Ok(bytes)
}

/// serde for fixed arrays longer than serde's 32 (`float64[36]`
/// covariances): `#[serde(with = "big_array")]`. CDR writes a fixed array
/// as its elements, without a length.
pub mod big_array {
    use std::marker::PhantomData;

    use serde::de::{Error, SeqAccess, Visitor};
    use serde::ser::SerializeTuple;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// Writes the array as a tuple of `N` elements.
    pub fn serialize<S: Serializer, T: Serialize, const N: usize>(
        array: &[T; N],
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut tuple = serializer.serialize_tuple(N)?;
        for x in array {
            tuple.serialize_element(x)?;
        }
        tuple.end()
    }

    /// Reads a tuple of `N` elements.
    pub fn deserialize<'de, D, T, const N: usize>(deserializer: D) -> Result<[T; N], D::Error>
    where
        D: Deserializer<'de>,
        T: Deserialize<'de> + Default + Copy,
    {
        struct ArrayVisitor<T, const N: usize>(PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Default + Copy, const N: usize> Visitor<'de>
            for ArrayVisitor<T, N>
        {
            type Value = [T; N];
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                write!(f, "an array of {N} elements")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<[T; N], A::Error> {
                let mut array = [T::default(); N];
                for (i, slot) in array.iter_mut().enumerate() {
                    *slot = seq
                        .next_element()?
                        .ok_or_else(|| A::Error::invalid_length(i, &self))?;
                }
                Ok(array)
            }
        }
        deserializer.deserialize_tuple(N, ArrayVisitor::<T, N>(PhantomData))
    }
}

macro_rules! message {
    ($name:literal $(#[$m:meta])* pub struct $ty:ident { $($(#[$fm:meta])* pub $f:ident: $ft:ty,)* }) => {
        message! { @ $name $(#[$m])* #[derive(Default)] pub struct $ty { $($(#[$fm])* pub $f: $ft,)* } }
    };
    (@ $name:literal $(#[$m:meta])* pub struct $ty:ident { $($(#[$fm:meta])* pub $f:ident: $ft:ty,)* }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct $ty { $($(#[$fm])* pub $f: $ft,)* }
        impl $crate::types::Message for $ty {
            const TYPE_NAME: &'static str = $name;
        }
    };
}

/// `builtin_interfaces`.
pub mod builtin_interfaces {
    use super::*;

    message! { "builtin_interfaces/msg/Time"
        /// A point in time: seconds and nanoseconds since the epoch of its clock.
        pub struct Time {
            /// Whole seconds.
            pub sec: i32,
            /// Nanoseconds, `0..1_000_000_000`.
            pub nanosec: u32,
        }
    }

    impl Time {
        /// Nanoseconds since the epoch.
        pub fn as_nanos(&self) -> i64 {
            i64::from(self.sec) * 1_000_000_000 + i64::from(self.nanosec)
        }

        /// From nanoseconds since the epoch (seconds saturate at `i32`'s range).
        pub fn from_nanos(ns: i64) -> Self {
            let sec = ns.div_euclid(1_000_000_000);
            Self {
                sec: sec.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
                nanosec: ns.rem_euclid(1_000_000_000) as u32,
            }
        }
    }

    message! { "builtin_interfaces/msg/Duration"
        /// A length of time.
        pub struct Duration {
            /// Whole seconds.
            pub sec: i32,
            /// Nanoseconds, `0..1_000_000_000`.
            pub nanosec: u32,
        }
    }
}

/// `std_msgs`.
pub mod std_msgs {
    use super::builtin_interfaces::Time;
    use super::*;

    message! { "std_msgs/msg/Header"
        /// When and in which frame the data of a message was true.
        pub struct Header {
            /// The acquisition time.
            pub stamp: Time,
            /// The coordinate frame.
            pub frame_id: std::string::String,
        }
    }

    message! { "std_msgs/msg/String"
        /// A string.
        pub struct String {
            /// The text.
            pub data: std::string::String,
        }
    }
}

/// `geometry_msgs`: the plain types and their `*Stamped` forms.
pub mod geometry_msgs {
    use super::std_msgs::Header;
    use super::*;

    message! { "geometry_msgs/msg/Vector3"
        /// A 3-vector.
        pub struct Vector3 {
            /// x.
            pub x: f64,
            /// y.
            pub y: f64,
            /// z.
            pub z: f64,
        }
    }
    message! { "geometry_msgs/msg/Point"
        /// A position.
        pub struct Point {
            /// x.
            pub x: f64,
            /// y.
            pub y: f64,
            /// z.
            pub z: f64,
        }
    }
    message! { "geometry_msgs/msg/Quaternion"
        /// An orientation. `Default` is all zeros, as in ROS 2 C++ (not the identity).
        pub struct Quaternion {
            /// x.
            pub x: f64,
            /// y.
            pub y: f64,
            /// z.
            pub z: f64,
            /// w.
            pub w: f64,
        }
    }
    message! { "geometry_msgs/msg/Pose"
        /// A position and an orientation.
        pub struct Pose {
            /// The position.
            pub position: Point,
            /// The orientation.
            pub orientation: Quaternion,
        }
    }
    message! { @ "geometry_msgs/msg/PoseWithCovariance"
        /// A pose with its 6×6 covariance (row-major; x, y, z, rotations about x, y, z).
        pub struct PoseWithCovariance {
            /// The pose.
            pub pose: Pose,
            /// The covariance.
            #[serde(with = "big_array")]
            pub covariance: [f64; 36],
        }
    }
    impl Default for PoseWithCovariance {
        fn default() -> Self {
            Self {
                pose: Default::default(),
                covariance: [0.0; 36],
            }
        }
    }
    message! { "geometry_msgs/msg/Twist"
        /// Linear and angular velocity.
        pub struct Twist {
            /// Linear velocity.
            pub linear: Vector3,
            /// Angular velocity.
            pub angular: Vector3,
        }
    }
    message! { @ "geometry_msgs/msg/TwistWithCovariance"
        /// A twist with its 6×6 covariance (row-major).
        pub struct TwistWithCovariance {
            /// The twist.
            pub twist: Twist,
            /// The covariance.
            #[serde(with = "big_array")]
            pub covariance: [f64; 36],
        }
    }
    impl Default for TwistWithCovariance {
        fn default() -> Self {
            Self {
                twist: Default::default(),
                covariance: [0.0; 36],
            }
        }
    }
    message! { "geometry_msgs/msg/Accel"
        /// Linear and angular acceleration.
        pub struct Accel {
            /// Linear acceleration.
            pub linear: Vector3,
            /// Angular acceleration.
            pub angular: Vector3,
        }
    }
    message! { "geometry_msgs/msg/Wrench"
        /// Force and torque.
        pub struct Wrench {
            /// Force.
            pub force: Vector3,
            /// Torque.
            pub torque: Vector3,
        }
    }
    message! { "geometry_msgs/msg/Transform"
        /// A translation and a rotation.
        pub struct Transform {
            /// Translation.
            pub translation: Vector3,
            /// Rotation.
            pub rotation: Quaternion,
        }
    }
    message! { "geometry_msgs/msg/PointStamped"
        /// A stamped point.
        pub struct PointStamped {
            /// Stamp and frame.
            pub header: Header,
            /// The point.
            pub point: Point,
        }
    }
    message! { "geometry_msgs/msg/PoseStamped"
        /// A stamped pose.
        pub struct PoseStamped {
            /// Stamp and frame.
            pub header: Header,
            /// The pose.
            pub pose: Pose,
        }
    }
    message! { "geometry_msgs/msg/TwistStamped"
        /// A stamped twist.
        pub struct TwistStamped {
            /// Stamp and frame.
            pub header: Header,
            /// The twist.
            pub twist: Twist,
        }
    }
    message! { "geometry_msgs/msg/Vector3Stamped"
        /// A stamped vector.
        pub struct Vector3Stamped {
            /// Stamp and frame.
            pub header: Header,
            /// The vector.
            pub vector: Vector3,
        }
    }
    message! { "geometry_msgs/msg/QuaternionStamped"
        /// A stamped orientation.
        pub struct QuaternionStamped {
            /// Stamp and frame.
            pub header: Header,
            /// The orientation.
            pub quaternion: Quaternion,
        }
    }
    message! { "geometry_msgs/msg/AccelStamped"
        /// A stamped acceleration.
        pub struct AccelStamped {
            /// Stamp and frame.
            pub header: Header,
            /// The acceleration.
            pub accel: Accel,
        }
    }
    message! { "geometry_msgs/msg/WrenchStamped"
        /// A stamped wrench.
        pub struct WrenchStamped {
            /// Stamp and frame.
            pub header: Header,
            /// The wrench.
            pub wrench: Wrench,
        }
    }
    message! { "geometry_msgs/msg/TransformStamped"
        /// A stamped transform from `header.frame_id` to `child_frame_id`.
        pub struct TransformStamped {
            /// Stamp and parent frame.
            pub header: Header,
            /// The child frame.
            pub child_frame_id: std::string::String,
            /// The transform.
            pub transform: Transform,
        }
    }
    message! { "geometry_msgs/msg/PoseWithCovarianceStamped"
        /// A stamped pose with covariance.
        pub struct PoseWithCovarianceStamped {
            /// Stamp and frame.
            pub header: Header,
            /// The pose.
            pub pose: PoseWithCovariance,
        }
    }
    message! { "geometry_msgs/msg/TwistWithCovarianceStamped"
        /// A stamped twist with covariance.
        pub struct TwistWithCovarianceStamped {
            /// Stamp and frame.
            pub header: Header,
            /// The twist.
            pub twist: TwistWithCovariance,
        }
    }
}

/// `nav_msgs`.
pub mod nav_msgs {
    use super::geometry_msgs::{PoseWithCovariance, TwistWithCovariance};
    use super::std_msgs::Header;
    use super::*;

    message! { "nav_msgs/msg/Odometry"
        /// A pose in `header.frame_id` and a twist in `child_frame_id`.
        pub struct Odometry {
            /// Stamp and frame of the pose.
            pub header: Header,
            /// The frame of the twist.
            pub child_frame_id: String,
            /// The pose.
            pub pose: PoseWithCovariance,
            /// The twist.
            pub twist: TwistWithCovariance,
        }
    }
}

/// `sensor_msgs`.
pub mod sensor_msgs {
    use super::geometry_msgs::{Quaternion, Vector3};
    use super::std_msgs::Header;
    use super::*;
    use serde_bytes::ByteBuf;

    message! { "sensor_msgs/msg/Imu"
        /// An inertial measurement. A covariance whose first element is -1
        /// says the quantity is not estimated.
        pub struct Imu {
            /// Acquisition time and frame.
            pub header: Header,
            /// Orientation.
            pub orientation: Quaternion,
            /// Its covariance (row-major, about x, y, z).
            pub orientation_covariance: [f64; 9],
            /// Angular velocity, rad/s.
            pub angular_velocity: Vector3,
            /// Its covariance.
            pub angular_velocity_covariance: [f64; 9],
            /// Linear acceleration, m/s².
            pub linear_acceleration: Vector3,
            /// Its covariance.
            pub linear_acceleration_covariance: [f64; 9],
        }
    }
    message! { "sensor_msgs/msg/Image"
        /// An uncompressed image.
        pub struct Image {
            /// Acquisition time and camera frame.
            pub header: Header,
            /// Rows.
            pub height: u32,
            /// Columns.
            pub width: u32,
            /// Pixel encoding (`rgb8`, `mono16`, ...).
            pub encoding: String,
            /// Nonzero when the data is big-endian.
            pub is_bigendian: u8,
            /// Bytes per row.
            pub step: u32,
            /// `step * height` bytes.
            pub data: ByteBuf,
        }
    }
    message! { "sensor_msgs/msg/RegionOfInterest"
        /// A sub-window of an image.
        pub struct RegionOfInterest {
            /// Leftmost column.
            pub x_offset: u32,
            /// Topmost row.
            pub y_offset: u32,
            /// Rows.
            pub height: u32,
            /// Columns.
            pub width: u32,
            /// Whether to rectify it.
            pub do_rectify: bool,
        }
    }
    message! { "sensor_msgs/msg/CameraInfo"
        /// A camera's calibration.
        pub struct CameraInfo {
            /// Acquisition time and camera frame.
            pub header: Header,
            /// Image rows.
            pub height: u32,
            /// Image columns.
            pub width: u32,
            /// `plumb_bob`, `rational_polynomial`, ...
            pub distortion_model: String,
            /// Distortion parameters.
            pub d: Vec<f64>,
            /// Intrinsic matrix (3×3, row-major).
            pub k: [f64; 9],
            /// Rectification matrix.
            pub r: [f64; 9],
            /// Projection matrix (3×4).
            pub p: [f64; 12],
            /// Horizontal binning.
            pub binning_x: u32,
            /// Vertical binning.
            pub binning_y: u32,
            /// Region of interest.
            pub roi: RegionOfInterest,
        }
    }
    message! { "sensor_msgs/msg/PointField"
        /// One field of a point cloud's points.
        pub struct PointField {
            /// Its name (`x`, `intensity`, ...).
            pub name: String,
            /// Its byte offset in a point.
            pub offset: u32,
            /// Its datatype (1 `INT8` ... 8 `FLOAT64`).
            pub datatype: u8,
            /// Elements.
            pub count: u32,
        }
    }
    message! { "sensor_msgs/msg/PointCloud2"
        /// A point cloud.
        pub struct PointCloud2 {
            /// Acquisition time and frame.
            pub header: Header,
            /// Rows (1 for an unordered cloud).
            pub height: u32,
            /// Points per row.
            pub width: u32,
            /// The layout of a point.
            pub fields: Vec<PointField>,
            /// Whether the data is big-endian.
            pub is_bigendian: bool,
            /// Bytes per point.
            pub point_step: u32,
            /// Bytes per row.
            pub row_step: u32,
            /// The points.
            pub data: ByteBuf,
            /// Whether no point is invalid.
            pub is_dense: bool,
        }
    }
    message! { "sensor_msgs/msg/LaserScan"
        /// One sweep of a planar laser scanner.
        pub struct LaserScan {
            /// Acquisition time of the first ray, and frame.
            pub header: Header,
            /// Start angle, rad.
            pub angle_min: f32,
            /// End angle, rad.
            pub angle_max: f32,
            /// Angle between rays, rad.
            pub angle_increment: f32,
            /// Time between rays, s.
            pub time_increment: f32,
            /// Time between scans, s.
            pub scan_time: f32,
            /// Minimum range, m.
            pub range_min: f32,
            /// Maximum range, m.
            pub range_max: f32,
            /// Ranges, m.
            pub ranges: Vec<f32>,
            /// Intensities.
            pub intensities: Vec<f32>,
        }
    }
    message! { "sensor_msgs/msg/NavSatStatus"
        /// A satellite fix's status.
        pub struct NavSatStatus {
            /// -1 no fix, 0 fix, 1 SBAS, 2 GBAS.
            pub status: i8,
            /// Bit mask of GNSS services.
            pub service: u16,
        }
    }
    message! { "sensor_msgs/msg/NavSatFix"
        /// A satellite navigation fix.
        pub struct NavSatFix {
            /// Acquisition time and antenna frame.
            pub header: Header,
            /// The fix's status.
            pub status: NavSatStatus,
            /// Latitude, degrees.
            pub latitude: f64,
            /// Longitude, degrees.
            pub longitude: f64,
            /// Altitude above the WGS 84 ellipsoid, m.
            pub altitude: f64,
            /// Position covariance, m² (ENU, row-major).
            pub position_covariance: [f64; 9],
            /// 0 unknown, 1 approximated, 2 diagonal known, 3 known.
            pub position_covariance_type: u8,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cdr::{CdrWriter, header_stamp};
    use crate::msg::{Arity, BaseType, MessageRegistry};
    use proptest::prelude::*;

    /// splitmix64: enough randomness for field values, seeded by proptest.
    struct TestRng(u64);

    impl TestRng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }

        fn unit(&mut self) -> f64 {
            (self.next() >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// Random CDR bytes for `name`, written from its shipped `.msg`
    /// definition with the hand-written [`CdrWriter`], without the serde
    /// types: the independent side of the layout check.
    fn random_cdr(registry: &MessageRegistry, name: &str, rng: &mut TestRng) -> Vec<u8> {
        let mut w = CdrWriter::new();
        write_fields(registry, name, rng, &mut w);
        w.finish()
    }

    fn write_fields(registry: &MessageRegistry, name: &str, rng: &mut TestRng, w: &mut CdrWriter) {
        let def = registry
            .get(name)
            .unwrap_or_else(|| panic!("{name} is shipped"));
        for field in def.fields() {
            let count = match field.arity {
                Arity::Single => None,
                Arity::Array(n) => Some(n),
                Arity::Bounded(_) | Arity::Sequence => {
                    let n = rng.below(4) as u32;
                    w.u32(n);
                    Some(u64::from(n))
                }
            };
            for _ in 0..count.unwrap_or(1) {
                match &field.base {
                    BaseType::Nested(nested) => write_fields(registry, nested.as_str(), rng, w),
                    BaseType::Primitive(id) => write_primitive(*id, rng, w),
                    BaseType::BoundedString { .. } => panic!("no bounded strings shipped"),
                }
            }
        }
    }

    fn write_primitive(id: u8, rng: &mut TestRng, w: &mut CdrWriter) {
        match id {
            15 => w.bool(rng.below(2) == 1),
            2 => w.i8(rng.next() as i8),
            3 | 16 => w.u8(rng.next() as u8),
            4 => w.i16(rng.next() as i16),
            5 => w.u16(rng.next() as u16),
            6 => w.i32(rng.next() as i32),
            7 => w.u32(rng.next() as u32),
            8 => w.i64(rng.next() as i64),
            9 => w.u64(rng.next()),
            // Finite values: NaN would not compare equal after a round trip.
            10 => w.f32((rng.unit() * 2e6 - 1e6) as f32),
            11 => w.f64(rng.unit() * 2e9 - 1e9),
            17 => {
                let len = rng.below(12);
                let s: String = (0..len)
                    .map(|_| char::from(b'a' + rng.below(26) as u8))
                    .collect();
                w.string(&s)
            }
            other => panic!("primitive {other} is not in the shipped definitions"),
        };
    }

    /// Decodes `bytes` as `T` and writes it back: the same bytes means the
    /// serde type has the definition's fields, types and order.
    fn same_bytes<T: Message + PartialEq + std::fmt::Debug>(bytes: &[u8]) {
        let value: T = decode(bytes).unwrap_or_else(|e| panic!("{}: {e}", T::TYPE_NAME));
        let again = encode(&value).unwrap();
        assert_eq!(again, bytes, "{}", T::TYPE_NAME);
        // And big-endian input reads to the same value.
        let big = to_big_endian::<T>(&value);
        assert_eq!(decode::<T>(&big).unwrap(), value, "{}", T::TYPE_NAME);
    }

    fn to_big_endian<T: Message>(value: &T) -> Vec<u8> {
        let mut bytes = vec![0, 0, 0, 0];
        cdr_encoding::to_writer::<T, byteorder::BigEndian, _>(&mut bytes, value).unwrap();
        bytes
    }

    macro_rules! check_all {
        ($registry:expr, $rng:expr; $($ty:ty),* $(,)?) => {{
            let mut checked = Vec::new();
            $(
                let bytes = random_cdr($registry, <$ty as Message>::TYPE_NAME, $rng);
                same_bytes::<$ty>(&bytes);
                checked.push(<$ty as Message>::TYPE_NAME);
            )*
            checked
        }};
    }

    proptest! {
        #[test]
        fn every_shipped_type_matches_its_definition_byte_for_byte(seed in any::<u64>()) {
            use geometry_msgs::*;
            use sensor_msgs::*;
            let registry = MessageRegistry::shipped();
            let mut rng = TestRng(seed);
            let checked = check_all!(&registry, &mut rng;
                builtin_interfaces::Time, builtin_interfaces::Duration,
                std_msgs::Header, std_msgs::String,
                Vector3, Point, Quaternion, Pose, PoseWithCovariance, Twist,
                TwistWithCovariance, Accel, Wrench, Transform, PointStamped, PoseStamped,
                TwistStamped, Vector3Stamped, QuaternionStamped, AccelStamped, WrenchStamped,
                TransformStamped, PoseWithCovarianceStamped, TwistWithCovarianceStamped,
                nav_msgs::Odometry,
                Imu, Image, RegionOfInterest, CameraInfo, PointField, PointCloud2, LaserScan,
                NavSatStatus, NavSatFix,
            );
            // Every shipped definition has its serde type.
            let mut shipped: Vec<&str> = registry.names().map(|n| n.as_str()).collect();
            shipped.sort_unstable();
            let mut typed = checked.clone();
            typed.sort_unstable();
            prop_assert_eq!(shipped, typed);
        }

        #[test]
        fn decoding_any_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode::<sensor_msgs::PointCloud2>(&bytes);
            let _ = decode::<nav_msgs::Odometry>(&bytes);
            let _ = decode::<sensor_msgs::CameraInfo>(&bytes);
        }
    }

    #[test]
    fn the_header_stamp_is_where_the_raw_reader_finds_it() {
        let odom = nav_msgs::Odometry {
            header: std_msgs::Header {
                stamp: builtin_interfaces::Time::from_nanos(1_700_000_000_123_456_789),
                frame_id: "odom".into(),
            },
            child_frame_id: "base_link".into(),
            ..Default::default()
        };
        let bytes = encode(&odom).unwrap();
        assert_eq!(
            header_stamp(&bytes).unwrap().as_nanos(),
            1_700_000_000_123_456_789
        );
    }

    #[test]
    fn a_truncated_message_is_a_typed_error() {
        let bytes = encode(&sensor_msgs::Imu::default()).unwrap();
        let err = decode::<sensor_msgs::Imu>(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(
            matches!(
                err,
                TypedError::Decode {
                    type_name: "sensor_msgs/msg/Imu",
                    ..
                }
            ),
            "{err}"
        );
        assert!(matches!(
            decode::<sensor_msgs::Imu>(&[0, 1]),
            Err(TypedError::Encapsulation(_))
        ));
    }

    #[test]
    fn time_splits_negative_nanoseconds_like_ros() {
        let t = builtin_interfaces::Time::from_nanos(-1);
        assert_eq!((t.sec, t.nanosec), (-1, 999_999_999));
        assert_eq!(t.as_nanos(), -1);
    }
}
