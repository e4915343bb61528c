#!/usr/bin/env python3
"""A reference model of Rock's aggregator::TimestampEstimator, written from the
behaviour specified in ../shared/reference/rock-aggregator.md (sections 2.4-2.8),
for scoring: it gives the per-draw "Rock" figures of the estimator targets
(../shared/data/estimator/README.md) on draws made by gen_estimator_scenarios.py,
where no upstream binary is available. Fed like the README's anchors: integer
microseconds, window / initial period from the sidecar, min latency 0, an 8-bit
counter unwrapped by the caller; an update that fails stands in as the arrival.

Validated on the 13 public scenarios: RMS and max within 0.2 % of anchors.json
(declared-loss counts as the README: S3 82, S6 1429, S11b 15).

    python3 scripts/rock_estimator.py DRAW.csv DRAW.json OUT.jsonl
    python3 ../shared/data/estimator/score.py DRAW.csv OUT.jsonl
"""
import csv, json, math, sys

class RockError(Exception):
    pass

def from_seconds(v):
    # base::Time::fromSeconds: integer seconds truncated + round(frac*1e6) (half away)
    s = int(v)
    frac = v - s
    f = frac * 1e6
    r = math.floor(abs(f) + 0.5) * (1 if f >= 0 else -1)
    return s * 1000000 + int(r)

class TE:
    def __init__(self, window_us, period_us, min_latency_us=0, lost_threshold=2):
        self.window = window_us / 1e6
        self.initial_period = period_us / 1e6
        self.initial_latency = min_latency_us / 1e6
        self.lost_threshold = lost_threshold
        self.reset()

    def reset(self):
        self.zero = None
        self.samples = []          # None = placeholder
        self.missing = 0
        self.missing_total = 0
        self.last = 0.0
        self.base_time_reset = 0.0
        self.base_time_reset_offset = 0.0
        self.got_full_window = False
        self.lost = []
        self.expected_losses = 0
        self.rejected_expected_losses = 0
        self.expected_loss_timeout = 0
        self.latency = self.initial_latency
        self.last_reference = None
        self.last_index = 0
        self.have_last_index = False

    def have_estimate(self):
        valid = len(self.samples) - self.missing
        return valid >= 1 if self.initial_period else valid >= 2

    def period(self):
        if not self.got_full_window and self.initial_period != 0:
            return self.initial_period
        n = len(self.samples)
        while n > 0 and self.samples[n - 1] is None:
            n -= 1
        if n <= 1:
            raise RockError("period: not enough samples")
        return (self.samples[n - 1] - self.samples[0]) / (n - 1)

    def trim(self, now):
        s = self.samples
        if self.have_estimate():
            P = self.period()
            min_t = now - self.window
            e = 0
            while e < len(s) and (s[e] is None or s[e] < min_t):
                if s[e] is not None:
                    self.got_full_window = True
                e += 1
            if e == len(s):
                self.samples = []
                self.missing = 0
                return
            begin = e
            good = e
            slots = 0
            while e != 0:
                if s[e] is not None:
                    if slots > 0 and (s[good] - s[e]) / slots >= 0.5 * P:
                        break
                    good = e
                    slots = 0
                e -= 1
                slots += 1
            if e == 0 or s[e] < min_t - self.window:
                e = begin
            dropped = s[:e]
            self.missing -= sum(1 for x in dropped if x is None)
            self.samples = s[e:]
        if len(self.samples) == self.missing:
            self.samples = []
            self.missing = 0

    def rebase(self, value, at):
        if self.last != 0:
            self.base_time_reset_offset = value - self.last
        self.last = value
        self.base_time_reset = at
        if self.last_reference is not None:
            self.update_reference(self.last_reference)

    def out(self):
        return from_seconds(self.last - self.latency) + self.zero

    def update(self, t):
        if self.zero is None:
            self.zero = t
        now = (t - self.zero) / 1e6
        self.trim(now)
        if not self.samples:
            self.rebase(now, now)
            self.samples.append(now)
            return from_seconds(now - self.latency) + self.zero
        self.samples.append(now)
        P = self.period()
        if now - self.base_time_reset > self.window:
            best = now; best_at = now
            s = self.samples
            for k in range(1, len(s)):
                x = s[len(s) - 1 - k]
                if x is not None and x + k * P < best:
                    best = x + k * P; best_at = x
            self.rebase(best - P, best_at)
        if self.expected_loss_timeout == 0:
            self.rejected_expected_losses += self.expected_losses
            self.expected_losses = 0
        else:
            self.expected_loss_timeout -= 1
        n_lost = 0
        if self.expected_losses > 0:
            d = int((now - self.last + 0.1 * P) / P)
            if d > 1:
                n_lost = min(d - 1, self.expected_losses)
                self.expected_losses -= n_lost
        elif self.lost_threshold is not None:
            d = int((now - self.last) / P)
            if d > 1:
                self.lost.append(d - 1)
                if len(self.lost) > self.lost_threshold:
                    n_lost = min(self.lost)
        if n_lost > 0:
            self.samples.pop()
            for _ in range(n_lost):
                self.samples.append(None)
                self.missing += 1
                self.missing_total += 1
                self.last += P
            self.samples.append(now)
            self.lost = []
        if self.last + P > now - 1e-4 * P:
            self.rebase(now, now)
        else:
            self.last = self.last + P
        return self.out()

    def update_index(self, t, index):
        if not self.have_last_index or index <= self.last_index:
            self.have_last_index = True
            self.last_index = index
            return self.update(t)
        for _ in range(index - self.last_index - 1):
            self.update_loss()
        self.last_index = index
        return self.update(t)

    def update_loss(self):
        self.expected_losses += 1
        self.expected_loss_timeout = 10

    def update_reference(self, h):
        if not self.got_full_window:
            return
        P = self.period()
        hw = (h - self.zero) / 1e6
        k = math.floor((self.last - hw) / P)
        frac = self.last - (hw + k * P)
        self.latency = math.floor(self.latency / P) * P + frac
        self.last_reference = h


def run(csv_path, side_path, out_path, unwrap_mod=256):
    side = json.load(open(side_path))
    te = TE(side["window_ns"] // 1000, (side.get("period_ns") or 0) // 1000, 0,
            side.get("loss_threshold", 2))
    missing = 0
    raw_last = None; unwrapped = None
    with open(csv_path) as f, open(out_path, "w") as o:
        rd = csv.DictReader(f)
        for rid, row in enumerate(rd):
            ev = row["event"]
            tns = int(row["time_ns"])
            tus = tns // 1000  # floor to µs
            if ev == "sample":
                try:
                    idx = row.get("index", "")
                    if idx not in ("", None):
                        i = int(idx)
                        if raw_last is None:
                            unwrapped = i
                        else:
                            unwrapped += (i - raw_last) % unwrap_mod
                        raw_last = i
                        est = te.update_index(tus, unwrapped) * 1000
                    else:
                        est = te.update(tus) * 1000
                except (RockError, ZeroDivisionError, ValueError, OverflowError):
                    est = tns; missing += 1
                o.write(json.dumps({"id": rid, "estimate_ns": est}) + "\n")
            elif ev == "loss":
                te.update_loss()
            elif ev == "reference":
                te.update_reference(tus)
    return missing, te.missing_total

if __name__ == "__main__":
    m, lt = run(sys.argv[1], sys.argv[2], sys.argv[3])
    print(json.dumps({"rock_missing": m, "lost_total": lt}), file=sys.stderr)
