//! [`Interpolate`] for `glam` and `nalgebra` types: linear for vectors,
//! spherical (shortest arc, renormalised) for unit quaternions.

use super::Interpolate;

#[cfg(feature = "glam")]
mod glam_impls {
    use super::Interpolate;

    macro_rules! glam_lerp {
        ($scalar:ty: $($v:ty),*) => {$(
            impl Interpolate for $v {
                fn interpolate(&self, other: &Self, t: f64) -> Self {
                    self.lerp(*other, t.clamp(0.0, 1.0) as $scalar)
                }
                fn is_finite(&self) -> bool {
                    <$v>::is_finite(*self)
                }
            }
        )*};
    }

    glam_lerp!(f64: glam::DVec2, glam::DVec3, glam::DVec4);
    glam_lerp!(f32: glam::Vec2, glam::Vec3, glam::Vec3A, glam::Vec4);

    macro_rules! glam_slerp {
        ($scalar:ty: $($q:ty),*) => {$(
            /// Spherical interpolation along the shorter arc (glam's
            /// `slerp`, which falls back to a normalised lerp for nearly
            /// equal rotations), renormalised. A NaN input gives a non-finite result,
            /// which the lookup buffer reports.
            impl Interpolate for $q {
                fn interpolate(&self, other: &Self, t: f64) -> Self {
                    if t <= 0.0 {
                        return *self;
                    }
                    if t >= 1.0 {
                        return *other;
                    }
                    self.slerp(*other, t as $scalar).normalize()
                }
                fn is_finite(&self) -> bool {
                    <$q>::is_finite(*self)
                }
            }
        )*};
    }

    glam_slerp!(f64: glam::DQuat);
    glam_slerp!(f32: glam::Quat);
}

#[cfg(feature = "nalgebra")]
mod nalgebra_impls {
    use super::Interpolate;
    use nalgebra::{SVector, UnitQuaternion};

    macro_rules! na_impls {
        ($($s:ty),*) => {$(
            impl<const D: usize> Interpolate for SVector<$s, D> {
                fn interpolate(&self, other: &Self, t: f64) -> Self {
                    self.zip_map(other, |a, b| a.interpolate(&b, t))
                }
                fn is_finite(&self) -> bool {
                    self.iter().all(|x| x.is_finite())
                }
            }

            /// Spherical interpolation along the shorter arc with
            /// `try_slerp` (nalgebra's `slerp` panics where `try_slerp`
            /// returns `None`); falls back to a normalised lerp there.
            impl Interpolate for UnitQuaternion<$s> {
                fn interpolate(&self, other: &Self, t: f64) -> Self {
                    if t <= 0.0 {
                        return *self;
                    }
                    if t >= 1.0 {
                        return *other;
                    }
                    let t = t as $s;
                    match self.try_slerp(other, t, <$s>::EPSILON) {
                        Some(q) => q,
                        None => {
                            let (a, mut b) = (self.as_ref().coords, other.as_ref().coords);
                            if a.dot(&b) < 0.0 {
                                b = -b;
                            }
                            let c = a.interpolate(&b, t as f64);
                            UnitQuaternion::new_normalize(nalgebra::Quaternion::from(c))
                        }
                    }
                }
                fn is_finite(&self) -> bool {
                    self.as_ref().coords.iter().all(|x| x.is_finite())
                }
            }
        )*};
    }

    na_impls!(f32, f64);
}

#[cfg(test)]
mod tests {
    #[allow(unused_imports)]
    use super::Interpolate;
    #[allow(unused_imports)]
    use proptest::prelude::*;

    #[cfg(feature = "glam")]
    mod glam_tests {
        use super::*;
        use glam::{DQuat, DVec3, Quat, Vec3};

        #[test]
        fn vectors_and_quaternions() {
            let a = DVec3::new(0.0, 1.0, 2.0);
            let b = DVec3::new(2.0, 3.0, 4.0);
            assert_eq!(a.interpolate(&b, 0.5), DVec3::new(1.0, 2.0, 3.0));
            assert_eq!(Vec3::ZERO.interpolate(&Vec3::ONE, 1.0), Vec3::ONE);
            let q0 = DQuat::IDENTITY;
            let q1 = DQuat::from_rotation_z(1.0);
            let mid = q0.interpolate(&q1, 0.5);
            assert!(mid.abs_diff_eq(DQuat::from_rotation_z(0.5), 1e-12));
            // The shorter arc: -q1 is the same rotation.
            let mid2 = q0.interpolate(&(-q1), 0.5);
            assert!(mid2.dot(mid).abs() > 1.0 - 1e-12);
            let nan = Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0);
            assert!(!Quat::IDENTITY.interpolate(&nan, 0.5).is_finite());
        }

        fn dquat() -> impl Strategy<Value = DQuat> {
            (-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0)
                .prop_filter("non-zero", |(x, y, z, w)| {
                    x * x + y * y + z * z + w * w > 1e-3
                })
                .prop_map(|(x, y, z, w)| DQuat::from_xyzw(x, y, z, w).normalize())
        }

        proptest! {
            #[test]
            fn slerp_unit_norm_and_endpoints(a in dquat(), b in dquat(), t in 0.0f64..=1.0) {
                let q = a.interpolate(&b, t);
                prop_assert!((q.length() - 1.0).abs() < 1e-9);
                prop_assert_eq!(a.interpolate(&b, 0.0), a);
                prop_assert_eq!(a.interpolate(&b, 1.0), b);
                // The angle to the start grows with t (shorter arc, constant speed).
                let total = a.angle_between(b);
                prop_assert!((a.angle_between(q) - t * total).abs() < 1e-6);
            }
        }
    }

    #[cfg(feature = "nalgebra")]
    mod nalgebra_tests {
        use super::*;
        use nalgebra::{Quaternion, UnitQuaternion, Vector3};

        #[test]
        fn vectors_and_degenerate_quaternions() {
            let a = Vector3::new(0.0, 1.0, 2.0);
            let b = Vector3::new(2.0, 3.0, 4.0);
            assert_eq!(a.interpolate(&b, 0.5), Vector3::new(1.0, 2.0, 3.0));
            let q = UnitQuaternion::from_euler_angles(0.1, 0.2, 0.3);
            // Nearly identical and exactly opposite (same rotation): no panic.
            let q2 = UnitQuaternion::new_unchecked(-q.into_inner());
            let m = q.interpolate(&q2, 0.5);
            assert!(m.angle_to(&q) < 1e-6);
            let tiny = UnitQuaternion::from_euler_angles(0.1, 0.2, 0.3 + 1e-12);
            assert!(q.interpolate(&tiny, 0.5).is_finite());
        }

        fn uquat() -> impl Strategy<Value = UnitQuaternion<f64>> {
            (-1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0, -1.0f64..1.0)
                .prop_filter("non-zero", |(x, y, z, w)| {
                    x * x + y * y + z * z + w * w > 1e-3
                })
                .prop_map(|(x, y, z, w)| UnitQuaternion::new_normalize(Quaternion::new(w, x, y, z)))
        }

        proptest! {
            #[test]
            fn slerp_unit_norm(a in uquat(), b in uquat(), t in 0.0f64..=1.0) {
                let q = a.interpolate(&b, t);
                prop_assert!((q.norm() - 1.0).abs() < 1e-9);
                let total = a.angle_to(&b);
                prop_assert!((a.angle_to(&q) - t * total).abs() < 1e-6);
            }
        }
    }
}
