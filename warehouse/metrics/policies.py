"""Trivial policies reported next to every table (docs/benchmark.md section 4, "ours").

* ``random``: analytic expectation of a uniformly random ranking: pairwise accuracy 0.5
  (gold-tied pairs earn 0.5 anyway), Spearman/Kendall 0, Recall@k = mean over categories of
  min(k, n_c)/n_c (.121/.242/.363 on the 24 public categories).
* ``slot 1 wins`` (position audit): on the gold pair file, always predict ``product_code_1``;
  accuracy = share of pairs whose ``higher_rated_product`` is ``product_code_1``. CI: exact
  Clopper-Pearson binomial interval over the pairs.
* ``lower code wins`` (code-leak audit): scores ``pred = -product_code`` scored like a model,
  with main-table BCa intervals.
A policy ``beats_chance`` when its CI lies entirely above the chance value; ``differs_from_chance``
when the CI excludes the chance value on either side (a policy significantly *below* chance
means its mirror image beats chance: equally a construction artifact).

Caveat for Recall@k flags: bootstrap replicates of Recall are biased downward (duplicated
products add rows predicted above the best one), so the BCa bias correction z0 can be extreme
and the interval can start at the point estimate itself. On the public gold, "lower code wins"
has R@3 = .583 with BCa [.583, .715] (98% of replicates below the point), which sets
``beats_chance`` although pairwise accuracy, Spearman and Kendall sit at chance. Read Recall flags
together with the pairwise ones.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .bootstrap import BOOT_METRICS, bca_ci
from .core import RECALL_KS, as_category_array, as_polars
from .intervals import metric_intervals


def _category_sizes(category: object) -> np.ndarray:
    if isinstance(category, Mapping):
        return np.asarray(list(category.values()), dtype=np.int64)
    _, counts = np.unique(as_category_array(category).astype(str), return_counts=True)
    return counts


def random_policy_expected(category: object) -> dict[str, float]:
    """Analytic expectations of a uniformly random ranking.

    ``category``: per-row category labels, or a mapping category -> n_c.
    """
    n = _category_sizes(category)
    out = {"pairwise_accuracy": 0.5, "spearman": 0.0, "kendall_tau": 0.0}
    for k in RECALL_KS:
        out[f"recall_at_{k}"] = float(np.mean(np.minimum(k, n) / n))
    return out


def _flags(point: float, lo: float, hi: float, chance: float) -> dict[str, object]:
    return {
        "point": float(point),
        "lo": float(lo),
        "hi": float(hi),
        "chance": float(chance),
        "beats_chance": bool(lo > chance),
        "differs_from_chance": bool(lo > chance or hi < chance),
    }


def slot1_wins_accuracy(pairs_df: object, alpha: float = 0.05) -> dict[str, object]:
    """Accuracy of always predicting ``product_code_1`` on the gold pair file (a polars or Arrow
    table), with CI and flags; a pair without a winner (null) is not a win.

    Returns ``point, lo, hi, chance (0.5), beats_chance, differs_from_chance, n_pairs, n_wins``.
    """
    from scipy import stats

    pairs_df = as_polars(pairs_df, "pair file")
    need = {"product_code_1", "higher_rated_product"}
    if not need <= set(pairs_df.columns):
        raise ValueError(f"pair file lacks column(s) {sorted(need - set(pairs_df.columns))}")
    won = pairs_df["higher_rated_product"] == pairs_df["product_code_1"]
    wins = int(won.fill_null(False).sum())
    n = len(pairs_df)
    if n == 0:
        raise ValueError("pair file has no rows")
    ci = stats.binomtest(wins, n).proportion_ci(confidence_level=1 - alpha, method="exact")
    out = _flags(wins / n, ci.low, ci.high, 0.5)
    out.update(n_pairs=n, n_wins=wins)
    return out


def lower_code_wins(
    category: object,
    product_code: object,
    gold: object,
    n_boot: int = 10000,
    seed: int = 42,
    ci: str = "published_bca",
) -> dict[str, dict[str, object]]:
    """Score ``pred = -product_code`` (lower code ranked higher) with main-table BCa intervals
    (``ci="published_bca"``) or each metric's default method (``ci="default"``,
    :data:`.intervals.DEFAULT_CI_METHODS`).

    Returns ``{metric: {point, lo, hi, chance, beats_chance, differs_from_chance, ci_method}}``
    for the six Table-2 metrics; ``chance`` is :func:`random_policy_expected`.
    """
    pred = -np.asarray(product_code, dtype=np.float64)
    chance = random_policy_expected(category)
    if ci == "published_bca":
        cis = bca_ci(category, gold, pred, n_boot=n_boot, seed=seed)
        return {m: {**_flags(*cis[m], chance[m]), "ci_method": ci} for m in BOOT_METRICS}
    if ci != "default":
        raise ValueError(f"unknown interval choice {ci!r}; choose default or published_bca")
    ivs = metric_intervals(category, gold, pred, "default", BOOT_METRICS, n_boot, seed)
    return {
        i.metric: {**_flags(i.point, i.lo, i.hi, chance[i.metric]), "ci_method": i.ci_method}
        for i in ivs
    }
