"""The scoring engine: one model's metrics with intervals, per-category figures, per-pair credits
and paired comparisons, trivial policies, difficulty slices and calibration (docs/benchmark.md
§4). ``tastebench evaluate`` (:mod:`warehouse.evaluate`), the metrics marts
(:mod:`warehouse.metrics.marts`) and the release all score through these functions, so the same
files give the same numbers everywhere.

Every metric comes from :mod:`warehouse.metrics.core`; intervals from
:mod:`warehouse.metrics.bootstrap`. The bootstrap replicates of a model are computed once (one
:func:`~warehouse.metrics.bootstrap.bca_ci` call for the six Table-2 metrics; the macro interval
reuses the same cached draws). The per-pair slices and calibration of ``evaluate`` are in
:mod:`warehouse.metrics.slices`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import polars as pl

from warehouse.errors import DataValidationError

from .bootstrap import bca_ci, bca_ci_per_category, bca_macro_interval, single_thread_blas
from .compare import compare_models, holm
from .core import (
    METRIC_NAMES,
    TIE_EPS,
    as_category_array,
    code_series,
    compute_all,
    json_float,
    pairwise_credits,
    per_category_metrics,
    per_category_pairwise,
)
from .intervals import metric_intervals, per_category_intervals
from .policies import lower_code_wins, random_policy_expected, slot1_wins_accuracy
from .validate import normalize_code

ALPHA = 0.05
MAIN_VARIANT = (
    "docs/benchmark.md section 4 main-table BCa: canonical (category, gold, prediction) order, one "
    "default_rng(seed), draws replicate by replicate and category by sorted category, jackknife "
    "over all products, strict z0 clipped to [1e-10, 1-1e-10], numpy.percentile (linear)"
)
PER_CATEGORY_VARIANT = (
    "docs/benchmark.md section 4 per-category BCa: fresh default_rng(seed) per category, "
    "integers(0, n_c, (n_boot, n_c)), jackknife over the category's products, mid-rank z0"
)
DEFAULT_VARIANT = (
    "default methods (docs/statistics.md): ustat_t for pairwise accuracy, Kendall and macro "
    "accuracy (unbiased U-statistic variance, t interval on the logit/Fisher-z scale), "
    "ustat_satt for Spearman (the same variance and scale, t with Satterthwaite df from the "
    "spread of the categories' variance contributions), "
    "category_randomized for Recall@k (randomized Clopper-Pearson interval of the hit count over "
    "the categories, auxiliary uniform from seed and a SHA-256 of the scored rows)"
)
DEFAULT_PER_CATEGORY_VARIANT = (
    "distinct_percentile per category: fresh default_rng(seed) per category, "
    "integers(0, n_c, (n_boot, n_c)), no pair of copies scored, percentile interval"
)
CI_CHOICES = ("default", "published_bca")
"""Interval conventions of the scoring engine: each metric's default method, or the published
convention (docs/statistics.md)."""
COMPARE_METHOD = "ustat_t"
"""Method of the paired model comparisons (docs/statistics.md: the pair bootstrap treats pairs
sharing a product as independent and over-rejects)."""
_NO_CI = {"ci_method": "none", "is_degenerate": False, "ci_note": "no interval for this metric"}
POLICY_DESCRIPTIONS = {
    "random": "uniformly random ranking (analytical expectation)",
    "slot1_wins": "first listed product wins on the gold pair file (position audit)",
    "lower_code_wins": "the lower product code wins (code-leak audit)",
}


def interval(point: object, lo: object = None, hi: object = None) -> dict[str, float | None]:
    return {"point": json_float(point), "ci_lo": json_float(lo), "ci_hi": json_float(hi)}


def _published_flags(point: float | None, lo: float | None, hi: float | None) -> dict:
    """``is_degenerate``/``ci_note`` of a published-convention interval (which may exclude its
    own point: docs/statistics.md)."""
    if lo is None or hi is None or point is None:
        return {"is_degenerate": False, "ci_note": ""}
    notes = [] if lo <= point <= hi else ["the estimate lies outside the interval"]
    if lo == hi:
        notes.append("zero width")
    return {"is_degenerate": lo == hi, "ci_note": "; ".join(notes)}


def score_model(
    category: object,
    gold: object,
    pred: object,
    *,
    n_boot: int = 10000,
    seed: int = 42,
    alpha: float = ALPHA,
    ci: str = "default",
) -> dict[str, object]:
    """The eight metrics of one model with their intervals.

    Points: :func:`warehouse.metrics.compute_all` on the rows in the given order. Intervals by
    ``ci`` (:data:`CI_CHOICES`): ``"published_bca"`` = main-table BCa
    (:func:`warehouse.metrics.bca_ci`) for the six Table-2 metrics and the same draws for the
    macro accuracy (the published convention, bit for bit); ``"default"`` = each metric's
    default method (:data:`warehouse.metrics.intervals.DEFAULT_CI_METHODS`); none for partial
    pooling (``ci_method = "none"``). Returns ``{"n_products", "n_pairs", "metrics": {metric:
    {point, ci_lo, ci_hi, ci_method, is_degenerate, ci_note}}}``.
    """
    if ci not in CI_CHOICES:
        raise ValueError(f"unknown interval choice {ci!r}; choose from {CI_CHOICES}")
    cat = as_category_array(category)
    g = np.asarray(gold, dtype=np.float64)
    p = np.asarray(pred, dtype=np.float64)
    points = compute_all(cat, g, p)
    with_intervals = _published_metrics if ci == "published_bca" else _default_metrics
    metrics = with_intervals((cat, g, p), points, {"n_boot": n_boot, "seed": seed, "alpha": alpha})
    _, sizes = np.unique(cat.astype(str), return_counts=True)
    return {
        "n_products": len(cat),
        "n_pairs": int((sizes * (sizes - 1) // 2).sum()),
        "metrics": metrics,
    }


Rows = tuple[np.ndarray, np.ndarray, np.ndarray]
"""One model's (category, gold, prediction) arrays, aligned."""


