//! The timestamp estimator on real recordings' timestamps
//! (`../shared/data/real/`, see its README): hardware stamps come back
//! unchanged, a camera that drops every other frame for a while and then
//! none is followed, host-stamped streams are never numbered a frame off,
//! and two producers merged out of order are counted, not lost.
//!
//! `scripts/real_timestamps.py` prints the same runs as a table
//! (`docs/PERFORMANCE.md`, "Real timestamps").

use std::path::{Path, PathBuf};

use syncline_core::estimator::{Estimator, EstimatorConfig, EstimatorError, EstimatorStatus};
use syncline_core::time::{TimeDelta, Timestamp};
use syncline_workspace::shared_dir;

fn real(path: &str) -> PathBuf {
    shared_dir().join("data/real").join(path)
}

/// One integer nanosecond stamp per line (the first comma-separated
/// field); `#` lines are comments.
fn ns_lines(path: &Path) -> Vec<i64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let field = l.split(',').next().unwrap_or(l).trim();
            field
                .parse()
                .unwrap_or_else(|e| panic!("{}: {l:?}: {e}", path.display()))
        })
        .collect()
}

/// TUM stamps: seconds with a fraction, first field of each line.
fn tum_lines(path: &Path) -> Vec<i64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("timestamp"))
        .filter_map(|l| l.split_whitespace().next())
        .map(|s| {
            let (sec, frac) = s.split_once('.').unwrap_or((s, "0"));
            let frac = format!("{frac:0<9}");
            sec.parse::<i64>().unwrap() * 1_000_000_000 + frac[..9].parse::<i64>().unwrap()
        })
        .collect()
}

/// KITTI stamps: `YYYY-MM-DD HH:MM:SS.fffffffff`, as nanoseconds since the
/// start of that day (the runs here stay within one day).
fn kitti_lines(path: &Path) -> Vec<i64> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let time = l.split_whitespace().nth(1).unwrap();
            let (hms, frac) = time.split_once('.').unwrap();
            let mut parts = hms.split(':').map(|p| p.parse::<i64>().unwrap());
            let (h, m, s) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap(),
            );
            ((h * 60 + m) * 60 + s) * 1_000_000_000
                + format!("{frac:0<9}")[..9].parse::<i64>().unwrap()
        })
        .collect()
}

/// Runs the stamps through an estimator (5 s window, `period` ns if
/// given) and returns each estimate minus its stamp (`None` for an arrival
/// rejected as going back in time), and the status.
fn run_all(stamps: &[i64], period: Option<i64>) -> (Vec<Option<i64>>, EstimatorStatus) {
    let mut config = EstimatorConfig::new(TimeDelta::from_secs(5));
    config.period = period.map(TimeDelta::from_nanos);
    let mut e = Estimator::new(config).unwrap();
    let diffs = stamps
        .iter()
        .map(|&q| match e.update(Timestamp::from_nanos(q)) {
            Ok(est) => Some(est.stamp.as_nanos() - q),
            Err(EstimatorError::Backwards { .. }) => None,
            Err(other) => panic!("{other}"),
        })
        .collect();
    (diffs, e.status())
}

/// [`run_all`] on stamps that never go back in time.
fn run(stamps: &[i64], period: Option<i64>) -> (Vec<i64>, EstimatorStatus) {
    let (diffs, st) = run_all(stamps, period);
    let diffs = diffs
        .into_iter()
        .map(|d| d.expect("an estimate for every sample"))
        .collect();
    (diffs, st)
}

/// The largest |difference| from 2 s after the first stamp on.
fn worst_after_2s(stamps: &[i64], diffs: &[i64]) -> i64 {
    stamps
        .iter()
        .zip(diffs)
        .filter(|(q, _)| **q - stamps[0] >= 2_000_000_000)
        .map(|(_, d)| d.abs())
        .max()
        .unwrap()
}

