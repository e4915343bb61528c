#!/usr/bin/env python3
"""S9 draws met and missed by the sensor's rate error (ppm), from the logs
of `scripts/estimator_draws.py --kinds S9_quantised_arrival --keep DIR`:

    python3 scripts/s9_by_drift.py --dir DIR LOG [LOG ...]

The rate error of each draw is the least-squares slope of its true times
(the `true_ns` column of the kept CSV) against the sample number. Prints,
per 2 ppm bin of |rate error|, the draws and misses, the median target and
which term of the rule sets it (2 x best causal or 1/2 x Rock), and the
median ratio of syncline's RMS to the target.
"""
import argparse
import csv
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from s9_likelihood import true_drift_ppm  # noqa: E402

LINE = re.compile(
    r"S9_quantised_arrival\s+(\d+) rock\s+([\d.]+)/\s*\d+ hull\s+([\d.]+) olson\s+([\d.]+)"
    r" target\s+([\d.]+)\s+syncline\s+([\d.]+)/\s*\d+ (\w+)")
PERIOD_NS = 33_333_333.333


def rate_error_ppm(path):
    t = [int(r["true_ns"]) for r in csv.DictReader(open(path)) if r["event"] == "sample"]
    return true_drift_ppm(t, PERIOD_NS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True, help="the --keep directory of the draws")
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()
    bins = {}
    for log in a.logs:
        for line in open(log):
            m = LINE.search(line)
            if not m:
                continue
            seed, rock, hull, olson, target, ours, verdict = m.groups()
            ppm = rate_error_ppm(os.path.join(a.dir, seed, "S9_quantised_arrival.csv"))
            causal_sets = 2 * min(float(hull), float(olson)) < 0.5 * float(rock)
            b = bins.setdefault(min(int(abs(ppm) // 2) * 2, 28), [])
            b.append((verdict != "ok", float(target), causal_sets, float(ours) / float(target)))
    print("| \\|rate error\\| (ppm) | draws | missed | median target (us) | set by 2 x best causal | median RMS / target |")
    print("|---|---|---|---|---|---|")
    for k in sorted(bins):
        b = bins[k]
        label = f"{k}-{k + 2}" if k < 28 else "28-30"
        print(f"| {label} | {len(b)} | {sum(x[0] for x in b)} | {statistics.median(x[1] for x in b):.1f} "
              f"| {sum(x[2] for x in b)} | {statistics.median(x[3] for x in b):.2f} |")


if __name__ == "__main__":
    main()
