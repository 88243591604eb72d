"""What the metrics marts' dbt Python models call: polars in, polars out.

``python_models/marts/metrics/agg_model_metrics.py`` -> :func:`agg_model_metrics` ->
:func:`warehouse.metrics.tables.model_metrics_table` (and likewise for the per-category and
comparison marts). The tables are computed by the scoring engine (:mod:`.scoring`) on polars
frames and numpy arrays; missing values are null, never NaN.

Each table is a pure function of its input frames and parameters (10,000 bootstrap resamples,
seeded): it is computed once per content and read back from the fit store's frames
(:func:`warehouse.files.cached_mart`) by every later build that reads the same predictions with
the same code.
"""

from __future__ import annotations

import polars as pl

from warehouse.config import load_settings
from warehouse.files import cached_mart

from . import tables


def agg_model_metrics(
    oof: pl.DataFrame, gold_pairs: pl.DataFrame, *, n_boot: int, seed: int
) -> pl.DataFrame:
    """One row per (model or trivial policy, metric, scope) of ``fct_oof_predictions``."""
    table = tables.model_metrics_table
    return cached_mart(_frames(), table, oof, gold_pairs, n_boot=n_boot, seed=seed)


def agg_model_metrics_per_category(oof: pl.DataFrame, *, n_boot: int, seed: int) -> pl.DataFrame:
    """One row per (model, category) of ``fct_oof_predictions``."""
    table = tables.model_metrics_per_category_table
    return cached_mart(_frames(), table, oof, n_boot=n_boot, seed=seed)


def agg_model_comparisons(oof: pl.DataFrame, *, n_boot: int, seed: int) -> pl.DataFrame:
    """One row per unordered pair of models of ``fct_oof_predictions``."""
    table = tables.model_comparisons_table
    return cached_mart(_frames(), table, oof, n_boot=n_boot, seed=seed)


def _frames():
    return load_settings().fits_dir