/// EuRoC's cameras and IMU are stamped by the sensor's FPGA: fed as
/// arrivals they carry no jitter, and the estimator must return them
/// (within the stamps' own rounding, 0.1-0.2 µs). V2_03's cam0 list drops
/// every other frame for stretches of up to 100 frames and then none: it
/// was estimated up to 1.1 s early before the estimator restored the full
/// rate after renumbering a halved one.
#[test]
fn hardware_stamps_come_back_unchanged() {
    let mut series: Vec<(String, i64)> = [
        "MH01", "MH02", "MH03", "MH04", "MH05", "V101", "V102", "V103", "V201", "V202", "V203",
    ]
    .iter()
    .map(|s| (format!("euroc/cam0_timestamps/{s}.txt"), 50_000_000))
    .collect();
    series.push(("euroc/imu0_timestamps/V101_imu_t_ns.txt".into(), 5_000_000));
    series.push(("euroc/imu0_timestamps/MH03_imu_t_ns.txt".into(), 5_000_000));
    for (path, period) in series {
        let stamps = ns_lines(&real(&path));
        for configured in [Some(period), None] {
            let (diffs, st) = run(&stamps, configured);
            let worst = worst_after_2s(&stamps, &diffs);
            assert!(
                worst < 1_000,
                "{path} ({configured:?}): {worst} ns off, {st:?}"
            );
            assert_eq!(st.delays_detected, 0, "{path}: {st:?}");
            let p = st.period_ns.unwrap();
            assert!((p - period as f64).abs() < 1.0, "{path}: period {p}");
        }
    }
}

/// KITTI's Velodyne stamps: no jitter, but the motor's speed wanders (a
/// 103.56 ms period, configured as the nominal 100 ms). A line over the
/// window cannot follow the wander exactly; the estimates stay within 2 ms
/// of the stamps (0.8 and 1.2 ms at worst now), and the period is learned.
#[test]
fn a_wandering_motor_is_followed_within_two_milliseconds() {
    for name in ["timestamps.txt", "timestamps_start.txt"] {
        let stamps = kitti_lines(&real(&format!("kitti_velodyne_2011_09_26_1430/{name}")));
        let (diffs, st) = run(&stamps, Some(100_000_000));
        let worst = worst_after_2s(&stamps, &diffs);
        assert!(worst < 2_000_000, "{name}: {worst} ns off, {st:?}");
        let p = st.period_ns.unwrap();
        assert!((p - 103_560_000.0).abs() < 50_000.0, "{name}: period {p}");
        assert_eq!(st.losses_detected, 0, "{name}: {st:?}");
    }
}

/// Host-stamped cameras (no truth): TUM RGB-D's Kinect, whose rgb stamps
/// mostly fall on a 4 ms host tick, and a live rig's camera whose frame
/// period wanders between about 61 and 65 ms. No frame is numbered a
/// period off its arrival (every estimate lies within one period of it),
/// and every frame gets an estimate.
#[test]
fn host_stamped_cameras_stay_within_a_period_of_their_arrivals() {
    let series = [
        (
            "tum rgb",
            tum_lines(&real("tum_fr1_xyz/rgb.txt")),
            Some(33_333_333),
            33_333_333,
        ),
        (
            "tum depth",
            tum_lines(&real("tum_fr1_xyz/depth.txt")),
            Some(33_333_333),
            33_333_333,
        ),
        (
            "live cam0",
            ns_lines(&real("vislam_live_2025/cam0/data.csv")),
            None,
            63_440_000,
        ),
    ];
    for (name, stamps, configured, period) in series {
        let (diffs, st) = run(&stamps, configured);
        let worst = worst_after_2s(&stamps, &diffs);
        assert!(worst < period, "{name}: {worst} ns off the arrival, {st:?}");
        assert_eq!(st.samples, stamps.len() as u64, "{name}");
    }
}

/// The offline least-squares line of `stamps` on their frame numbers
/// (gaps rounded to the median gap): what an offline oracle sees of a
/// steady camera clock, a proxy for the frames' times.
fn ls_proxy(stamps: &[i64]) -> Vec<f64> {
    let mut gaps: Vec<i64> = stamps.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2] as f64;
    let mut n = vec![0.0];
    for w in stamps.windows(2) {
        let last = *n.last().unwrap();
        n.push(last + ((w[1] - w[0]) as f64 / median).round().max(1.0));
    }
    let k = stamps.len() as f64;
    let y: Vec<f64> = stamps.iter().map(|&s| (s - stamps[0]) as f64).collect();
    let (mx, my) = (n.iter().sum::<f64>() / k, y.iter().sum::<f64>() / k);
    let sxy: f64 = n.iter().zip(&y).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = n.iter().map(|x| (x - mx).powi(2)).sum();
    n.iter().map(|x| my + sxy / sxx * (x - mx)).collect()
}

