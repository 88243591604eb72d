"""LOO panelist accuracy per panelist-block (BENCHMARK.md §5), de-identified."""

from warehouse import benchmark
from warehouse.human import panelist_block_accuracy


def model(dbt, session):
    dbt.config(materialized="table")
    products = dbt.ref("dim_products").df()
    ratings = benchmark.benchmark_ratings(dbt.ref("stg_nectar__ratings").df(), products)
    bp, br = benchmark.blocks(ratings)
    acc = panelist_block_accuracy(ratings, bp, br)
    out = benchmark.deidentify_panelist_rows(acc, br)
    out["data_origin"] = products["data_origin"].iloc[0] if len(products) else "none"
    return out
