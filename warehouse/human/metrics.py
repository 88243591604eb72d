"""Vectorised metric kernels for the human baseline (docs/benchmark.md sections 4 and 5).

Everything here works on plain numpy arrays; the DataFrame plumbing lives in
:mod:`warehouse.human.baseline`. Conventions shared by all kernels:

* ``TIE_EPS`` (the dbt var ``tie_tolerance``, 1e-10, via :data:`warehouse.metrics.core.TIE_EPS`)
  is the tie threshold of docs/benchmark.md §4: a pair is a *gold tie* when
  ``|gold_i - gold_j| < 1e-10`` (credit 0.5), otherwise a *prediction tie* when
  ``|pred_i - pred_j| < 1e-10`` (credit 0.5), otherwise credit 1 if the signs agree, else 0.
* ``NaN`` marks a missing value; pairs or rows touching a missing value are left out (they count
  neither as credit nor as a pair).
"""

from __future__ import annotations

import numpy as np

from warehouse.metrics.core import TIE_EPS

_CHUNK_ELEMENTS = 2_000_000


def pair_index(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(i, j)`` of all ``i < j`` pairs among ``n`` items (row-major order)."""
    i, j = np.triu_indices(n, k=1)
    return i.astype(np.intp), j.astype(np.intp)


def pairwise_credit(gold_diff: np.ndarray, pred_diff: np.ndarray) -> np.ndarray:
    """Per-pair credit under the docs/benchmark.md §4 rules (broadcasting).

    ``gold_diff`` and ``pred_diff`` are ``gold_i - gold_j`` and ``pred_i - pred_j``. Gold tie ->
    0.5; else prediction tie -> 0.5; else 1.0 when the signs agree, 0.0 otherwise. NaN in either
    input gives NaN (callers mask those pairs out).
    """
    gold_diff = np.asarray(gold_diff, dtype=float)
    pred_diff = np.asarray(pred_diff, dtype=float)
    tie = (np.abs(gold_diff) < TIE_EPS) | (np.abs(pred_diff) < TIE_EPS)
    # outside ties both differences are non-zero, so "same sign" == "both positive or both not"
    credit = np.where(tie, 0.5, ((gold_diff > 0) == (pred_diff > 0)).astype(float))
    missing = np.isnan(gold_diff) | np.isnan(pred_diff)
    if missing.any():
        credit = np.where(missing, np.nan, credit)
    return credit


def pairwise_credit_sums(gold: np.ndarray, pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Summed pair credit and number of scored pairs over the last axis (items).

    ``gold`` and ``pred`` broadcast against each other; the last axis indexes items and all
    ``i < j`` pairs of it are scored. Pairs where any of the four values is NaN are skipped.
    Returns ``(credit_sum, n_pairs)`` with the broadcast leading shape.
    """
    gold = np.asarray(gold, dtype=float)
    pred = np.asarray(pred, dtype=float)
    n = max(gold.shape[-1], pred.shape[-1])
    lead = np.broadcast_shapes(gold.shape[:-1], pred.shape[:-1])
    i_all, j_all = pair_index(n)
    credit_sum = np.zeros(lead)
    n_pairs = np.zeros(lead, dtype=np.int64)
    # chunk the pairs so that temporaries stay around a few million elements
    chunk = max(1, _CHUNK_ELEMENTS // max(1, int(np.prod(lead, dtype=np.int64))))
    for start in range(0, i_all.size, chunk):
        i, j = i_all[start : start + chunk], j_all[start : start + chunk]
        credit = pairwise_credit(gold[..., i] - gold[..., j], pred[..., i] - pred[..., j])
        valid = ~np.isnan(credit)
        credit_sum += np.where(valid, credit, 0.0).sum(axis=-1)
        n_pairs += valid.sum(axis=-1)
    return credit_sum, n_pairs


def pairwise_accuracy_rows(gold: np.ndarray, pred: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise pairwise accuracy (credit / pairs) and pair counts; NaN where no pair is scored."""
    credit, n_pairs = pairwise_credit_sums(gold, pred)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = np.where(n_pairs > 0, credit / np.where(n_pairs > 0, n_pairs, 1), np.nan)
    return acc, n_pairs


def spearman_rows(gold: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Row-wise Spearman rho, equal to ``scipy.stats.spearmanr`` on each row's complete cases.

    Rows are ranked (average ranks, exact float ties) over the positions where both inputs are
    present; rho is the Pearson correlation of the ranks. NaN when fewer than 2 complete positions
    or when either ranked vector is constant (where scipy also returns NaN).
    """
    import scipy.stats

    gold = np.atleast_2d(np.asarray(gold, dtype=float))
    pred = np.atleast_2d(np.asarray(pred, dtype=float))
    gold, pred = np.broadcast_arrays(gold, pred)
    both = ~(np.isnan(gold) | np.isnan(pred))
    g = np.where(both, gold, np.nan)
    p = np.where(both, pred, np.nan)
    rg = scipy.stats.rankdata(g, axis=-1, nan_policy="omit")
    rp = scipy.stats.rankdata(p, axis=-1, nan_policy="omit")
    n = both.sum(axis=-1)
    n_safe = np.maximum(n, 1)[..., None]
    with np.errstate(invalid="ignore", divide="ignore"):
        dg = rg - np.where(both, rg, 0.0).sum(axis=-1, keepdims=True) / n_safe
        dp = rp - np.where(both, rp, 0.0).sum(axis=-1, keepdims=True) / n_safe
        dg = np.where(both, dg, 0.0)
        dp = np.where(both, dp, 0.0)
        num = (dg * dp).sum(axis=-1)
        sg = (dg * dg).sum(axis=-1)
        sp = (dp * dp).sum(axis=-1)
        rho = num / np.sqrt(sg * sp)
    rho = np.where((n >= 2) & (sg > 0) & (sp > 0), rho, np.nan)
    return np.clip(rho, -1.0, 1.0)


def recall_at_k_rows(gold: np.ndarray, pred: np.ndarray, k: int) -> np.ndarray:
    """Row-wise Recall@k with the docs/benchmark.md §4 rules.

    Per row (items in the given column order, missing items skipped): ``best`` = first item with
    the maximum gold; ``m`` = items whose prediction exceeds the best's by more than 1e-10;
    ``m >= k`` -> 0, else ``min(k - m, t) / t`` with ``t`` = items whose prediction differs from
    the best's by strictly less than 1e-10 (the best included). NaN for rows with no complete item.
    """
    gold = np.atleast_2d(np.asarray(gold, dtype=float))
    pred = np.atleast_2d(np.asarray(pred, dtype=float))
    gold, pred = np.broadcast_arrays(gold, pred)
    both = ~(np.isnan(gold) | np.isnan(pred))
    has_any = both.any(axis=-1)
    best = np.argmax(np.where(both, gold, -np.inf), axis=-1)
    pb = np.take_along_axis(pred, best[..., None], axis=-1)
    m = (both & (pred > pb + TIE_EPS)).sum(axis=-1)
    t = (both & (np.abs(pred - pb) < TIE_EPS)).sum(axis=-1)
    t_safe = np.where(t > 0, t, 1)
    rec = np.where(m >= k, 0.0, np.minimum(k - m, t) / t_safe)
    return np.where(has_any, rec, np.nan)


def kendall_w(ranks_source: np.ndarray) -> float:
    """Kendall's coefficient of concordance W with the tie correction.

    ``ranks_source`` is a raters x objects matrix of scores (complete: no NaN). Each rater's scores
    are turned into average ranks; with ``m`` raters, ``n`` objects, rank sums ``R_i`` and
    ``T_j = sum_g (t_g^3 - t_g)`` over the tie groups ``g`` of rater ``j``::

        W = 12 * sum_i (R_i - m (n + 1) / 2)^2 / (m^2 (n^3 - n) - m * sum_j T_j)

    NaN when ``m < 2``, ``n < 2`` or the denominator is 0 (every rater ties every object).
    """
    import scipy.stats

    x = np.asarray(ranks_source, dtype=float)
    if x.ndim != 2:
        raise ValueError("kendall_w expects a raters x objects matrix")
    m, n = x.shape
    if m < 2 or n < 2 or np.isnan(x).any():
        return float("nan")
    ranks = scipy.stats.rankdata(x, axis=1)
    r_sum = ranks.sum(axis=0)
    s = float(((r_sum - m * (n + 1) / 2.0) ** 2).sum())
    # group size of each element's tie group; sum over elements of (t^2 - 1) = sum_g (t^3 - t)
    t_elem = (x[:, :, None] == x[:, None, :]).sum(axis=-1)
    ties = float((t_elem.astype(float) ** 2 - 1.0).sum())
    denom = m * m * (n**3 - n) - m * ties
    if denom <= 0:
        return float("nan")
    return 12.0 * s / denom


def coincidence_matrix(reliability_data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Krippendorff coincidence matrix of a coders x units matrix (NaN = missing).

    Only units with at least 2 values are pairable. Returns ``(values, O)`` where ``values`` are the
    sorted distinct values that occur in pairable units and ``O[c, k] = sum_u (n_uc n_uk -
    [c == k] n_uc) / (m_u - 1)``. ``O.sum()`` is the number of pairable values.
    """
    x = np.asarray(reliability_data, dtype=float)
    present = ~np.isnan(x)
    m_u = present.sum(axis=0)
    keep = m_u >= 2
    x, present, m_u = x[:, keep], present[:, keep], m_u[keep]
    values = np.unique(x[present])
    if values.size == 0:
        return values, np.zeros((0, 0))
    codes = np.searchsorted(values, np.where(present, x, values[0]))
    counts = np.zeros((x.shape[1], values.size))  # units x values
    unit_idx = np.broadcast_to(np.arange(x.shape[1]), x.shape)
    np.add.at(counts, (unit_idx[present], codes[present]), 1.0)
    w = 1.0 / (m_u - 1.0)
    o = (counts * w[:, None]).T @ counts
    o -= np.diag((counts * w[:, None]).sum(axis=0))
    return values, o


def alpha_from_coincidence(
    values: np.ndarray, coincidence: np.ndarray, level_of_measurement: str = "ordinal"
) -> float:
    """Krippendorff's alpha from a coincidence matrix (``1 - (n - 1) D_o / D_e``).

    Distances: nominal ``[c != k]``; ordinal ``(sum_{g=c..k} n_g - (n_c + n_k) / 2)^2`` over the
    marginal frequencies ``n_g`` in value order; interval ``(c - k)^2``. NaN when ``D_e == 0``.
    """
    values = np.asarray(values, dtype=float)
    o = np.asarray(coincidence, dtype=float)
    n_v = o.sum(axis=1)
    n = n_v.sum()
    v = values.size
    if level_of_measurement == "nominal":
        d = 1.0 - np.eye(v)
    elif level_of_measurement == "interval":
        d = (values[:, None] - values[None, :]) ** 2
    elif level_of_measurement == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_v)])
        lo = np.minimum.outer(np.arange(v), np.arange(v))
        hi = np.maximum.outer(np.arange(v), np.arange(v))
        d = (cum[hi + 1] - cum[lo] - (n_v[:, None] + n_v[None, :]) / 2.0) ** 2
    else:
        raise ValueError(f"unsupported level_of_measurement {level_of_measurement!r}")
    d_o = float((o * d).sum())
    d_e = float((np.outer(n_v, n_v) * d).sum())
    if d_e == 0.0:
        return float("nan")
    return 1.0 - (n - 1.0) * d_o / d_e