def _published_metrics(rows: Rows, points: Mapping[str, float], draws: Mapping) -> dict[str, dict]:
    """:func:`score_model`'s metrics by the published convention (main-table BCa, the same
    draws for the macro accuracy); ``draws``: ``n_boot``, ``seed``, ``alpha``."""
    with single_thread_blas():
        cis = bca_ci(*rows, **draws)
        macro = bca_macro_interval(*rows, draws["n_boot"], draws["seed"], draws["alpha"])
    metrics = {}
    for name in METRIC_NAMES:
        if name in cis:
            iv = interval(points[name], cis[name][1], cis[name][2])
        elif name == "pairwise_accuracy_macro":
            iv = interval(points[name], *macro)
        else:
            metrics[name] = {**interval(points[name]), **_NO_CI}
            continue
        metrics[name] = {
            **iv,
            "ci_method": "published_bca",
            **_published_flags(iv["point"], iv["ci_lo"], iv["ci_hi"]),
        }
    return metrics


def _default_metrics(rows: Rows, points: Mapping[str, float], draws: Mapping) -> dict[str, dict]:
    """:func:`score_model`'s metrics by each metric's default interval method."""
    ivs = {i.metric: i for i in metric_intervals(*rows, "default", **draws)}
    metrics = {}
    for name in METRIC_NAMES:
        if name not in ivs:
            metrics[name] = {**interval(points[name]), **_NO_CI}
            continue
        i = ivs[name]
        metrics[name] = {
            **interval(points[name], i.lo, i.hi),
            "ci_method": i.ci_method,
            "is_degenerate": bool(i.is_degenerate),
            "ci_note": i.note,
        }
    return metrics


