"""Block memberships with a per-block panelist_number instead of the respondent id."""

from warehouse.human import marts


def model(dbt, session):
    dbt.config(materialized="table")
    ratings = dbt.ref("stg_nectar__ratings").pl()
    products = dbt.ref("dim_products").pl()
    return marts.fct_block_respondents(ratings, products)
