"""Product-level paired model comparisons (the differences behind the Holm-corrected tests).

Two models scored on the same within-category pairs differ in accuracy by
``diff = sum_c w_c D_c``, ``w_c`` = share of pairs in category c and ``D_c`` the mean
per-pair credit difference in c: a U-statistic of degree 2 over the category's products with
kernel ``credit_a(i, j) - credit_b(i, j)``. Products are the sampling unit (as in
:mod:`.intervals`); pairs sharing a product are dependent, which the pair-resampling
bootstrap of :mod:`.compare` ignores.

``ustat_t`` (default): per category the unbiased variance ``U^2 - Q``
(:func:`.ustat.ustat_variance_closed_form`), summed with weights ``w_c^2``; CI
``diff +/- t_{K-1} SE``; two-sided p-value from the same t statistic, so ``p < alpha``
exactly when the CI excludes 0. A total <= 0 falls back to the delete-1 jackknife variance
(noted); if that is 0 too the comparison is degenerate: CI = [diff, diff], p = 1 when
diff = 0, else 0 (every leave-one-out subset shows the same difference).

``distinct_percentile``: products resampled within category (the main-table draws,
:func:`.bootstrap.draw_main_indices`, categories and products in sorted order), each pair of
DISTINCT products weighted by the product of their multiplicities (copies are never paired);
percentile CI; p = min(1, 2 (1 + min(#{d* <= 0}, #{d* >= 0})) / (n_boot + 1)).

Both need the full set of pairs of each category's products (a complete U-statistic): an
incomplete set raises.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .bootstrap import draw_main_indices
from .ustat import ustat_variance_closed_form

PRODUCT_METHODS = ("ustat_t", "distinct_percentile")
VAR_EPS = 1e-20
"""Variances at or below this count as zero (as in :mod:`.intervals`)."""


@dataclass(frozen=True)
class CategoryPairs:
    """Pairs of one category: row positions into the credit matrix and local product indices."""

    name: str
    rows: np.ndarray
    a: np.ndarray
    b: np.ndarray
    n: int


def pair_structure(category: object, product_a: object, product_b: object) -> list[CategoryPairs]:
    """Group pair rows by sorted category; products numbered by sorted id within category."""
    cat = np.asarray(category, dtype=object).astype(str)
    pa = np.asarray(product_a, dtype=object).astype(str)
    pb = np.asarray(product_b, dtype=object).astype(str)
    if not (len(cat) == len(pa) == len(pb)):
        raise ValueError("category, product_a and product_b must have one entry per pair")
    out = []
    for name in np.unique(cat):
        rows = np.flatnonzero(cat == name)
        prods, inv = np.unique(np.concatenate([pa[rows], pb[rows]]), return_inverse=True)
        a, b = inv[: len(rows)], inv[len(rows) :]
        n = len(prods)
        keys = np.minimum(a, b) * n + np.maximum(a, b)
        if (a == b).any() or len(np.unique(keys)) != len(rows) or len(rows) != n * (n - 1) // 2:
            raise ValueError(
                f"category {name!r}: product-level comparisons need each of the "
                f"{n * (n - 1) // 2} pairs of its {n} products exactly once, got {len(rows)} "
                "rows; pass the complete pair table (pairwise_credits)"
            )
        out.append(CategoryPairs(str(name), rows, a, b, n))
    return out


def _kernels(mat: np.ndarray, cp: CategoryPairs) -> np.ndarray:
    """Symmetric credit matrices of the category, shape ``(n_models, n, n)``."""
    h = np.zeros((mat.shape[1], cp.n, cp.n))
    h[:, cp.a, cp.b] = mat[cp.rows].T
    h[:, cp.b, cp.a] = mat[cp.rows].T
    return h


def _jackknife_variance(d: np.ndarray) -> float:
    """Delete-1 jackknife variance of the mean off-diagonal entry of symmetric ``d``."""
    n = d.shape[0]
    if n < 3:
        return 0.0
    s, r = d.sum(), d.sum(axis=1)
    loo = (s - 2 * r) / ((n - 1) * (n - 2))
    return float((n - 1) * np.var(loo))


def ustat_differences(
    mat: np.ndarray, structure: list[CategoryPairs], pairs: list[tuple[int, int]], alpha: float
) -> list[dict[str, object]]:
    """``diff, ci_lo, ci_hi, p_value, ci_note`` per model pair (method ``ustat_t``)."""
    from scipy import stats as sps

    n_pairs = mat.shape[0]
    kernels = [_kernels(mat, cp) for cp in structure]
    weights = [len(cp.rows) / n_pairs for cp in structure]
    estimable = [cp.n >= 4 for cp in structure]
    df = max(sum(estimable) - 1, 1)
    q = float(sps.t.ppf(1 - alpha / 2, df))
    out = []
    for a, b in pairs:
        diff = float((mat[:, a] - mat[:, b]).sum() / n_pairs)
        unbiased = jack = 0.0
        notes = []
        for cp, h, w, ok in zip(structure, kernels, weights, estimable, strict=True):
            d = h[a] - h[b]
            j = _jackknife_variance(d)
            jack += w * w * j
            if ok:
                unbiased += w * w * ustat_variance_closed_form(d)
            else:
                unbiased += w * w * j
                notes.append(f"{cp.name}: {cp.n} products, jackknife variance")
        var = unbiased
        if unbiased <= VAR_EPS < jack:
            var = jack
            notes.append(f"unbiased variance {unbiased:.3g} <= 0: jackknife variance used")
        if var <= VAR_EPS:
            notes.append("no variability: every leave-one-out subset shows the same difference")
            out.append(
                {
                    "diff": diff,
                    "ci_lo": diff,
                    "ci_hi": diff,
                    "p_value": 1.0 if diff == 0 else 0.0,
                    "ci_note": "; ".join(notes),
                }
            )
            continue
        se = float(np.sqrt(var))
        p_value = float(2 * sps.t.sf(abs(diff) / se, df))
        out.append(
            {
                "diff": diff,
                "ci_lo": diff - q * se,
                "ci_hi": diff + q * se,
                "p_value": p_value,
                "ci_note": "; ".join(notes),
            }
        )
    return out


def distinct_bootstrap_differences(
    mat: np.ndarray,
    structure: list[CategoryPairs],
    pairs: list[tuple[int, int]],
    n_boot: int,
    seed: int,
    alpha: float,
) -> list[dict[str, object]]:
    """``diff, ci_lo, ci_hi, p_value, ci_note`` per model pair (``distinct_percentile``)."""
    draws = draw_main_indices([cp.n for cp in structure], n_boot, seed)
    num = np.zeros((n_boot, mat.shape[1]))
    den = np.zeros(n_boot)
    for cp, idx in zip(structure, draws, strict=True):
        flat = (idx + cp.n * np.arange(n_boot)[:, None]).ravel()
        counts = np.bincount(flat, minlength=n_boot * cp.n).reshape(n_boot, cp.n)
        w = (counts[:, cp.a] * counts[:, cp.b]).astype(np.float64)  # copies are never paired
        num += w @ mat[cp.rows]
        den += w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = num / den[:, None]
    n_pairs = mat.shape[0]
    out = []
    for a, b in pairs:
        diff = float((mat[:, a] - mat[:, b]).sum() / n_pairs)
        rep = acc[:, a] - acc[:, b]
        rep = rep[np.isfinite(rep)]
        lo, hi = np.percentile(rep, [50 * alpha, 100 - 50 * alpha])
        if diff == 0:
            p_value = 1.0
        else:
            tail = min(int((rep <= 0).sum()), int((rep >= 0).sum()))
            p_value = min(1.0, 2 * (1 + tail) / (len(rep) + 1))
        out.append(
            {
                "diff": diff,
                "ci_lo": float(lo),
                "ci_hi": float(hi),
                "p_value": float(p_value),
                "ci_note": "",
            }
        )
    return out


def all_pairs(n_models: int) -> list[tuple[int, int]]:
    """Unordered model pairs in mapping order."""
    return list(itertools.combinations(range(n_models), 2))
