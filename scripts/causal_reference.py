#!/usr/bin/env python3
"""The two causal, zero-latency reference estimators behind the README's "best
causal" figure (../shared/data/estimator/README.md, Targets), as described in
../shared/reference/timestamp-estimation.md: a lower-convex-hull (one-way LP)
line fit over a sliding window (3.1, centroid edge) and Olson's passive
synchronisation with a drift bound (3.3). Neither sees the true sample
numbers: both number the samples from the arrival stamps and the expected
period (a device counter where the file has one), and both output each
estimate as the sample arrives.

    python3 scripts/causal_reference.py hull|olson DRAW.csv DRAW.json OUT.jsonl [--history-ns N]
"""
import argparse
import csv
import json

# Longer history on the kinds where the README says the reference used it.
LONG_HISTORY_NS = {"S9_quantised_arrival": 60_000_000_000, "S12_cold_start_wrong_period": 30_000_000_000}
CHANGE_N = 24  # longer than the longest burst of queued samples in the kinds
CHANGE_FRAC = 0.1  # ... above the line by this fraction of the period
OLSON_EPS = 200e-6  # drift bound of the Olson reference (the kinds stay within +-150 ppm)


def lower_hull(pts):
    """Andrew's monotone chain, lower part; pts sorted by strictly increasing x."""
    h = []
    for p in pts:
        while len(h) >= 2 and (h[-1][0] - h[-2][0]) * (p[1] - h[-2][1]) - (h[-1][1] - h[-2][1]) * (p[0] - h[-2][0]) <= 0:
            h.pop()
        h.append(p)
    return h


class Numbering:
    """Sample numbers from arrivals and the expected period: the next number,
    unless the arrival lies one or two whole periods late on the current line,
    at or just above the grid point (tolerance from the observed delays), not
    in a burst, in a stream whose declared losses have held up more often
    than not (so stalls are not taken for losses where there are none); or
    unless the previous arrival was as late (a loss confirmed by two samples).
    An arrival more than half a period before the line means the numbers
    overshot (a stall taken for a loss): numbering steps back to the line."""

    def __init__(self, period):
        self.T = period
        self.k = None
        self.m = period / 8.0  # running mean of the delay above the line
        self.last_q = None
        # losses seen (confirmed by a second late sample, or declared on the
        # grid and borne out by the next sample) against declared losses the
        # next sample took back (refuted: a stall); a loss is declared on the
        # grid at once only while losses outnumber refutations
        self.held, self.refuted, self.declared = 0, 0, False
        self.late = None  # how late the previous arrival was, if taken for a delay

    def next(self, u, q, index=None):
        """u = fractional position of arrival q on the current line, or None."""
        burst = self.last_q is not None and q - self.last_q < self.T / 2
        self.last_q = q
        if index is not None:
            self.k = index
            return index, False
        if self.k is None:
            self.k = 0
            return 0, False
        nxt = self.k + 1
        back = declared = False
        if u is not None:
            x = u - nxt
            if x < -0.5:
                nxt += round(x)
                back = True
            elif x >= 0.95 and not burst:
                n = max(1, round(x))
                on_grid = n - 0.05 <= x <= n + min(0.45, 0.05 + 3.0 * self.m / self.T)
                # one or two lost samples: on the grid, whole periods late, in
                # a stream that loses samples; any number when the previous
                # arrival was as late (confirmed: not a stall)
                confirmed = self.late is not None and abs(x - self.late) < 0.3
                if on_grid and n <= 2 and self.held > self.refuted:
                    nxt += n
                    declared = True
                elif confirmed:
                    nxt += n
                    self.held += 1
            if self.declared:
                # was the loss declared on the previous sample borne out?
                self.refuted += back
                self.held += not back
            self.declared = declared
            self.late = x if x >= 0.95 and not burst and nxt == self.k + 1 else None
            r = (u - nxt) * self.T
            self.m += (min(max(r, 0.0), self.T) - self.m) / 64.0
        self.k = nxt
        return nxt, back


