#!/usr/bin/env python3
"""`syncline estimate` on fresh random draws of the estimator scenario kinds,
against per-draw targets computed as the README's rule
(../shared/data/estimator/README.md, Targets):

    target RMS = max(5 us, min(1/2 x Rock RMS, 2 x best causal RMS)),  max <= Rock max

with every figure measured on the draw itself: Rock from the reference model
scripts/rock_estimator.py, "best causal" the better of the two causal
references of scripts/causal_reference.py (sliding-window lower hull, Olson
with a drift bound), all scored with the shared score.py.

    python3 scripts/estimator_draws.py --seeds 401-410 [--kinds S4_random_loss,S9_quantised_arrival]
        [--bin target/release/syncline] [--keep DIR] [--markdown]

Prints one line per (kind, seed), then the pass count per kind; exits 1 if any
draw misses. Draws are those of scripts/gen_estimator_scenarios.py (same seed,
same files). `--public` instead runs the two causal references on the 13
public files and prints them next to the README's best causal column.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import causal_reference  # noqa: E402
import gen_estimator_scenarios as gen  # noqa: E402
import rock_estimator  # noqa: E402


def seeds_arg(text):
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def load_score(path):
    spec = importlib.util.spec_from_file_location("score", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def public(shared, sc):
    """The causal references on the 13 public files (validation), in us."""
    import re
    d = os.path.join(shared, "data/estimator")
    readme = open(os.path.join(d, "README.md")).read()
    best = {m.group(1): float(m.group(2))
            for m in re.finditer(r"^\| (S\w+) \| [\d.]+ \| ([\d.]+) \| [\d.]+ \|$", readme, re.M)}
    print("| scenario | hull RMS / max | Olson RMS / max | best (ours) | README best causal |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in gen.KINDS:
            csvp = os.path.join(d, kind + ".csv")
            samples = sc.load_scenario(csvp)
            ids = {r[0] for r in samples}
            r = {}
            for m in ("hull", "olson"):
                p = os.path.join(tmp, m + ".jsonl")
                causal_reference.run(m, csvp, os.path.join(d, kind + ".json"), p)
                r[m] = sc.score(samples, sc.load_estimates(p, ids))
            print(f"| {kind} | " + " | ".join(f"{r[m]['rms_ns'] / 1e3:.1f} / {r[m]['max_ns'] / 1e3:.0f}" for m in r)
                  + f" | {min(x['rms_ns'] for x in r.values()) / 1e3:.1f} | {best.get(kind, float('nan'))} |", flush=True)
    return 0


def main():
    root = os.path.dirname(HERE)
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=seeds_arg, default=seeds_arg("401-410"))
    ap.add_argument("--kinds", default=None, help="comma-separated kinds (default: all)")
    ap.add_argument("--bin", default=os.path.join(root, "target/release/syncline"))
    ap.add_argument("--shared", default=gen.default_shared())
    ap.add_argument("--keep", default=None, help="write the draws and outputs here (default: a temp dir)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--public", action="store_true",
                    help="instead: the two causal references on the public files, against the README's best causal RMS")
    a = ap.parse_args()
    sc = load_score(os.path.join(a.shared, "data/estimator/score.py"))
    if a.public:
        return public(a.shared, sc)
    kinds = a.kinds.split(",") if a.kinds else gen.KINDS
    for k in kinds:
        if k not in gen.KINDS:
            ap.error(f"unknown kind {k}")
    tmp = None if a.keep else tempfile.TemporaryDirectory()
    base = a.keep or tmp.name
    lines, passed = [], {k: [0, 0] for k in kinds}
    for seed in a.seeds:
        d = os.path.join(base, str(seed))
        gen.write_draws(d, seed, kinds, a.shared)
        for kind in kinds:
            csvp, side = os.path.join(d, kind + ".csv"), os.path.join(d, kind + ".json")
            samples = sc.load_scenario(csvp)
            ids = {r[0] for r in samples}

            def scored(out):
                return sc.score(samples, sc.load_estimates(out, ids))

            s = json.load(open(side))
            out = os.path.join(d, kind + ".syncline.jsonl")
            cmd = [a.bin, "estimate", "--window-ns", str(s["window_ns"]), "--period-ns",
                   str(s["period_ns"]), "--loss-threshold", str(s["loss_threshold"]), csvp]
            with open(out, "w") as f:
                subprocess.run(cmd, stdout=f, check=True)
            ours = scored(out)
            rock_out = os.path.join(d, kind + ".rock.jsonl")
            rock_estimator.run(csvp, side, rock_out)
            rock = scored(rock_out)
            best = {}
            for m in ("hull", "olson"):
                p = os.path.join(d, f"{kind}.{m}.jsonl")
                causal_reference.run(m, csvp, side, p)
                best[m] = scored(p)["rms_ns"] / 1e3
            bm = min(best, key=best.get)
            rr, rmax, br = rock["rms_ns"] / 1e3, rock["max_ns"] / 1e3, best[bm]
            target = max(5.0, min(rr / 2, 2 * br))
            rms, mx = ours["rms_ns"] / 1e3, ours["max_ns"] / 1e3
            ok = rms <= target and mx <= rmax
            passed[kind][0] += ok
            passed[kind][1] += 1
            lines.append((kind, seed, rr, rmax, best["hull"], best["olson"], target, rms, mx, ok))
            print(f"{kind:28} {seed:5} rock {rr:9.1f}/{rmax:9.0f} hull {best['hull']:9.1f} "
                  f"olson {best['olson']:9.1f} target {target:8.1f}  syncline {rms:9.1f}/{mx:9.0f} "
                  f"{'ok' if ok else 'MISS'}", flush=True)
    print()
    if a.markdown:
        print("| kind | draws passed | worst syncline RMS / target (us) |")
        print("|---|---|---|")
    for kind in kinds:
        mine = [l for l in lines if l[0] == kind]
        worst = max(mine, key=lambda l: l[7] / l[6])
        p, n = passed[kind]
        if a.markdown:
            print(f"| {kind} | {p}/{n} | {worst[7]:.1f} / {worst[6]:.1f} (seed {worst[1]}) |")
        else:
            print(f"{kind:28} {p}/{n} passed; worst RMS/target {worst[7]:.1f}/{worst[6]:.1f} (seed {worst[1]})")
    total = sum(p for p, _ in passed.values())
    print(f"{total}/{len(lines)} draws meet their targets", file=sys.stderr)
    if tmp:
        tmp.cleanup()
    return 0 if total == len(lines) else 1


if __name__ == "__main__":
    sys.exit(main())
