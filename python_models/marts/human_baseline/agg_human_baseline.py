"""Headline human-baseline figures next to the published ones (one row per metric)."""

from warehouse.human import marts


def model(dbt, session):
    dbt.config(materialized="table")
    # one dbt.ref per statement: dbt finds refs by walking call arguments, not subscripts
    ratings = dbt.ref("stg_nectar__ratings").pl()
    products = dbt.ref("dim_products").pl()
    accuracy = dbt.ref("fct_panelist_block_accuracy").pl()
    reliability = dbt.ref("agg_block_reliability").pl()
    split_half = dbt.ref("agg_split_half_reliability").pl()
    curve = dbt.ref("agg_group_size_curve").pl()
    published_accuracy = dbt.ref("stg_tastebench__panelist_block_accuracy").pl()
    published_split_half = dbt.ref("stg_tastebench__split_half_iterations").pl()
    published_alpha = dbt.ref("stg_tastebench__alpha_coincidences").pl()
    return marts.agg_human_baseline(
        ratings,
        products,
        panelist_accuracy=accuracy,
        block_reliability=reliability,
        split_half=split_half,
        group_size_curve=curve,
        published_accuracy=published_accuracy,
        published_split_half=published_split_half,
        published_coincidences=published_alpha,
    )
