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

A second table scores TUM RGB-D's two Kinect streams against a proxy for
their truth: the least-squares line of the stamps on the frame numbers
(gaps rounded to the median gap; no frame is missing), what an offline
oracle sees of a camera's steady clock. syncline, the Rock reference
model and the two causal references (`rock_estimator.py`,
`causal_reference.py`; the hull with the quantised kind's 60 s history) are
scored on it with the scenarios' `score.py` (RMS and max in ms, median
removed, the first 10 % not scored).
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


def proxy_rows(stamps):
    """The stamps' least-squares line on their frame numbers."""
    gaps = sorted(b - a for a, b in zip(stamps, stamps[1:]))
    med = gaps[len(gaps) // 2]
    n = [0]
    for a, b in zip(stamps, stamps[1:]):
        n.append(n[-1] + max(1, round((b - a) / med)))
    k = len(stamps)
    mx = sum(n) / k
    my = sum(s - stamps[0] for s in stamps) / k
    sxy = sum((x - mx) * (s - stamps[0] - my) for x, s in zip(n, stamps))
    sxx = sum((x - mx) ** 2 for x in n)
    slope = sxy / sxx
    return [int(stamps[0] + my + slope * (x - mx)) for x in n], slope


def run_references(csv_path, side, tmp, hull_history_ns=None):
    """Runs the Rock reference model and the two causal references on a draw
    (CSV and sidecar); returns {name: estimates JSONL path}."""
    here = os.path.dirname(os.path.abspath(__file__))
    outs = {}
    for ref, cmd in [("Rock", ["rock_estimator.py", csv_path, side]),
                     ("hull", ["causal_reference.py", "hull", csv_path, side]),
                     ("Olson", ["causal_reference.py", "olson", csv_path, side])]:
        outs[ref] = os.path.join(tmp, f"{ref}.jsonl")
        extra = ["--history-ns", str(hull_history_ns)] if ref == "hull" and hull_history_ns else []
        subprocess.run(["python3", os.path.join(here, cmd[0])] + cmd[1:] + [outs[ref]] + extra,
                       check=True, capture_output=True)
    return outs


def score(shared, csv_path, estimates):
    """RMS and max error (ms, median removed) of an estimates JSONL against
    the draw's `true_ns`, by the scenarios' score.py."""
    r = json.loads(subprocess.run(["python3", os.path.join(shared, "data/estimator/score.py"), csv_path, estimates],
                                  capture_output=True, text=True, check=True).stdout)
    return r["rms_ns"] / 1e6, r["max_ns"] / 1e6


def proxy_table(a, real, tmp):
    print()
    print("| TUM fr1/xyz, against the proxy | proxy period (ms) | syncline | Rock | hull (60 s) | Olson |")
    print("|---|---|---|---|---|---|")
    for name in ["rgb", "depth"]:
        stamps = tum_lines(os.path.join(real, "tum_fr1_xyz", f"{name}.txt"))
        truth, slope = proxy_rows(stamps)
        csv_path, side = os.path.join(tmp, f"{name}.csv"), os.path.join(tmp, f"{name}.json")
        with open(csv_path, "w") as f:
            f.write("event,time_ns,index,true_ns\n")
            f.writelines(f"sample,{s},,{t}\n" for s, t in zip(stamps, truth))
        json.dump({"name": name, "window_ns": 5_000_000_000, "period_ns": 33_333_333, "loss_threshold": 2}, open(side, "w"))
        outs = {"syncline": os.path.join(tmp, "syn.jsonl")}
        with open(outs["syncline"], "w") as f:
            subprocess.run([a.bin, "estimate", "--window-ns", "5000000000", "--period-ns", "33333333", csv_path],
                           stdout=f, check=True)
        outs.update(run_references(csv_path, side, tmp, hull_history_ns=60_000_000_000))
        cells = [f"{r:.3f} / {m:.3f}" for r, m in (score(a.shared, csv_path, outs[k])
                                                  for k in ["syncline", "Rock", "hull", "Olson"])]
        print(f"| {name} | {slope / 1e6:.4f} | " + " | ".join(cells) + " |", flush=True)


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
        proxy_table(a, real, tmp)


if __name__ == "__main__":
    main()
