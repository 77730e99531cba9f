"""The between-process spread of a metric from its control pairs, as src/analyze/controls.rs
computes it (shared by bench/truth.py, truth_floor.py and truth_repeat.py).

d: the pairs' ln(control / first). Pairs beyond 6 robust sigmas (1.4826 median |d|) and 1 % are left
out; b = t95(kept) * sqrt(mean(d^2) / 2) over the rest; with_floor raises each metric's b to the median
over the metrics; clock_range is the run's SM clock readings' 1st-99th percentile range over their median,
which raises every b of the run (controls.rs, clock_range)."""
import math
import statistics as st

T95 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
       2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t95(df):
    """Two-sided 95 % Student t quantile, as controls::t95."""
    if df < 1:
        return math.inf
    if df <= 30:
        return T95[df - 1]
    return 2.042 if df < 40 else 2.021 if df < 60 else 2.000 if df < 120 else 1.980


def own_b(d):
    """(pairs kept, the metric's own 95 % half-width) from its log ratios d."""
    limit = max(6 * 1.4826 * st.median([abs(x) for x in d]), math.log1p(0.01))
    kept = [x for x in d if abs(x) <= limit]
    return len(kept), t95(len(kept)) * math.sqrt(sum(x * x for x in kept) / len(kept) / 2)


def with_floor(b):
    """{metric: b} with every b raised to the median over the metrics; clock_range is the run's SM clock readings' 1st-99th percentile range over their median,
which raises every b of the run (controls.rs, clock_range)."""
    if not b:
        return b
    floor = st.median(b.values())
    return {m: max(v, floor) for m, v in b.items()}


def clock_range(rows):
    """(99th - 1st percentile) / median of the *_sm_mhz readings of the measured rows."""
    mhz = sorted(float(v) for r in rows if r["status"] in ("ok", "noisy", "unstable")
                 for k, v in r.items() if k.endswith("_sm_mhz") and v and float(v) > 0)
    if not mhz:
        return 0.0
    at = lambda p: mhz[int(round(p * (len(mhz) - 1)))]  # noqa: E731
    return (at(0.99) - at(0.01)) / st.median(mhz)
