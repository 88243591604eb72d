"""Model x metric x scope x ci_method with point and CI for every out-of-fold model, plus the
trivial policies (is_trivial_policy): published_bca (docs/benchmark.md §4) and the default methods
for the published files, the default only otherwise (docs/statistics.md); the numbers of
`tastebench evaluate --ci ...` on the same files."""

from warehouse.metrics import marts


def model(dbt, session):
    dbt.config(materialized="table", n_boot=10000, seed=42)
    oof = dbt.ref("fct_oof_predictions").pl()
    pairs = dbt.ref("stg_tastebench__gold_pairs").pl()
    return marts.agg_model_metrics(
        oof, pairs, n_boot=int(dbt.config.get("n_boot")), seed=int(dbt.config.get("seed"))
    )
