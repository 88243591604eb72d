"""The published human-baseline figures, next to which every build prints its own (polars)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from warehouse.human.metrics import alpha_from_coincidence

# Published human-baseline figures (docs/benchmark.md §5) that no public file carries directly.
PUBLISHED_CONSTANTS = {
    "kendall_w_median": (0.108, "docs/benchmark.md §5"),
    "panel3_accuracy": (0.685, "docs/benchmark.md §5"),
    "panel5_accuracy": (0.725, "docs/benchmark.md §5"),
}


def published_alpha_mean(coincidences: pl.DataFrame) -> float:
    """Mean ordinal α over blocks (in ``(category, block_id)`` order), recomputed from the
    published coincidence matrices."""
    alphas = []
    blocks = coincidences.drop_nulls(["category", "block_id"]).sort(
        "category", "block_id", maintain_order=True
    )
    for _, g in blocks.group_by("category", "block_id", maintain_order=True):
        values = sorted(set(g["value_a"].to_list()) | set(g["value_b"].to_list()))
        idx = {v: i for i, v in enumerate(values)}
        m = np.zeros((len(values), len(values)))
        for a, b, c in g.select("value_a", "value_b", "coincidence").iter_rows():
            m[idx[a], idx[b]] = c
        alphas.append(alpha_from_coincidence(np.asarray(values, dtype=float), m, "ordinal"))
    return float(np.mean(alphas))


def _values(column: pl.Series) -> np.ndarray:
    """A float column's values without nulls and NaNs (what a skipna median/quantile sees)."""
    return column.cast(pl.Float64).drop_nulls().drop_nans().to_numpy()


def compare_with_published(
    summary: pl.DataFrame,
    published_accuracy: pl.DataFrame,
    published_split_half: pl.DataFrame,
    published_coincidences: pl.DataFrame,
    data_origin: str,
) -> pl.DataFrame:
    """Side-by-side table: the warehouse's human-baseline figures vs the published ones.

    Quantiles are numpy's (linear interpolation); a figure the warehouse lacks is null."""
    acc = _values(published_accuracy["pairwise_accuracy"])
    split = _values(published_split_half["split_half_pairwise_agreement"])
    published = {
        "n_blocks": (
            float(published_accuracy.select("category", "block_id").drop_nulls().unique().height),
            "individual_loo_accuracy.csv",
        ),
        "n_panelist_blocks": (float(published_accuracy.height), "individual_loo_accuracy.csv"),
        "panelist_accuracy_median": (float(np.median(acc)), "individual_loo_accuracy.csv"),
        "panelist_accuracy_q25": (float(np.quantile(acc, 0.25)), "individual_loo_accuracy.csv"),
        "panelist_accuracy_q75": (float(np.quantile(acc, 0.75)), "individual_loo_accuracy.csv"),
        "alpha_mean": (published_alpha_mean(published_coincidences), "alpha_coincidence.csv"),
        "split_half_median": (
            float(np.median(split)),
            "split_half_iterations.csv",
        ),
        **PUBLISHED_CONSTANTS,
    }
    row = summary.row(0, named=True)
    rows = []
    for metric, (value, source) in published.items():
        v = row.get(metric)
        ours = None if v is None or math.isnan(float(v)) else float(v)
        rows.append(
            {
                "metric": metric,
                "warehouse_value": ours,
                "published_value": float(value),
                "difference": None if ours is None else ours - value,
                "published_source": source,
                "data_origin": data_origin,
            }
        )
    schema = {
        "metric": pl.String,
        "warehouse_value": pl.Float64,
        "published_value": pl.Float64,
        "difference": pl.Float64,
        "published_source": pl.String,
        "data_origin": pl.String,
    }
    return pl.DataFrame(rows, schema=schema)
