"""LOO panelist accuracy per panelist-block (docs/benchmark.md §5), de-identified."""

from warehouse.human import marts


def model(dbt, session):
    dbt.config(materialized="table")
    ratings = dbt.ref("stg_nectar__ratings").pl()
    products = dbt.ref("dim_products").pl()
    return marts.fct_panelist_block_accuracy(ratings, products)
