//! Lidar-centred synchronisation: IMU (200 Hz, orientation + angular
//! velocity), wheel speed (50 Hz) and GNSS position (5 Hz, 80 ms late)
//! interpolated at each lidar scan's stamp (10 Hz).
//!
//! Every sensor is simulated by a task that sends each sample when it would
//! arrive (acquisition time + latency). Time is tokio's paused clock, so the
//! 20 simulated seconds take a fraction of a real one. The scan waits for
//! the GNSS fix after it (up to 400 ms); the interpolated values are
//! compared with the simulated truth at the scan time.
//!
//! Run: `cargo run --release --example lidar_interpolation`

use futures::StreamExt;
use futures::channel::mpsc;
use glam::{DQuat, DVec3, EulerRot};
use syncline::core::interp::{BufferConfig, Interpolate};
use syncline::interpolated::{PivotConfig, Secondary, interpolated};
use syncline::prelude::*;

/// An IMU sample: orientation (slerp) and angular velocity (lerp).
#[derive(Debug, Clone, Copy)]
struct Imu {
    orientation: DQuat,
    angular_velocity: DVec3,
}

impl Interpolate for Imu {
    fn interpolate(&self, other: &Self, t: f64) -> Self {
        Imu {
            orientation: self.orientation.interpolate(&other.orientation, t),
            angular_velocity: self
                .angular_velocity
                .interpolate(&other.angular_velocity, t),
        }
    }
    fn is_finite(&self) -> bool {
        self.orientation.is_finite() && self.angular_velocity.is_finite()
    }
}

/// The simulated truth, `t` in seconds.
mod truth {
    use super::*;

    pub fn yaw(t: f64) -> f64 {
        1.2 * (1.0 - (0.5 * t).cos())
    }
    pub fn roll(t: f64) -> f64 {
        0.05 * (2.0 * t).sin()
    }
    pub fn imu(t: f64) -> Imu {
        Imu {
            orientation: DQuat::from_euler(EulerRot::ZYX, yaw(t), 0.0, roll(t)),
            angular_velocity: DVec3::new(0.1 * (2.0 * t).cos(), 0.0, 0.6 * (0.5 * t).sin()),
        }
    }
    pub fn speed(t: f64) -> f64 {
        5.0 + (0.3 * t).sin()
    }
    pub fn position(t: f64) -> DVec3 {
        DVec3::new(
            5.0 * t - 3.0 * (0.3 * t).cos(),
            8.0 * (0.2 * t).sin(),
            0.1 * t,
        )
    }
}

const SECONDS: i64 = 20;

/// Sends `value(t)` stamped `t` for `t = phase + k * period`, each at
/// `t + latency (+ jitter)` on the clock.
fn sensor<T: Send + 'static>(
    clock: TokioClock,
    period: TimeDelta,
    phase: TimeDelta,
    latency: TimeDelta,
    value: impl Fn(f64) -> T + Send + 'static,
) -> mpsc::UnboundedReceiver<Stamped<T>> {
    let (tx, rx) = mpsc::unbounded();
    tokio::spawn(async move {
        let end = Timestamp::EPOCH.saturating_add(TimeDelta::from_secs(SECONDS));
        let mut stamp = Timestamp::EPOCH.saturating_add(phase);
        let mut rng = 0x2545_f491_4f6c_dd1d_u64 ^ period.as_nanos() as u64;
        while stamp < end {
            // Deterministic jitter of the arrival: 0..1 ms.
            rng = rng.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let jitter = TimeDelta::from_nanos((rng >> 44) as i64 % 1_000_000);
            clock
                .sleep_until(stamp.saturating_add(latency).saturating_add(jitter))
                .await;
            if tx
                .unbounded_send(Stamped::new(stamp, value(stamp.as_secs_f64())))
                .is_err()
            {
                return;
            }
            stamp = stamp.saturating_add(period);
        }
    });
    rx
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    tokio::time::pause();
    let clock = TokioClock::starting_at(Timestamp::EPOCH);
    let ms = TimeDelta::from_millis;
    let scans = sensor(clock, ms(100), ms(13), ms(30), |_| "scan").map(|s| s.stamp);
    let imu = sensor(clock, ms(5), ms(0), ms(2), truth::imu);
    let wheel = sensor(clock, ms(20), ms(7), ms(5), truth::speed);
    let gnss = sensor(clock, ms(200), ms(50), ms(80), truth::position);

    let mut synced = interpolated(
        scans,
        (
            Secondary::new(imu, BufferConfig::new(256).max_gap(ms(20))),
            Secondary::new(wheel, BufferConfig::new(64).max_gap(ms(60))),
            Secondary::new(gnss, BufferConfig::new(16).max_gap(ms(250))),
        ),
        clock,
        PivotConfig::new(ms(400)),
    );

    let (mut n, mut yaw_err, mut speed_err, mut pos_err) = (0, 0.0_f64, 0.0_f64, 0.0_f64);
    let mut max_wait = TimeDelta::ZERO;
    println!(
        "scan_s   waited_ms  yaw_rad(interp/truth)  speed_mps(interp/truth)  gnss_x_m(interp/truth)"
    );
    while let Some(at) = synced.next().await {
        let t = at.stamp.as_secs_f64();
        let waited = clock
            .now()
            .checked_since(at.stamp)
            .unwrap_or(TimeDelta::ZERO);
        max_wait = max_wait.max(waited);
        let (Ok(imu), Ok(speed), Ok(pos)) = at.values else {
            let (a, b, c) = (&at.values.0, &at.values.1, &at.values.2);
            let errors = [
                ("imu", a.as_ref().err()),
                ("wheel", b.as_ref().err()),
                ("gnss", c.as_ref().err()),
            ];
            for (name, e) in errors.iter().filter_map(|(n, e)| e.map(|e| (n, e))) {
                println!("{t:7.3}  {name} missing: {e}");
            }
            continue;
        };
        let yaw = imu.orientation.to_euler(EulerRot::ZYX).0;
        let truth_q = truth::imu(t).orientation;
        yaw_err = yaw_err.max(imu.orientation.angle_between(truth_q));
        speed_err = speed_err.max((speed - truth::speed(t)).abs());
        pos_err = pos_err.max((pos - truth::position(t)).length());
        if n < 5 {
            println!(
                "{t:7.3}  {:9.1}  {yaw:9.6} / {:9.6}    {speed:9.6} / {:9.6}     {:9.4} / {:9.4}",
                waited.as_secs_f64() * 1e3,
                truth::yaw(t),
                truth::speed(t),
                pos.x,
                truth::position(t).x,
            );
        }
        n += 1;
    }
    let status = synced.status();
    println!("...");
    println!("{n} scans interpolated in {SECONDS} simulated seconds");
    println!(
        "max error vs truth: orientation {yaw_err:.2e} rad, speed {speed_err:.2e} m/s, GNSS position {pos_err:.3} m"
    );
    println!(
        "longest wait for a bracket: {:.1} ms (GNSS latency)",
        max_wait.as_secs_f64() * 1e3
    );
    println!(
        "status: {} pivots, {} complete, {} partial, {} dropped",
        status.pivots, status.complete, status.partial, status.dropped
    );
}
