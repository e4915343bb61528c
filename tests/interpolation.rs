//! Interpolation on real data (TUM fr1/xyz motion-capture ground truth) and
//! the lidar-centred example run end to end.

use glam::{DQuat, DVec3};
use syncline::core::interp::{BufferConfig, Interpolate, LookupBuffer, LookupError};
use syncline::{TimeDelta, Timestamp};
use syncline_workspace::shared_dir;

/// A mocap pose: position (lerp) and orientation (slerp).
#[derive(Debug, Clone, Copy)]
struct Pose {
    p: DVec3,
    q: DQuat,
}

impl Interpolate for Pose {
    fn interpolate(&self, other: &Self, t: f64) -> Self {
        Pose {
            p: self.p.interpolate(&other.p, t),
            q: self.q.interpolate(&other.q, t),
        }
    }
    fn is_finite(&self) -> bool {
        self.p.is_finite() && self.q.is_finite()
    }
}

/// `timestamp tx ty tz qx qy qz qw` lines (comments and the header skipped).
fn groundtruth() -> Vec<(Timestamp, Pose)> {
    let path = shared_dir().join("data/real/tum_fr1_xyz/groundtruth.txt");
    let text = std::fs::read_to_string(&path).expect("groundtruth.txt");
    text.lines()
        .filter_map(|l| {
            let v: Vec<f64> = l
                .split_whitespace()
                .map(|t| t.parse().ok())
                .collect::<Option<_>>()?;
            let [t, x, y, z, qx, qy, qz, qw] = v[..] else {
                return None;
            };
            Some((
                Timestamp::from_secs_f64(t).ok()?,
                Pose {
                    p: DVec3::new(x, y, z),
                    q: DQuat::from_xyzw(qx, qy, qz, qw).normalize(),
                },
            ))
        })
        .collect()
}

#[test]
fn leave_one_out_on_tum_groundtruth() {
    let gt = groundtruth();
    assert_eq!(gt.len(), 3000);
    // Every other pose in the buffer (50 Hz); the others are the truth.
    let mut buf = LookupBuffer::new(BufferConfig::new(2048).max_gap(TimeDelta::from_millis(50)));
    for (t, pose) in gt.iter().step_by(2) {
        buf.insert(*t, *pose);
    }
    let (mut worst_p, mut worst_q, mut ok, mut gaps) = (0.0_f64, 0.0_f64, 0, 0);
    for (t, truth) in gt.iter().skip(1).step_by(2) {
        match buf.interpolate(*t) {
            Ok(pose) => {
                ok += 1;
                worst_p = worst_p.max((pose.p - truth.p).length());
                worst_q = worst_q.max(pose.q.angle_between(truth.q));
            }
            Err(LookupError::GapTooLarge { .. }) => gaps += 1,
            Err(LookupError::AfterNewest { .. }) => {}
            Err(e) => panic!("unexpected {e}"),
        }
    }
    // The 110 ms hole of the recording is refused, not bridged.
    assert_eq!(gaps, 1);
    assert!(ok >= 1497, "{ok}");
    // Mocap noise level (the file has 4 decimals: 0.1 mm, 1e-4).
    assert!(worst_p < 0.005, "position error {worst_p} m");
    assert!(worst_q < 0.01, "orientation error {worst_q} rad");
}

#[test]
fn lidar_example_runs_and_reports() {
    // Examples are built by `cargo test` next to the test binaries.
    let exe = std::env::current_exe().expect("test path");
    let dir = exe.parent().and_then(|d| d.parent()).expect("target dir");
    let example = dir.join("examples/lidar_interpolation");
    let out = std::process::Command::new(&example)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", example.display()));
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("198 scans interpolated"), "{text}");
    assert!(
        text.contains("status: 200 pivots, 198 complete, 2 partial, 0 dropped"),
        "{text}"
    );
    assert!(
        text.contains("gnss missing: extrapolation refused"),
        "{text}"
    );
}
