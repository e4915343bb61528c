#!/usr/bin/env python3
"""A stream on a quantised (coarse) host clock at any rate, for timing the
quantised-clock fit of `syncline estimate` beyond the 30 Hz S9 kind.

    python3 scripts/quantised_stream.py OUT.csv --period-ns 2500000 --tick-ns 1000000 \\
        --delay-ns 300000 --seconds 120 [--drift-ppm 10] [--seed 5] [--phase-ns 0]

Sample k is taken at k x period x (1 + drift), ready `delay` + Exp(mean
`delay`) later, delivered in order (never before its predecessor), and
stamped with the first host tick at or after that (the ticks at `phase`
plus multiples of `tick`). Writes the CSV of
../shared/INTERFACE.md with the true time in `true_ns`, so the output can
be scored with ../shared/data/estimator/score.py.
"""
import argparse
import random

T0 = 1_700_000_000_000_000_000


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--period-ns", type=int, required=True)
    ap.add_argument("--tick-ns", type=int, required=True)
    ap.add_argument("--delay-ns", type=int, required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--drift-ppm", type=float, default=10.0)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--phase-ns", type=int, default=0)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    period = a.period_ns * (1 + a.drift_ppm * 1e-6)
    last = 0
    with open(a.out, "w") as f:
        f.write("event,time_ns,index,true_ns\n")
        for k in range(int(a.seconds * 1e9 / a.period_ns)):
            t = T0 + int(k * period)
            ready = max(t + a.delay_ns + int(rng.expovariate(1 / a.delay_ns)), last)
            last = ready
            tick = -(-(ready - a.phase_ns) // a.tick_ns) * a.tick_ns + a.phase_ns
            f.write(f"sample,{tick},,{t}\n")


if __name__ == "__main__":
    main()
