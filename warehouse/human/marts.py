"""What the block and human-baseline dbt Python models call: polars in, polars out.

Every function takes the gated staging ratings (``stg_nectar__ratings``) and the products
(``dim_products``), restricts them to benchmark years and products, assigns blocks and calls the
human-baseline library (:mod:`warehouse.human.baseline`). Respondent ids never leave: the outputs
carry a per-block ``panelist_number`` (:func:`warehouse.human.panelists.panelist_numbers`).
"""

from __future__ import annotations

import polars as pl

from warehouse.human import panelists, published
from warehouse.human.baseline import (
    block_reliability,
    group_size_curve,
    panelist_block_accuracy,
    split_half_reliability,
    summarize_human_baseline,
)


def _benchmark(ratings: pl.DataFrame, products: pl.DataFrame):
    """Benchmark ratings, blocks (products, respondents) and the products' data_origin."""
    rated = panelists.benchmark_ratings(ratings, products)
    bp, br = panelists.blocks(rated)
    origin = products["data_origin"][0] if products.height else "none"
    return rated, bp, br, origin


def _out(frame: pl.DataFrame, origin: str) -> pl.DataFrame:
    return frame.with_columns(data_origin=pl.lit(origin, dtype=pl.String))


def fct_block_products(ratings: pl.DataFrame, products: pl.DataFrame) -> pl.DataFrame:
    """Product membership of every block."""
    _, bp, _, origin = _benchmark(ratings, products)
    return panelists.block_products_table(bp, origin)


def fct_block_respondents(ratings: pl.DataFrame, products: pl.DataFrame) -> pl.DataFrame:
    """De-identified block memberships (per-block panelist_number)."""
    rated, _, br, origin = _benchmark(ratings, products)
    return panelists.block_respondents_table(br, rated, origin)


def fct_panelist_block_accuracy(ratings: pl.DataFrame, products: pl.DataFrame) -> pl.DataFrame:
    """LOO panelist accuracy per panelist-block, de-identified."""
    rated, bp, br, origin = _benchmark(ratings, products)
    acc = panelist_block_accuracy(rated, bp, br)
    return _out(panelists.deidentify_panelist_rows(acc, br), origin)


def agg_block_reliability(ratings: pl.DataFrame, products: pl.DataFrame) -> pl.DataFrame:
    """Per-block ordinal Krippendorff alpha and Kendall's W."""
    rated, bp, br, origin = _benchmark(ratings, products)
    out = block_reliability(rated, bp, br)
    key = pl.concat_str([pl.col("category"), pl.col("block_id").cast(pl.String)], separator=":")
    return _out(out.select(key.alias("block_key"), pl.all()), origin)


def agg_split_half_reliability(
    ratings: pl.DataFrame, products: pl.DataFrame, *, n_iter: int, seed: int
) -> pl.DataFrame:
    """Split-half agreement per iteration."""
    rated, bp, br, origin = _benchmark(ratings, products)
    return _out(split_half_reliability(rated, bp, br, n_iter=n_iter, seed=seed), origin)


def agg_group_size_curve(
    ratings: pl.DataFrame,
    products: pl.DataFrame,
    *,
    k_max: int,
    n_iter: int,
    seed: int,
    pooling: str,
) -> pl.DataFrame:
    """Median accuracy of k-respondent panels, k = 1..k_max."""
    rated, bp, br, origin = _benchmark(ratings, products)
    out = group_size_curve(rated, bp, br, k_max=k_max, n_iter=n_iter, seed=seed, pooling=pooling)
    return _out(out.with_columns(pooling=pl.lit(pooling, dtype=pl.String)), origin)


def agg_human_baseline(
    ratings: pl.DataFrame,
    products: pl.DataFrame,
    *,
    panelist_accuracy: pl.DataFrame,
    block_reliability: pl.DataFrame,
    split_half: pl.DataFrame,
    group_size_curve: pl.DataFrame,
    published_accuracy: pl.DataFrame,
    published_split_half: pl.DataFrame,
    published_coincidences: pl.DataFrame,
) -> pl.DataFrame:
    """Headline human-baseline figures next to the published ones (one row per metric)."""
    _, _, br, origin = _benchmark(ratings, products)
    summary = summarize_human_baseline(
        br, panelist_accuracy, block_reliability, split_half, group_size_curve
    )
    return published.compare_with_published(
        summary,
        published_accuracy,
        published_split_half,
        published_coincidences,
        origin,
    )
