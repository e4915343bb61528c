#!/usr/bin/env python3
"""The timestamp estimator on streams whose frame period wanders (a camera's
automatic exposure), against Rock's model, the two causal references and the
raw arrivals (RMS / max error in ms, median removed, by the scenarios'
score.py; docs/PERFORMANCE.md, "A rate that wanders").

    python3 scripts/wandering_rate.py live [--bin B] [--shared S]
    python3 scripts/wandering_rate.py camera [--seeds 1-6] [--jit exp|gauss] [--js NS] [--refs]

`live`: the live rig's camera of ../shared/data/real (61-65 ms), scored
against a proxy for its frame times: a centred least-squares line through
the arrivals +-5.

`camera`: synthetic, 60 s at 63.44 ms with an Ornstein-Uhlenbeck relative
deviation of the period (--amp, time constant --tc s), delays exponential
or |Gaussian| of scale --js ns, per seed; also causal least-squares lines
through the last 8 and 16 arrivals.
"""
import argparse
import json
import math
import os
import random
import subprocess
import tempfile

from real_timestamps import ns_lines, run_references, score

T0 = 1_700_000_000_000_000_000
PERIOD = 63_440_000


def line_at(xs, ys, x):
    """The least-squares line through (xs, ys), at x."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    b = sum((u - mx) * (v - my) for u, v in zip(xs, ys)) / sum((u - mx) ** 2 for u in xs)
    return my + b * (x - mx)


def write_draw(tmp, arrivals, truth):
    csv_path, side = os.path.join(tmp, "w.csv"), os.path.join(tmp, "w.json")
    with open(csv_path, "w") as f:
        f.write("event,time_ns,index,true_ns\n")
        f.writelines(f"sample,{q},,{t}\n" for q, t in zip(arrivals, truth))
    json.dump({"name": "w", "window_ns": 5_000_000_000, "period_ns": PERIOD, "loss_threshold": 2}, open(side, "w"))
    return csv_path, side


def write_estimates(tmp, name, estimates):
    path = os.path.join(tmp, f"{name}.jsonl")
    with open(path, "w") as f:
        f.writelines(json.dumps({"id": i, "estimate_ns": int(e)}) + "\n" for i, e in enumerate(estimates))
    return path


def run_all(a, tmp, arrivals, truth, extra):
    """{name: (rms, max)} of syncline, the arrivals and `extra` estimates
    (and the references with --refs or in `live`)."""
    csv_path, side = write_draw(tmp, arrivals, truth)
    outs = {"syncline": os.path.join(tmp, "syn.jsonl")}
    with open(outs["syncline"], "w") as f:
        subprocess.run([a.bin, "estimate", "--window-ns", "5000000000", "--period-ns", str(PERIOD), csv_path],
                       stdout=f, check=True)
    outs["arrival"] = write_estimates(tmp, "arrival", arrivals)
    for name, estimates in extra.items():
        outs[name] = write_estimates(tmp, name, estimates)
    if a.cmd == "live" or a.refs:
        outs.update(run_references(csv_path, side, tmp))
    return {name: score(a.shared, csv_path, path) for name, path in outs.items()}


def live(a, tmp):
    stamps = ns_lines(os.path.join(a.shared, "data/real/vislam_live_2025/cam0/data.csv"))
    n = len(stamps)
    truth = []
    for i in range(n):
        xs = list(range(max(0, i - 5), min(n, i + 6)))
        truth.append(stamps[xs[0]] + round(line_at(xs, [stamps[j] - stamps[xs[0]] for j in xs], i)))
    for name, (rms, mx) in run_all(a, tmp, stamps, truth, {}).items():
        print(f"{name:10} rms {rms:7.3f} ms  max {mx:7.3f} ms")


def camera_draw(a, seed):
    """(acquisition times, arrivals) of one synthetic draw."""
    rng = random.Random(seed)
    k = math.exp(-PERIOD / 1e9 / a.tc)
    sd = a.amp * math.sqrt(1 - k * k)
    t, w, last, times, arrivals = T0, 0.0, 0, [], []
    for _ in range(int(60e9 / PERIOD)):
        w = w * k + rng.gauss(0, sd)
        t += round(PERIOD * (1 + w))
        delay = rng.expovariate(1 / a.js) if a.jit == "exp" else abs(rng.gauss(0, a.js))
        last = max(last, int(t + 5_000_000 + delay))
        times.append(t)
        arrivals.append(last)
    return times, arrivals


def causal_line(arrivals, k):
    """Each arrival's value on the least-squares line through it and the
    `k - 1` before (the arrival itself for the first two)."""
    out = []
    for i, q in enumerate(arrivals):
        lo = max(0, i - k + 1)
        xs = list(range(lo, i + 1))
        out.append(q if i < 2 else arrivals[lo] + line_at(xs, [arrivals[j] - arrivals[lo] for j in xs], i))
    return out


def camera(a, tmp):
    lo, _, hi = a.seeds.partition("-")
    rows = {}
    for seed in range(int(lo), int(hi or lo) + 1):
        times, arrivals = camera_draw(a, seed)
        local = {f"local{k}": causal_line(arrivals, k) for k in (8, 16)}
        for name, figures in run_all(a, tmp, arrivals, times, local).items():
            rows.setdefault(name, []).append(figures)
    for name, figures in rows.items():
        print(f"{name:10}", " ".join(f"{r:6.2f}/{m:5.1f}" for r, m in figures))


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["live", "camera"])
    ap.add_argument("--bin", default=os.path.join(root, "target/release/syncline"))
    ap.add_argument("--shared", default=os.environ.get(
        "SYNCLINE_SHARED", os.path.join(os.path.dirname(root), "shared")))
    ap.add_argument("--seeds", default="1-6")
    ap.add_argument("--amp", type=float, default=0.02)
    ap.add_argument("--tc", type=float, default=4.0)
    ap.add_argument("--jit", default="exp", choices=["exp", "gauss"])
    ap.add_argument("--js", type=float, default=0.5e6)
    ap.add_argument("--refs", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        (live if a.cmd == "live" else camera)(a, tmp)


if __name__ == "__main__":
    main()
