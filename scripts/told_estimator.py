#!/usr/bin/env python3
"""A causal, zero-latency estimator told a draw's true delay law and loss
model: the per-kind target of issue 42 where a figure cannot be reached
("show it with a causal estimator told that kind's true jitter law and loss
rate, as was done for S9"; scripts/s9_bayes.py is the S9 case).

At every sample it keeps the posterior over the sample line (offset and
period) on a grid, given the arrivals so far and the true delay law (the
base latency is not told: it is part of the offset, which the score takes
out):

  * an arrival on its own is an exact observation of acquisition + delay:
    its likelihood is the law's density at the residual;
  * an arrival queued behind the one before (FIFO: it comes at most 60 us
    after it) only says the sample was ready by then: the law's CDF;
  * on a quantised arrival clock of tick t, the sample was ready in
    (arrival - t, arrival]: a difference of CDFs.

Numbering: a device counter or announced losses give it; otherwise, when the
told loss rate is not zero, each arrival takes the number of highest
posterior probability among "the next", "after m lost samples" (the told
loss model's prior: independent or two-state bursty losses) and "the same
as the one before" (a prior of 1e-4: taking back a loss that was wrong).
The estimate is the posterior mean of the line at the sample's number
(the minimum-mean-square-error estimate). The grid is re-centred and
rescaled on the stored arrivals (up to the memory) when the posterior
outgrows it or narrows within it. A small outlier share (1e-6) keeps the
likelihood finite for arrivals the law rules out.

Needs numpy. Used by scripts/family_draws.py; standalone:

    python3 scripts/told_estimator.py DRAW.csv DRAW.json OUT.jsonl

where DRAW.json's "params" is what family_draws.py drew.
"""
import csv
import json
import math
import sys

import numpy as np

FIFO_GAP_NS = 60_000  # the generator's queueing gap is 20-60 us
EPS = 1e-6  # outlier share of the likelihood
BACK_PRIOR = 1e-4  # prior of "same number as the sample before"
N_PERIOD, N_OFFSET = 21, 51  # grid size
PPM0 = 150e-6  # the period's prior half-width (draws stay within +-100 ppm)
MEMORY_NS = 60_000_000_000  # forgetting time (at least the window)


class Law:
    """Log density (closed form) and CDF (tabulated) of a delay beyond the
    base latency, as scripts/family_draws.py draws it."""

    def __init__(self, params):
        period = params["period_ns"]
        scale = params["jitter_periods"] * period
        self.name = law = params["law"]
        self.scale = scale
        if law == "uniform":
            dmax = scale
        elif law == "exponential":
            dmax = 30 * scale
        elif law == "gamma":
            k = self.k = params["shape"]
            th = self.th = scale / k
            dmax = th * (k + 20 * math.sqrt(k) + 20)
            self.c0 = -math.lgamma(k) - k * math.log(th)
        elif law == "gaussian":
            dmax = 3 * scale
        else:  # heavy_tailed: Pareto, capped at 50 periods
            self.a, self.s = params["shape"], 0.3 * scale
            dmax = 50 * period
        self.dmax = dmax
        self.lfloor = math.log(EPS / (dmax + 10 * period))
        n = 16384
        x = np.linspace(0, dmax, n + 1)
        pdf = np.exp(self._logpdf(x))
        cdf = np.concatenate([[0.0], np.cumsum(0.5 * (pdf[1:] + pdf[:-1]) * np.diff(x))])
        self.cdf = (1 - EPS) * cdf / cdf[-1]
        self.dx = dmax / n

    def _logpdf(self, r):
        law = self.name
        if law == "uniform":
            return np.full(np.shape(r), -math.log(self.scale))
        if law == "exponential":
            return -r / self.scale - math.log(self.scale)
        if law == "gamma":
            return (self.k - 1) * np.log(np.maximum(r, 1e-300)) - r / self.th + self.c0
        if law == "gaussian":
            s = self.scale / 3
            return -0.5 * ((r - self.scale) / s) ** 2 - math.log(s * math.sqrt(2 * math.pi))
        return math.log(self.a / self.s) - (self.a + 1) * np.log1p(np.maximum(r, 0) / self.s)

    def exact(self, r):
        if self.name == "uniform":
            return np.where((r >= 0) & (r <= self.dmax), math.log((1 - EPS) / self.scale), self.lfloor)
        inside = (r >= 0) & (r <= self.dmax)
        lp = np.where(inside, self._logpdf(np.clip(r, 0, self.dmax)) + math.log1p(-EPS), -np.inf)
        return np.logaddexp(lp, self.lfloor)

    def below(self, r):
        u = np.clip(r / self.dx, 0, len(self.cdf) - 1.000001)
        i = u.astype(np.int64)
        f = u - i
        return self.cdf[i] * (1 - f) + self.cdf[i + 1] * f

    def interval(self, lo, hi):
        """log P(lo < delay <= hi)."""
        return np.log(self.below(hi) - self.below(lo) + EPS)


