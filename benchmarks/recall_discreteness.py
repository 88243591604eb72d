"""Exact coverage of Recall@k intervals that are functions of the hit count (no simulation).

Usage::

    python benchmarks/recall_discreteness.py

In the coverage study (``benchmarks/ci_coverage.py``) each of the K = 24 categories scores a
hit (Recall@k = 1) with probability ``p_c`` (its estimand; predictions are continuous, so a
category's Recall is 0 or 1), independently, so the hit count X is Poisson-binomial. Any
interval that depends on the data only through X covers the truth ``p = mean p_c`` with
probability ``sum_{x in S} P(X = x)``, S the hit counts whose interval contains p. This script
computes, for every metric and accuracy level of the study:

* the exact coverage of ``category_jeffreys`` and ``category_wilson`` (the library's intervals
  for x = 0..K), free of Monte Carlo error;
* ``any X-rule``: whether ANY set S (any function of X, however contrived) has coverage in
  93-97%, by a subset-sum search over the 25 atoms in units of 1e-6 (each atom rounded to
  the unit, the band widened by 25 units on each side: "IMPOSSIBLE" is exact, "possible" may
  mean a sum within 2.5e-5 of the band);
* ``contiguous``: the same for sets S of consecutive counts (every interval whose bounds are
  monotone in X has such an S), with the coverages closest to the band from below and above.

Where neither is possible, no interval that sees only the hit count can meet the must-show at
that level: the atoms are too coarse.

* ``randomized exact``: the exact coverage of ``category_randomized`` (Stevens' randomized
  Clopper-Pearson interval, :mod:`warehouse.metrics.randomized`), which sees the hit count AND
  an auxiliary uniform V: ``sum_x P(X = x) P_V(truth in CI(x, V))``, the inner probability in
  closed form (:func:`~warehouse.metrics.randomized.fuzzy_cover_probability`). Under a
  binomial count it is exactly 95%; the Poisson-binomial count of the study is less variable
  (its variance ``sum p_c (1 - p_c)`` against ``K p (1 - p)``: the ``var ratio`` column), so
  the coverage is higher.

Prints a markdown table and, per metric, the study's decision rule (``choose``) applied to
the exact coverages of the three library intervals.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
for path in (REPO_ROOT, REPO_ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from ci_coverage import LEVELS, Truth, choose, study_categories  # noqa: E402

from warehouse.metrics.intervals import _recall_binomial  # noqa: E402
from warehouse.metrics.randomized import fuzzy_cover_probability  # noqa: E402

LO, HI = 0.93, 0.97
UNIT = 1e-6


def poisson_binomial(p: np.ndarray) -> np.ndarray:
    """P(X = x), x = 0..K, for independent Bernoulli(p_c)."""
    pmf = np.array([1.0])
    for pc in p:
        pmf = np.convolve(pmf, [1.0 - pc, pc])
    return pmf


def any_subset_in_band(pmf: np.ndarray) -> bool:
    """Whether some subset of the atoms may sum into [LO, HI]: False is exact (the rounding
    error of a sum of at most 25 atoms is below 25 units, and the band is widened by that)."""
    total = int(np.ceil(1.0 / UNIT)) + len(pmf) + 1
    reach = np.zeros(total, dtype=bool)
    reach[0] = True
    # sums rounded to UNIT; the rounding error of a sum of <= 25 atoms is < 25 UNIT
    for atom in np.round(pmf / UNIT).astype(np.int64):
        if atom > 0:
            reach[atom:] |= reach[: total - atom].copy()
    slack = len(pmf)
    lo, hi = int(np.floor(LO / UNIT)) - slack, int(np.ceil(HI / UNIT)) + slack
    return bool(reach[max(lo, 0) : hi + 1].any())


def contiguous(pmf: np.ndarray) -> tuple[float, float]:
    """Among sets of consecutive counts: the largest coverage below LO... and the smallest above
    HI, or (c, c) for a coverage inside the band."""
    best_below, best_above = 0.0, 1.0
    cum = np.concatenate([[0.0], np.cumsum(pmf)])
    for a in range(len(pmf)):
        for b in range(a + 1, len(pmf) + 1):
            c = cum[b] - cum[a]
            if LO <= c <= HI:
                return c, c
            if c < LO:
                best_below = max(best_below, c)
            else:
                best_above = min(best_above, c)
    return best_below, best_above


class _Counts:
    """Stand-in for the interval code's data: per-category Recall values of x hits out of K."""

    def __init__(self, k: int, x: int, metric: str) -> None:
        key = f"recall_{metric.rsplit('_', 1)[1]}"
        self._vals = {key: np.r_[np.ones(x), np.zeros(k - x)]}
        self.theta = {metric: x / k}

    def per_category(self, key: str) -> np.ndarray:
        return self._vals[key]