def score_per_category(
    category: object,
    gold: object,
    pred: object,
    *,
    n_boot: int = 10000,
    seed: int = 42,
    all_metrics: bool = True,
    ci: str = "default",
) -> pl.DataFrame:
    """Per-category points joined with a per-category interval of pairwise accuracy.

    ``ci``: ``"published_bca"`` = :func:`warehouse.metrics.bca_ci_per_category` (the published
    convention, bit for bit); ``"default"`` =
    :func:`warehouse.metrics.intervals.per_category_intervals` with its default method. Points:
    :func:`warehouse.metrics.per_category_metrics` (every metric) or, with
    ``all_metrics=False``, only :func:`warehouse.metrics.per_category_pairwise` (no scipy rank
    correlations: what ``evaluate`` reports). Columns: ``category, n_products, n_pairs,
    pairwise_accuracy, ci_lo, ci_hi`` (+ ``spearman, kendall_tau, recall_at_1..3``) + ``ci_method,
    is_degenerate, ci_note``.
    """
    if ci not in CI_CHOICES:
        raise ValueError(f"unknown interval choice {ci!r}; choose from {CI_CHOICES}")
    if all_metrics:
        points = per_category_metrics(category, gold, pred)
    else:
        points = per_category_pairwise(category, gold, pred)
        points = points.rename({"accuracy": "pairwise_accuracy"}).drop("credit")
    if ci == "published_bca":
        cis = bca_ci_per_category(category, gold, pred, n_boot=n_boot, seed=seed)
        flags = [
            _published_flags(pt, lo, hi)
            for pt, lo, hi in zip(cis["pairwise_accuracy"], cis["ci_lo"], cis["ci_hi"], strict=True)
        ]
        cis = cis.with_columns(
            pl.lit("published_bca").alias("ci_method"),
            pl.Series("is_degenerate", [f["is_degenerate"] for f in flags], dtype=pl.Boolean),
            pl.Series("ci_note", [f["ci_note"] for f in flags], dtype=pl.String),
        )
    else:
        cis = per_category_intervals(category, gold, pred, "default", n_boot=n_boot, seed=seed)
    ci_cols = ["category", "ci_lo", "ci_hi", "ci_method", "is_degenerate", "ci_note"]
    out = points.join(cis.select(ci_cols), on="category", how="left", maintain_order="left")
    out = out.with_columns(
        pl.when(pl.col("n_pairs") == 0)
        .then(float("nan"))
        .otherwise(pl.col("pairwise_accuracy"))
        .alias("pairwise_accuracy")
    )
    cols = ["category", "n_products", "n_pairs", "pairwise_accuracy", "ci_lo", "ci_hi"]
    tail = ["ci_method", "is_degenerate", "ci_note"]
    return out.select(cols + [c for c in out.columns if c not in cols + tail] + tail)


def _code_sort_key(code: object) -> tuple[int, object]:
    return (0, code) if isinstance(code, int) else (1, str(code))


def pair_table(category: object, product_code: object, gold: object, pred: object) -> pl.DataFrame:
    """Per-pair credits keyed independently of row order.

    One row per within-category pair (:func:`warehouse.metrics.pairwise_credits`), with
    ``code_lo``/``code_hi`` (the pair's codes in a fixed order), ``pair_key``
    (``'<category>:<lo>:<hi>'``) and ``gold_sign`` (sign of gold(lo) - gold(hi), 0 for a gold
    tie), plus the library's ``credit``, ``abs_delta_gold`` and ``pred_tie``.
    """
    codes = np.array(
        [normalize_code(c) for c in np.asarray(product_code, dtype=object)], dtype=object
    )
    g = np.asarray(gold, dtype=np.float64)
    pc = pairwise_credits(category, g, pred, product_code=codes)
    code_i = np.asarray(pc["code_i"].to_list(), dtype=object)
    code_j = np.asarray(pc["code_j"].to_list(), dtype=object)
    swap = np.array(
        [_code_sort_key(a) > _code_sort_key(b) for a, b in zip(code_i, code_j, strict=True)],
        dtype=bool,
    )
    lo = np.where(swap, code_j, code_i)
    hi = np.where(swap, code_i, code_j)
    dg = g[pc["i"].to_numpy()] - g[pc["j"].to_numpy()]
    sign = np.where(np.abs(dg) < TIE_EPS, 0, np.sign(dg)).astype(np.int64)
    sign = np.where(swap, -sign, sign)
    cat = pc["category"].to_list()
    return pl.DataFrame(
        [
            pl.Series(
                "pair_key",
                [f"{c}:{a}:{b}" for c, a, b in zip(cat, lo, hi, strict=True)],
                dtype=pl.String,
            ),
            pc["category"],
            code_series("code_lo", lo),
            code_series("code_hi", hi),
            pl.Series("gold_sign", sign, dtype=pl.Int64),
            pc["abs_delta_gold"],
            pc["pred_tie"],
            pc["credit"],
        ]
    )