/// TUM RGB-D's Kinect rgb stamps lie on a 4 ms host tick but stray from
/// it (three quarters within 0.2 ms, the rest up to 2 ms off): no exact
/// gcd, but their phases gather on the tick, and the quantised fit takes
/// the clock. Against the stamps' offline least-squares line, the RMS
/// (median removed, the first 10 % left out, like `score.py`) was 2.3 ms
/// with least squares (a stretch of late frames read as a change cut the
/// history, and the young line ran 1000 ppm slow), 0.79 ms with the
/// quantised fit and its 12 ppm period prior (the Kinect runs 195 ppm
/// slow), 0.38 ms now that the prior gives way to the data (Rock's 0.70,
/// Olson's 0.41). The depth stamps, with continuous jitter, are no
/// quantised clock (0.25 ms).
#[test]
fn a_kinect_on_a_host_tick_is_fitted_as_a_quantised_clock() {
    for (name, tick, bound) in [("rgb", Some(4_000_000), 0.6e6), ("depth", None, 0.5e6)] {
        let stamps = tum_lines(&real(&format!("tum_fr1_xyz/{name}.txt")));
        let (diffs, st) = run(&stamps, Some(33_333_333));
        assert_eq!(st.arrival_tick_ns, tick, "{name}: {st:?}");
        let proxy = ls_proxy(&stamps);
        let errs: Vec<f64> = diffs
            .iter()
            .zip(&stamps)
            .zip(&proxy)
            .map(|((d, s), p)| (d + s - stamps[0]) as f64 - p)
            .skip(stamps.len() / 10)
            .collect();
        let mut sorted = errs.clone();
        sorted.sort_by(f64::total_cmp);
        let median = sorted[sorted.len() / 2];
        let rms =
            (errs.iter().map(|e| (e - median).powi(2)).sum::<f64>() / errs.len() as f64).sqrt();
        assert!(rms < bound, "{name}: {:.0} us RMS, {st:?}", rms / 1e3);
    }
}

/// The live rig's IMU file merges two producers (about 181 Hz, and a
/// faster one 352 ms behind) without sorting: more than a quarter of the
/// rows go back in time. Each such row is rejected with a typed error and
/// counted, except where three in a row move forward from a step back
/// (read as the host clock stepping back: the fit restarts there, counted
/// in `restarts`); every other row gets an estimate, none is lost
/// silently.
#[test]
fn merged_producers_out_of_order_are_counted() {
    let stamps = ns_lines(&real("vislam_live_2025/imu0/imu_t_ns.txt"));
    let (diffs, st) = run_all(&stamps, None);
    let rejected = diffs.iter().filter(|d| d.is_none()).count() as u64;
    assert!(rejected > 10_000, "{st:?}");
    assert_eq!(st.rejected_backwards, rejected, "{st:?}");
    assert_eq!(st.samples + rejected, stamps.len() as u64, "{st:?}");
    // Every rejected row did go back in time.
    let mut last = i64::MIN;
    for (&q, d) in stamps.iter().zip(&diffs) {
        match d {
            None => assert!(q < last, "{q} rejected after {last}"),
            Some(_) => last = q,
        }
    }
}

/// The live rig's camera stretches its frame period with the exposure
/// (61-65 ms over seconds): no line fits it, and every line estimator
/// (ours before, Rock's, the hull, Olson's) put some estimates tens of
/// milliseconds after their own arrivals. It is taken for a wandering
/// rate within 8 s (at 6 s: the test needs 96 samples that show it; the
/// changes of the period detected at 3 and 10 s cut the fit's history but
/// not the test's, which filled from that history started only at 10 s),
/// and from then on the estimates lie within a few milliseconds of their
/// arrivals, where the frame-to-frame jitter is about a millisecond. The
/// exceptions are the first samples after a frame some 8 ms longer than
/// the others: late on the prediction, like a stalled sample, until the
/// next one shows the phase moved (six samples of about 850).
#[test]
fn a_camera_whose_frame_rate_wanders_is_tracked() {
    let stamps = ns_lines(&real("vislam_live_2025/cam0/data.csv"));
    let mut e = Estimator::new(EstimatorConfig::new(TimeDelta::from_secs(5))).unwrap();
    let mut tracked = Vec::new();
    for &q in &stamps {
        let est = e.update(Timestamp::from_nanos(q)).unwrap();
        if e.status().wandering || !tracked.is_empty() {
            tracked.push((q, est.stamp.as_nanos() - q));
        }
    }
    let start = tracked.first().map(|&(q, _)| q - stamps[0]);
    assert!(
        start.is_some_and(|t| t < 8_000_000_000),
        "tracked from {start:?} ns"
    );
    assert!(e.status().wandering, "{:?}", e.status());
    let worst = tracked.iter().map(|(_, d)| d.abs()).max().unwrap();
    assert!(worst < 12_000_000, "{worst} ns from an arrival");
    let far = tracked.iter().filter(|(_, d)| d.abs() > 5_000_000).count();
    assert!(
        far * 100 <= tracked.len(),
        "{far} of {} more than 5 ms off",
        tracked.len()
    );
}
