"""What the block and human-baseline dbt Python models call: polars in, polars out.

Every function takes the gated staging ratings (``stg_nectar__ratings``) and the products
(``dim_products``), restricts them to benchmark years and products, assigns blocks and calls the
human-baseline library (:mod:`warehouse.human.baseline`), which works on pandas frames; this
module converts at that boundary. Respondent ids never leave: the outputs carry a per-block
``panelist_number`` (:func:`warehouse.human.panelists.panelist_numbers`).
"""

from __future__ import annotations

import pandas as pd
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
    """Benchmark ratings (pandas), blocks (products, respondents) and the products' data_origin."""
    prods = products.to_pandas()
    rated = panelists.benchmark_ratings(ratings.to_pandas(), prods)
    bp, br = panelists.blocks(rated)
    origin = prods["data_origin"].iloc[0] if len(prods) else "none"
    return rated, bp, br, origin


def _out(frame: pd.DataFrame, origin: str | None = None) -> pl.DataFrame:
    if origin is not None:
        frame = frame.assign(data_origin=origin)
    return pl.from_pandas(frame)


def fct_block_products(ratings: pl.DataFrame, products: pl.DataFrame) -> pl.DataFrame:
    """Product membership of every block."""
    _, bp, _, origin = _benchmark(ratings, products)
    return _out(panelists.block_products_table(bp, origin))


def fct_block_respondents(ratings: pl.DataFrame, products: pl.DataFrame) -> pl.DataFrame:
    """De-identified block memberships (per-block panelist_number)."""
    rated, _, br, origin = _benchmark(ratings, products)
    return _out(panelists.block_respondents_table(br, rated, origin))


def fct_panelist_block_accuracy(ratings: pl.DataFrame, products: pl.DataFrame) -> pl.DataFrame:
    """LOO panelist accuracy per panelist-block, de-identified."""
    rated, bp, br, origin = _benchmark(ratings, products)
    acc = panelist_block_accuracy(rated, bp, br)
    return _out(panelists.deidentify_panelist_rows(acc, br), origin)


def agg_block_reliability(ratings: pl.DataFrame, products: pl.DataFrame) -> pl.DataFrame:
    """Per-block ordinal Krippendorff alpha and Kendall's W."""
    rated, bp, br, origin = _benchmark(ratings, products)
    out = block_reliability(rated, bp, br)
    out.insert(0, "block_key", out["category"] + ":" + out["block_id"].astype(str))
    return _out(out, origin)


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
    out["pooling"] = pooling
    return _out(out, origin)


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
        br,
        panelist_accuracy.to_pandas(),
        block_reliability.to_pandas(),
        split_half.to_pandas(),
        group_size_curve.to_pandas(),
    )
    return _out(
        published.compare_with_published(
            summary,
            published_accuracy.to_pandas(),
            published_split_half.to_pandas(),
            published_coincidences.to_pandas(),
            origin,
        )
    )