class Hull:
    def __init__(self, period, history_ns):
        self.T, self.hist = period, history_ns
        self.pts = []  # (k, y, q) with y = q - t0 - k*T
        self.t0 = None
        self.num = Numbering(period)
        self.line = None  # (a, b): y = a + b*k
        # The lower hull of self.pts, kept as points come and go (removing a
        # point that is no vertex leaves the hull as it is; appending one is
        # a step of the monotone chain), and the sum of the points' numbers.
        self.hull = []
        self.ksum = 0

    def _rebuild(self):
        self.hull = lower_hull([(p[0], p[1]) for p in self.pts])
        self.ksum = sum(p[0] for p in self.pts)

    def _u(self, q):
        if self.line is None:
            return None
        a, b = self.line
        return (q - self.t0 - a) / (self.T + b)

    def push(self, q, index=None):
        if self.t0 is None:
            self.t0 = q
        k, back = self.num.next(self._u(q), q, index)
        if back or (self.pts and self.pts[-1][0] >= k):
            self.pts = [p for p in self.pts if p[0] < k]
            self._rebuild()
        y = q - self.t0 - k * self.T
        self.pts.append((k, y, q))
        self.ksum += k
        h = self.hull
        while len(h) >= 2 and (h[-1][0] - h[-2][0]) * (y - h[-2][1]) - (h[-1][1] - h[-2][1]) * (k - h[-2][0]) <= 0:
            h.pop()
        h.append((k, y))
        lo = q - self.hist
        i = 0
        while i < len(self.pts) - 1 and self.pts[i][2] < lo:
            i += 1
        if i:
            self.ksum -= sum(p[0] for p in self.pts[:i])
            del self.pts[:i]
            # Points dropped from the left change only the hull's part up to
            # its first vertex left in the window.
            first = self.pts[0][0]
            j = next(j for j in range(len(h)) if h[j][0] >= first)
            m = next(m for m in range(len(self.pts)) if self.pts[m][0] == h[j][0])
            self.hull = lower_hull([(p[0], p[1]) for p in self.pts[:m + 1]]) + h[j + 1:]
        h = self.hull
        if len(h) < 2:
            self.line = (h[0][1], 0.0)
        else:
            xbar = self.ksum / len(self.pts)
            j = next((j for j in range(1, len(h)) if h[j][0] >= xbar), len(h) - 1)
            (ax, ay), (bx, by) = h[j - 1], h[j]
            b = (by - ay) / (bx - ax)
            self.line = (ay - b * ax, b)
        a, b = self.line
        # change detection: the last CHANGE_N points all lie well above the
        # line (impossible for a still-valid clock line with one-sided delays
        # reaching their floor now and then): keep only those points
        tail = self.pts[-CHANGE_N:]
        if len(self.pts) > CHANGE_N and min(p[1] - a - b * p[0] for p in tail) > CHANGE_FRAC * self.T:
            self.pts = tail
            self._rebuild()
        return self.t0 + k * self.T + a + b * k


class Olson:
    def __init__(self, period, eps=OLSON_EPS):
        self.T, self.eps = period, eps
        self.t0 = None
        self.ref = None  # (k*, y*)
        self.num = Numbering(period)

    def _pred(self, k):
        ks, ys = self.ref
        return ys + self.eps * abs(k - ks) * self.T

    def push(self, q, index=None):
        if self.t0 is None:
            self.t0 = q
        u = None if self.ref is None else (q - self.t0 - self.ref[1]) / self.T
        k, back = self.num.next(u, q, index)
        y = q - self.t0 - k * self.T
        if self.ref is None or back or y <= self._pred(k):
            self.ref = (k, y)
        return self.t0 + k * self.T + self._pred(k)


def run(method, csv_path, side_path, out_path, history_ns=None):
    side = json.load(open(side_path))
    name = side.get("name", "")
    T = side["period_ns"]
    hist = history_ns or LONG_HISTORY_NS.get(name, side["window_ns"])
    make = (lambda: Hull(T, hist)) if method == "hull" else (lambda: Olson(T))
    rows = list(csv.DictReader(open(csv_path)))
    refs = any(r["event"] == "reference" for r in rows)
    sample_est, ref_est = make(), make()
    raw_last, unwrapped = None, None
    modulus = 1 << side.get("params", {}).get("counter_bits", 8)  # 8 bits unless the draw says
    with open(out_path, "w") as o:
        for rid, r in enumerate(rows):
            q = int(r["time_ns"])
            if r["event"] == "reference":
                ref_est.push(q)
            elif r["event"] == "sample":
                idx = None
                if r.get("index", "") not in ("", None):
                    i = int(r["index"])
                    unwrapped = i if raw_last is None else unwrapped + (i - raw_last) % modulus
                    raw_last, idx = i, unwrapped
                if refs and idx is None:
                    # one reference per sample: number the samples in order
                    idx = 0 if sample_est.num.k is None else sample_est.num.k + 1
                e = sample_est.push(q, idx)
                if refs and ref_est.t0 is not None:
                    # the hardware references carry the phase: evaluate their
                    # fit at the number the sample stream gave this sample
                    k = sample_est.num.k
                    if method == "hull" and ref_est.line is not None:
                        a, b = ref_est.line
                        e = ref_est.t0 + k * T + a + b * k
                    elif method == "olson" and ref_est.ref is not None:
                        e = ref_est.t0 + k * T + ref_est._pred(k)
                o.write(json.dumps({"id": rid, "estimate_ns": int(round(e))}) + "\n")
            elif r["event"] == "loss":
                sample_est.num.k = (sample_est.num.k or 0) + 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("method", choices=["hull", "olson"])
    ap.add_argument("csv")
    ap.add_argument("sidecar")
    ap.add_argument("out")
    ap.add_argument("--history-ns", type=int, default=None)
    a = ap.parse_args()
    run(a.method, a.csv, a.sidecar, a.out, a.history_ns)


if __name__ == "__main__":
    main()
