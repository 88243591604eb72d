"""Paired comparisons of every pair of out-of-fold models on pairwise accuracy: paired bootstrap
CI, sign-flip p-value, Holm correction over all pairs (BENCHMARK.md §4)."""

from warehouse.metrics import marts


def model(dbt, session):
    dbt.config(materialized="table", n_boot=10000, seed=42)
    oof = dbt.ref("fct_oof_predictions").pl()
    return marts.agg_model_comparisons(
        oof, n_boot=int(dbt.config.get("n_boot")), seed=int(dbt.config.get("seed"))
    )
