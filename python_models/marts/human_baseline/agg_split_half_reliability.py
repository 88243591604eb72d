"""Split-half reliability per iteration (1,000 iterations, seed 42; BENCHMARK.md §5)."""

from warehouse import benchmark
from warehouse.human import split_half_reliability


def model(dbt, session):
    dbt.config(materialized="table", n_iter=1000, seed=42)
    products = dbt.ref("dim_products").df()
    ratings = benchmark.benchmark_ratings(dbt.ref("stg_nectar__ratings").df(), products)
    bp, br = benchmark.blocks(ratings)
    out = split_half_reliability(
        ratings, bp, br, n_iter=int(dbt.config.get("n_iter")), seed=int(dbt.config.get("seed"))
    )
    out["data_origin"] = products["data_origin"].iloc[0] if len(products) else "none"
    return out
