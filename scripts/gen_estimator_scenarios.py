#!/usr/bin/env python3
"""Fresh random draws of the estimator scenario kinds (S1-S12), following the
generative model of `../shared/data/estimator/README.md`, to check the
estimator against draws it was never developed on.

    python3 scripts/gen_estimator_scenarios.py OUTDIR --seed 7 [--kinds S9_quantised_arrival,...]

Writes NAME.csv (event,time_ns,index,true_ns) + NAME.json (window_ns,
period_ns, loss_threshold) per kind, with the public file names, so
`scripts/estimator_accuracy.py --dir OUTDIR --targets OUTDIR/targets.json` scores them
against the draw's own targets (targets.json: Rock's figures from the reference model
rock_estimator.py, the best causal RMS from causal_reference.py, both run on
the draw; scripts/estimator_draws.py does all of this for many seeds).
"""
import argparse
import json
import os
import random


def fifo(ready, rng):
    """Delivery in order: a sample ready before its predecessor was
    delivered comes 20-60 us after it."""
    out, last = [], None
    for r in ready:
        q = r if last is None or r > last else last + rng.randint(20_000, 60_000)
        out.append(q)
        last = q
    return out


def default_shared():
    """`$SYNCLINE_SHARED`, else the `shared` folder beside the project's root."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.environ.get("SYNCLINE_SHARED", os.path.join(os.path.dirname(root), "shared"))


def base(rng, period, seconds, drift_ppm=None):
    drift = rng.uniform(-30, 30) if drift_ppm is None else drift_ppm
    t0 = rng.randint(1_700_000_000, 1_760_000_000) * 10**9 + rng.randint(0, 10**9)
    n = int(seconds * 1e9 / period)
    tp = period * (1 + drift * 1e-6)
    return [t0 + round(k * tp) for k in range(n)]


def exp(rng, mean):
    return rng.expovariate(1.0 / mean)


def scenario(kind, rng, shared):
    """Returns (rows, period_flag); rows = [(event, time, index, true)] in arrival order."""
    idx = None
    if kind == "S1_gauss_jitter":
        s = base(rng, 10_000_000, 60)
        q = fifo([x + 2_000_000 + max(0.0, rng.gauss(1_500_000, 500_000)) for x in s], rng)
        return [("sample", round(a), "", t) for a, t in zip(q, s)], 10_000_000
    if kind == "S2_exp_jitter":
        s = base(rng, 20_000_000, 60)
        q = fifo([x + 1_000_000 + exp(rng, 2e6) for x in s], rng)
        return [("sample", round(a), "", t) for a, t in zip(q, s)], 20_000_000
    if kind in ("S3_heavy_tail_stalls",):
        s = base(rng, 10_000_000, 60)
        ready = [x + 1_000_000 + exp(rng, 3e5) + (rng.uniform(5e6, 50e6) if rng.random() < 0.005 else 0) for x in s]
        return [("sample", round(a), "", t) for a, t in zip(fifo(ready, rng), s)], 10_000_000
    if kind in ("S4_random_loss", "S5_loss_with_index"):
        s = base(rng, 10_000_000, 60)
        keep = [rng.random() >= 0.03 for _ in s]
        if kind == "S5_loss_with_index":
            for _ in range(3):
                start, ln = rng.randint(100, len(s) - 100), rng.randint(5, 30)
                for k in range(start, start + ln):
                    keep[k] = False
        ks = [k for k in range(len(s)) if keep[k]]
        q = fifo([s[k] + 1_000_000 + exp(rng, 1e6) for k in ks], rng)
        idx = [str(k % 256) if kind == "S5_loss_with_index" else "" for k in ks]
        return [("sample", round(a), i, s[k]) for a, i, k in zip(q, idx, ks)], 10_000_000
    if kind == "S6_burst_delivery":
        s = base(rng, 10_000_000, 60)
        ready = [x + 1_000_000 + exp(rng, 3e5) for x in s]
        stalls, t = [], s[0]
        while t < s[-1]:
            t += exp(rng, 2e9)
            stalls.append((t, t + rng.uniform(20e6, 150e6)))
        out, last, si = [], None, 0
        for r in ready:
            while si < len(stalls) and stalls[si][1] < r:
                si += 1
            d = r
            if si < len(stalls) and stalls[si][0] <= r <= stalls[si][1]:
                d = stalls[si][1]
            if last is not None and d <= last:
                d = last + rng.randint(20_000, 100_000)
            out.append(d)
            last = d
        return [("sample", round(a), "", t) for a, t in zip(out, s)], 10_000_000
    if kind == "S7_clock_drift":
        s = base(rng, 20_000_000, 120, drift_ppm=150.0)
        q = fifo([x + 1_000_000 + exp(rng, 1e6) for x in s], rng)
        return [("sample", round(a), "", t) for a, t in zip(q, s)], 20_000_000
    if kind == "S8_period_step":
        s = base(rng, 25_000_000, 90)
        step = rng.randint(int(len(s) * 0.4), int(len(s) * 0.6))
        s = s[:step] + [s[step - 1] + round((k - step + 1) * (s[1] - s[0]) * 1.01) for k in range(step, len(s))]
        q = fifo([x + 1_000_000 + exp(rng, 1e6) for x in s], rng)
        return [("sample", round(a), "", t) for a, t in zip(q, s)], 25_000_000
    if kind == "S9_quantised_arrival":
        s = base(rng, 33_333_333, 60)
        tick, phase = 4_000_000, rng.randint(0, 3_999_999)
        ready = fifo([x + 1_000_000 + exp(rng, 1e6) for x in s], rng)
        q = [((int(r) - phase) // tick + 1) * tick + phase for r in ready]
        return [("sample", a, "", t) for a, t in zip(q, s)], 33_333_333
    if kind == "S10_hw_reference":
        s = base(rng, 25_000_000, 60)
        q = fifo([x + 5_000_000 + exp(rng, 3e6) for x in s], rng)
        ev = [(x + 100_000, ("reference", x + 40_000 + rng.randint(0, 20_000), "", "")) for x in s]
        ev += [(round(a), ("sample", round(a), "", t)) for a, t in zip(q, s)]
        ev.sort(key=lambda e: e[0])
        return [e[1] for e in ev], 25_000_000
    if kind in ("S11a_euroc_cam", "S11b_euroc_imu"):
        cam = kind == "S11a_euroc_cam"
        d = os.path.join(shared, "data/real/euroc", "cam0_timestamps" if cam else "imu0_timestamps")
        f = os.path.join(d, rng.choice(["MH02.txt", "MH03.txt", "V102.txt", "V201.txt"]) if cam else "MH03_imu_t_ns.txt")
        ts = [int(l.split(",")[0]) for l in open(f) if l.strip() and l[0].isdigit()]
        n = 2000 if cam else 10000
        start = rng.randint(0, max(0, len(ts) - n - 1))
        s = ts[start:start + n]
        lat, mean, sp, lo, hi = (6e6, 2.5e6, 0.003, 5e6, 30e6) if cam else (0.8e6, 0.3e6, 0.002, 2e6, 10e6)
        ready = [x + lat + exp(rng, mean) + (rng.uniform(lo, hi) if rng.random() < sp else 0) for x in s]
        return [("sample", round(a), "", t) for a, t in zip(fifo(ready, rng), s)], 50_000_000 if cam else 5_000_000
    if kind == "S12_cold_start_wrong_period":
        s = base(rng, 20_000_000, 30)
        q = fifo([x + 1_000_000 + exp(rng, 1e6) for x in s], rng)
        return [("sample", round(a), "", t) for a, t in zip(q, s)], 21_000_000
    raise ValueError(kind)


KINDS = ["S1_gauss_jitter", "S2_exp_jitter", "S3_heavy_tail_stalls", "S4_random_loss",
         "S5_loss_with_index", "S6_burst_delivery", "S7_clock_drift", "S8_period_step",
         "S9_quantised_arrival", "S10_hw_reference", "S11a_euroc_cam", "S11b_euroc_imu",
         "S12_cold_start_wrong_period"]


def write_draws(outdir, seed, kinds, shared):
    """Writes NAME.csv + NAME.json for each wanted kind of draw `seed`."""
    os.makedirs(outdir, exist_ok=True)
    for i, kind in enumerate(KINDS):
        if kind not in kinds:
            continue
        rng = random.Random(seed * 1000 + i)
        rows, period = scenario(kind, rng, shared)
        with open(os.path.join(outdir, kind + ".csv"), "w") as f:
            f.write("event,time_ns,index,true_ns\n")
            for e, t, ix, tr in rows:
                f.write(f"{e},{int(t)},{ix},{tr}\n")
        with open(os.path.join(outdir, kind + ".json"), "w") as f:
            json.dump({"name": kind, "window_ns": 5_000_000_000, "period_ns": period,
                       "loss_threshold": 2, "seed": seed}, f)


def draw_targets(outdir, kinds, shared):
    """Per-draw figures of the README's target rule, measured on each draw:
    Rock RMS and max from the reference model (rock_estimator.py), best
    causal RMS = the better of the two causal references (causal_reference.py),
    in microseconds, as scripts/estimator_accuracy.py --targets reads them."""
    import importlib.util
    import sys
    import tempfile
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    import causal_reference
    import rock_estimator
    spec = importlib.util.spec_from_file_location("score", os.path.join(shared, "data/estimator/score.py"))
    sc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sc)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind in kinds:
            csvp, side = os.path.join(outdir, kind + ".csv"), os.path.join(outdir, kind + ".json")
            samples = sc.load_scenario(csvp)
            ids = {r[0] for r in samples}
            p = os.path.join(tmp, "est.jsonl")
            rock_estimator.run(csvp, side, p)
            rock = sc.score(samples, sc.load_estimates(p, ids))
            best = []
            for m in ("hull", "olson"):
                causal_reference.run(m, csvp, side, p)
                best.append(sc.score(samples, sc.load_estimates(p, ids))["rms_ns"])
            out[kind] = {"rock_rms": rock["rms_ns"] / 1e3, "rock_max": rock["max_ns"] / 1e3,
                         "best_rms": min(best) / 1e3}
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kinds", default=None,
                    help="comma-separated kinds to write (default: all); a kind's draw does not depend on the others")
    ap.add_argument("--shared", default=default_shared())
    a = ap.parse_args()
    kinds = [k for k in KINDS if k in a.kinds.split(",")] if a.kinds else KINDS
    write_draws(a.outdir, a.seed, kinds, a.shared)
    with open(os.path.join(a.outdir, "targets.json"), "w") as f:
        json.dump(draw_targets(a.outdir, kinds, a.shared), f, indent=1)


if __name__ == "__main__":
    main()
