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
* The per-pair slices of ``tastebench evaluate`` (:func:`delta_slice`, :func:`clear_slice` with
  :func:`welch_clear_pairs`, :func:`calibration`) take a :func:`.scoring.pair_table` (polars) and
  return JSON-ready records.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from .core import json_float
from .validate import normalize_code

ECE_BINS = 10
CLEAR_P = 0.05


def _pair_arrays(credit: object, other: object, name: str) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(credit, dtype=np.float64)
    o = np.asarray(other)
    if c.ndim != 1 or o.shape != c.shape:
        raise ValueError(f"credit and {name} must be 1-D arrays of equal length")
    if not np.isfinite(c).all():
        raise ValueError("credit contains NaN or infinite values")
    return c, o


def accuracy_by_delta_quintile(credit: object, abs_delta: object, n_bins: int = 5) -> pl.DataFrame:
    """Pairwise accuracy by quantile bin of |delta gold| (bin 1 = smallest differences).

    Columns: ``bin, delta_min, delta_max, n_pairs, accuracy``.
    """
    from scipy import stats

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
    return pl.DataFrame(
        rows,
        schema={
            "bin": pl.Int64,
            "delta_min": pl.Float64,
            "delta_max": pl.Float64,
            "n_pairs": pl.Int64,
            "accuracy": pl.Float64,
        },
        orient="row",
    )


def accuracy_clear_vs_ambiguous(credit: object, is_clear: object) -> pl.DataFrame:
    """Pairwise accuracy of clear vs ambiguous pairs (``is_clear`` per-pair booleans).

    Columns: ``slice`` ("clear", "ambiguous"), ``n_pairs``, ``accuracy`` (NaN when empty).
    """
    c, flag = _pair_arrays(credit, is_clear, "is_clear")
    flag = flag.astype(bool)
    rows = []
    for name, sel in (("clear", flag), ("ambiguous", ~flag)):
        acc = float(c[sel].mean()) if sel.any() else float("nan")
        rows.append((name, int(sel.sum()), acc))
    return pl.DataFrame(
        rows, schema={"slice": pl.String, "n_pairs": pl.Int64, "accuracy": pl.Float64}, orient="row"
    )


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


# ------------------------------------------------ per-pair slices of a pair table (evaluate)


def delta_slice(pairs: pl.DataFrame, delta_of: str) -> dict[str, object]:
    """Accuracy by quintile of |delta gold|
    (:func:`warehouse.metrics.accuracy_by_delta_quintile`)."""
    if len(pairs) == 0:
        return {"delta_of": delta_of, "bins": []}
    table = accuracy_by_delta_quintile(pairs["credit"], pairs["abs_delta_gold"])
    return {
        "delta_of": delta_of,
        "bins": [
            {
                "bin": int(r["bin"]),
                "delta_min": json_float(r["delta_min"]),
                "delta_max": json_float(r["delta_max"]),
                "n_pairs": int(r["n_pairs"]),
                "accuracy": json_float(r["accuracy"]),
            }
            for r in table.iter_rows(named=True)
        ],
    }


def welch_clear_pairs(rating_stats: pl.DataFrame, pairs: pl.DataFrame) -> np.ndarray:
    """Per pair of ``pairs`` (:func:`pair_table`): True when Welch's t-test on the two products'
    ratings gives p < .05 (``rating_stats``: ``category, product_code, mean, var, n`` with the
    sample variance; a null variance counts as NaN). Pairs with a product lacking two ratings are
    ambiguous."""
    from scipy import stats

    idx = {
        (str(c), normalize_code(p)): (m, v, n)
        for c, p, m, v, n in zip(
            rating_stats["category"].to_list(),
            rating_stats["product_code"].to_list(),
            rating_stats["mean"].cast(pl.Float64).to_numpy(),
            rating_stats["var"].cast(pl.Float64).to_numpy(),
            rating_stats["n"].to_numpy(),
            strict=True,
        )
    }
    nan3 = (np.nan, np.nan, 0)
    a = np.array(
        [idx.get((c, x), nan3) for c, x in zip(pairs["category"], pairs["code_lo"], strict=True)],
        dtype=np.float64,
    ).reshape(-1, 3)
    b = np.array(
        [idx.get((c, x), nan3) for c, x in zip(pairs["category"], pairs["code_hi"], strict=True)],
        dtype=np.float64,
    ).reshape(-1, 3)
    ok = (a[:, 2] >= 2) & (b[:, 2] >= 2) & np.isfinite(a[:, 1]) & np.isfinite(b[:, 1])
    clear = np.zeros(len(pairs), dtype=bool)
    if ok.any():
        with np.errstate(invalid="ignore", divide="ignore"):
            res = stats.ttest_ind_from_stats(
                a[ok, 0],
                np.sqrt(a[ok, 1]),
                a[ok, 2],
                b[ok, 0],
                np.sqrt(b[ok, 1]),
                b[ok, 2],
                equal_var=False,
            )
        clear[ok] = np.nan_to_num(res.pvalue, nan=1.0) < CLEAR_P
    return clear


def clear_slice(pairs: pl.DataFrame, is_clear: np.ndarray) -> list[dict[str, object]]:
    """Accuracy of clear vs ambiguous pairs
    (:func:`warehouse.metrics.accuracy_clear_vs_ambiguous`)."""
    if len(pairs) == 0:
        return []
    table = accuracy_clear_vs_ambiguous(pairs["credit"], is_clear)
    return [
        {"slice": r["slice"], "n_pairs": int(r["n_pairs"]), "accuracy": json_float(r["accuracy"])}
        for r in table.iter_rows(named=True)
    ]


def calibration(pairs: pl.DataFrame, confidence_by_code: Mapping, n_bins: int = ECE_BINS) -> dict:
    """ECE of pair predictions: a pair's confidence is the mean of its two rows' ``confidence``,
    its correctness the pair credit (0, 0.5, 1)
    (:func:`warehouse.metrics.expected_calibration_error`, ``n_bins`` equal-width bins)."""
    conf = np.array(
        [
            (confidence_by_code[(c, lo)] + confidence_by_code[(c, hi)]) / 2
            for c, lo, hi in zip(pairs["category"], pairs["code_lo"], pairs["code_hi"], strict=True)
        ],
        dtype=np.float64,
    )
    ece = expected_calibration_error(conf, pairs["credit"], n_bins=n_bins) if len(conf) else None
    return {
        "ece": json_float(ece),
        "n_bins": n_bins,
        "n_pairs": len(conf),
        "pair_confidence": "mean of the two products' confidence",
    }
