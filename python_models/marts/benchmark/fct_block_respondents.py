"""Block memberships with a per-block panelist_number instead of the respondent id."""

from warehouse import benchmark


def model(dbt, session):
    dbt.config(materialized="table")
    products = dbt.ref("dim_products").df()
    ratings = benchmark.benchmark_ratings(dbt.ref("stg_nectar__ratings").df(), products)
    _, br = benchmark.blocks(ratings)
    origin = products["data_origin"].iloc[0] if len(products) else "none"
    return benchmark.block_respondents_table(br, ratings, origin)
