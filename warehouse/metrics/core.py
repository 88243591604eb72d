"""Point metrics of TasteBench (docs/benchmark.md section 4), pure numpy/scipy.

Conventions (shared by every function in this package):

* Inputs are three aligned 1-D arrays: ``category`` (strings/objects), ``gold`` and ``pred``
  (floats, used exactly as stored). Only the order *within* a category matters. A HIGHER gold
  value means a HIGHER panel mean (the public files' ``true_rank``: rank 1 = lowest mean; this
  agrees with ``higher_rated_product`` of all 932 gold pairs in ``pairs.csv``).
* NaN or infinite gold/prediction values raise ``ValueError``; nothing is dropped silently.
* Categories are visited in sorted (``numpy.unique``) order; rows inside a category keep their
  current relative order (this order only matters for Recall@k when the maximum gold is tied).
* Ties: two values are tied when ``|a - b| < 1e-10`` (:data:`TIE_EPS`) for pairwise accuracy and
  Recall@k; Spearman and Kendall use scipy's exact float ties.
* Pairwise accuracy (micro): every within-category pair ``i < j`` (C(n_c, 2) per category)
  earns 0.5 if gold is tied, else 0.5 if the prediction is tied, else 1 if the signs of the gold
  and prediction differences agree, else 0; the metric is sum(credit) / number of pairs.
* Spearman rho / Kendall tau-b: per category via ``scipy.stats`` (undefined categories, e.g. a
  constant prediction, are dropped), averaged with weights n_c (rows in the category).
* Recall@k: best = first row (current order) with the maximum gold; m = rows predicted
  > pred(best) + 1e-10; t = rows with |pred - pred(best)| < 1e-10 (including best);
  recall = 0 if m >= k else min(k - m, t) / t; unweighted mean over categories.
* Macro pairwise accuracy: unweighted mean of per-category accuracies. Partial pooling:
  DerSimonian-Laird random-effects shrinkage of the per-category accuracies with n = products
  (see :func:`dersimonian_laird`); the reported value is the mean of the shrunk accuracies.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from warehouse.config import project_var

TIE_EPS: float = float(project_var("tie_tolerance"))
"""Absolute tolerance below which two gold values or two predictions count as tied: the dbt var
``tie_tolerance`` of ``dbt_project.yml`` (1e-10), the one place it is set; the SQL pair marts and
the GX suites read the same var."""

RECALL_KS = (1, 2, 3)

TABLE2_METRICS = (
    "pairwise_accuracy",
    "spearman",
    "kendall_tau",
    "recall_at_1",
    "recall_at_2",
    "recall_at_3",
)
"""The published Table-2 columns, in order: the metrics with a main-table BCa interval."""

METRIC_NAMES = (*TABLE2_METRICS, "pairwise_accuracy_macro", "pairwise_accuracy_pooled")
"""Keys of :func:`compute_all`, in report order: the one list of metric names of this project."""


@dataclass(frozen=True)
class Grouped:
    """Validated inputs split by category.

    ``names`` are the sorted category names; ``rows[c]`` holds the row indices (into the
    original arrays) of category ``names[c]`` in their current relative order.
    """

    names: tuple[str, ...]
    rows: tuple[np.ndarray, ...]
    gold: np.ndarray
    pred: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        return np.array([len(r) for r in self.rows], dtype=np.int64)


def json_float(value: object) -> float | None:
    """JSON-safe float: NaN/inf -> None."""
    if value is None:
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def _as_float(values: object, name: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(
            f"{name} has {int(bad.sum())} non-finite value(s), first at row {int(np.argmax(bad))}; "
            "metrics never drop rows silently: fix or remove them before scoring"
        )
    return arr


def as_category_array(category: object) -> np.ndarray:
    """Category labels as a 1-D array of Python strings (object dtype)."""
    arr = np.asarray(category, dtype=object)
    if arr.ndim != 1:
        raise ValueError(f"category must be a 1-D array, got shape {arr.shape}")
    return np.array([str(c) for c in arr], dtype=object)


def group_by_category(category: object, gold: object, pred: object) -> Grouped:
    """Validate the three aligned arrays and split row indices by sorted category."""
    cat = as_category_array(category)
    g = _as_float(gold, "gold")
    p = _as_float(pred, "pred")
    if not (len(cat) == len(g) == len(p)):
        raise ValueError(f"length mismatch: category {len(cat)}, gold {len(g)}, pred {len(p)}")
    if len(cat) == 0:
        raise ValueError("no rows to score")
    names, inv = np.unique(cat.astype(str), return_inverse=True)
    order = np.argsort(inv, kind="stable")
    bounds = np.cumsum(np.bincount(inv, minlength=len(names)))[:-1]
    rows = tuple(np.split(order, bounds))
    return Grouped(tuple(str(n) for n in names), rows, g, p)


def canonical_order(category: object, gold: object, pred: object) -> np.ndarray:
    """Row permutation of the main-table bootstrap: stable sort by (category, gold, prediction)."""
    cat = as_category_array(category).astype(str)
    _, inv = np.unique(cat, return_inverse=True)
    return np.lexsort((_as_float(pred, "pred"), _as_float(gold, "gold"), inv))


# --------------------------------------------------------------------------- pairwise accuracy


def _pair_credit(dg: np.ndarray, dp: np.ndarray) -> np.ndarray:
    """Credit of pairs from gold and prediction differences (same shape)."""
    tied = (np.abs(dg) < TIE_EPS) | (np.abs(dp) < TIE_EPS)
    agree = (dg > 0) == (dp > 0)
    return np.where(tied, 0.5, agree.astype(np.float64))


def _category_pairs(grouped: Grouped) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per category, the row indices (i, j) of all pairs with i before j in the current order."""
    out = []
    for rows in grouped.rows:
        a, b = np.triu_indices(len(rows), 1)
        out.append((rows[a], rows[b]))
    return out