def library_coverage(pmf: np.ndarray, truth: float, metric: str, method: str) -> float:
    k = len(pmf) - 1
    cover = 0.0
    for x in range(k + 1):
        iv = _recall_binomial(_Counts(k, x, metric), metric, 0.05, method)
        cover += pmf[x] * (iv.lo <= truth <= iv.hi)
    return cover


def randomized_coverage(pmf: np.ndarray, truth: float) -> float:
    """Exact coverage of ``category_randomized``: the count's pmf times P_V(covered | x)."""
    k = len(pmf) - 1
    return float(pmf @ fuzzy_cover_probability(np.arange(k + 1), k, truth))


def main() -> int:
    sizes, scores = study_categories()
    print(
        "| metric | level | truth | P(X=K) | Jeffreys exact | Wilson exact | any X-rule | "
        "contiguous: nearest below / above | var ratio | randomized exact |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    rows = [Truth(sizes, level, scores).recall_expectations() for level in LEVELS]
    exact: dict[str, dict[str, list[float]]] = {}
    for k in (1, 2, 3):
        metric = f"recall_at_{k}"
        cov = exact.setdefault(metric, {})
        for level, per_cat in zip(LEVELS, rows, strict=True):
            p = per_cat[:, k - 1]
            pmf = poisson_binomial(p)
            mean = float(p.mean())
            jef = library_coverage(pmf, mean, metric, "category_jeffreys")
            wil = library_coverage(pmf, mean, metric, "category_wilson")
            ratio = float((p * (1 - p)).sum() / (len(p) * mean * (1 - mean)))
            rand = randomized_coverage(pmf, mean)
            for method, c in (
                ("category_jeffreys", jef),
                ("category_wilson", wil),
                ("category_randomized", rand),
            ):
                cov.setdefault(method, []).append(c)
            below, above = contiguous(pmf)
            cont = (
                f"{100 * below:.1f} (in band)"
                if below == above
                else (f"{100 * below:.1f} / {100 * above:.1f}")
            )
            print(
                f"| {metric} | {level:.2f} | {mean:.4f} | {pmf[-1]:.3f} | {100 * jef:.1f} | "
                f"{100 * wil:.1f} | {'possible' if any_subset_in_band(pmf) else 'IMPOSSIBLE'} | "
                f"{cont} | {ratio:.3f} | {100 * rand:.2f} |"
            )
    print()
    for metric, cov in exact.items():  # the study's decision rule on the exact coverages
        pick = choose(cov, LO, HI)
        ranges = ", ".join(
            f"`{m}` {100 * min(c):.2f}-{100 * max(c):.2f}%"
            + (" (in band)" if all(LO <= x <= HI for x in c) else "")
            for m, c in cov.items()
        )
        print(f"- `{metric}`, exact coverage: {ranges}; the rule picks `{pick}`")
    return 0


if __name__ == "__main__":
    from _results import run_and_record

    raise SystemExit(run_and_record("recall_discreteness", main))
