#!/usr/bin/env python3
"""S9 draws met and missed by the sensor's rate error (ppm), from the logs
of `scripts/estimator_draws.py --kinds S9_quantised_arrival --keep DIR`:

    python3 scripts/s9_by_drift.py --dir DIR LOG [LOG ...]

The rate error of each draw is the least-squares slope of its true times
(the `true_ns` column of the kept CSV) against the sample number. Prints,
per 2 ppm bin of |rate error|, the draws and misses, the median target and
which term of the rule sets it (2 x best causal or 1/2 x Rock), and the
median ratio of syncline's RMS to the target.

With `--bayes OUT` (repeatable; the printed lines of `scripts/s9_bayes.py` on
some of the kept draws), it prints a second table over those draws: how
many meet their targets (RMS and max, the rule of `estimator_draws.py`)
with syncline's output, the posterior mean and the anchored posterior mean.
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
    r"S9_quantised_arrival\s+(\d+) rock\s+([\d.]+)/\s*(\d+) hull\s+([\d.]+) olson\s+([\d.]+)"
    r" target\s+([\d.]+)\s+syncline\s+([\d.]+)/\s*\d+ (\w+)")
BAYES = re.compile(
    r"(\d+)/S9_quantised_arrival\.csv posterior mean RMS ([\d.]+) \S+, max (\d+) \S+; "
    r"anchored RMS ([\d.]+) \S+, max (\d+) ")
PERIOD_NS = 33_333_333.333


def rate_error_ppm(path):
    t = [int(r["true_ns"]) for r in csv.DictReader(open(path)) if r["event"] == "sample"]
    return true_drift_ppm(t, PERIOD_NS)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True, help="the --keep directory of the draws")
    ap.add_argument("--bayes", action="append", default=[], help="an output of s9_bayes.py (repeatable)")
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()
    bins = {}
    draws = {}
    for log in a.logs:
        for line in open(log):
            m = LINE.search(line)
            if not m:
                continue
            seed, rock, rock_max, hull, olson, target, ours, verdict = m.groups()
            ppm = rate_error_ppm(os.path.join(a.dir, seed, "S9_quantised_arrival.csv"))
            draws[seed] = (ppm, float(target), int(rock_max), verdict == "ok")
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
    if a.bayes:
        bayes_table(a.bayes, draws)


def bayes_table(outs, draws):
    """Targets met by syncline and by the two Bayes outputs, per 2 ppm bin
    of |rate error| up to 10 ppm, then 10-30."""
    bins = {}
    for out in outs:
        for line in open(out):
            m = BAYES.search(line)
            if not m or m.group(1) not in draws:
                continue
            ppm, target, rock_max, ours = draws[m.group(1)]
            met = [ours]
            for rms, mx in ((m.group(2), m.group(3)), (m.group(4), m.group(5))):
                met.append(float(rms) <= target and int(mx) <= rock_max)
            bins.setdefault(min(int(abs(ppm) // 2) * 2, 10), []).append(met)
    print()
    print("| \\|rate error\\| (ppm) | draws | syncline | posterior mean | anchored posterior mean |")
    print("|---|---|---|---|---|")
    rows = [(f"{k}-{k + 2}" if k < 10 else "10-30", bins[k]) for k in sorted(bins)]
    rows.append(("all", [x for k in bins for x in bins[k]]))
    for label, b in rows:
        print(f"| {label} | {len(b)} | " + " | ".join(str(sum(x[i] for x in b)) for i in range(3)) + " |")


if __name__ == "__main__":
    main()
