"""Difficulty slices of pairwise accuracy and calibration error.

Conventions:

* Inputs are per-pair arrays aligned with :func:`warehouse.metrics.core.pairwise_credits`
  (``credit`` in {0, 0.5, 1}, ``abs_delta_gold`` = |gold_i - gold_j|).
* Quintiles of |delta gold| are rank-based so that tied |delta| values never straddle a bin:
  bin = min(floor(n_bins * (average rank - 0.5) / P), n_bins - 1). Gold ranks have many tied
  differences, so bins are only roughly equal in size; ``n_pairs`` reports each.
* Expected calibration error: equal-width bins on [0, 1], bin b = [b/B, (b+1)/B) with the last
  bin closed at 1; ECE = sum_b (n_b / N) |mean(correct_b) - mean(confidence_b)|. ``correct``
  may be fractional (a 0.5 tie credit).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats


def _pair_arrays(credit: object, other: object, name: str) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(credit, dtype=np.float64)
    o = np.asarray(other)
    if c.ndim != 1 or o.shape != c.shape:
        raise ValueError(f"credit and {name} must be 1-D arrays of equal length")
    if not np.isfinite(c).all():
        raise ValueError("credit contains NaN or infinite values")
    return c, o


def accuracy_by_delta_quintile(credit: object, abs_delta: object, n_bins: int = 5) -> pd.DataFrame:
    """Pairwise accuracy by quantile bin of |delta gold| (bin 1 = smallest differences).

    Columns: ``bin, delta_min, delta_max, n_pairs, accuracy``.
    """
    c, d = _pair_arrays(credit, abs_delta, "abs_delta")
    d = d.astype(np.float64)
    if not np.isfinite(d).all():
        raise ValueError("abs_delta contains NaN or infinite values")
    if len(c) == 0:
        raise ValueError("no pairs")
    ranks = stats.rankdata(d)
    bins = np.minimum(np.floor(n_bins * (ranks - 0.5) / len(d)).astype(int), n_bins - 1)
    rows = []
    for b in range(n_bins):
        sel = bins == b
        if not sel.any():
            rows.append((b + 1, np.nan, np.nan, 0, np.nan))
            continue
        rows.append((b + 1, d[sel].min(), d[sel].max(), int(sel.sum()), float(c[sel].mean())))
    return pd.DataFrame(rows, columns=["bin", "delta_min", "delta_max", "n_pairs", "accuracy"])


def accuracy_clear_vs_ambiguous(credit: object, is_clear: object) -> pd.DataFrame:
    """Pairwise accuracy of clear vs ambiguous pairs (``is_clear`` per-pair booleans).

    Columns: ``slice`` ("clear", "ambiguous"), ``n_pairs``, ``accuracy`` (NaN when empty).
    """
    c, flag = _pair_arrays(credit, is_clear, "is_clear")
    flag = flag.astype(bool)
    rows = []
    for name, sel in (("clear", flag), ("ambiguous", ~flag)):
        acc = float(c[sel].mean()) if sel.any() else float("nan")
        rows.append((name, int(sel.sum()), acc))
    return pd.DataFrame(rows, columns=["slice", "n_pairs", "accuracy"])


def expected_calibration_error(confidence: object, correct: object, n_bins: int = 10) -> float:
    """Expected calibration error with ``n_bins`` equal-width confidence bins on [0, 1]."""
    conf = np.asarray(confidence, dtype=np.float64)
    corr = np.asarray(correct, dtype=np.float64)
    if conf.ndim != 1 or conf.shape != corr.shape or len(conf) == 0:
        raise ValueError("confidence and correct must be non-empty 1-D arrays of equal length")
    if not (np.isfinite(conf).all() and np.isfinite(corr).all()):
        raise ValueError("confidence/correct contain NaN or infinite values")
    if conf.min() < 0 or conf.max() > 1:
        raise ValueError("confidence must lie in [0, 1]")
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    n = np.bincount(bins, minlength=n_bins).astype(np.float64)
    sum_conf = np.bincount(bins, weights=conf, minlength=n_bins)
    sum_corr = np.bincount(bins, weights=corr, minlength=n_bins)
    used = n > 0
    gap = np.abs(sum_corr[used] / n[used] - sum_conf[used] / n[used])
    return float((n[used] / len(conf) * gap).sum())
