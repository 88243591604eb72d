"""Group-size curve, k = 1..75, 1,000 iterations, strictly within blocks by default."""

from warehouse.human import marts


def model(dbt, session):
    dbt.config(materialized="table", n_iter=1000, seed=42, pooling="within_block")
    ratings = dbt.ref("stg_nectar__ratings").pl()
    products = dbt.ref("dim_products").pl()
    return marts.agg_group_size_curve(
        ratings,
        products,
        k_max=75,
        n_iter=int(dbt.config.get("n_iter")),
        seed=int(dbt.config.get("seed")),
        pooling=dbt.config.get("pooling"),
    )