class _PairIndex:
    """A :func:`pair_table` as arrays, with the row of each ``pair_key``."""

    def __init__(self, table: pl.DataFrame) -> None:
        keys = table["pair_key"].to_list()
        self.row = {k: i for i, k in enumerate(keys)}
        self.category = np.asarray(table["category"].to_list(), dtype=object)
        self.code_lo = np.asarray(table["code_lo"].to_list(), dtype=object)
        self.code_hi = np.asarray(table["code_hi"].to_list(), dtype=object)
        self.gold_sign = table["gold_sign"].to_numpy()
        self.credit = table["credit"].cast(pl.Float64).to_numpy()

    def rows(self, keys: list[str]) -> np.ndarray:
        return np.array([self.row[k] for k in keys], dtype=np.intp)

    def credits(self, keys: list[str]) -> np.ndarray:
        return self.credit[self.rows(keys)]

    def n_products(self, keys: list[str]) -> int:
        """Distinct products of the pairs ``keys``."""
        sel = self.rows(keys)
        return len(
            set(zip(self.category[sel], self.code_lo[sel], strict=True))
            | set(zip(self.category[sel], self.code_hi[sel], strict=True))
        )


COMPARISON_SCHEMA = {
    "model_a": pl.String,
    "model_b": pl.String,
    "n_products": pl.Int64,
    "n_pairs": pl.Int64,
    "acc_a": pl.Float64,
    "acc_b": pl.Float64,
    "diff": pl.Float64,
    "ci_lo": pl.Float64,
    "ci_hi": pl.Float64,
    "p_value": pl.Float64,
    "p_holm": pl.Float64,
    "is_resolved": pl.Boolean,
    "ci_method": pl.String,
    "ci_note": pl.String,
}
"""Columns of :func:`compare_pair_tables` (undefined values null, never NaN)."""


@dataclass(frozen=True)
class _Comparer:
    """What every comparison of one :func:`compare_pair_tables` call shares."""

    indexed: Mapping[str, _PairIndex]
    sources: Mapping[str, str]
    n_boot: int
    seed: int
    alpha: float
    method: str

    def check_gold(self, a: str, b: str, keys: list[str]) -> None:
        sa = self.indexed[a].gold_sign[self.indexed[a].rows(keys)]
        sb = self.indexed[b].gold_sign[self.indexed[b].rows(keys)]
        bad = np.flatnonzero(sa != sb)
        if bad.size:
            raise DataValidationError(
                self.sources[b],
                f"its gold orders pair {keys[bad[0]]} differently from {self.sources[a]} "
                f"({bad.size} pair(s) disagree); a comparison needs one gold",
                "give files with the same gold, or score against the warehouse with "
                "--gold warehouse",
                column="true_rank/true_score",
            )

    def compare(self, names: list[str], keys: list[str]) -> list[dict[str, object]]:
        """Raw comparison rows of ``names`` (gold checked) on the pairs ``keys``."""
        t = self.indexed[names[0]]
        for b in names[1:]:
            self.check_gold(names[0], b, keys)
        sel = t.rows(keys)
        products = {
            "category": t.category[sel],
            "product_a": t.code_lo[sel],
            "product_b": t.code_hi[sel],
        }
        table = compare_models(
            {n: self.indexed[n].credits(keys) for n in names},
            n_boot=self.n_boot,
            n_perm=self.n_boot,
            seed=self.seed,
            alpha=self.alpha,
            method=self.method,
            products=None if self.method == "pair_bootstrap" else products,
        )
        size = {"n_products": t.n_products(keys), "n_pairs": len(keys)}
        return [{**rec, **size} for rec in table.iter_rows(named=True)]


