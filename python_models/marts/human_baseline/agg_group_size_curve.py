"""Group-size curve, k = 1..75, 1,000 iterations, strictly within blocks by default."""

from warehouse import benchmark
from warehouse.human import group_size_curve


def model(dbt, session):
    dbt.config(materialized="table", n_iter=1000, seed=42, pooling="within_block")
    products = dbt.ref("dim_products").df()
    ratings = benchmark.benchmark_ratings(dbt.ref("stg_nectar__ratings").df(), products)
    bp, br = benchmark.blocks(ratings)
    out = group_size_curve(
        ratings,
        bp,
        br,
        k_max=75,
        n_iter=int(dbt.config.get("n_iter")),
        seed=int(dbt.config.get("seed")),
        pooling=dbt.config.get("pooling"),
    )
    out["pooling"] = dbt.config.get("pooling")
    out["data_origin"] = products["data_origin"].iloc[0] if len(products) else "none"
    return out
