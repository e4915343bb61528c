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
--period-ns 1e7` on it and prints, after the first 600 samples and with
the median error removed: the RMS error, the samples off by more than
1 ms and the RMS of the others. With `--seeds A-B`, sums the samples off
over those seeds.
"""
import argparse
import json
import math
import random
import statistics
import subprocess
import tempfile

T0 = 1_700_000_000_000_000_000
P = 10_000_000
N = 6000
SKIP = 600


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


def score(binary, rows):
    with tempfile.NamedTemporaryFile("w", suffix=".csv") as f:
        f.write("event,time_ns,index,true_ns\n")
        f.writelines(f"sample,{q},,{t}\n" for q, t in rows)
        f.flush()
        out = subprocess.run(
            [binary, "estimate", "--window-ns", "5000000000", "--period-ns", str(P), f.name],
            check=True, capture_output=True, text=True,
        ).stdout
    est = {}
    for line in out.splitlines():
        d = json.loads(line)
        if "id" in d:
            est[d["id"]] = int(d["estimate_ns"])
    e = [est[i] - t for i, (_, t) in enumerate(rows)][SKIP:]
    med = statistics.median(e)
    e = [x - med for x in e]
    rest = [x for x in e if abs(x) <= 1e6]
    rms = lambda v: math.sqrt(sum(x * x for x in v) / max(len(v), 1))
    return rms(e), len(e) - len(rest), rms(rest)


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
    a = ap.parse_args()
    args = (a.drain, int(a.jitter_ms * 1e6), int(a.stall_ms * 1e6), a.stalls, a.loss, a.law)
    if a.seeds:
        lo, hi = (int(x) for x in a.seeds.split("-"))
        off = sum(score(a.bin, stream(s, *args))[1] for s in range(lo, hi + 1))
        print(json.dumps({"seeds": a.seeds, "off_1ms": off}))
        return
    rows = stream(a.seed, *args)
    if a.out:
        with open(a.out, "w") as f:
            f.write("event,time_ns,index,true_ns\n")
            f.writelines(f"sample,{q},,{t}\n" for q, t in rows)
    if a.bin:
        r, off, rest = score(a.bin, rows)
        print(json.dumps({"rms_us": round(r / 1e3, 1), "off_1ms": off, "rest_rms_us": round(rest / 1e3, 1)}))


if __name__ == "__main__":
    main()