def compare_pair_tables(
    tables: Mapping[str, pl.DataFrame],
    *,
    n_boot: int = 10000,
    seed: int = 42,
    alpha: float = ALPHA,
    sources: Mapping[str, str] | None = None,
    method: str = COMPARE_METHOD,
) -> pl.DataFrame:
    """Every pair of models on the pairs both cover: CI and p-value of the accuracy difference
    by ``method`` (:data:`COMPARE_METHOD` = ``ustat_t``, products as the sampling unit; or
    ``pair_bootstrap``, the pair bootstrap with a sign-flip p), Holm over all comparisons.

    ``tables``: model name -> :func:`pair_table`. When every model covers the same pairs, one
    :func:`warehouse.metrics.compare_models` call scores all comparisons (shared draws);
    otherwise each comparison runs on the intersection of its two models' pairs. The Holm
    correction is over all comparisons. A comparison needs one gold: models whose gold orders a
    shared pair differently raise :class:`DataValidationError` (``sources`` names the files).
    Returns one row per comparison with the columns of :data:`COMPARISON_SCHEMA` (none for fewer
    than two models).
    """
    names = list(tables)
    if len(names) < 2:
        return pl.DataFrame(schema=COMPARISON_SCHEMA)
    indexed = {n: _PairIndex(t) for n, t in tables.items()}
    comparer = _Comparer(indexed, sources or {n: n for n in names}, n_boot, seed, alpha, method)
    key_sets = {n: frozenset(t.row) for n, t in indexed.items()}
    if len(set(key_sets.values())) == 1:
        rows = comparer.compare(names, sorted(next(iter(key_sets.values()))))
    else:
        rows = []
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                keys = sorted(key_sets[a] & key_sets[b])
                if len(keys) == 0:
                    rows.append({"model_a": a, "model_b": b, "n_products": 0, "n_pairs": 0})
                    continue
                rows.extend(comparer.compare([a, b], keys))
    return _holm_rows(rows, alpha, method)


def _holm_rows(rows: list[dict[str, object]], alpha: float, method: str) -> pl.DataFrame:
    """The comparison rows with their Holm p-values over all of them and the resolved flag."""
    pvals = np.array([r.get("p_value", np.nan) for r in rows], dtype=np.float64)
    tested = np.isfinite(pvals)
    p_holm = np.full(len(rows), np.nan)
    p_holm[tested] = holm(pvals[tested])
    out = []
    for r, ph in zip(rows, p_holm, strict=True):
        lo, hi = r.get("ci_lo", np.nan), r.get("ci_hi", np.nan)
        resolved = bool(np.isfinite(ph) and ph < alpha and (lo > 0 or hi < 0))
        out.append(
            {
                "model_a": r["model_a"],
                "model_b": r["model_b"],
                "n_products": int(r["n_products"]),
                "n_pairs": int(r["n_pairs"]),
                "acc_a": json_float(r.get("acc_a")),
                "acc_b": json_float(r.get("acc_b")),
                "diff": json_float(r.get("diff")),
                "ci_lo": json_float(lo),
                "ci_hi": json_float(hi),
                "p_value": json_float(r.get("p_value")),
                "p_holm": json_float(ph),
                "is_resolved": resolved,
                "ci_method": method,
                "ci_note": str(r.get("ci_note") or ("no shared pairs" if not r["n_pairs"] else "")),
            }
        )
    return pl.DataFrame(out, schema=COMPARISON_SCHEMA)


