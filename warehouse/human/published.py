"""The published human-baseline figures, next to which every build prints its own."""

from __future__ import annotations

import numpy as np
import pandas as pd

from warehouse.human.metrics import alpha_from_coincidence

# Published human-baseline figures (BENCHMARK.md §5) that no public file carries directly.
PUBLISHED_CONSTANTS = {
    "kendall_w_median": (0.108, "BENCHMARK.md §5"),
    "panel3_accuracy": (0.685, "BENCHMARK.md §5"),
    "panel5_accuracy": (0.725, "BENCHMARK.md §5"),
}


def published_alpha_mean(coincidences: pd.DataFrame) -> float:
    """Mean ordinal α over blocks, recomputed from the published coincidence matrices."""
    alphas = []
    for _, g in coincidences.groupby(["category", "block_id"]):
        values = sorted(set(g["value_a"]) | set(g["value_b"]))
        idx = {v: i for i, v in enumerate(values)}
        m = np.zeros((len(values), len(values)))
        for a, b, c in g[["value_a", "value_b", "coincidence"]].itertuples(index=False):
            m[idx[a], idx[b]] = c
        alphas.append(alpha_from_coincidence(np.asarray(values, dtype=float), m, "ordinal"))
    return float(np.mean(alphas))


def compare_with_published(
    summary: pd.DataFrame,
    published_accuracy: pd.DataFrame,
    published_split_half: pd.DataFrame,
    published_coincidences: pd.DataFrame,
    data_origin: str,
) -> pd.DataFrame:
    """Side-by-side table: the warehouse's human-baseline figures vs the published ones."""
    acc = published_accuracy["pairwise_accuracy"].astype(float)
    published = {
        "n_blocks": (
            float(published_accuracy.groupby(["category", "block_id"]).ngroups),
            "individual_loo_accuracy.csv",
        ),
        "n_panelist_blocks": (float(len(published_accuracy)), "individual_loo_accuracy.csv"),
        "panelist_accuracy_median": (float(acc.median()), "individual_loo_accuracy.csv"),
        "panelist_accuracy_q25": (float(acc.quantile(0.25)), "individual_loo_accuracy.csv"),
        "panelist_accuracy_q75": (float(acc.quantile(0.75)), "individual_loo_accuracy.csv"),
        "alpha_mean": (published_alpha_mean(published_coincidences), "alpha_coincidence.csv"),
        "split_half_median": (
            float(published_split_half["split_half_pairwise_agreement"].median()),
            "split_half_iterations.csv",
        ),
        **PUBLISHED_CONSTANTS,
    }
    row = summary.iloc[0]
    rows = []
    for metric, (value, source) in published.items():
        ours = float(row[metric]) if metric in row and pd.notna(row[metric]) else float("nan")
        rows.append(
            {
                "metric": metric,
                "warehouse_value": ours,
                "published_value": value,
                "difference": ours - value,
                "published_source": source,
                "data_origin": data_origin,
            }
        )
    return pd.DataFrame(rows)