def as_polars(table: object, what: str = "table") -> pl.DataFrame:
    """``table`` as a polars frame: a polars frame as is, an Arrow table converted (zero-copy
    where Arrow allows). Anything else raises ``TypeError`` naming ``what``."""
    if isinstance(table, pl.DataFrame):
        return table
    if isinstance(table, pa.Table):
        return pl.from_arrow(table)
    raise TypeError(f"{what} must be a polars DataFrame or an Arrow table, got {type(table)!r}")


def code_series(name: str, codes: object) -> pl.Series:
    """Product codes as a polars column: ``Int64`` when every code is an integer, ``String``
    when every code is a string, else ``Object`` (the Python values, as given)."""
    vals = list(np.asarray(codes, dtype=object))
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in vals):
        return pl.Series(name, [int(v) for v in vals], dtype=pl.Int64)
    if all(isinstance(v, str) for v in vals):
        return pl.Series(name, vals, dtype=pl.String)
    return pl.Series(name, vals, dtype=pl.Object)


def pairwise_credits(
    category: object, gold: object, pred: object, product_code: object | None = None
) -> pl.DataFrame:
    """Per-pair credit table: one row per within-category pair.

    Columns: ``category``, ``i``, ``j`` (row indices into the inputs, ``i`` listed before ``j``
    in the input order, so ``i < j``), optionally ``code_i``/``code_j`` (when ``product_code``
    is given), ``gold_tie`` and ``pred_tie`` (|delta| < 1e-10), ``abs_delta_gold`` and
    ``credit`` (0, 0.5 or 1). Rows are ordered by sorted category, then ``i``, then ``j``.
    The mean of ``credit`` is :func:`pairwise_accuracy`.
    """
    grouped = group_by_category(category, gold, pred)
    pairs = _category_pairs(grouped)
    i = np.concatenate([a for a, _ in pairs])
    j = np.concatenate([b for _, b in pairs])
    cat_col = np.repeat(np.array(grouped.names, dtype=object), [len(a) for a, _ in pairs])
    dg = grouped.gold[i] - grouped.gold[j]
    dp = grouped.pred[i] - grouped.pred[j]
    cols = [
        pl.Series("category", cat_col, dtype=pl.String),
        pl.Series("i", i, dtype=pl.Int64),
        pl.Series("j", j, dtype=pl.Int64),
    ]
    if product_code is not None:
        codes = np.asarray(product_code, dtype=object)
        if len(codes) != len(grouped.gold):
            raise ValueError("product_code must align with the other inputs")
        cols += [code_series("code_i", codes[i]), code_series("code_j", codes[j])]
    cols += [
        pl.Series("gold_tie", np.abs(dg) < TIE_EPS, dtype=pl.Boolean),
        pl.Series("pred_tie", np.abs(dp) < TIE_EPS, dtype=pl.Boolean),
        pl.Series("abs_delta_gold", np.abs(dg), dtype=pl.Float64),
        pl.Series("credit", _pair_credit(dg, dp), dtype=pl.Float64),
    ]
    return pl.DataFrame(cols)


def _per_category_credit(grouped: Grouped) -> tuple[np.ndarray, np.ndarray]:
    """(credit sum, number of pairs) per sorted category."""
    credit, npairs = [], []
    for a, b in _category_pairs(grouped):
        c = _pair_credit(grouped.gold[a] - grouped.gold[b], grouped.pred[a] - grouped.pred[b])
        credit.append(c.sum())
        npairs.append(len(a))
    return np.array(credit, dtype=np.float64), np.array(npairs, dtype=np.int64)