def trivial_policies(
    category: object,
    product_code: object,
    gold: object,
    gold_pairs: object | None,
    *,
    n_boot: int = 10000,
    seed: int = 42,
    pair_file: str = "the gold pair file",
    ci: str = "default",
) -> list[dict[str, object]]:
    """The three trivial policies of docs/benchmark.md section 4 as JSON-ready records.

    ``category``/``product_code``/``gold``: the reference products and gold the random and
    lower-code policies are scored on. ``gold_pairs``: the gold pair file (a polars or Arrow
    table with the columns ``product_code_1, higher_rated_product``) for the position audit, or
    None to skip it.

    Flags (per metric, from :mod:`warehouse.metrics.policies`): ``beats_chance`` when the CI lies
    entirely above chance, ``differs_from_chance`` when it excludes chance on either side (a
    policy significantly BELOW chance means its mirror image beats chance: equally an artifact).
    A policy's top-level ``beats_chance``/``differs_from_chance`` are its PAIRWISE-ACCURACY
    flags; ``flagged_metrics`` lists every metric whose CI lies entirely above chance (Recall
    flags of "lower code wins" can come from the downward bias of Recall replicates).
    Random: analytical expectations (macro accuracy 0.5 too; no pooled value). Lower code wins:
    the six Table-2 metrics with intervals by ``ci`` (``published_bca`` or each metric's default
    method, named per metric) plus macro/pooled points (``compute_all``).
    """
    cat = as_category_array(category)
    g = np.asarray(gold, dtype=np.float64)
    _, sizes = np.unique(cat.astype(str), return_counts=True)
    n_pairs = int((sizes * (sizes - 1) // 2).sum())
    out = [_random_policy(cat, n_pairs)]
    if gold_pairs is not None:
        out.append(_slot1_policy(gold_pairs, pair_file))
    codes = np.array(
        [normalize_code(c) for c in np.asarray(product_code, dtype=object)], dtype=object
    )
    if all(isinstance(c, int) for c in codes):
        out.append(_lower_code_policy(cat, codes, g, n_pairs, n_boot=n_boot, seed=seed, ci=ci))
    return out


def _random_policy(cat: np.ndarray, n_pairs: int) -> dict[str, object]:
    """The random policy: analytical expectations, never flagged."""
    chance = random_policy_expected(cat)
    chance_all = {**chance, "pairwise_accuracy_macro": 0.5}
    return {
        "name": "random",
        "description": POLICY_DESCRIPTIONS["random"],
        "ci_method": "analytical",
        "n_products": len(cat),
        "n_pairs": n_pairs,
        "metrics": {
            m: {
                **interval(v),
                "chance": v,
                "beats_chance": False,
                "differs_from_chance": False,
            }
            for m, v in chance_all.items()
        },
        "beats_chance": False,
        "differs_from_chance": False,
        "flagged_metrics": [],
    }


def _slot1_policy(gold_pairs: object, pair_file: str) -> dict[str, object]:
    """The position audit on the gold pair file (Clopper-Pearson)."""
    s1 = slot1_wins_accuracy(gold_pairs)
    return {
        "name": "slot1_wins",
        "description": f"{POLICY_DESCRIPTIONS['slot1_wins']}: {pair_file}",
        "ci_method": "clopper_pearson",
        "n_products": None,
        "n_pairs": int(s1["n_pairs"]),
        "metrics": {"pairwise_accuracy": _policy_metric(s1)},
        "beats_chance": bool(s1["beats_chance"]),
        "differs_from_chance": bool(s1["differs_from_chance"]),
        "flagged_metrics": ["pairwise_accuracy"] if s1["beats_chance"] else [],
    }


def _lower_code_policy(
    cat: np.ndarray,
    codes: np.ndarray,
    g: np.ndarray,
    n_pairs: int,
    *,
    n_boot: int,
    seed: int,
    ci: str,
) -> dict[str, object]:
    """The code-leak audit: the six Table-2 metrics with intervals by ``ci``, macro and pooled
    points."""
    pred = -codes.astype(np.float64)
    with single_thread_blas():
        lcw = lower_code_wins(cat, codes.astype(np.float64), g, n_boot=n_boot, seed=seed, ci=ci)
    points = compute_all(cat, g, pred)
    metrics = {m: _policy_metric(v) for m, v in lcw.items()}
    for m in ("pairwise_accuracy_macro", "pairwise_accuracy_pooled"):
        metrics[m] = {
            **interval(points[m]),
            "chance": 0.5 if m == "pairwise_accuracy_macro" else None,
            "beats_chance": False,
            "differs_from_chance": False,
        }
    return {
        "name": "lower_code_wins",
        "description": POLICY_DESCRIPTIONS["lower_code_wins"],
        "ci_method": ci,
        "n_products": len(cat),
        "n_pairs": n_pairs,
        "metrics": metrics,
        "beats_chance": bool(lcw["pairwise_accuracy"]["beats_chance"]),
        "differs_from_chance": bool(lcw["pairwise_accuracy"]["differs_from_chance"]),
        "flagged_metrics": [m for m, v in lcw.items() if v["beats_chance"]],
    }


def _policy_metric(v: Mapping[str, object]) -> dict[str, object]:
    return {
        **interval(v["point"], v["lo"], v["hi"]),
        **({"ci_method": v["ci_method"]} if "ci_method" in v else {}),
        "chance": json_float(v["chance"]),
        "beats_chance": bool(v["beats_chance"]),
        "differs_from_chance": bool(v["differs_from_chance"]),
    }
