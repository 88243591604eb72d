"""The default model stage and the ablation grid: which (model, feature set) jobs, and their
metrics in one frame an analyst can pivot.

* **Default stage** (every build): the five supervised models on the design's feature set
  (``SNCTI`` when every block exists), the two MMRF baselines on ``NCI`` (the published main
  distance configuration; letters without a block are dropped), and the nested ensembles of BT
  with the external model (NNLS, rank average, mean).
* **Ablation grid** (CLI): every supervised model on ``S`` + each of the 15 non-empty subsets of
  {N, C, T, I}; both distance models on the 15 subsets; and for each block *variant* in the
  design (``C:<encoder>``, ``C:<aggregation rule>``...) the full feature sets with that block
  swapped in. Sets that need an absent block are skipped and listed.

``cv`` (a :class:`.folds.GroupedKFold`, None = LOOCV) sets the supervised jobs' protocol: the
build passes the one :func:`.folds.fold_scheme` picks for the design's size. Fits are read from /
written to ``cache_dir``, always an argument (the dbt entry points resolve it, :mod:`.marts`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.ranking import models as mdl
from warehouse.ranking.cache import FitCache
from warehouse.ranking.design import (
    CONTENT_LETTERS,
    Design,
    DesignError,
    FeatureSet,
    ablation_feature_sets,
)
from warehouse.ranking.folds import GroupedKFold, fold_scheme
from warehouse.ranking.loocv import FitResult, Job, fit_key, result_from_cache, run_fits
from warehouse.ranking.nested import external_predictions, run_ensembles

MAIN_DISTANCE_LETTERS = "NCI"
DEFAULT_ENSEMBLE_MODELS = ("bradley_terry",)
MIN_ANALOGS_PER_CATEGORY = 5


def available_letters(design: Design, references: bool = False) -> set[str]:
    blocks = design.reference_blocks if references else design.blocks
    return {name for name in blocks if ":" not in name}


def _usable(fs: FeatureSet, design: Design, distance: bool) -> bool:
    have = set(design.blocks) & (set(design.reference_blocks) if distance else set(design.blocks))
    return all(b in have for b in fs.block_names)


def default_jobs(
    design: Design,
    supervised: Sequence[str] = mdl.SUPERVISED,
    distance: Sequence[str] = mdl.DISTANCE,
    cv: GroupedKFold | None = None,
) -> list[Job]:
    fs = FeatureSet.parse(design.feature_set)
    jobs = [Job(m, fs, cv=cv) for m in supervised]
    letters = "".join(c for c in MAIN_DISTANCE_LETTERS if c in available_letters(design, True))
    if letters:
        jobs += [Job(m, FeatureSet(letters)) for m in distance]
    return jobs


def grid_jobs(
    design: Design,
    supervised: Sequence[str] = mdl.SUPERVISED,
    distance: Sequence[str] = mdl.DISTANCE,
    cv: GroupedKFold | None = None,
) -> tuple[list[Job], list[str]]:
    """(jobs, skipped feature-set names) of the full ablation grid."""
    jobs, skipped = [], []
    sets = [(fs, False) for fs in ablation_feature_sets("S")]
    sets += [(fs, True) for fs in ablation_feature_sets("")]
    full_sup = "S" + "".join(c for c in CONTENT_LETTERS if c in available_letters(design))
    full_dist = "".join(c for c in CONTENT_LETTERS if c in available_letters(design, True))
    for name in sorted(b for b in design.blocks if ":" in b):
        letter, _, variant = name.partition(":")
        if letter in full_sup:
            sets.append((FeatureSet(full_sup, ((letter, variant),)), False))
        if letter in full_dist:
            sets.append((FeatureSet(full_dist, ((letter, variant),)), True))
    for fs, is_dist in sets:
        if not _usable(fs, design, is_dist):
            skipped.append(fs.name + (" (distance)" if is_dist else ""))
            continue
        if is_dist and (reason := _unscorable(design, fs)) is not None:
            skipped.append(f"{fs.name} (distance: {reason})")
            continue
        if is_dist:
            jobs += [Job(m, fs) for m in distance]
        else:
            jobs += [Job(m, fs, cv=cv) for m in supervised]
    return jobs, skipped


def _unscorable(design: Design, fs: FeatureSet) -> str | None:
    """Why the MMRF baselines cannot score every analog on ``fs`` (None when they can): a
    block with low coverage (C on the small FoodAtlas extracts) leaves whole categories without
    a reference vector, and an analog with no modality is an error, never a made-up score. Cosine
    is the stricter metric (a zero standardized row has no cosine), so one cheap, label-free
    cosine pass decides for both."""
    from warehouse.ranking.distance import mmrf_scores

    try:
        mmrf_scores(design, fs.block_names, "cosine")
    except DesignError as exc:
        return str(exc).removeprefix("distance baseline: ")
    return None


def run_grid(
    design: Design,
    cache: FitCache,
    n_jobs: int = 2,
    supervised: Sequence[str] = mdl.SUPERVISED,
    distance: Sequence[str] = mdl.DISTANCE,
    cv: GroupedKFold | None = None,
) -> list[FitResult]:
    jobs, _ = grid_jobs(design, supervised, distance, cv)
    return run_fits(design, jobs, cache, n_jobs)


def cached_fits(
    design: Design, jobs: Sequence[Job], cache: FitCache
) -> tuple[list[FitResult], list[Job]]:
    """The jobs already in the cache (read, never fitted) and the ones missing."""
    found, missing = [], []
    for job in jobs:
        cfg, ch, fid = fit_key(design, job)
        hit = result_from_cache(job, cfg, ch, fid, cache)
        (found if hit is not None else missing).append(hit if hit is not None else job)
    return found, missing


def grid_metrics(
    design: Design, fits: Sequence[FitResult], n_boot: int = 0, seed: int = 42
) -> pl.DataFrame:
    """One row per fit: model, feature set, letters/variant flags, the eight point metrics of
    :func:`warehouse.metrics.compute_all` and (``n_boot > 0``) the main-table BCa interval of
    pairwise accuracy."""
    from warehouse.metrics import compute_all

    rows = []
    for f in fits:
        fs = FeatureSet.parse(f.feature_set)
        vals = compute_all(design.categories, design.target, f.predictions)
        row = {
            "model": f.model,
            "feature_set": f.feature_set,
            "letters": fs.letters,
            "variant": ",".join(f"{k}={v}" for k, v in fs.variants) or None,
            "is_distance": f.model in mdl.DISTANCE,
            **{f"has_{c.lower()}": c in fs.letters for c in CONTENT_LETTERS},
            "n_content_blocks": sum(c in fs.letters for c in CONTENT_LETTERS),
            **vals,
            "pairwise_accuracy_lo": np.nan,
            "pairwise_accuracy_hi": np.nan,
            "config_hash": f.config_hash,
            "fit_id": f.fit_id,
            "data_origin": design.data_origin,
        }
        if n_boot:
            _, lo, hi = f.pairwise_accuracy_ci(design, n_boot, seed)
            row["pairwise_accuracy_lo"], row["pairwise_accuracy_hi"] = lo, hi
        rows.append(row)
    return pl.DataFrame(rows).sort("model", "n_content_blocks", "feature_set")


def unfittable_reason(design: Design, max_analogs: int) -> str | None:
    """Why the default stage cannot run on ``design`` (None when it can): every category needs
    :data:`MIN_ANALOGS_PER_CATEGORY` analogs (the public design's smallest has 5). A tiny bundle
    (the test fixture: 3 + 2 analogs) leaves the ranking marts empty; its target-leak audit is
    meaningless too (a 384-d block has columns at |r| >= .99 over 5 products by chance). Size is
    no reason: above ``max_analogs`` analogs (a scaled simulation) the stage runs grouped K-fold
    instead of LOOCV (:func:`.folds.fold_scheme`). ``max_analogs`` = 0: the stage is switched
    off (``tastebench build --no-food-models``; the dbt var ``food_models_max_analogs``)."""
    if max_analogs <= 0:
        return "the food-model stage is switched off (dbt var food_models_max_analogs = 0)"
    counts = design.keys.group_by("category").len()
    small = counts.filter(pl.col("len") < MIN_ANALOGS_PER_CATEGORY).sort("category")
    if small.height:
        row = small.row(0, named=True)
        return (
            f"category {row['category']} has {row['len']} analogs (< {MIN_ANALOGS_PER_CATEGORY}; "
            f"{small.height} such categories)"
        )
    return None


def default_model_fits(
    design: Design,
    oof: pl.DataFrame,
    cache_dir: Path | str,
    n_jobs: int = 2,
    ensemble_models: Sequence[str] = DEFAULT_ENSEMBLE_MODELS,
    cv: GroupedKFold | None = None,
) -> list[FitResult]:
    """The default stage: every model's main configuration and, for every supervised model, its
    ensembles with Gemini: rank average and mean always (no training beyond the model's own
    out-of-fold fit); the nested NNLS for ``ensemble_models`` (BT: 23,005 warm-started pair
    fits, minutes) and for any other model whose nested base is already in the cache
    (``tastebench train food --grid ensembles`` fits them: hours for RankSVM and LightGBM),
    never fitted here. ``cv``: None = LOOCV, else the grouped K-fold of the supervised models
    (:func:`.folds.fold_scheme`)."""
    cache = FitCache(cache_dir)
    jobs = default_jobs(design, cv=cv)
    fits = run_fits(design, jobs, cache, n_jobs)
    gemini = external_predictions(design, oof)
    fs = FeatureSet.parse(design.feature_set)
    for model in sorted(mdl.SUPERVISED, key=lambda m: (m not in ensemble_models, m)):
        fits += run_ensembles(
            design,
            Job(model, fs, cv=cv),
            gemini,
            "gemini",
            cache,
            n_jobs,
            nnls_if_cached=model not in ensemble_models,
        )
    return fits


def ablation_fit_rows(
    design: Design, cache_dir: Path | str, cv: GroupedKFold | None = None
) -> tuple[list[FitResult], int]:
    """The ablation grid's fits already in the cache, and how many grid jobs are missing
    (``tastebench`` fills them; the build only reads)."""
    jobs, _ = grid_jobs(design, cv=cv)
    found, missing = cached_fits(design, jobs, FitCache(cache_dir))
    return found, len(missing)


def ablation_metrics_rows(
    design: Design, cache_dir: Path | str, n_boot: int = 0, cv: GroupedKFold | None = None
) -> pl.DataFrame:
    """One row per cached grid fit with its metrics (:func:`grid_metrics`)."""
    found, _ = ablation_fit_rows(design, cache_dir, cv)
    if not found:
        return pl.DataFrame()
    return grid_metrics(design, found, n_boot=n_boot)


ABLATION_SCHEMA = {
    "model": pl.String,
    "feature_set": pl.String,
    "letters": pl.String,
    "variant": pl.String,
    "is_distance": pl.Boolean,
    "has_n": pl.Boolean,
    "has_c": pl.Boolean,
    "has_t": pl.Boolean,
    "has_i": pl.Boolean,
    "n_content_blocks": pl.Int64,
    "pairwise_accuracy": pl.Float64,
    "spearman": pl.Float64,
    "kendall_tau": pl.Float64,
    "recall_at_1": pl.Float64,
    "recall_at_2": pl.Float64,
    "recall_at_3": pl.Float64,
    "pairwise_accuracy_macro": pl.Float64,
    "pairwise_accuracy_pooled": pl.Float64,
    "pairwise_accuracy_lo": pl.Float64,
    "pairwise_accuracy_hi": pl.Float64,
    "config_hash": pl.String,
    "fit_id": pl.String,
    "data_origin": pl.String,
}


def ablation_table(
    design: Design,
    default_predictions: pl.DataFrame,
    cache_dir: Path | str,
    n_boot: int,
    seed: int,
    max_analogs: int,
) -> pl.DataFrame:
    """``agg_ablation_metrics``: one row per ablation-grid fit found in the cache (the build
    never fits the grid; ``tastebench train food --grid ablation`` does), with the eight point
    metrics, the main-table BCa interval of pairwise accuracy, whether the default stage
    (``default_predictions``, ``fct_food_oof_predictions``) produced it, and how many grid fits
    are still missing; empty when :func:`unfittable_reason` gives a reason."""
    found, n_missing = [], 0
    if unfittable_reason(design, max_analogs) is None:
        found, n_missing = ablation_fit_rows(design, cache_dir, fold_scheme(design.n, max_analogs))
    table = (
        grid_metrics(design, found, n_boot=n_boot, seed=seed)
        if found
        else pl.DataFrame(schema=ABLATION_SCHEMA)
    )
    defaults = default_predictions["fit_id"].unique().to_list()
    return table.select(
        (pl.col("model") + ":" + pl.col("feature_set")).alias("ablation_key"),
        *[pl.col(c).cast(t) for c, t in ABLATION_SCHEMA.items()],
        pl.col("fit_id").is_in(defaults).alias("is_default_stage"),
        pl.lit(len(found) + n_missing, pl.Int64).alias("n_grid_fits"),
        pl.lit(n_missing, pl.Int64).alias("n_grid_fits_missing"),
    )
