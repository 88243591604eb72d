"""The default stage's fits as rows: out-of-fold rows in the layout of ``marts.fct_oof_predictions``
(``source = 'warehouse_fit'``, gold = panel mean), one row per fit (configuration JSON, hash,
versions), and the frames of ``fct_food_oof_predictions`` and ``dim_food_fits`` built from them.
``cache_dir`` is an argument (the dbt entry points resolve it, :mod:`.marts`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from warehouse.ranking import models as mdl
from warehouse.ranking.ablation import default_model_fits, unfittable_reason
from warehouse.ranking.cache import canonical_json
from warehouse.ranking.design import Design
from warehouse.ranking.folds import fold_scheme
from warehouse.ranking.loocv import FitResult

SOURCE = "warehouse_fit"  # fct_oof_predictions.source of the warehouse's own fits
#: what the build's fit columns add to the ``fct_oof_predictions`` layout
FIT_COLUMNS = (
    "config_hash",
    "protocol",
    "config_json",
    "library_versions_json",
    "feature_encoders_json",
)
FOOD_OOF_SCHEMA = {
    "model_id": pl.String,
    "model_file_stem": pl.String,
    "model_name": pl.String,
    "feature_set": pl.String,
    "is_bench_variant": pl.Boolean,
    "source": pl.String,
    "fit_id": pl.String,
    "category": pl.String,
    "product_code": pl.Int32,
    "product_key": pl.String,
    "gold_column": pl.String,
    "gold_value": pl.Float64,
    "true_rank": pl.Float64,
    "true_score": pl.Float64,
    "predicted_score": pl.Float64,
    "data_origin": pl.String,
    "source_file": pl.String,
    **dict.fromkeys(FIT_COLUMNS, pl.String),
}


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


def food_oof_predictions(
    design: Design,
    public_oof: pl.DataFrame,
    encoders_json: str,
    cache_dir: Path | str,
    n_jobs: int,
    ensemble_models: Sequence[str],
    max_analogs: int,
) -> pl.DataFrame:
    """``marts.fct_food_oof_predictions``: the default stage's out-of-fold rows in the layout
    of ``fct_oof_predictions`` plus :data:`FIT_COLUMNS` (``dim_food_fits`` is read from them).
    Fits are read from / written to ``cache_dir``; LOOCV up to ``max_analogs`` analogs, grouped
    K-fold above; empty when :func:`.ablation.unfittable_reason` gives a reason (``max_analogs``
    = 0: off)."""
    if unfittable_reason(design, max_analogs) is not None:
        return pl.DataFrame(schema=FOOD_OOF_SCHEMA)
    fits = default_model_fits(
        design,
        public_oof,
        cache_dir,
        n_jobs,
        ensemble_models=ensemble_models,
        cv=fold_scheme(design.n, max_analogs),
    )
    rows = oof_prediction_rows(design, fits, config_hash=True)
    info = (
        fit_rows(fits)
        .select("fit_id", "protocol", "config_json", "library_versions_json")
        .with_columns(pl.lit(encoders_json).alias("feature_encoders_json"))
    )
    return rows.join(info, on="fit_id", how="left", maintain_order="left").select(
        pl.col(c).cast(t) for c, t in FOOD_OOF_SCHEMA.items()
    )


def food_fits_table(predictions: pl.DataFrame) -> pl.DataFrame:
    """``marts.dim_food_fits``: one row per fit of ``fct_food_oof_predictions`` (content hash =
    ``fit_id``, configuration, feature set, encoders, library versions, row count)."""
    return (
        predictions.group_by("fit_id", maintain_order=True)
        .agg(
            pl.col("model_id").first(),
            pl.col("model_name").first(),
            pl.col("feature_set").first(),
            *[pl.col(c).first() for c in FIT_COLUMNS],
            pl.len().cast(pl.Int64).alias("n_rows"),
            pl.col("data_origin").first(),
        )
        .with_columns(
            pl.col("model_name").is_in(list(mdl.SUPERVISED)).alias("is_supervised"),
            pl.col("model_name").is_in(list(mdl.DISTANCE)).alias("is_distance"),
            pl.col("model_name").str.starts_with("nested_").alias("is_ensemble"),
        )
        .sort("model_id")
    )
