"""Split-half reliability per iteration (1,000 iterations, seed 42; docs/benchmark.md §5)."""

from warehouse.human import marts


def model(dbt, session):
    dbt.config(materialized="table", n_iter=1000, seed=42)
    ratings = dbt.ref("stg_nectar__ratings").pl()
    products = dbt.ref("dim_products").pl()
    return marts.agg_split_half_reliability(
        ratings, products, n_iter=int(dbt.config.get("n_iter")), seed=int(dbt.config.get("seed"))
    )
