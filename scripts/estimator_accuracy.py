#!/usr/bin/env python3
"""Accuracy of `syncline estimate` on the estimator scenarios, against the targets.

Runs the binary with each sidecar's flags on every `*.csv` of a scenario
directory, scores the output with the directory's `score.py`, and prints a
table: scenario, Rock RMS, best causal RMS, target, syncline RMS and max
(microseconds). Exits 1 if any scenario misses its target (RMS at most
max(5, min(Rock/2, 2 x best causal)) and max error at most Rock's).

    python3 scripts/estimator_accuracy.py [--bin target/release/syncline]
        [--dir ../shared/data/estimator] [--targets FILE.json] [--markdown]

The Rock and best-causal figures come from the directory's README table for
the public set, or from --targets (a JSON object {name: {"rock_rms": us,
"rock_max": us, "best_rms": us}}) for other draws.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile


def readme_targets(d):
    """Rock RMS, best causal RMS (Targets table), Rock max and the offline
    oracle's RMS (anchors.json)."""
    out = {}
    text = open(os.path.join(d, "README.md")).read()
    for m in re.finditer(r"^\| (S\w+) \| ([\d.]+) \| ([\d.]+) \| [\d.]+ \|$", text, re.M):
        out[m.group(1)] = {"rock_rms": float(m.group(2)), "best_rms": float(m.group(3))}
    anchors = json.load(open(os.path.join(d, "anchors.json")))
    for name, a in anchors.items():
        if name in out:
            out[name]["rock_max"] = a["rock"]["max_ns"] / 1000.0
            out[name]["rock_rms"] = a["rock"]["rms_ns"] / 1000.0
            out[name]["oracle_rms"] = a["oracle"]["rms_ns"] / 1000.0
    return out


def main():
    ap = argparse.ArgumentParser()
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    shared = os.environ.get("SYNCLINE_SHARED", os.path.join(os.path.dirname(root), "shared"))
    ap.add_argument("--bin", default=os.path.join(root, "target/release/syncline"))
    ap.add_argument("--dir", default=os.path.join(shared, "data/estimator"))
    ap.add_argument("--score", default=None, help="score.py (default: DIR/score.py)")
    ap.add_argument("--targets", default=None)
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    public = os.path.join(shared, "data/estimator")
    score = a.score or os.path.join(public, "score.py")
    targets = json.load(open(a.targets)) if a.targets else readme_targets(public)
    names = sorted(
        (f[:-4] for f in os.listdir(a.dir) if f.endswith(".csv")),
        key=lambda s: (int(re.match(r"S(\d+)", s).group(1)), s),
    )
    rows, failed = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            side = json.load(open(os.path.join(a.dir, name + ".json")))
            csv = os.path.join(a.dir, name + ".csv")
            cmd = [a.bin, "estimate", "--window-ns", str(side["window_ns"]),
                   "--loss-threshold", str(side.get("loss_threshold", 2))]
            if side.get("period_ns"):
                cmd += ["--period-ns", str(side["period_ns"])]
            outp = os.path.join(tmp, name + ".jsonl")
            with open(outp, "w") as f:
                subprocess.run(cmd + [csv], stdout=f, check=True)
            res = subprocess.run([sys.executable, score, csv, outp], capture_output=True,
                                 text=True, check=True)
            s = json.loads(res.stdout)
            rms, mx = s["rms_ns"] / 1000.0, s["max_ns"] / 1000.0
            t = targets.get(name)
            if t:
                target = max(5.0, min(t["rock_rms"] / 2.0, 2.0 * t["best_rms"]))
                ok = rms <= target and mx <= t.get("rock_max", float("inf"))
            else:
                target, ok = float("nan"), True
            failed += not ok
            rows.append((name, t, target, rms, mx, ok))
    if a.markdown:
        print("| scenario | Rock RMS | oracle RMS (offline) | best causal RMS | target RMS | syncline RMS "
              "| Rock max | syncline max | met |")
        print("|---|---|---|---|---|---|---|---|---|")
    else:
        print(f"{'scenario':30} {'rock':>8} {'oracle':>8} {'best':>8} {'target':>8} {'rms':>9} "
              f"{'rockmax':>9} {'max':>9}")
    for name, t, target, rms, mx, ok in rows:
        rock = t["rock_rms"] if t else float("nan")
        best = t["best_rms"] if t else float("nan")
        rmax = t.get("rock_max", float("nan")) if t else float("nan")
        oracle = t.get("oracle_rms", float("nan")) if t else float("nan")
        if a.markdown:
            print(f"| {name} | {rock:.1f} | {oracle:.2f} | {best:.1f} | {target:.1f} | {rms:.1f} | {rmax:.0f} "
                  f"| {mx:.0f} | {'yes' if ok else 'NO'} |")
        else:
            print(f"{name:30} {rock:8.1f} {oracle:8.2f} {best:8.1f} {target:8.1f} {rms:9.1f} {rmax:9.0f} "
                  f"{mx:9.0f} {'ok' if ok else 'MISS'}")
    print(f"{len(rows) - failed}/{len(rows)} scenarios meet their targets", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
