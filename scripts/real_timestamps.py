#!/usr/bin/env python3
"""The timestamp estimator on the real recordings' timestamps of
../shared/data/real/ (see its README), as a markdown table:

    python3 scripts/real_timestamps.py [--bin target/release/syncline] [--shared ../shared]

Each series is written as an event CSV (one `sample` row per stamp, the
stamp as the arrival time) and run through `syncline estimate --status`
with a 5 s window, once with the period a user would configure (none for
the live rig, whose rate has no nominal value) and once without. For the
hardware-stamped series (EuRoC, KITTI) the stamps are the truth and the
table gives estimate - stamp; for the host-stamped ones (TUM RGB-D, the
live rig) there is no truth and it gives estimate - arrival. Figures are
over the samples from 2 s after the first on; `p1`/`p99` are percentiles,
`min`/`max` the extremes (ms).
"""
import argparse
import datetime
import json
import os
import subprocess
import tempfile


def ns_lines(path):
    out = []
    for line in open(path):
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(int(line.split(",")[0]))
    return out


def tum_lines(path):
    out = []
    for line in open(path):
        if line.startswith("#") or line.startswith("timestamp"):
            continue
        sec, frac = line.split()[0].split(".")
        out.append(int(sec) * 10**9 + int(frac.ljust(9, "0")[:9]))
    return out


def kitti_lines(path):
    out = []
    for line in open(path):
        day, time = line.split()
        hms, frac = time.split(".")
        t = datetime.datetime.strptime(f"{day} {hms}", "%Y-%m-%d %H:%M:%S")
        t = t.replace(tzinfo=datetime.timezone.utc)
        out.append(int(t.timestamp()) * 10**9 + int(frac.ljust(9, "0")[:9]))
    return out


def estimate(binary, stamps, period, tmp):
    path = os.path.join(tmp, "series.csv")
    with open(path, "w") as f:
        f.write("event,time_ns,index\n")
        f.writelines(f"sample,{s},\n" for s in stamps)
    cmd = [binary, "estimate", "--window-ns", "5000000000", "--status", path]
    if period:
        cmd[4:4] = ["--period-ns", str(period)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    status = json.loads(out[-1])["status"]
    # One line per sample row; a row going back in time gets no estimate.
    estimates = {}
    for line in out[:-1]:
        row = json.loads(line)
        estimates[row["id"]] = None if "rejected" in row else row["estimate_ns"]
    return estimates, status


def summary(stamps, estimates):
    t0 = stamps[0]
    d = sorted((estimates[i] - s) / 1e6 for i, s in enumerate(stamps)
               if estimates.get(i) is not None and s - t0 >= 2 * 10**9)
    n = len(d)
    return d[0], d[n // 100], d[n // 2], d[(99 * n) // 100], d[-1]


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(root, "target/release/syncline"))
    ap.add_argument("--shared", default=os.environ.get(
        "SYNCLINE_SHARED", os.path.join(os.path.dirname(root), "shared")))
    a = ap.parse_args()
    real = os.path.join(a.shared, "data/real")
    series = []
    cams = sorted(os.listdir(os.path.join(real, "euroc/cam0_timestamps")))
    for f in cams:
        series.append((f"EuRoC cam0 {f[:-4]}", "hw", ns_lines(os.path.join(real, "euroc/cam0_timestamps", f)), 50_000_000))
    for f in ["V101", "MH03"]:
        series.append((f"EuRoC imu0 {f}", "hw", ns_lines(os.path.join(real, f"euroc/imu0_timestamps/{f}_imu_t_ns.txt")), 5_000_000))
    kitti = os.path.join(real, "kitti_velodyne_2011_09_26_1430")
    series.append(("KITTI Velodyne forward", "hw", kitti_lines(os.path.join(kitti, "timestamps.txt")), 100_000_000))
    series.append(("KITTI Velodyne start", "hw", kitti_lines(os.path.join(kitti, "timestamps_start.txt")), 100_000_000))
    tum = os.path.join(real, "tum_fr1_xyz")
    for f, p in [("rgb", 33_333_333), ("depth", 33_333_333), ("groundtruth", 10_000_000)]:
        series.append((f"TUM fr1/xyz {f}", "host", tum_lines(os.path.join(tum, f"{f}.txt")), p))
    live = os.path.join(real, "vislam_live_2025")
    series.append(("live rig cam0", "host", ns_lines(os.path.join(live, "cam0/data.csv")), None))
    series.append(("live rig imu0 (merged)", "host", ns_lines(os.path.join(live, "imu0/imu_t_ns.txt")), None))
    print("| series | samples | `--period-ns` | against | min / p1 / median / p99 / max (ms) | period (ms) | mode | losses | delays | changes | restarts | rejected back |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, kind, stamps, period in series:
            for p in ([period, None] if period else [None]):
                est, st = estimate(a.bin, stamps, p, tmp)
                lo, p1, med, p99, hi = summary(stamps, est)
                against = "stamp (truth)" if kind == "hw" else "arrival"
                per = f"{st['period_ns'] / 1e6:.4f}" if st.get("period_ns") else "-"
                print(f"| {name} | {len(stamps)} | {p or '-'} | {against} | {lo:.4f} / {p1:.4f} / {med:.4f} / {p99:.4f} / {hi:.4f} "
                      f"| {per} | {st['mode']} | {st['losses_detected']} | {st['delays_detected']} | {st['changes_detected']} "
                      f"| {st['restarts']} | {st['rejected_backwards']} |", flush=True)


if __name__ == "__main__":
    main()
