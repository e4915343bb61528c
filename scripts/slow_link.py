#!/usr/bin/env python3
"""Streams delivered by a link a little faster than the sensor, for probing
`syncline estimate` on backlogs that drain at the link's rate.

    python3 scripts/slow_link.py --drain 0.9 --jitter-ms 1 [--stall-ms 300]
        [--stalls 6] [--loss 0.03] [--law gauss] [--seed 3]
        [--bin target/release/syncline] [--out F.csv] [--seeds 1-4]

A 100 Hz sensor, 6000 samples (60 s). Sample k is taken at k x 10 ms,
ready 1 ms + Exp(mean `jitter`) later (`--law gauss`: 1 ms +
max(0, N(3 x jitter, jitter))); `stalls` stalls of `stall` ms, one
every 60/(stalls + 1) s at a random phase, hold back every sample ready
within them until their end; the link delivers in order and at most one
sample per `drain` periods (arrival = max(ready, previous arrival +
drain x 10 ms)); a fraction `loss` of the samples is then lost (not
announced, no counter). Writes the CSV of ../shared/INTERFACE.md with the true
time in `true_ns`. With `--bin`, runs `BIN estimate --window-ns 5e9
--period-ns 1e7` on it and scores it with the shared score.py (the first
10 % of the samples unscored, the median error removed): the RMS and max
error and the samples off by more than 1 ms. With `--seeds A-B`, sums the
samples off over those seeds.
"""
import argparse
import json
import os
import random
import subprocess
import tempfile

from estimator_draws import load_score
from gen_estimator_scenarios import default_shared

T0 = 1_700_000_000_000_000_000
P = 10_000_000
N = 6000


def stream(seed, drain, jitter_ns, stall_ns, stalls, loss=0.0, law="exp"):
    rng = random.Random(seed)
    spans = []
    for i in range(stalls):
        start = T0 + (N * (i + 1) // (stalls + 1)) * P + rng.randrange(P)
        spans.append((start, start + stall_ns))
    rows, last = [], 0
    for k in range(N):
        t = T0 + k * P
        if jitter_ns <= 0:
            d = 0
        elif law == "gauss":
            d = int(max(0.0, rng.gauss(3 * jitter_ns, jitter_ns)))
        else:
            d = int(rng.expovariate(1 / jitter_ns))
        ready = t + 1_000_000 + d
        for a, b in spans:
            if a <= ready < b:
                ready = b
        q = max(ready, last + int(drain * P))
        last = q
        if loss > 0 and rng.random() < loss:
            continue
        rows.append((q, t))
    return rows


def write(path, rows):
    with open(path, "w") as f:
        f.write("event,time_ns,index,true_ns\n")
        f.writelines(f"sample,{q},,{t}\n" for q, t in rows)


def score(sc, binary, rows):
    """`BIN estimate` on the stream, scored by the shared score.py."""
    with tempfile.TemporaryDirectory() as d:
        csv, out = os.path.join(d, "s.csv"), os.path.join(d, "s.jsonl")
        write(csv, rows)
        with open(out, "w") as f:
            cmd = [binary, "estimate", "--window-ns", "5000000000", "--period-ns", str(P), csv]
            subprocess.run(cmd, stdout=f, check=True)
        samples = sc.load_scenario(csv)
        return sc.score(samples, sc.load_estimates(out, {r[0] for r in samples}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drain", type=float, required=True)
    ap.add_argument("--jitter-ms", type=float, required=True)
    ap.add_argument("--stall-ms", type=float, default=0.0)
    ap.add_argument("--stalls", type=int, default=6)
    ap.add_argument("--loss", type=float, default=0.0)
    ap.add_argument("--law", choices=["exp", "gauss"], default="exp")
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--seeds")
    ap.add_argument("--bin")
    ap.add_argument("--out")
    ap.add_argument("--shared", default=default_shared())
    a = ap.parse_args()
    sc = load_score(os.path.join(a.shared, "data/estimator/score.py"))
    args = (a.drain, int(a.jitter_ms * 1e6), int(a.stall_ms * 1e6), a.stalls, a.loss, a.law)
    if a.seeds:
        lo, hi = (int(x) for x in a.seeds.split("-"))
        off = sum(score(sc, a.bin, stream(s, *args))["over_1ms"] for s in range(lo, hi + 1))
        print(json.dumps({"seeds": a.seeds, "off_1ms": off}))
        return
    rows = stream(a.seed, *args)
    if a.out:
        write(a.out, rows)
    if a.bin:
        s = score(sc, a.bin, rows)
        print(json.dumps({"rms_us": round(s["rms_ns"] / 1e3, 1), "max_us": round(s["max_ns"] / 1e3, 1),
                          "off_1ms": s["over_1ms"]}))


if __name__ == "__main__":
    main()
