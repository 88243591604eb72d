"""Headline human-baseline figures next to the published ones (one row per metric)."""

from warehouse import benchmark
from warehouse.human import summarize_human_baseline


def model(dbt, session):
    dbt.config(materialized="table")
    products = dbt.ref("dim_products").df()
    ratings = benchmark.benchmark_ratings(dbt.ref("stg_nectar__ratings").df(), products)
    _, br = benchmark.blocks(ratings)
    summary = summarize_human_baseline(
        br,
        dbt.ref("fct_panelist_block_accuracy").df(),
        dbt.ref("agg_block_reliability").df(),
        dbt.ref("agg_split_half_reliability").df(),
        dbt.ref("agg_group_size_curve").df(),
    )
    return benchmark.compare_with_published(
        summary,
        dbt.ref("stg_tastebench__panelist_block_accuracy").df(),
        dbt.ref("stg_tastebench__split_half_iterations").df(),
        dbt.ref("stg_tastebench__alpha_coincidences").df(),
        products["data_origin"].iloc[0] if len(products) else "none",
    )
