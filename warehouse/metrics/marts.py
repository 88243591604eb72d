"""What the metrics marts' dbt Python models call: polars in, polars out.

``python_models/marts/metrics/agg_model_metrics.py`` -> :func:`agg_model_metrics` ->
:func:`warehouse.metrics.tables.model_metrics_table` (and likewise for the per-category and
comparison marts). The tables are computed by the scoring engine (:mod:`.scoring`) on polars
frames and numpy arrays; missing values are null, never NaN.
"""

from __future__ import annotations

import polars as pl

from . import tables


def agg_model_metrics(
    oof: pl.DataFrame, gold_pairs: pl.DataFrame, *, n_boot: int, seed: int
) -> pl.DataFrame:
    """One row per (model or trivial policy, metric, scope) of ``fct_oof_predictions``."""
    return tables.model_metrics_table(oof, gold_pairs, n_boot=n_boot, seed=seed)


def agg_model_metrics_per_category(oof: pl.DataFrame, *, n_boot: int, seed: int) -> pl.DataFrame:
    """One row per (model, category) of ``fct_oof_predictions``."""
    return tables.model_metrics_per_category_table(oof, n_boot=n_boot, seed=seed)


def agg_model_comparisons(oof: pl.DataFrame, *, n_boot: int, seed: int) -> pl.DataFrame:
    """One row per unordered pair of models of ``fct_oof_predictions``."""
    return tables.model_comparisons_table(oof, n_boot=n_boot, seed=seed)
