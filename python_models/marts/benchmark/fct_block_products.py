"""Blocks (BENCHMARK.md §2) as product memberships: computed in Python because the respondent
sets that define blocks must not leave gated staging."""

from warehouse import benchmark


def model(dbt, session):
    dbt.config(materialized="table")
    products = dbt.ref("dim_products").df()
    ratings = benchmark.benchmark_ratings(dbt.ref("stg_nectar__ratings").df(), products)
    bp, _ = benchmark.blocks(ratings)
    origin = products["data_origin"].iloc[0] if len(products) else "none"
    return benchmark.block_products_table(bp, origin)
