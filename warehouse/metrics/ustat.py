"""Unbiased variances of the per-category metrics from leave-d-out subsets (U-statistic theory).

Why
---
Within a category the metrics are U-statistics of the category's products: pairwise accuracy
has the pair-credit kernel (degree 2), Kendall's tau-a the kernel ``s_ab t_ab`` (degree 2)
and, without ties, Spearman's rho is ``3/(n+1) [tau_a + (n-2) rho3]`` with ``rho3`` the
degree-3 U-statistic of ``s_ab t_ac`` (``s``, ``t``: signs of gold and prediction
differences). Categories hold 5-18 products, and at that size every resampling variance
(bootstrap, jackknife) of a U-statistic is biased UPWARD by its degenerate (pair-level) part,
most at high accuracy: on simulated benchmarks the copy-free product bootstrap's standard
deviation is 10% too large at chance and 43% too large at accuracy .95 (docs/statistics.md).

How
---
By Hoeffding's decomposition, a U-statistic (or a fixed linear combination of U-statistics)
of degree k on m products has ``Var(T_m) = sum_{c=1..k} A_c / C(m, c)`` for unknown constants
``A_c``. The statistic on n products is the mean of the statistic over its subsets of n - d
products, so ``E[V_d] = Var(T_{n-d}) - Var(T_n)``, where ``V_d`` is the variance of the
statistic over all ``C(n, d)`` leave-d-out subsets (divisor ``C(n, d)``). Solving
``sum_d lambda_d [1/C(n-d, c) - 1/C(n, c)] = 1/C(n, c)`` (c, d = 1..k) gives
``V = sum_d lambda_d V_d`` with ``E[V] = Var(T_n)`` exactly: the unique unbiased variance
estimator (for degree 2 it equals ``U^2 - Q``, Q the mean kernel product over disjoint pairs,
see :func:`ustat_variance_closed_form`). Subsets never repeat a product, so no statistic ever
scores a pair of copies. The subset statistics come from :func:`.bootstrap.sample_stats`
(``copies="distinct"``, whose pair/triple parts are these U-statistics).

Conventions
-----------
* pairwise accuracy: degree 2, exact (ties included: the tie credit is part of the kernel);
* Kendall tau-b: the subset statistic is tau-b itself, a ratio of degree-2 U-statistics
  (exactly tau-a, a U-statistic, without ties);
* Spearman: the subset statistic is ``N / sqrt(Dx Dy)`` with each of N, Dx, Dy written as
  ``pairs + (n - 2) triples`` (means over ordered pairs / triples of the subset, n the
  CATEGORY size, see :func:`.copyfree.spearman_distinct`): fixed combinations of degree-2
  and degree-3 U-statistics, whose ratio is the mid-rank Spearman on the full category. Using
  the subset size instead would change the statistic with the subset and break the identity
  below. Degree 3 when n >= 6; n = 5 uses degree 2 (the degree-3 part is left out; noted);
* a category needs n >= 4 (n >= 5 for Spearman) for the estimator; smaller categories use the
  (upward-biased) delete-1 jackknife ``(n - 1) V_1`` and say so; n < 3 has no estimate.
The estimator can be negative in a category (it is unbiased, not positive); callers sum over
categories before judging the sign. Ratios (tau-b with ties, Spearman) are approximately,
not exactly, unbiased.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from math import comb

import numpy as np

from .bootstrap import sample_stats

USTAT_METRICS = ("pairwise_accuracy", "kendall_tau", "spearman")
"""Per-category metrics with an unbiased subset variance."""


@functools.lru_cache(maxsize=64)
def leave_out_lambdas(n: int, degree: int) -> np.ndarray:
    """Weights ``lambda_d`` (d = 1..degree) of the leave-d-out variances for n products."""
    if n - degree < degree:
        raise ValueError(f"{n} products are too few for a degree-{degree} unbiased variance")
    mat = np.array(
        [
            [1.0 / comb(n - d, c) - 1.0 / comb(n, c) for d in range(1, degree + 1)]
            for c in range(1, degree + 1)
        ]
    )
    rhs = np.array([1.0 / comb(n, c) for c in range(1, degree + 1)])
    out = np.linalg.solve(mat, rhs)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=128)
def leave_out_subsets(n: int, d: int) -> np.ndarray:
    """All ``C(n, d)`` subsets of ``range(n)`` with d members left out, ``(C(n, d), n - d)``."""
    keep = np.ones((comb(n, d), n), dtype=bool)
    for row, out in enumerate(itertools.combinations(range(n), d)):
        keep[row, list(out)] = False
    idx = np.nonzero(keep)[1].reshape(comb(n, d), n - d)
    idx.setflags(write=False)
    return idx


@dataclass(frozen=True)
class CategoryVariance:
    """Variance estimates of one category's statistic: ``unbiased`` (NaN when unavailable),
    ``jackknife`` (the delete-1 jackknife, biased upward) and a ``note`` on any fallback."""

    unbiased: float
    jackknife: float
    note: str = ""


def _subset_values(g: np.ndarray, p: np.ndarray, d: int, metric: str) -> np.ndarray:
    n = len(g)
    st = sample_stats(g, p, leave_out_subsets(n, d), (metric,), copies="distinct")
    if metric == "pairwise_accuracy":
        return st["credit"] / st["npairs"]
    if metric == "kendall_tau":
        return st["tau"]
    parts = st["rho_parts"]  # (S, 3, 2): pairs / triples means of N, Dx, Dy
    num, dx, dy = (parts[:, j, 0] + (n - 2) * parts[:, j, 1] for j in range(3))
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / np.sqrt(dx * dy)


def category_variance(g: object, p: object, metric: str) -> CategoryVariance:
    """Unbiased (and jackknife) variance of one category's ``metric`` (see module docstring)."""
    if metric not in USTAT_METRICS:
        raise ValueError(f"no U-statistic variance for {metric!r}; choose from {USTAT_METRICS}")
    g = np.asarray(g, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    n = len(g)
    if n < 3:
        return CategoryVariance(float("nan"), float("nan"), f"{n} products: no variance estimate")
    v1 = _subset_values(g, p, 1, metric)
    if np.isnan(v1).any():
        return CategoryVariance(
            float("nan"), float("nan"), "statistic undefined on a leave-one-out subset"
        )
    jack = (n - 1) * float(np.var(v1))
    if n < (5 if metric == "spearman" else 4):
        return CategoryVariance(float("nan"), jack, f"{n} products: jackknife variance")
    degree = 3 if metric == "spearman" and n >= 6 else 2
    note = f"{n} products: degree-2 part only" if metric == "spearman" and degree == 2 else ""
    vds = [float(np.var(v1))]
    for d in range(2, degree + 1):
        vals = _subset_values(g, p, d, metric)
        if np.isnan(vals).any():
            return CategoryVariance(
                float("nan"), jack, f"statistic undefined on a leave-{d}-out subset: jackknife"
            )
        vds.append(float(np.var(vals)))
    return CategoryVariance(float(np.dot(leave_out_lambdas(n, degree), vds)), jack, note)


def ustat_variance_closed_form(kernel: np.ndarray) -> float:
    """Unbiased variance ``U^2 - Q`` of the degree-2 U-statistic with a symmetric kernel matrix.

    ``U`` is the mean of ``kernel[a, b]`` over pairs a != b (the diagonal is ignored) and ``Q``
    the mean of ``kernel[a, b] kernel[c, d]`` over ordered quadruples of distinct products:
    ``(S^2 - 4 sum_a R_a^2 + 2 S2) / (n (n-1) (n-2) (n-3))`` with S the off-diagonal sum,
    R the row sums and S2 the sum of squares. Needs n >= 4.
    """
    h = np.array(kernel, dtype=np.float64)
    n = h.shape[0]
    if h.shape != (n, n) or n < 4:
        raise ValueError("kernel must be a square matrix of at least 4 products")
    np.fill_diagonal(h, 0.0)
    s = h.sum()
    r = h.sum(axis=1)
    q = (s * s - 4.0 * (r * r).sum() + 2.0 * (h * h).sum()) / (n * (n - 1) * (n - 2) * (n - 3))
    u = s / (n * (n - 1))
    return float(u * u - q)
