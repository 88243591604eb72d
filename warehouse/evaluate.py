"""Score prediction files against the benchmark gold: the engine of ``tastebench evaluate`` and of
the metrics marts (docs/evaluate.md has the JSON contract and every convention).

Layers:

* building blocks on aligned arrays, shared with :mod:`warehouse.metrics_marts`:
  :func:`score_model` (eight metrics, main-table BCa), :func:`score_per_category`
  (per-category BCa variant), :func:`pair_table` + :func:`compare_pair_tables` (paired
  comparisons, Holm), :func:`trivial_policies`, :func:`delta_slice`, :func:`clear_slice`,
  :func:`calibration`;
* files: :func:`load_predictions` (read + structural checks), :func:`load_reference` (the known
  products and the gold: the public out-of-fold files' ``true_rank`` for ``gold="file"``, the
  built warehouse's ``marts.fct_panel_means`` for ``gold="warehouse"``),
  :func:`evaluate_files` (the JSON contract), :func:`check_result_shape`, :func:`render_table`.

Every metric comes from :mod:`warehouse.metrics`; nothing here re-implements one. The bootstrap
replicates of a model are computed once (one :func:`warehouse.metrics.bca_ci` call for the six
Table-2 metrics; the macro interval reuses the same cached draws).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from warehouse.errors import DataValidationError, WarehouseError
from warehouse.metrics import (
    BOOT_METRICS,
    METRIC_NAMES,
    TIE_EPS,
    accuracy_by_delta_quintile,
    accuracy_clear_vs_ambiguous,
    bca_ci,
    bca_ci_per_category,
    bca_interval,
    compare_models,
    compute_all,
    draw_main_indices,
    expected_calibration_error,
    holm,
    lower_code_wins,
    pairwise_credits,
    per_category_metrics,
    per_category_pairwise,
    random_policy_expected,
    slot1_wins_accuracy,
    validate_predictions,
)
from warehouse.metrics.bootstrap import sample_stats, single_thread_blas
from warehouse.metrics.core import as_category_array, canonical_order, group_by_category
from warehouse.metrics.validate import normalize_code

SCHEMA_VERSION = 1
GOLD_MODES = ("file", "warehouse")
GOLD_COLUMNS = ("true_rank", "true_score")
REQUIRED_COLUMNS = ("category", "product_code", "predicted_score")
ALPHA = 0.05
ECE_BINS = 10
CLEAR_P = 0.05
MAIN_VARIANT = (
    "BENCHMARK.md section 4 main-table BCa: canonical (category, gold, prediction) order, one "
    "default_rng(seed), draws replicate by replicate and category by sorted category, jackknife "
    "over all products, strict z0 clipped to [1e-10, 1-1e-10], numpy.percentile (linear)"
)
PER_CATEGORY_VARIANT = (
    "BENCHMARK.md section 4 per-category BCa: fresh default_rng(seed) per category, "
    "integers(0, n_c, (n_boot, n_c)), jackknife over the category's products, mid-rank z0"
)
POLICY_DESCRIPTIONS = {
    "random": "uniformly random ranking (analytical expectation)",
    "slot1_wins": "first listed product wins on the gold pair file (position audit)",
    "lower_code_wins": "the lower product code wins (code-leak audit)",
}


def _num(value: object) -> float | None:
    """JSON-safe float: NaN/inf -> None."""
    if value is None:
        return None
    v = float(value)
    return v if math.isfinite(v) else None


def _interval(point: object, lo: object = None, hi: object = None) -> dict[str, float | None]:
    return {"point": _num(point), "ci_lo": _num(lo), "ci_hi": _num(hi)}


# --------------------------------------------------------------------------- building blocks


def _macro_interval(
    category: np.ndarray, gold: np.ndarray, pred: np.ndarray, n_boot: int, seed: int, alpha: float
) -> tuple[float, float]:
    """BCa interval of MACRO pairwise accuracy on the main-table draws (documented variant).

    Same canonical order, same cached ``draw_main_indices`` draws and same whole-set jackknife as
    :func:`warehouse.metrics.bca_ci`; each replicate's macro value is the unweighted mean of its
    per-category pairwise accuracies (categories without pairs left out, as in ``compute_all``).
    """
    order = canonical_order(category, gold, pred)
    grouped = group_by_category(category[order], gold[order], pred[order])
    sizes = [len(r) for r in grouped.rows]
    draws = draw_main_indices(sizes, n_boot, seed)
    metrics = ("pairwise_accuracy",)
    full, boot, loo = [], [], []
    for rows, idx in zip(grouped.rows, draws, strict=True):
        g, p, n = grouped.gold[rows], grouped.pred[rows], len(rows)
        if n < 2:
            full.append(np.nan)
            boot.append(np.full(n_boot, np.nan))
            loo.append(np.full(n, np.nan))
            continue
        fs = sample_stats(g, p, np.arange(n)[None, :], metrics)
        full.append(float(fs["credit"][0] / fs["npairs"][0]))
        bs = sample_stats(g, p, idx, metrics)
        boot.append(bs["credit"] / bs["npairs"])
        loo_idx = np.array([np.delete(np.arange(n), i) for i in range(n)]).reshape(n, n - 1)
        js = sample_stats(g, p, loo_idx, metrics)
        with np.errstate(invalid="ignore", divide="ignore"):
            loo.append(np.where(js["npairs"] > 0, js["credit"] / js["npairs"], np.nan))
    full_arr = np.array(full)
    theta = float(np.nanmean(full_arr))
    boot_macro = np.nanmean(np.column_stack(boot), axis=1)
    jack = []
    for c, vals in enumerate(loo):
        for v in vals:
            cats = full_arr.copy()
            cats[c] = v
            jack.append(np.nanmean(cats) if np.isfinite(cats).any() else np.nan)
    return bca_interval(theta, boot_macro, np.array(jack), alpha, "strict")


def score_model(
    category: object,
    gold: object,
    pred: object,
    *,
    n_boot: int = 10000,
    seed: int = 42,
    alpha: float = ALPHA,
) -> dict[str, object]:
    """The eight metrics of one model with their intervals.

    Points: :func:`warehouse.metrics.compute_all` on the rows in the given order. Intervals:
    main-table BCa (:func:`warehouse.metrics.bca_ci`) for the six Table-2 metrics, the same
    draws for the macro accuracy (:func:`_macro_interval`), none for partial pooling.
    Returns ``{"n_products", "n_pairs", "metrics": {metric: {point, ci_lo, ci_hi}}}``.
    """
    cat = as_category_array(category)
    g = np.asarray(gold, dtype=np.float64)
    p = np.asarray(pred, dtype=np.float64)
    points = compute_all(cat, g, p)
    with single_thread_blas():
        cis = bca_ci(cat, g, p, n_boot=n_boot, seed=seed, alpha=alpha)
        macro = _macro_interval(cat, g, p, n_boot, seed, alpha)
    metrics = {}
    for name in METRIC_NAMES:
        if name in cis:
            metrics[name] = _interval(points[name], cis[name][1], cis[name][2])
        elif name == "pairwise_accuracy_macro":
            metrics[name] = _interval(points[name], *macro)
        else:
            metrics[name] = _interval(points[name])
    _, sizes = np.unique(cat.astype(str), return_counts=True)
    return {
        "n_products": len(cat),
        "n_pairs": int((sizes * (sizes - 1) // 2).sum()),
        "metrics": metrics,
    }


def score_per_category(
    category: object,
    gold: object,
    pred: object,
    *,
    n_boot: int = 10000,
    seed: int = 42,
    all_metrics: bool = True,
) -> pd.DataFrame:
    """Per-category points joined with the per-category BCa interval of pairwise accuracy
    (:func:`warehouse.metrics.bca_ci_per_category`).

    Points: :func:`warehouse.metrics.per_category_metrics` (every metric) or, with
    ``all_metrics=False``, only :func:`warehouse.metrics.per_category_pairwise` (no scipy rank
    correlations: what ``evaluate`` reports). Columns: ``category, n_products, n_pairs,
    pairwise_accuracy, ci_lo, ci_hi`` (+ ``spearman, kendall_tau, recall_at_1..3``).
    """
    if all_metrics:
        points = per_category_metrics(category, gold, pred)
    else:
        points = per_category_pairwise(category, gold, pred)
        points = points.rename(columns={"accuracy": "pairwise_accuracy"}).drop(columns="credit")
    cis = bca_ci_per_category(category, gold, pred, n_boot=n_boot, seed=seed)
    out = points.merge(cis[["category", "ci_lo", "ci_hi"]], on="category", how="left")
    out.loc[out["n_pairs"] == 0, "pairwise_accuracy"] = np.nan
    cols = ["category", "n_products", "n_pairs", "pairwise_accuracy", "ci_lo", "ci_hi"]
    return out[cols + [c for c in out.columns if c not in cols]]


def _code_sort_key(code: object) -> tuple[int, object]:
    return (0, code) if isinstance(code, int) else (1, str(code))


def pair_table(category: object, product_code: object, gold: object, pred: object) -> pd.DataFrame:
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
    swap = np.array(
        [
            _code_sort_key(a) > _code_sort_key(b)
            for a, b in zip(pc["code_i"], pc["code_j"], strict=True)
        ],
        dtype=bool,
    )
    lo = np.where(swap, pc["code_j"], pc["code_i"])
    hi = np.where(swap, pc["code_i"], pc["code_j"])
    dg = g[pc["i"].to_numpy()] - g[pc["j"].to_numpy()]
    sign = np.where(np.abs(dg) < TIE_EPS, 0, np.sign(dg)).astype(int)
    sign = np.where(swap, -sign, sign)
    out = pd.DataFrame(
        {
            "category": pc["category"].to_numpy(),
            "code_lo": lo,
            "code_hi": hi,
            "gold_sign": sign,
            "abs_delta_gold": pc["abs_delta_gold"].to_numpy(),
            "pred_tie": pc["pred_tie"].to_numpy(),
            "credit": pc["credit"].to_numpy(),
        }
    )
    out.insert(
        0,
        "pair_key",
        [
            f"{c}:{a}:{b}"
            for c, a, b in zip(out["category"], out["code_lo"], out["code_hi"], strict=True)
        ],
    )
    return out


def compare_pair_tables(
    tables: Mapping[str, pd.DataFrame],
    *,
    n_boot: int = 10000,
    seed: int = 42,
    alpha: float = ALPHA,
    sources: Mapping[str, str] | None = None,
) -> list[dict[str, object]]:
    """Every pair of models on the pairs both cover (paired bootstrap CI, sign-flip p, Holm).

    ``tables``: model name -> :func:`pair_table`. When every model covers the same pairs, one
    :func:`warehouse.metrics.compare_models` call scores all comparisons (shared draws);
    otherwise each comparison runs on the intersection of its two models' pairs. The Holm
    correction is over all comparisons. A comparison needs one gold: models whose gold orders a
    shared pair differently raise :class:`DataValidationError` (``sources`` names the files).
    """
    names = list(tables)
    if len(names) < 2:
        return []
    sources = sources or {n: n for n in names}
    indexed = {n: t.set_index("pair_key") for n, t in tables.items()}
    key_sets = {n: frozenset(t.index) for n, t in indexed.items()}
    rows: list[dict[str, object]] = []

    def check_gold(a: str, b: str, keys: pd.Index) -> None:
        sa = indexed[a].loc[keys, "gold_sign"].to_numpy()
        sb = indexed[b].loc[keys, "gold_sign"].to_numpy()
        bad = np.flatnonzero(sa != sb)
        if bad.size:
            raise DataValidationError(
                sources[b],
                f"its gold orders pair {keys[bad[0]]} differently from {sources[a]} "
                f"({bad.size} pair(s) disagree); a comparison needs one gold",
                "give files with the same gold, or score against the warehouse with "
                "--gold warehouse",
                column="true_rank/true_score",
            )

    def n_products(keys: pd.Index, t: pd.DataFrame) -> int:
        sub = t.loc[keys]
        return len(
            set(zip(sub["category"], sub["code_lo"], strict=True))
            | set(zip(sub["category"], sub["code_hi"], strict=True))
        )

    if len(set(key_sets.values())) == 1:
        keys = pd.Index(sorted(next(iter(key_sets.values()))))
        for b in names[1:]:
            check_gold(names[0], b, keys)
        credits = {n: indexed[n].loc[keys, "credit"].to_numpy() for n in names}
        table = compare_models(credits, n_boot=n_boot, n_perm=n_boot, seed=seed, alpha=alpha)
        npr = n_products(keys, indexed[names[0]])
        for rec in table.to_dict("records"):
            rows.append({**rec, "n_products": npr, "n_pairs": len(keys)})
    else:
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                keys = pd.Index(sorted(key_sets[a] & key_sets[b]))
                if len(keys) == 0:
                    rows.append({"model_a": a, "model_b": b, "n_products": 0, "n_pairs": 0})
                    continue
                check_gold(a, b, keys)
                credits = {
                    a: indexed[a].loc[keys, "credit"].to_numpy(),
                    b: indexed[b].loc[keys, "credit"].to_numpy(),
                }
                rec = compare_models(credits, n_boot=n_boot, n_perm=n_boot, seed=seed, alpha=alpha)
                rows.append(
                    {
                        **rec.iloc[0].to_dict(),
                        "n_products": n_products(keys, indexed[a]),
                        "n_pairs": len(keys),
                    }
                )
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
                "acc_a": _num(r.get("acc_a")),
                "acc_b": _num(r.get("acc_b")),
                "diff": _num(r.get("diff")),
                "ci_lo": _num(lo),
                "ci_hi": _num(hi),
                "p_value": _num(r.get("p_value")),
                "p_holm": _num(ph),
                "is_resolved": resolved,
            }
        )
    return out


def trivial_policies(
    category: object,
    product_code: object,
    gold: object,
    gold_pairs: pd.DataFrame | None,
    *,
    n_boot: int = 10000,
    seed: int = 42,
    pair_file: str = "the gold pair file",
) -> list[dict[str, object]]:
    """The three trivial policies of BENCHMARK.md section 4 as JSON-ready records.

    ``category``/``product_code``/``gold``: the reference products and gold the random and
    lower-code policies are scored on. ``gold_pairs``: the gold pair file (columns
    ``product_code_1, higher_rated_product``) for the position audit, or None to skip it.

    Flags (per metric, from :mod:`warehouse.metrics.policies`): ``beats_chance`` when the CI lies
    entirely above chance, ``differs_from_chance`` when it excludes chance on either side (a
    policy significantly BELOW chance means its mirror image beats chance: equally an artifact).
    A policy's top-level ``beats_chance``/``differs_from_chance`` are its PAIRWISE-ACCURACY
    flags; ``flagged_metrics`` lists every metric whose CI lies entirely above chance (Recall
    flags of "lower code wins" can come from the downward bias of Recall replicates).
    Random: analytical expectations (macro accuracy 0.5 too; no pooled value). Lower code wins:
    main-table BCa for the six Table-2 metrics plus macro/pooled points (``compute_all``).
    """
    cat = as_category_array(category)
    g = np.asarray(gold, dtype=np.float64)
    _, sizes = np.unique(cat.astype(str), return_counts=True)
    n_pairs = int((sizes * (sizes - 1) // 2).sum())
    chance = random_policy_expected(cat)
    chance_all = {**chance, "pairwise_accuracy_macro": 0.5}
    out = []
    out.append(
        {
            "name": "random",
            "description": POLICY_DESCRIPTIONS["random"],
            "ci_method": "analytical",
            "n_products": len(cat),
            "n_pairs": n_pairs,
            "metrics": {
                m: {
                    **_interval(v),
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
    )
    if gold_pairs is not None:
        s1 = slot1_wins_accuracy(gold_pairs)
        out.append(
            {
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
        )
    codes = np.array(
        [normalize_code(c) for c in np.asarray(product_code, dtype=object)], dtype=object
    )
    if all(isinstance(c, int) for c in codes):
        pred = -codes.astype(np.float64)
        with single_thread_blas():
            lcw = lower_code_wins(cat, codes.astype(np.float64), g, n_boot=n_boot, seed=seed)
        points = compute_all(cat, g, pred)
        metrics = {m: _policy_metric(v) for m, v in lcw.items()}
        for m in ("pairwise_accuracy_macro", "pairwise_accuracy_pooled"):
            metrics[m] = {
                **_interval(points[m]),
                "chance": 0.5 if m == "pairwise_accuracy_macro" else None,
                "beats_chance": False,
                "differs_from_chance": False,
            }
        out.append(
            {
                "name": "lower_code_wins",
                "description": POLICY_DESCRIPTIONS["lower_code_wins"],
                "ci_method": "bca_main_table",
                "n_products": len(cat),
                "n_pairs": n_pairs,
                "metrics": metrics,
                "beats_chance": bool(lcw["pairwise_accuracy"]["beats_chance"]),
                "differs_from_chance": bool(lcw["pairwise_accuracy"]["differs_from_chance"]),
                "flagged_metrics": [m for m, v in lcw.items() if v["beats_chance"]],
            }
        )
    return out


def _policy_metric(v: Mapping[str, object]) -> dict[str, object]:
    return {
        **_interval(v["point"], v["lo"], v["hi"]),
        "chance": _num(v["chance"]),
        "beats_chance": bool(v["beats_chance"]),
        "differs_from_chance": bool(v["differs_from_chance"]),
    }


def delta_slice(pairs: pd.DataFrame, delta_of: str) -> dict[str, object]:
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
                "delta_min": _num(r["delta_min"]),
                "delta_max": _num(r["delta_max"]),
                "n_pairs": int(r["n_pairs"]),
                "accuracy": _num(r["accuracy"]),
            }
            for r in table.to_dict("records")
        ],
    }


def welch_clear_pairs(rating_stats: pd.DataFrame, pairs: pd.DataFrame) -> np.ndarray:
    """Per pair of ``pairs`` (:func:`pair_table`): True when Welch's t-test on the two products'
    ratings gives p < .05 (``rating_stats``: ``category, product_code, mean, var, n`` with the
    sample variance). Pairs with a product lacking two ratings are ambiguous."""
    from scipy import stats

    idx = {
        (str(c), normalize_code(p)): (m, v, n)
        for c, p, m, v, n in rating_stats[
            ["category", "product_code", "mean", "var", "n"]
        ].itertuples(index=False)
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


def clear_slice(pairs: pd.DataFrame, is_clear: np.ndarray) -> list[dict[str, object]]:
    """Accuracy of clear vs ambiguous pairs
    (:func:`warehouse.metrics.accuracy_clear_vs_ambiguous`)."""
    if len(pairs) == 0:
        return []
    table = accuracy_clear_vs_ambiguous(pairs["credit"], is_clear)
    return [
        {"slice": r["slice"], "n_pairs": int(r["n_pairs"]), "accuracy": _num(r["accuracy"])}
        for r in table.to_dict("records")
    ]


def calibration(pairs: pd.DataFrame, confidence_by_code: Mapping, n_bins: int = ECE_BINS) -> dict:
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
        "ece": _num(ece),
        "n_bins": n_bins,
        "n_pairs": len(conf),
        "pair_confidence": "mean of the two products' confidence",
    }


# --------------------------------------------------------------------------- files


@dataclass
class PredictionFile:
    """One prediction file, read and structurally checked (not yet matched to the gold)."""

    name: str
    path: Path
    frame: pd.DataFrame
    gold_column: str | None
    has_confidence: bool


def load_predictions(path: str | Path) -> PredictionFile:
    """Read a prediction CSV (``category, product_code, predicted_score``; extra columns kept).

    The gold column is ``true_rank`` if present, else ``true_score``, else none. Raises
    :class:`DataValidationError` naming the file (and column) when it cannot be read or lacks a
    required column. Values are checked later, against the known products
    (:func:`evaluate_files` via :func:`warehouse.metrics.validate_predictions`).
    """
    path = Path(path)
    if not path.is_file():
        raise DataValidationError(str(path), "file not found", "give the path of a CSV file")
    try:
        frame = pd.read_csv(path, dtype={"category": str, "product_code": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise DataValidationError(
            str(path), f"not a readable CSV ({exc})", "save the predictions as UTF-8 CSV"
        ) from exc
    frame.columns = [str(c).strip() for c in frame.columns]
    for col in REQUIRED_COLUMNS:
        if col not in frame.columns:
            raise DataValidationError(
                str(path),
                f"missing column '{col}' (has {list(frame.columns)})",
                "prediction files need the columns category, product_code, predicted_score",
                column=col,
            )
    gold_column = next((c for c in GOLD_COLUMNS if c in frame.columns), None)
    return PredictionFile(
        name=path.stem,
        path=path,
        frame=frame,
        gold_column=gold_column,
        has_confidence="confidence" in frame.columns,
    )


@dataclass
class Reference:
    """What predictions are scored against.

    ``known``: ``category, product_code`` (normalized) and, for the warehouse, ``gold``;
    ``gold_pairs``: the gold pair file for the position audit; ``rating_stats``: per-product
    rating mean/var/n (warehouse only) for the Welch slice; ``public_gold``: ``(category,
    code) -> true_rank`` of the public files (file mode), to name the data origin.
    """

    mode: str
    known: pd.DataFrame
    data_origin: str
    gold_pairs: pd.DataFrame | None
    pair_file: str
    rating_stats: pd.DataFrame | None = None
    public_gold: dict = field(default_factory=dict)


def _public_reference(settings) -> Reference:
    from warehouse.sources import registry
    from warehouse.sources.public import read_oof_predictions

    oof = read_oof_predictions(settings)[0].frame
    known = (
        oof[["category", "product_code", "true_rank"]]
        .drop_duplicates(["category", "product_code"])
        .reset_index(drop=True)
    )
    known["product_code"] = [normalize_code(c) for c in known["product_code"]]
    pairs_path = registry.resolve("tastebench_gold_pairs", settings)
    pairs = pd.read_csv(pairs_path)
    public_gold = {
        (str(c), p): float(g)
        for c, p, g in known[["category", "product_code", "true_rank"]].itertuples(index=False)
    }
    return Reference(
        mode="file",
        known=known[["category", "product_code"]],
        data_origin="tastebench_public",
        gold_pairs=pairs,
        pair_file=str(pairs_path),
        public_gold=public_gold,
    )


def _warehouse_reference(db_path: Path) -> Reference:
    import duckdb

    if not db_path.exists():
        raise WarehouseError(
            f"no warehouse at {db_path}. Fix: run `tastebench build` (or `make build`) first, "
            "pass --db, or score against the files' own gold with --gold file."
        )
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        try:
            known = con.sql(
                "select category, product_code, panel_mean as gold, data_origin "
                "from marts.fct_panel_means where is_analog order by category, product_code"
            ).df()
        except duckdb.CatalogException as exc:
            raise WarehouseError(
                f"{db_path} has no marts.fct_panel_means ({exc}). Fix: rebuild the warehouse."
            ) from exc
        rating_stats = con.sql(
            "select category, product_code, avg(similarity) as mean, "
            "var_samp(similarity) as var, count(similarity) as n "
            "from staging.stg_nectar__ratings "
            "where is_benchmark_category and is_benchmark_year and similarity is not null "
            "group by category, product_code"
        ).df()
        pairs = con.sql(
            "select pair_id, category, product_code_1, product_code_2, "
            "winner_product_code as higher_rated_product from staging.stg_tastebench__gold_pairs"
        ).df()
    finally:
        con.close()
    if known.empty:
        raise WarehouseError(f"{db_path}: marts.fct_panel_means has no analogs to score against.")
    known["product_code"] = [normalize_code(c) for c in known["product_code"]]
    origins = sorted(known["data_origin"].dropna().unique())
    return Reference(
        mode="warehouse",
        known=known[["category", "product_code", "gold"]],
        data_origin=origins[0] if len(origins) == 1 else "|".join(origins),
        gold_pairs=pairs,
        pair_file=f"{db_path}: staging.stg_tastebench__gold_pairs",
        rating_stats=rating_stats,
    )


def resolve_gold_mode(gold: str | None, files: Sequence[PredictionFile]) -> str:
    """``gold`` as given, or the default: ``file`` when every file carries a gold column."""
    if gold is None:
        return "file" if all(f.gold_column for f in files) else "warehouse"
    if gold not in GOLD_MODES:
        raise WarehouseError(f"unknown gold {gold!r}. Fix: use --gold file or --gold warehouse.")
    if gold == "file":
        for f in files:
            if f.gold_column is None:
                raise DataValidationError(
                    str(f.path),
                    "--gold file but the file has no gold column",
                    "add true_rank (or true_score), or use --gold warehouse",
                    column="true_rank",
                )
    return gold


def load_reference(mode: str, db_path: Path | None = None, settings=None) -> Reference:
    """The known products and gold for ``mode`` (see :class:`Reference`)."""
    from warehouse.config import load_settings

    settings = settings or load_settings(db_path=db_path)
    if mode == "file":
        return _public_reference(settings)
    return _warehouse_reference(Path(db_path) if db_path else settings.db_path)


def _scored_frame(f: PredictionFile, ref: Reference) -> tuple[pd.DataFrame, dict]:
    """Validate ``f`` against the reference; return the rows to score and the coverage record."""
    cov = validate_predictions(
        f.frame,
        ref.known,
        source=str(f.path),
        gold_column=f.gold_column if ref.mode == "file" else None,
    )
    df = pd.DataFrame(
        {
            "category": f.frame["category"].astype(str).to_numpy(),
            "product_code": [normalize_code(c) for c in f.frame["product_code"]],
            "pred": pd.to_numeric(f.frame["predicted_score"]).to_numpy(dtype=np.float64),
        }
    )
    if ref.mode == "file":
        df["gold"] = pd.to_numeric(f.frame[f.gold_column]).to_numpy(dtype=np.float64)
    else:
        gold = ref.known.set_index(["category", "product_code"])["gold"]
        df["gold"] = [gold[(c, p)] for c, p in zip(df["category"], df["product_code"], strict=True)]
    if f.has_confidence:
        raw = f.frame["confidence"]
        conf = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(~np.isfinite(conf) | (conf < 0) | (conf > 1))
        if bad.size:
            raise DataValidationError(
                str(f.path),
                f"confidence {raw.iloc[bad[0]]!r} is not a number in [0, 1]",
                "give every row a confidence between 0 and 1 (or drop the column)",
                row=int(bad[0]) + 2,
                column="confidence",
            )
        df["confidence"] = conf
    coverage = {
        "n_expected": cov.n_expected,
        "n_present": cov.n_present,
        "coverage": _num(cov.coverage),
        "missing_products": [{"category": c, "product_code": p} for c, p in cov.missing],
    }
    return df, coverage


def evaluate_files(
    paths: Sequence[str | Path],
    gold: str | None = None,
    n_boot: int = 10000,
    seed: int = 42,
    db_path: str | Path | None = None,
    *,
    settings=None,
    alpha: float = ALPHA,
) -> dict[str, object]:
    """Score prediction files; return the JSON contract of docs/evaluate.md.

    ``gold``: ``"file"`` (each file's ``true_rank``/``true_score``; known products = the public
    out-of-fold product set), ``"warehouse"`` (``marts.fct_panel_means`` of the DuckDB file at
    ``db_path``, opened read-only) or None (``file`` when every file has a gold column).
    Products missing from a file are reported as coverage (never dropped silently); the file is
    scored on the products it covers.
    """
    if not paths:
        raise WarehouseError("no prediction files given. Fix: pass one or more CSV paths.")
    files = [load_predictions(p) for p in paths]
    seen: dict[str, Path] = {}
    for f in files:
        if f.name in seen:
            raise WarehouseError(
                f"{seen[f.name]} and {f.path} share the name '{f.name}' (models are named by "
                "file stem). Fix: rename one of them."
            )
        seen[f.name] = f.path
    mode = resolve_gold_mode(gold, files)
    ref = load_reference(mode, Path(db_path) if db_path else None, settings)

    models, tables, frames = [], {}, {}
    notes: list[str] = []
    for f in files:
        df, coverage = _scored_frame(f, ref)
        frames[f.name] = df
        score = score_model(
            df["category"], df["gold"], df["pred"], n_boot=n_boot, seed=seed, alpha=alpha
        )
        per_cat = score_per_category(
            df["category"], df["gold"], df["pred"], n_boot=n_boot, seed=seed, all_metrics=False
        )
        pairs = pair_table(df["category"], df["product_code"], df["gold"], df["pred"])
        tables[f.name] = pairs
        delta_of = "panel_mean" if mode == "warehouse" else f.gold_column
        slices: dict[str, object] = {"delta_quintiles": delta_slice(pairs, delta_of)}
        if ref.rating_stats is not None:
            slices["clear_vs_ambiguous"] = clear_slice(
                pairs, welch_clear_pairs(ref.rating_stats, pairs)
            )
            slices["clear_vs_ambiguous_note"] = (
                "clear = Welch t-test on the two products' 2025/2026 similarity ratings, p < .05"
            )
        else:
            slices["clear_vs_ambiguous"] = None
            slices["clear_vs_ambiguous_note"] = (
                "needs the warehouse's ratings: run with --gold warehouse (a gold file carries "
                "only ranks/scores, no ratings)"
            )
        calib = None
        if f.has_confidence:
            conf = {
                (c, p): v
                for c, p, v in zip(
                    df["category"], df["product_code"], df["confidence"], strict=True
                )
            }
            calib = calibration(pairs, conf)
        if coverage["coverage"] is not None and coverage["coverage"] < 1:
            notes.append(
                f"{f.name}: covers {coverage['n_present']} of {coverage['n_expected']} products "
                f"(coverage {coverage['coverage']:.3f}); scored on the covered products only"
            )
        models.append(
            {
                "name": f.name,
                "source_file": str(f.path),
                "gold_column": "panel_mean" if mode == "warehouse" else f.gold_column,
                "n_products": score["n_products"],
                "n_pairs": score["n_pairs"],
                "coverage": coverage["coverage"],
                "n_expected_products": coverage["n_expected"],
                "missing_products": coverage["missing_products"],
                "metrics": score["metrics"],
                "per_category": {
                    r["category"]: {
                        "n_products": int(r["n_products"]),
                        "n_pairs": int(r["n_pairs"]),
                        "pairwise_accuracy": _interval(
                            r["pairwise_accuracy"], r["ci_lo"], r["ci_hi"]
                        ),
                    }
                    for r in per_cat.to_dict("records")
                },
                "slices": slices,
                "calibration": calib,
            }
        )

    comparisons = compare_pair_tables(
        tables, n_boot=n_boot, seed=seed, alpha=alpha, sources={f.name: str(f.path) for f in files}
    )

    if mode == "warehouse":
        pol = ref.known
        pol_cat, pol_code, pol_gold = pol["category"], pol["product_code"], pol["gold"]
        policy_scope = "all analogs of marts.fct_panel_means"
        data_origin = ref.data_origin
    else:
        first = frames[files[0].name]
        pol_cat, pol_code, pol_gold = first["category"], first["product_code"], first["gold"]
        policy_scope = f"the products and gold of {files[0].name}"
        data_origin = "tastebench_public" if _is_public_gold(frames, ref) else "prediction_file"
    policies = trivial_policies(
        pol_cat,
        pol_code,
        pol_gold,
        ref.gold_pairs,
        n_boot=n_boot,
        seed=seed,
        pair_file=ref.pair_file,
    )
    for p in policies:
        if p["name"] != "slot1_wins":
            p["scope"] = policy_scope
    if data_origin == "simulation":
        notes.append(
            "gold comes from SIMULATED NECTAR ratings (data_origin = simulation): these numbers "
            "are not real results"
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "gold": mode,
        "data_origin": data_origin,
        "bootstrap": {
            "n_boot": int(n_boot),
            "seed": int(seed),
            "alpha": alpha,
            "main_table": MAIN_VARIANT,
            "per_category": PER_CATEGORY_VARIANT,
        },
        "models": models,
        "comparisons": comparisons,
        "trivial_policies": policies,
        "notes": notes,
    }


def _is_public_gold(frames: Mapping[str, pd.DataFrame], ref: Reference) -> bool:
    if not ref.public_gold:
        return False
    for df in frames.values():
        for c, p, g in zip(df["category"], df["product_code"], df["gold"], strict=True):
            if ref.public_gold.get((c, p)) != g:
                return False
    return True


# --------------------------------------------------------------------------- contract check

_INTERVAL = {"point": "num?", "ci_lo": "num?", "ci_hi": "num?"}
_SHAPE: dict[str, object] = {
    "schema_version": "int",
    "gold": ("file", "warehouse"),
    "data_origin": "str",
    "bootstrap": {"n_boot": "int", "seed": "int"},
    "models": [
        {
            "name": "str",
            "n_products": "int",
            "n_pairs": "int",
            "coverage": "num",
            "missing_products": [{"category": "str", "product_code": "any"}],
            "metrics": dict.fromkeys(METRIC_NAMES, _INTERVAL),
            "per_category": {
                "*": {"n_products": "int", "n_pairs": "int", "pairwise_accuracy": _INTERVAL}
            },
            "slices": {"delta_quintiles": {"delta_of": "str", "bins": "list"}},
        }
    ],
    "comparisons": [
        {
            "model_a": "str",
            "model_b": "str",
            "n_pairs": "int",
            "diff": "num?",
            "ci_lo": "num?",
            "ci_hi": "num?",
            "p_value": "num?",
            "p_holm": "num?",
            "is_resolved": "bool",
        }
    ],
    "trivial_policies": [
        {
            "name": tuple(POLICY_DESCRIPTIONS),
            "ci_method": "str",
            "metrics": {"*": {**_INTERVAL, "chance": "num?", "beats_chance": "bool"}},
            "beats_chance": "bool",
            "differs_from_chance": "bool",
            "flagged_metrics": "list",
        }
    ],
    "notes": "list",
}


def _check(value: object, spec: object, where: str) -> None:
    def fail(msg: str) -> None:
        raise ValueError(f"{where}: {msg}")

    if isinstance(spec, dict):
        if not isinstance(value, dict):
            fail(f"expected an object, got {type(value).__name__}")
        if "*" in spec:
            for k, v in value.items():
                if not isinstance(k, str):
                    fail(f"key {k!r} is not a string")
                _check(v, spec["*"], f"{where}.{k}")
            return
        for k, sub in spec.items():
            if k not in value:
                fail(f"missing key '{k}'")
            _check(value[k], sub, f"{where}.{k}")
    elif isinstance(spec, list):
        if not isinstance(value, list):
            fail(f"expected a list, got {type(value).__name__}")
        for i, item in enumerate(value):
            _check(item, spec[0], f"{where}[{i}]")
    elif isinstance(spec, tuple):
        if value not in spec:
            fail(f"{value!r} not one of {spec}")
    elif spec == "any":
        return
    else:
        optional = spec.endswith("?")
        kind = spec.rstrip("?")
        if value is None:
            if not optional:
                fail("null not allowed")
            return
        ok = {
            "int": isinstance(value, int) and not isinstance(value, bool),
            "num": isinstance(value, (int, float))
            and not isinstance(value, bool)
            and math.isfinite(value),
            "str": isinstance(value, str),
            "bool": isinstance(value, bool),
            "list": isinstance(value, list),
        }[kind]
        if not ok:
            fail(f"expected {kind}, got {value!r}")


def check_result_shape(result: Mapping[str, object]) -> None:
    """Raise ``ValueError`` (with the JSON path) unless ``result`` follows the documented
    contract (docs/evaluate.md). Extra keys are allowed; listed keys and their types are not
    optional (``num?`` fields may be null)."""
    _check(result, _SHAPE, "$")
    names = [m["name"] for m in result["models"]]
    expected = {(a, b) for i, a in enumerate(names) for b in names[i + 1 :]}
    got = {(c["model_a"], c["model_b"]) for c in result["comparisons"]}
    if got != expected:
        raise ValueError(
            f"$.comparisons: expected every model pair {sorted(expected)}, got {sorted(got)}"
        )


# --------------------------------------------------------------------------- rendering


_SHORT = {
    "pairwise_accuracy": "pairwise",
    "spearman": "Spearman",
    "kendall_tau": "Kendall",
    "recall_at_1": "R@1",
    "recall_at_2": "R@2",
    "recall_at_3": "R@3",
    "pairwise_accuracy_macro": "macro",
    "pairwise_accuracy_pooled": "pooled",
}


def _fmt(iv: Mapping[str, object] | None, ci: bool = True) -> str:
    if not iv or iv.get("point") is None:
        return "-"
    text = f"{iv['point']:.3f}"
    if ci and iv.get("ci_lo") is not None and iv.get("ci_hi") is not None:
        text += f" [{iv['ci_lo']:.3f}, {iv['ci_hi']:.3f}]"
    return text


def render_table(result: Mapping[str, object], per_category: bool = False):
    """Rich renderables for ``result``: the main table (models, then trivial policies), the
    paired comparisons, the difficulty slices, optionally the per-category table, and notes."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    parts = []
    header = Text(
        f"gold: {result['gold']}   data_origin: {result['data_origin']}   "
        f"bootstrap: {result['bootstrap']['n_boot']} replicates, seed {result['bootstrap']['seed']}"
    )
    parts.append(header)
    if result["data_origin"] == "simulation":
        parts.append(
            Text("SIMULATED gold: these numbers are not real results.", style="bold yellow")
        )
    main = Table(title="TasteBench metrics (point [95% BCa])", show_lines=False)
    main.add_column("model")
    main.add_column("n", justify="right")
    main.add_column("coverage", justify="right")
    for m in METRIC_NAMES:
        main.add_column(_SHORT[m], justify="right")
    for model in result["models"]:
        main.add_row(
            model["name"],
            str(model["n_products"]),
            f"{model['coverage']:.3f}",
            *[_fmt(model["metrics"][m], m in BOOT_METRICS) for m in METRIC_NAMES],
        )
    main.add_section()
    for pol in result["trivial_policies"]:
        flag = " (!)" if pol["differs_from_chance"] else ""
        main.add_row(
            f"policy: {pol['name']}{flag}",
            "" if pol.get("n_products") is None else str(pol["n_products"]),
            "",
            *[_fmt(pol["metrics"].get(m)) for m in METRIC_NAMES],
            style="bold red" if pol["differs_from_chance"] else "dim",
        )
    parts.append(main)

    if result["comparisons"]:
        comp = Table(title="Paired comparisons (pairwise accuracy, Holm-corrected)")
        for col in ("model a", "model b", "pairs", "diff [95% CI]", "p", "p Holm", "resolved"):
            comp.add_column(col, justify="left" if col.startswith("model") else "right")
        for c in result["comparisons"]:
            diff = (
                "-"
                if c["diff"] is None
                else f"{c['diff']:+.3f} [{c['ci_lo']:+.3f}, {c['ci_hi']:+.3f}]"
            )
            comp.add_row(
                c["model_a"],
                c["model_b"],
                str(c["n_pairs"]),
                diff,
                "-" if c["p_value"] is None else f"{c['p_value']:.4f}",
                "-" if c["p_holm"] is None else f"{c['p_holm']:.4f}",
                "yes" if c["is_resolved"] else "no",
            )
        parts.append(comp)

    slices = Table(title="Difficulty slices (pairwise accuracy)")
    slices.add_column("model")
    first = result["models"][0]["slices"]
    delta_of = first["delta_quintiles"]["delta_of"]
    for b in range(1, 6):
        slices.add_column(f"|d {delta_of}| Q{b}", justify="right")
    has_clear = first.get("clear_vs_ambiguous") is not None
    if has_clear:
        slices.add_column("clear", justify="right")
        slices.add_column("ambiguous", justify="right")
    has_ece = any(m.get("calibration") for m in result["models"])
    if has_ece:
        slices.add_column("ECE", justify="right")
    for model in result["models"]:
        bins = {b["bin"]: b for b in model["slices"]["delta_quintiles"]["bins"]}
        row = [model["name"]]
        for b in range(1, 6):
            acc = bins.get(b, {}).get("accuracy")
            row.append("-" if acc is None else f"{acc:.3f} (n={bins[b]['n_pairs']})")
        if has_clear:
            ca = {s["slice"]: s for s in model["slices"]["clear_vs_ambiguous"] or []}
            for name in ("clear", "ambiguous"):
                s = ca.get(name)
                row.append(
                    "-"
                    if not s or s["accuracy"] is None
                    else f"{s['accuracy']:.3f} (n={s['n_pairs']})"
                )
        if has_ece:
            cal = model.get("calibration")
            row.append("-" if not cal or cal["ece"] is None else f"{cal['ece']:.3f}")
        slices.add_row(*row)
    parts.append(slices)
    if not has_clear:
        parts.append(Text(f"clear vs ambiguous: {first['clear_vs_ambiguous_note']}", style="dim"))

    if per_category:
        cats = sorted({c for m in result["models"] for c in m["per_category"]})
        pc = Table(title="Per-category pairwise accuracy (point [95% BCa, per-category variant])")
        pc.add_column("category")
        pc.add_column("n", justify="right")
        for m in result["models"]:
            pc.add_column(m["name"], justify="right")
        for c in cats:
            n = next(
                (
                    m["per_category"][c]["n_products"]
                    for m in result["models"]
                    if c in m["per_category"]
                ),
                0,
            )
            pc.add_row(
                c,
                str(n),
                *[
                    _fmt(m["per_category"].get(c, {}).get("pairwise_accuracy"))
                    for m in result["models"]
                ],
            )
        parts.append(pc)

    for note in result.get("notes", []):
        parts.append(Text(f"note: {note}", style="yellow"))
    for p in result["trivial_policies"]:
        if p["beats_chance"]:
            parts.append(
                Text(
                    f"(!) trivial policy {p['name']} beats chance on pairwise accuracy (CI above "
                    "chance): a construction artifact",
                    style="bold red",
                )
            )
        elif p["differs_from_chance"]:
            parts.append(
                Text(
                    f"(!) trivial policy {p['name']} is below chance beyond its CI: its mirror "
                    "image beats chance (a construction artifact to report)",
                    style="bold red",
                )
            )
        elif p["flagged_metrics"]:
            parts.append(
                Text(
                    f"trivial policy {p['name']}: CI above chance for "
                    f"{', '.join(p['flagged_metrics'])} only (Recall replicates are biased "
                    "downward; read with the pairwise flag, which is at chance)",
                    style="yellow",
                )
            )
    return Group(*parts)
