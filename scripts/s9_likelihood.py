#!/usr/bin/env python3
"""What the data of a quantised-arrival draw (the S9 kind) say about the
sensor's rate error, at a few times into the run: the exact profile
log-likelihood of the drift, with the generator's own delay law.

    python3 scripts/s9_likelihood.py FILE.csv [--at 10,20,30] [--mean-ns 1000000]

The model is the generator's (`gen_estimator_scenarios.py`, kind S9): a
sample acquired on the line `q0 + c + k * period * (1 + drift)` is ready
after a delay `L + Exp(mean)` and stamped at the next tick of `tick` ns. The
constant `L` is part of the offset `c`, so a sample stamped at tick `A` has
the likelihood `1 - e^(-x/mean)` for `0 < x <= tick` and
`e^(-x/mean) (e^(tick/mean) - 1)` beyond, with `x = A - line` (0 for
`x <= 0`). For each drift on a 1 ppm grid the offset is maximised (the
log-likelihood is concave in it); the script prints, for the first T
seconds of samples, the drift of highest likelihood and the drifts within 2
log-units of it (about a 95 % interval), next to the true drift (the least-
squares slope of `true_ns`). This is the most any estimator can know from
the arrivals: no prior on the drift is used, and the delay law and its mean
are given exactly, which no estimator is told.

Reads the file with the shared `score.py` (`--shared`, as
`estimator_draws.py`). Standard library only.
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from estimator_draws import load_score  # noqa: E402
from gen_estimator_scenarios import default_shared  # noqa: E402


def true_drift_ppm(t, period):
    n = len(t)
    mk = (n - 1) / 2
    my = sum(x - t[0] for x in t) / n
    sxy = sum((k - mk) * (x - t[0] - my) for k, x in enumerate(t))
    sxx = sum((k - mk) ** 2 for k in range(n))
    return (sxy / sxx / period - 1) * 1e6


def profile(q, period, ppm, tick, mean):
    """Maximum over the offset of the log-likelihood at this drift."""
    p = period * (1 + ppm * 1e-6)
    y = [(a - q[0]) - k * p for k, a in enumerate(q)]
    top = min(y)
    grow = math.exp(tick / mean) - 1

    def ll(c):
        s = 0.0
        for v in y:
            x = v - c
            if x <= tick:
                s += math.log(-math.expm1(-x / mean))
            else:
                s += -x / mean + math.log(grow)
        return s

    # Golden-section search on c in (top - 3 tick, top): concave there.
    lo, hi = top - 3 * tick, top - 1.0
    g = (math.sqrt(5) - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = ll(a), ll(b)
    for _ in range(48):
        if fa < fb:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = ll(b)
        else:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = ll(a)
    return max(fa, fb)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--at", default="10,20,30,60", help="seconds of samples, comma-separated")
    ap.add_argument("--period-ns", type=float, default=100e6 / 3, help="nominal period (30 Hz)")
    ap.add_argument("--tick-ns", type=float, default=4e6)
    ap.add_argument("--mean-ns", type=float, default=1e6, help="mean of the exponential delay")
    ap.add_argument("--span-ppm", type=int, default=30)
    ap.add_argument("--shared", default=default_shared())
    a = ap.parse_args()
    sc = load_score(os.path.join(a.shared, "data/estimator/score.py"))
    samples = sc.load_scenario(a.csv)
    q, t = [s[1] for s in samples], [s[2] for s in samples]
    print(f"{a.csv}: true drift {true_drift_ppm(t, a.period_ns):+.2f} ppm")
    for secs in (float(s) for s in a.at.split(",")):
        n = min(len(q), int(secs * 1e9 / a.period_ns))
        grid = range(-a.span_ppm, a.span_ppm + 1)
        lls = [(profile(q[:n], a.period_ns, d, a.tick_ns, a.mean_ns), d) for d in grid]
        best, at = max(lls)
        inside = [d for v, d in lls if v > best - 2]
        print(f"  first {secs:4.0f} s ({n} samples): most likely {at:+d} ppm, "
              f"within 2 log-units: [{min(inside):+d}, {max(inside):+d}] ppm")


if __name__ == "__main__":
    main()