def pairwise_accuracy(category: object, gold: object, pred: object) -> float:
    """Micro pairwise accuracy: sum of pair credits over all within-category pairs / #pairs."""
    credit, npairs = _per_category_credit(group_by_category(category, gold, pred))
    if npairs.sum() == 0:
        return float("nan")
    return float(credit.sum() / npairs.sum())


_PER_CATEGORY_SCHEMA = {"category": pl.String, "n_products": pl.Int64, "n_pairs": pl.Int64}


def per_category_pairwise(category: object, gold: object, pred: object) -> pl.DataFrame:
    """Per-category pairwise accuracy: ``category, n_products, n_pairs, credit, accuracy``."""
    grouped = group_by_category(category, gold, pred)
    credit, npairs = _per_category_credit(grouped)
    with np.errstate(invalid="ignore", divide="ignore"):
        acc = credit / npairs
    return pl.DataFrame(
        {
            "category": list(grouped.names),
            "n_products": grouped.sizes,
            "n_pairs": npairs,
            "credit": credit,
            "accuracy": acc,
        },
        schema=_PER_CATEGORY_SCHEMA | {"credit": pl.Float64, "accuracy": pl.Float64},
    )


def pairwise_accuracy_macro(category: object, gold: object, pred: object) -> float:
    """Unweighted mean over categories of the per-category pairwise accuracy."""
    table = per_category_pairwise(category, gold, pred)
    return float(np.nanmean(table["accuracy"].to_numpy()))


