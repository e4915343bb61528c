#!/usr/bin/env python3
"""Random streams whose stalls drain on a link faster than the sensor, with
losses and link pauses, run through one or two `syncline estimate` binaries.

    python3 scripts/drain_draws.py --seeds 1-200 --model A --bin NEW [--base OLD]

Each draw: a 5, 10 or 20 ms period, 1 ms latency plus exponential jitter
(none, or a mean up to 30 % of the period), 3000 samples, one to six
stalls of 3-20 periods, and a link whose interval is 0.6-0.97 of the
period. Models:

    A  losses (2-20 %) taken after their turn on the link (each leaves a
       gap of two intervals in a drain), no link pauses
    B  no losses; the link pauses before 0-15 % of the samples, for 1.5-3
       intervals (not whole numbers of them)
    C  losses (2-20 %) before the link (no gap), no link pauses
    M  a mix: losses 0-15 % on or off the link, pauses 0-15 %

Prints per draw the worst and mean absolute error (ms) of each binary and
its level (the median of estimate - true - 1 ms over the draw's second
half, 0 on the floor), how many draws' level is more than 0.5 ms off and,
with --base, how many draws the new binary's mean error is more than 5 %
lower or higher on, and the geometric mean of the ratio.

The error is the estimate minus the true acquisition time; with
--from-floor, minus the true time plus the stream's 1 ms minimum latency
(LATENCY_NS), the level the estimator is built to give (its floor: a
constant latency cannot be observed from arrivals). Without it, an output
sitting up to a latency below the floor scores better than the right one.
"""
import argparse
import json
import math
import os
import random
import subprocess
import tempfile

T0 = 1_700_000_000_000_000_000
# Every sample is ready this long after its acquisition, plus its jitter.
LATENCY_NS = 1_000_000


def draw(seed, model):
    r = random.Random(seed)
    p = r.choice([5_000_000, 10_000_000, 20_000_000])
    d = r.uniform(0.6, 0.97) * p
    jit = r.choice([0.0, r.uniform(0, 0.3) * p])
    loss = r.choice([0.0, r.uniform(0, 0.15)])
    on_link = r.random() < 0.5
    pause = r.uniform(0, 0.15)
    if model == "A":
        pause, on_link, loss = 0.0, True, r.uniform(0.02, 0.2)
    elif model == "B":
        loss = 0.0
    elif model == "C":
        pause, on_link, loss = 0.0, False, r.uniform(0.02, 0.2)
    n = 3000
    stalls = set(r.sample(range(100, n - 200), r.randint(1, 6)))
    last, rows = 0, []
    for k in range(n):
        t = T0 + k * p
        extra = r.uniform(3, 20) * p if k in stalls else 0
        own = t + LATENCY_NS + (r.expovariate(1 / jit) if jit > 0 else 0) + extra
        lost = r.random() < loss
        if lost and not on_link:
            continue
        step = d * (r.uniform(1.5, 3.0) if r.random() < pause else 1.0)
        q = max(own, last + step)
        last = q
        if not lost:
            rows.append((int(q), t))
    return p, rows


def errors(binary, path, p, rows, offset=0):
    """Worst and mean |error - offset| (ms), and the output's level: the median of
    estimate - true - LATENCY_NS over the second half (ms; 0 on the floor)."""
    out = subprocess.run(
        [binary, "estimate", "--window-ns", "5000000000", "--period-ns", str(p), path],
        capture_output=True, text=True, check=True).stdout
    est = [json.loads(line)["estimate_ns"] for line in out.splitlines() if line.startswith('{"id')]
    signed = [e - t for e, (_, t) in zip(est, rows)]
    errs = [abs(e - offset) for e in signed]
    late = sorted(signed[len(signed) // 2:])
    return max(errs) / 1e6, sum(errs) / len(errs) / 1e6, (late[len(late) // 2] - LATENCY_NS) / 1e6


def off_floor(levels):
    """How many levels lie more than 0.5 ms off the floor, and below it."""
    return sum(abs(x) > 0.5 for x in levels), sum(x < -0.5 for x in levels)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", default="1-200")
    ap.add_argument("--model", default="A", choices="ABCM")
    ap.add_argument("--bin", required=True)
    ap.add_argument("--base")
    ap.add_argument("--from-floor", action="store_true",
                    help="score from the true time plus the minimum latency (the floor)")
    a = ap.parse_args()
    lo, _, hi = a.seeds.partition("-")
    better = worse = 0
    logs, levels = [], {"new": [], "base": []}
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(int(lo), int(hi or lo) + 1):
            p, rows = draw(seed, a.model)
            path = os.path.join(tmp, "d.csv")
            with open(path, "w") as f:
                f.write("event,time_ns,index,true_ns\n")
                f.writelines(f"sample,{q},,{t}\n" for q, t in rows)
            offset = LATENCY_NS if a.from_floor else 0
            new = errors(a.bin, path, p, rows, offset)
            line = f"{a.model}{seed} new {new[0]:.1f} {new[1]:.3f}"
            levels["new"].append(new[2])
            if a.base:
                old = errors(a.base, path, p, rows, offset)
                line += f" base {old[0]:.1f} {old[1]:.3f}"
                levels["base"].append(old[2])
                # Means below 1 us (exact on the floor) compare as 1 us.
                logs.append(math.log(max(new[1], 1e-3) / max(old[1], 1e-3)))
                better += new[1] < 0.95 * old[1]
                worse += new[1] > 1.05 * old[1]
            print(line + "  level " + " ".join(f"{v[-1]:+.2f}" for v in levels.values() if v))
    print(f"model {a.model}: level more than 0.5 ms off the floor (of which below it): "
          + ", ".join("%s %d (%d)" % ((k,) + off_floor(v)) for k, v in levels.items() if v))
    if a.base:
        print(f"model {a.model}: mean error lower on {better}, higher on {worse} of "
              f"{len(logs)} draws; geometric mean ratio {math.exp(sum(logs) / len(logs)):.3f}")


if __name__ == "__main__":
    main()
