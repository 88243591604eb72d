"""What the ranking dbt Python models call (each model: read refs, call one function here).

* :func:`ranking_design`: the design from ``marts.dim_products``, ``marts.fct_panel_means``,
  ``seeds.categories``, ``seeds.nutrition_subset_columns`` and the feature marts (one frame per
  block with a ``vector`` list column), with the target-leak audit;
* :func:`default_model_fits`: the default model stage (five supervised models, two MMRF
  baselines, the nested BT + Gemini ensembles), fits read from / written to ``cache_dir``;
* :func:`oof_prediction_rows`: rows for ``marts.fct_oof_predictions`` (``source = 'warehouse'``,
  gold = panel mean), unioned by name with the public files;
* :func:`fit_rows`: one row per fit (configuration JSON, hash, versions) for a fits mart;
* :func:`ablation_fit_rows` / :func:`ablation_metrics_rows`: the ablation grid as far as the CLI
  has filled the cache (the build never fits the grid), scored with :mod:`warehouse.metrics`;
* :func:`run_ablation_grid`: the CLI entry that fits the grid into the cache.

``cache_dir`` is always an argument: the dbt model passes the build's fit-cache folder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from warehouse.ranking import models as mdl
from warehouse.ranking.ablation import cached_fits, default_jobs, grid_jobs, grid_metrics, run_grid
from warehouse.ranking.cache import FitCache, canonical_json
from warehouse.ranking.design import Design, FeatureSet, design_from_frames
from warehouse.ranking.guards import assert_no_target_leak
from warehouse.ranking.loocv import FitResult, Job, run_fits
from warehouse.ranking.nested import align_external, run_ensembles

SOURCE = "warehouse"
GEMINI_STEM = "llm_gemini_3_1_pro_preview_ingredients_image"


def ranking_design(
    products: pl.DataFrame,
    panel_means: pl.DataFrame,
    categories: pl.DataFrame,
    nutrition_subset_columns: pl.DataFrame,
    feature_frames: Mapping[str, pl.DataFrame],
    feature_set: str = "SNCTI",
    missing: str = "error",
) -> Design:
    """The analog design (+ references) for the ranking models; raises on a target leak."""
    design = design_from_frames(
        products.filter(
            pl.col("category").is_in(
                categories.filter(pl.col("is_benchmark"))["category"].to_list()
            )
        ),
        panel_means,
        feature_frames,
        categories=categories,
        subset_columns=nutrition_subset_columns,
        feature_set=feature_set,
        missing=missing,
    )
    assert_no_target_leak(design)
    return design


def external_predictions(design: Design, oof: pl.DataFrame, stem: str = GEMINI_STEM):
    """A published out-of-fold file's scores aligned with the design (``stg_tastebench__oof_
    predictions`` rows of ``model_file_stem = stem``)."""
    rows = oof.filter(pl.col("model_file_stem") == stem)
    return align_external(design, rows, stem)


def default_model_fits(
    design: Design,
    oof: pl.DataFrame,
    cache_dir: Path | str,
    n_jobs: int = 2,
    ensemble_models: Sequence[str] = ("bradley_terry",),
) -> list[FitResult]:
    """The default stage: every model's main configuration and the nested ensembles of each of
    ``ensemble_models`` with Gemini (NNLS, rank average, mean)."""
    cache = FitCache(cache_dir)
    jobs = default_jobs(design)
    fits = run_fits(design, jobs, cache, n_jobs)
    gemini = external_predictions(design, oof)
    for model in ensemble_models:
        job = Job(model, FeatureSet.parse(design.feature_set))
        fits += run_ensembles(design, job, gemini, "gemini", cache, n_jobs)
    return fits


def oof_prediction_rows(
    design: Design, fits: Sequence[FitResult], config_hash: bool = False
) -> pl.DataFrame:
    """Rows in the contract layout of ``marts.fct_oof_predictions`` (without the derived
    ``prediction_key``); ``config_hash=True`` adds the fit's configuration hash (also in
    :func:`fit_rows`, joinable on ``fit_id``)."""
    gold = design.keys.select("category", "product_code").with_columns(
        pl.Series("gold_value", design.target)
    )
    frames = []
    for f in fits:
        frames.append(
            f.frame(design)
            .join(gold, on=["category", "product_code"], how="left", maintain_order="left")
            .select(
                pl.lit(f"{f.model_key}:{f.fit_id[:12]}").alias("model_id"),
                pl.lit(None, pl.String).alias("model_file_stem"),
                pl.lit(f.model).alias("model_name"),
                pl.lit(f.feature_set).alias("feature_set"),
                pl.lit(False).alias("is_bench_variant"),
                pl.lit(SOURCE).alias("source"),
                pl.lit(f.fit_id).alias("fit_id"),
                pl.col("category"),
                pl.col("product_code").cast(pl.Int32),
                (pl.col("category") + ":" + pl.col("product_code").cast(pl.String)).alias(
                    "product_key"
                ),
                pl.lit("panel_mean").alias("gold_column"),
                pl.col("gold_value"),
                pl.lit(None, pl.Float64).alias("true_rank"),
                pl.lit(None, pl.Float64).alias("true_score"),
                pl.col("predicted_score"),
                pl.lit(design.data_origin).alias("data_origin"),
                pl.lit(None, pl.String).alias("source_file"),
                *([pl.lit(f.config_hash).alias("config_hash")] if config_hash else []),
            )
        )
    return pl.concat(frames) if frames else pl.DataFrame()


def fit_rows(fits: Sequence[FitResult]) -> pl.DataFrame:
    """One row per fit: ids, protocol, configuration JSON, versions, whether it was read."""
    rows = []
    for f in fits:
        rows.append(
            {
                "fit_id": f.fit_id,
                "model_id": f"{f.model_key}:{f.fit_id[:12]}",
                "model_name": f.model,
                "feature_set": f.feature_set,
                "protocol": f.protocol,
                "config_hash": f.config_hash,
                "config_json": canonical_json(f.config),
                "library_versions_json": json.dumps(f.meta.get("versions", {}), sort_keys=True),
                "is_from_cache": f.from_cache,
                "n_rows": int(f.meta.get("n_rows", len(f.predictions))),
                "data_origin": str(f.meta.get("data_origin", "unknown")),
            }
        )
    return pl.DataFrame(rows)


def ablation_fit_rows(design: Design, cache_dir: Path | str) -> tuple[list[FitResult], int]:
    """The ablation grid's fits already in the cache, and how many grid jobs are missing
    (``tastebench`` fills them; the build only reads)."""
    jobs, _ = grid_jobs(design)
    found, missing = cached_fits(design, jobs, FitCache(cache_dir))
    return found, len(missing)


def ablation_metrics_rows(design: Design, cache_dir: Path | str, n_boot: int = 0) -> pl.DataFrame:
    """``agg_ablation_metrics``: one row per cached grid fit with its metrics."""
    found, _ = ablation_fit_rows(design, cache_dir)
    if not found:
        return pl.DataFrame()
    return grid_metrics(design, found, n_boot=n_boot)


def run_ablation_grid(
    design: Design,
    cache_dir: Path | str,
    n_jobs: int = 2,
    supervised: Sequence[str] = mdl.SUPERVISED,
    distance: Sequence[str] = mdl.DISTANCE,
) -> list[FitResult]:
    """Fit every missing grid job into ``cache_dir`` (the CLI command; minutes, not seconds)."""
    return run_grid(design, FitCache(cache_dir), n_jobs, supervised, distance)
