"""Per-block ordinal Krippendorff alpha and Kendall's W (docs/benchmark.md §5)."""

from warehouse.human import marts


def model(dbt, session):
    dbt.config(materialized="table")
    ratings = dbt.ref("stg_nectar__ratings").pl()
    products = dbt.ref("dim_products").pl()
    return marts.agg_block_reliability(ratings, products)
