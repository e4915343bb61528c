#!/usr/bin/env python3
"""What a causal estimator told the delay law and the drift's prior reaches on
a quantised-arrival draw (the S9 kind), scored like `syncline estimate`.

    python3 scripts/s9_bayes.py FILE.csv [FILE.csv ...] [--mean-ns 1000000]

For each file, at every sample, the posterior over the sample line (drift
and offset) given the arrivals up to and including that sample, on a grid
(drift every 0.5 ppm over the generator's own range, ±30 ppm, uniform;
offset every 10 µs over 12 ms below the first arrival, flat), with the
generator's delay law given exactly (`gen_estimator_scenarios.py`, kind S9:
a minimum latency, an exponential delay of the given mean, the next tick of
4 ms). The estimate of a sample is the posterior mean of its line value,
which minimises the expected squared error under that prior. The score,
though, takes out the median error (a constant latency is not observable),
so an output whose error stays level does better than one whose error is
small but wanders: the second output ("anchored") is built like ours
(`quant.rs`): from 128 samples on, it continues the weighted centroid of its
own past outputs (forgetting over twice the samples so far) at the
posterior mean drift. Prints the RMS and max (µs) of both by the shared
`score.py`, one line per file. Refining the grid (0.25 ppm, 2.5 µs)
changes the figures by less than 0.1 µs.

This is an analysis tool, not part of the tests: it needs numpy
(`pip install numpy`), and takes about 12 s per 60 s draw.
"""
import argparse
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from estimator_draws import load_score  # noqa: E402
from gen_estimator_scenarios import default_shared  # noqa: E402


def read(path):
    """Arrival and true times of the sample rows, with their ids."""
    ids, arr, true = [], [], []
    rid = 0
    with open(path) as f:
        header = None
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.strip().split(",")
            if header is None:
                header = cols
                continue
            row = dict(zip(header, cols))
            if row["event"] == "sample":
                ids.append(rid)
                arr.append(int(row["time_ns"]))
                true.append(int(row["true_ns"]))
            rid += 1
    return ids, np.array(arr, dtype=np.int64), np.array(true, dtype=np.int64)


def posterior_means(arr, period, tick, mean, dmax=30.0, dstep=0.5, cstep=10e3,
                    anchor_from=128, memory=2.0):
    """Each sample's posterior mean line value and the anchored output,
    relative to arr[0]."""
    far = math.log(math.expm1(tick / mean))
    drift = np.arange(-dmax, dmax + 1e-9, dstep) * 1e-6
    offset = -np.arange(cstep / 2, 3 * tick, cstep)
    ll = np.zeros((len(drift), len(offset)))
    rel = (arr - arr[0]).astype(np.float64)
    out = np.zeros(len(arr))
    anchored = np.zeros(len(arr))
    cen_n = cen_q = cen_w = 0.0
    for k in range(len(arr)):
        line = offset[None, :] + k * period * (1 + drift[:, None])
        x = rel[k] - line
        inside = np.log(np.maximum(-np.expm1(-np.maximum(x, 1e-9) / mean), 1e-300))
        lp = np.where(x > tick, -x / mean + far, inside)
        ll += np.where(x <= 0, -np.inf, lp)
        w = np.exp(ll - ll.max())
        out[k] = (w * line).sum() / w.sum()
        d_mean = (w.sum(axis=1) * drift).sum() / w.sum()
        if k < anchor_from:
            anchored[k] = out[k]
        else:
            anchored[k] = cen_q + (k - cen_n) * period * (1 + d_mean)
        if k >= anchor_from - 1:
            cen_w *= 1 - 1 / (memory * (k + 1))
            cen_n = (cen_n * cen_w + k) / (cen_w + 1)
            cen_q = (cen_q * cen_w + anchored[k]) / (cen_w + 1)
            cen_w += 1
    return out, anchored


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--period-ns", type=float, default=33333333.0)
    ap.add_argument("--tick-ns", type=float, default=4e6)
    ap.add_argument("--mean-ns", type=float, default=1e6)
    ap.add_argument("--shared", default=default_shared())
    a = ap.parse_args()
    sc = load_score(os.path.join(a.shared, "data/estimator/score.py"))
    for path in a.files:
        ids, arr, true = read(path)
        samples = list(zip(ids, arr.tolist(), true.tolist()))
        figures = []
        for name, est in zip(("posterior mean", "anchored"),
                             posterior_means(arr, a.period_ns, a.tick_ns, a.mean_ns)):
            r = sc.score(samples, {i: round(float(e)) + int(arr[0]) for i, e in zip(ids, est)})
            figures.append(f"{name} RMS {r['rms_ns'] / 1e3:.1f} µs, max {r['max_ns'] / 1e3:.0f} µs")
        print(path, "; ".join(figures))


if __name__ == "__main__":
    main()
