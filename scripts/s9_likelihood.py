#!/usr/bin/env python3
"""What the data of a quantised-arrival draw (the S9 kind) say about the
sensor's rate error, at a few times into the run: the exact profile
log-likelihood of the drift, with the generator's own delay law.

    python3 scripts/s9_likelihood.py FILE.csv [--at 10,20,30] [--mean-ns 1000000]
    python3 scripts/s9_likelihood.py FILE.csv --track 30,180,600 [--prior-ppm 12]

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

With `--track`, the script asks instead where the best causal line can be
at a few sample numbers: the joint maximum over the line and the delay
mean of the samples up to each, with the estimator's Gaussian prior on the
slope (12 ppm), and that line's value at the sample minus its true time
(a constant latency included: compare the values, not their level).

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


def joint_fit(q, k_last, period, tick, mean, prior_ppm):
    """Maximum over (offset, slope) of the log-likelihood of samples
    0..k_last at delay mean `mean`, with a Gaussian prior of `prior_ppm` on
    the slope around `period` (the estimator's): a damped Newton iteration,
    the log-likelihood being concave in the line. Returns (log-likelihood
    with the prior, offset, slope), the line `q[0] + offset + slope * k`."""
    ys = [(k, q[k] - q[0]) for k in range(k_last + 1)]
    c, b = min(y - period * k for k, y in ys) - 0.5 * tick, period
    w = 1.0 / (prior_ppm * 1e-6 * period) ** 2
    far = math.log(math.expm1(tick / mean))
    f = -math.inf
    for _ in range(60):
        f = -0.5 * w * (b - period) ** 2
        g0, g1, h00, h01, h11 = 0.0, -w * (b - period), 0.0, 0.0, -w
        for k, y in ys:
            x = y - c - b * k
            if x <= tick:
                e, om = math.exp(-x / mean), -math.expm1(-x / mean)
                lf, d1, d2 = math.log(om), e / (mean * om), -e / (mean * mean * om * om)
            else:
                lf, d1, d2 = -x / mean + far, -1.0 / mean, 0.0
            f += lf
            g0, g1 = g0 - d1, g1 - d1 * k
            h00, h01, h11 = h00 + d2, h01 + d2 * k, h11 + d2 * k * k
        det = h00 * h11 - h01 * h01
        if det <= 0:
            break
        dc, db = -(h11 * g0 - h01 * g1) / det, -(h00 * g1 - h01 * g0) / det
        step = 1.0
        while step > 1e-4 and any(y - (c + step * dc) - (b + step * db) * k <= 0 for k, y in ys):
            step /= 2
        c, b = c + step * dc, b + step * db
        if abs(step * dc) + abs(step * db) * k_last < 10:
            break
    return f, c, b


def track(q, t, period, tick, prior_ppm, at):
    """For each sample number in `at`: the joint maximum over the line and
    the delay mean (0.30-2.50 ms in steps of 0.05 ms), with the slope prior,
    of the first samples up to it; prints the line's value there minus the
    sample's true time (a constant latency included)."""
    for k in at:
        if k >= len(q):
            break
        fits = ((joint_fit(q, k, period, tick, m * 5e4, prior_ppm), m * 5e4) for m in range(6, 51))
        (f, c, b), mean = max(fits)
        value = q[0] + c + b * k
        print(f"  sample {k:5d}: delay mean {mean / 1e3:6.0f} us, drift {(b / period - 1) * 1e6:+6.1f} ppm, "
              f"line - truth {(value - t[k]) / 1e3:8.1f} us")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv")
    ap.add_argument("--at", default="10,20,30,60", help="seconds of samples, comma-separated")
    ap.add_argument("--period-ns", type=float, default=100e6 / 3, help="nominal period (30 Hz)")
    ap.add_argument("--tick-ns", type=float, default=4e6)
    ap.add_argument("--mean-ns", type=float, default=1e6, help="mean of the exponential delay")
    ap.add_argument("--span-ppm", type=int, default=30)
    ap.add_argument("--track", help="instead: sample numbers, comma-separated, at which "
                    "to print the joint maximum (line and delay mean, slope prior)")
    ap.add_argument("--prior-ppm", type=float, default=12.0, help="the slope prior of --track")
    ap.add_argument("--shared", default=default_shared())
    a = ap.parse_args()
    sc = load_score(os.path.join(a.shared, "data/estimator/score.py"))
    samples = sc.load_scenario(a.csv)
    q, t = [s[1] for s in samples], [s[2] for s in samples]
    print(f"{a.csv}: true drift {true_drift_ppm(t, a.period_ns):+.2f} ppm")
    if a.track:
        track(q, t, a.period_ns, a.tick_ns, a.prior_ppm, [int(k) for k in a.track.split(",")])
        return
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
