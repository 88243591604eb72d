"""Per-block ordinal Krippendorff alpha and Kendall's W (BENCHMARK.md §5)."""

from warehouse import benchmark
from warehouse.human import block_reliability


def model(dbt, session):
    dbt.config(materialized="table")
    products = dbt.ref("dim_products").df()
    ratings = benchmark.benchmark_ratings(dbt.ref("stg_nectar__ratings").df(), products)
    bp, br = benchmark.blocks(ratings)
    out = block_reliability(ratings, bp, br)
    out.insert(0, "block_key", out["category"] + ":" + out["block_id"].astype(str))
    out["data_origin"] = products["data_origin"].iloc[0] if len(products) else "none"
    return out