class Told:
    def __init__(self, params, window_ns):
        self.law = Law(params)
        self.T = float(params["period_ns"])
        self.tick = params.get("tick_ns")
        mem = max(window_ns, MEMORY_NS)
        self.lam = 1 - self.T / mem
        self.keep = int(min(20000, 4 * mem / self.T))
        rate = params.get("loss", 0.0) or 0.0
        self.prior = None  # log prior of m extra numbers (m >= -1), vectorised
        if rate > 0 and not params.get("announced") and params.get("counter_bits") is None:
            burst = params.get("burst")
            if burst:
                # two-state losses: after a received sample, a loss starts
                # with p_start and goes on with 1 - p_end
                p_end, p_start = 1 / burst, rate / (burst * (1 - rate))
                a0, a1, b = math.log(1 - p_start), math.log(p_start * p_end), math.log(1 - p_end)
            else:
                a0, a1, b = math.log(1 - rate), math.log((1 - rate) * rate), math.log(rate)
            self.prior = lambda m: np.where(m < 0, math.log(BACK_PRIOR), np.where(m == 0, a0, a1 + b * (m - 1)))
        self.c_max = 2 * (self.law.dmax + (self.tick or 0) + self.T)
        self.k = None
        self.q_prev = None
        self.data = []  # (k, q, kind): kind 0 exact, 1 censored, 2 interval
        self.grid = None

    def _ll(self, q, kind, line):
        """Log-likelihood of arrival(s) q of kind(s) `kind` on line value(s)
        `line` (numpy broadcasting)."""
        if np.ndim(kind) == 0 and kind == 0:
            return self.law.exact(q - line)
        if self.tick:
            other = self.law.interval(q - self.tick - line, q - line)
        else:
            other = np.log(self.law.below(q - line) + EPS)
        if np.ndim(kind) == 0 or not (kind == 0).any():
            return other
        return np.where(kind == 0, self.law.exact(q - line), other)

    def _build(self, k_ref, c_mid, c_half, p_mid, p_half):
        """A new grid: offsets (line values at number k_ref) and periods;
        the log posterior recomputed on the stored arrivals."""
        cs = c_mid + np.linspace(-c_half, c_half, N_OFFSET)
        ps = p_mid + np.linspace(-p_half, p_half, N_PERIOD)
        C, P = np.meshgrid(cs, ps)
        self.C, self.P = C.ravel(), P.ravel()
        self.k_ref = k_ref
        self.c_half, self.p_half = c_half, p_half
        d = np.array(self.data[-self.keep:], dtype=np.float64)
        wt = self.lam ** np.arange(len(d) - 1, -1, -1.0)
        L = np.zeros_like(self.C)
        for kind in (0, 1, 2):
            sel = d[:, 2] == kind
            dk, wk = d[sel], wt[sel]
            for a in range(0, len(dk), 256):
                b = dk[a:a + 256]
                line = self.C[None, :] + (b[:, 0:1] - k_ref) * self.P[None, :]
                L += (wk[a:a + 256, None] * self._ll(b[:, 1:2], kind, line)).sum(axis=0)
        self.L = L - L.max()

    def _centroid(self):
        """The forgetting-weighted mean number of the arrivals (where offset
        and period are nearly independent)."""
        return float(round(self.swk / self.sw))

    def _stats(self, k):
        """Posterior mean and std of the line at number k and of the period,
        and per axis (offset, period) the effective number of grid points
        and the mass on the two outer ones."""
        w = np.exp(self.L)
        W = w.sum()
        line = self.C + (k - self.k_ref) * self.P
        cm = (w * line).sum() / W
        pm = (w * self.P).sum() / W
        cs = math.sqrt(max((w * (line - cm) ** 2).sum() / W, 0.0))
        ps = math.sqrt(max((w * (self.P - pm) ** 2).sum() / W, 0.0))
        g = w.reshape(N_PERIOD, N_OFFSET) / W
        wc, wp = g.sum(axis=0), g.sum(axis=1)
        return cm, pm, cs, ps, (1 / (wc * wc).sum(), 1 / (wp * wp).sum()), (wc[0] + wc[-1], wp[0] + wp[-1])

    def push(self, q, kind, index=None):
        if self.k is None:
            self.k = 0 if index is None else index
            self.sw, self.swk = 1.0, float(self.k)
            self.data.append((self.k, q, kind))
            d999 = self.law.dx * np.searchsorted(self.law.cdf, 0.999)
            lo = q - d999 - (self.tick or 0)
            self._build(self.k, (lo + q) / 2, (q - lo) / 2 + 1, self.T, PPM0 * self.T)
            return self._stats(self.k)[0]
        if index is not None:
            k = index
        elif self.prior is None:
            k = self.k + 1
        else:
            # candidates: the number before, the next, up to 6 lost, and
            # around the number the arrival's place on the line says
            w = np.exp(self.L)
            cm = (w * (self.C + (self.k + 1 - self.k_ref) * self.P)).sum() / w.sum()
            m_hat = int(round((q - cm) / self.T))
            m = np.unique(np.concatenate([np.arange(-1, 7), np.arange(m_hat - 2, m_hat + 3)]))
            m = m[m >= -1]
            lines = self.C[None, :] + (self.k + 1 + m[:, None] - self.k_ref) * self.P[None, :]
            lik = np.log((w[None, :] * np.exp(self._ll(q, kind, lines))).sum(axis=1) + 1e-300)
            k = self.k + 1 + int(m[np.argmax(lik + self.prior(m))])
        self.k = k
        self.data.append((k, q, kind))
        if len(self.data) > 2 * self.keep:
            del self.data[:-self.keep]
        self.L = self.lam * self.L + self._ll(q, kind, self.C + (k - self.k_ref) * self.P)
        self.L -= self.L.max()
        self.sw = self.lam * self.sw + 1
        self.swk = self.lam * self.swk + k
        for _ in range(3):
            cm, _, _, _, ess, edge = self._stats(k)
            if not any(ed > 5e-3 for ed in edge) and ess[0] >= 0.2 * N_OFFSET and ess[1] >= 0.2 * N_PERIOD:
                return cm
            kr = self._centroid()
            _, pm, cs, ps, _, _ = self._stats(kr)
            # per axis: widen where the posterior reaches the grid's edge,
            # zoom in (by at most 4 times) where it covers few points; stay
            # within the prior (the period within +-PPM0, the offset within
            # the delay law's and the tick's reach)
            half = []
            for h, sd, es, ed, n, cap in ((self.c_half, cs, ess[0], edge[0], N_OFFSET, self.c_max),
                                          (self.p_half, ps, ess[1], edge[1], N_PERIOD, PPM0 * self.T)):
                if ed > 5e-3 and h < cap:
                    half.append(min(cap, max(5 * sd, 2 * h)))
                elif es < 0.2 * n:
                    half.append(max(5 * sd, h / 4, 1e-3))
                else:
                    half.append(h)
            if half == [self.c_half, self.p_half]:
                return cm
            cm_r = (np.exp(self.L) * (self.C + (kr - self.k_ref) * self.P)).sum() / np.exp(self.L).sum()
            self._build(kr, cm_r, half[0], pm, half[1])
        return self._stats(k)[0]


