"""Per-category metrics of every out-of-fold model; pairwise-accuracy CI from the per-category
BCa variant (BENCHMARK.md §4)."""

from warehouse.metrics import marts


def model(dbt, session):
    dbt.config(materialized="table", n_boot=10000, seed=42)
    oof = dbt.ref("fct_oof_predictions").pl()
    return marts.agg_model_metrics_per_category(
        oof, n_boot=int(dbt.config.get("n_boot")), seed=int(dbt.config.get("seed"))
    )