def dersimonian_laird(p: object, n: object) -> dict[str, object]:
    """DerSimonian-Laird random-effects pooling of per-category accuracies (docs/benchmark.md §4).

    ``p``: per-category accuracies; ``n``: per-category product counts. Steps:
    v_c = q(1-q)/n_c with q = clip(p_c, 0.5/n_c, 1-0.5/n_c) (clipping only for the variance);
    fixed-effect weights w = 1/v, mu_FE = sum(w p)/sum(w), Q = sum(w (p - mu_FE)^2);
    tau2 = max(0, (Q - (K-1)) / (sum(w) - sum(w^2)/sum(w))); random-effects mean
    mu = sum(w* p)/sum(w*) with w* = 1/(v + tau2); shrunk p_c = mu + B_c (p_c - mu) with
    B_c = tau2/(tau2 + v_c). Returns ``tau2, q_stat, mu_fixed, mu, shrinkage (B), shrunk,
    pooled`` where ``pooled`` = mean of the shrunk values.
    """
    p = np.asarray(p, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if p.shape != n.shape or p.ndim != 1 or len(p) == 0:
        raise ValueError("p and n must be non-empty 1-D arrays of equal length")
    q = np.clip(p, 0.5 / n, 1.0 - 0.5 / n)
    v = q * (1.0 - q) / n
    w = 1.0 / v
    sw = w.sum()
    mu_fixed = float((w * p).sum() / sw)
    q_stat = float((w * (p - mu_fixed) ** 2).sum())
    k = len(p)
    denom = sw - (w**2).sum() / sw
    tau2 = max(0.0, (q_stat - (k - 1)) / denom) if denom > 0 else 0.0
    w_star = 1.0 / (v + tau2)
    mu = float((w_star * p).sum() / w_star.sum())
    shrink = tau2 / (tau2 + v)
    shrunk = mu + shrink * (p - mu)
    return {
        "tau2": float(tau2),
        "q_stat": q_stat,
        "mu_fixed": mu_fixed,
        "mu": mu,
        "shrinkage": shrink,
        "shrunk": shrunk,
        "pooled": float(shrunk.mean()),
    }


def pairwise_accuracy_pooled(category: object, gold: object, pred: object) -> float:
    """Partial-pooling pairwise accuracy: mean of DerSimonian-Laird shrunk category accuracies.

    Categories with fewer than two products (no pairs) are left out.
    """
    table = per_category_pairwise(category, gold, pred)
    table = table.filter(pl.col("n_pairs") > 0)
    res = dersimonian_laird(table["accuracy"].to_numpy(), table["n_products"].to_numpy())
    return float(res["pooled"])


# --------------------------------------------------------------------------- rank correlations


def _per_category_corr(grouped: Grouped, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(statistic, n_c) per sorted category; statistic is NaN where undefined."""
    from scipy import stats

    fn = stats.spearmanr if kind == "spearman" else stats.kendalltau
    vals = np.full(len(grouped.rows), np.nan)
    for c, rows in enumerate(grouped.rows):
        if len(rows) < 2:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            vals[c] = fn(grouped.gold[rows], grouped.pred[rows]).statistic
    return vals, grouped.sizes


def _weighted_mean(vals: np.ndarray, weights: np.ndarray) -> float:
    keep = ~np.isnan(vals)
    if not keep.any():
        return float("nan")
    return float(np.average(vals[keep], weights=weights[keep]))


def spearman_weighted(category: object, gold: object, pred: object) -> float:
    """Per-category Spearman rho (scipy, exact float ties), mean weighted by n_c (NaN dropped)."""
    return _weighted_mean(*_per_category_corr(group_by_category(category, gold, pred), "spearman"))


def kendall_weighted(category: object, gold: object, pred: object) -> float:
    """Per-category Kendall tau-b (scipy), mean weighted by n_c; undefined categories dropped."""
    return _weighted_mean(*_per_category_corr(group_by_category(category, gold, pred), "kendall"))


# --------------------------------------------------------------------------- recall@k


def _recall_one(g: np.ndarray, p: np.ndarray, k: int) -> float:
    best = int(np.argmax(g))  # first row (current order) holding the maximum gold
    pb = p[best]
    m = int((p > pb + TIE_EPS).sum())
    t = int((np.abs(p - pb) < TIE_EPS).sum())
    return 0.0 if m >= k else min(k - m, t) / t


def per_category_recall(grouped: Grouped, k: int) -> np.ndarray:
    """Recall@k per sorted category (rows in current order)."""
    return np.array(
        [_recall_one(grouped.gold[r], grouped.pred[r], k) for r in grouped.rows], dtype=np.float64
    )


def recall_at_k(category: object, gold: object, pred: object, k: int) -> float:
    """Recall@k, unweighted mean over categories (rules in the module docstring).

    Row order matters only when a category's maximum gold is tied: the first such row in the
    current order is the "best" product (docs/benchmark.md §4).
    """
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    vals = per_category_recall(group_by_category(category, gold, pred), int(k))
    return float(np.mean(vals))


# --------------------------------------------------------------------------- everything


def per_category_metrics(category: object, gold: object, pred: object) -> pl.DataFrame:
    """One row per category: n_products, n_pairs, pairwise accuracy, Spearman, Kendall, R@1-3."""
    grouped = group_by_category(category, gold, pred)
    credit, npairs = _per_category_credit(grouped)
    rho, n = _per_category_corr(grouped, "spearman")
    tau, _ = _per_category_corr(grouped, "kendall")
    cols = {
        "category": list(grouped.names),
        "n_products": n,
        "n_pairs": npairs,
        "pairwise_accuracy": credit / np.maximum(npairs, 1),
        "spearman": rho,
        "kendall_tau": tau,
    }
    for k in RECALL_KS:
        cols[f"recall_at_{k}"] = per_category_recall(grouped, k)
    floats = dict.fromkeys(list(cols)[3:], pl.Float64)
    return pl.DataFrame(cols, schema=_PER_CATEGORY_SCHEMA | floats)


def compute_all(category: object, gold: object, pred: object) -> dict[str, float]:
    """All Table-2 point metrics plus macro and partial-pooling pairwise accuracy.

    Keys (in order): ``pairwise_accuracy, spearman, kendall_tau, recall_at_1, recall_at_2,
    recall_at_3, pairwise_accuracy_macro, pairwise_accuracy_pooled``.
    """
    grouped = group_by_category(category, gold, pred)
    credit, npairs = _per_category_credit(grouped)
    rho, n = _per_category_corr(grouped, "spearman")
    tau, _ = _per_category_corr(grouped, "kendall")
    has_pairs = npairs > 0
    acc = credit[has_pairs] / npairs[has_pairs]
    out = {
        "pairwise_accuracy": float(credit.sum() / npairs.sum()) if npairs.sum() else float("nan"),
        "spearman": _weighted_mean(rho, n),
        "kendall_tau": _weighted_mean(tau, n),
    }
    for k in RECALL_KS:
        out[f"recall_at_{k}"] = float(np.mean(per_category_recall(grouped, k)))
    out["pairwise_accuracy_macro"] = float(np.mean(acc)) if len(acc) else float("nan")
    out["pairwise_accuracy_pooled"] = (
        float(dersimonian_laird(acc, n[has_pairs])["pooled"]) if len(acc) else float("nan")
    )
    return out


def arrays_from_frame(
    df: object, gold_column: str = "true_rank", pred_column: str = "predicted_score"
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(category, gold, pred)`` arrays from a prediction table (polars or Arrow; public OOF
    layout by default)."""
    df = as_polars(df, "prediction table")
    missing = [c for c in ("category", gold_column, pred_column) if c not in df.columns]
    if missing:
        raise ValueError(f"prediction table lacks column(s) {missing}")
    return (
        np.asarray(df["category"].cast(pl.String).to_list(), dtype=object),
        df[gold_column].cast(pl.Float64).to_numpy(),
        df[pred_column].cast(pl.Float64).to_numpy(),
    )