def run(csv_path, side_path, out_path, params=None):
    side = json.load(open(side_path))
    params = params or side["params"]
    est = Told(params, side["window_ns"])
    bits = params.get("counter_bits")
    raw_last, unwrapped = None, None
    pending = 0
    t0 = None  # times relative to the first arrival (float64 resolution)
    with open(csv_path) as f, open(out_path, "w") as o:
        for rid, r in enumerate(csv.DictReader(f)):
            q = int(r["time_ns"])
            if r["event"] == "loss":
                pending += 1
            elif r["event"] == "sample":
                idx = None
                if r.get("index", "") not in ("", None):
                    i = int(r["index"])
                    unwrapped = i if raw_last is None else unwrapped + (i - raw_last) % (1 << (bits or 8))
                    raw_last, idx = i, unwrapped
                elif pending and est.k is not None:
                    idx = est.k + 1 + pending
                elif params.get("announced") and est.k is not None:
                    idx = est.k + 1
                pending = 0
                queued = est.q_prev is not None and q - est.q_prev <= FIFO_GAP_NS
                if est.tick:
                    kind = 1 if est.q_prev is not None and q == est.q_prev else 2
                else:
                    kind = 1 if queued else 0
                est.q_prev = q
                t0 = q if t0 is None else t0
                e = est.push(float(q - t0), kind, idx)
                o.write(json.dumps({"id": rid, "estimate_ns": t0 + int(round(e))}) + "\n")


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], sys.argv[3])
