"""Blocks (docs/benchmark.md §2) as product memberships: computed in Python because the respondent
sets that define blocks must not leave gated staging."""

from warehouse.human import marts


def model(dbt, session):
    dbt.config(materialized="table")
    ratings = dbt.ref("stg_nectar__ratings").pl()
    products = dbt.ref("dim_products").pl()
    return marts.fct_block_products(ratings, products)
