"""Model x metric x scope with point and CI for every out-of-fold model, plus the trivial
policies (is_trivial_policy); main-table BCa (BENCHMARK.md §4), the numbers of `tastebench
evaluate` on the same files."""

from warehouse.metrics import marts


def model(dbt, session):
    dbt.config(materialized="table", n_boot=10000, seed=42)
    oof = dbt.ref("fct_oof_predictions").pl()
    pairs = dbt.ref("stg_tastebench__gold_pairs").pl()
    return marts.agg_model_metrics(
        oof, pairs, n_boot=int(dbt.config.get("n_boot")), seed=int(dbt.config.get("seed"))
    )
