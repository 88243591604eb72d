"""Benchmark ratings, blocks with their sizes, and the de-identified panelist numbering.

Respondent ids come in from gated staging and never go out: block memberships leave as a per-block
``panelist_number`` (1..n within the block, ordered by a hash of the id) that cannot join one person
across blocks.
"""

from __future__ import annotations

import hashlib

import polars as pl

from warehouse.human.blocks import assign_blocks

_BLOCK = ["category", "block_id"]


def _key(*columns: str) -> pl.Expr:
    """``a:b:c`` from the columns' text."""
    return pl.concat_str([pl.col(c).cast(pl.String) for c in columns], separator=":")


def benchmark_ratings(ratings: pl.DataFrame, products: pl.DataFrame) -> pl.DataFrame:
    """Benchmark-year ratings of benchmark products in the human library's frame."""
    r = ratings.filter(pl.col("is_benchmark_year") & pl.col("is_benchmark_category"))
    merged = r.join(
        products.select("product_key", "is_reference"),
        on="product_key",
        how="inner",
        validate="m:1",
        maintain_order="left",
    )
    return merged.select("category", "respondent_id", "product_code", "is_reference", "similarity")


def panelist_numbers(block_respondents: pl.DataFrame) -> pl.DataFrame:
    """Add ``panelist_number`` (1..n within each block, ordered by a hash of the respondent id)."""
    keys = block_respondents.select(
        pl.concat_str(
            [pl.col(c).cast(pl.String) for c in ("category", "block_id", "respondent_id")],
            separator="|",
        )
    ).to_series()
    hashes = pl.Series("_h", [hashlib.sha256(k.encode()).hexdigest() for k in keys])
    return (
        block_respondents.with_columns(hashes)
        .with_columns(panelist_number=pl.col("_h").rank("ordinal").over(_BLOCK).cast(pl.Int64))
        .drop("_h")
    )


def blocks(ratings: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """assign_blocks on benchmark ratings, with respondent counts on the products table."""
    bp, br = assign_blocks(ratings)
    sizes = br.group_by(_BLOCK).agg(n_respondents=pl.len().cast(pl.Int64))
    bp = bp.join(sizes, on=_BLOCK, how="left", maintain_order="left")
    return bp, br


def block_products_table(bp: pl.DataFrame, data_origin: str) -> pl.DataFrame:
    out = bp.sort([*_BLOCK, "product_code"])
    return out.select(
        _key("category", "block_id", "product_code").alias("block_product_key"), pl.all()
    ).with_columns(data_origin=pl.lit(data_origin, dtype=pl.String))


def block_respondents_table(
    br: pl.DataFrame, ratings: pl.DataFrame, data_origin: str
) -> pl.DataFrame:
    """De-identified memberships: panelist_number per block plus how many categories the person
    rated (a count, not a key)."""
    numbered = panelist_numbers(br)
    n_cats = ratings.group_by("respondent_id").agg(
        n_categories_rated=pl.col("category").n_unique().cast(pl.Int64)
    )
    numbered = numbered.join(n_cats, on="respondent_id", how="left", maintain_order="left")
    out = numbered.drop("respondent_id").sort([*_BLOCK, "panelist_number"])
    return out.select(
        _key("category", "block_id", "panelist_number").alias("panelist_block_key"), pl.all()
    ).with_columns(data_origin=pl.lit(data_origin, dtype=pl.String))


def deidentify_panelist_rows(frame: pl.DataFrame, br: pl.DataFrame) -> pl.DataFrame:
    """Replace respondent_id by the block's panelist_number in a per-panelist-block frame."""
    numbered = panelist_numbers(br).select(*_BLOCK, "respondent_id", "panelist_number")
    out = frame.join(
        numbered,
        on=[*_BLOCK, "respondent_id"],
        how="left",
        validate="1:1",
        maintain_order="left",
    ).drop("respondent_id")
    out = out.select(
        _key("category", "block_id", "panelist_number").alias("panelist_block_key"), pl.all()
    )
    return out.sort([*_BLOCK, "panelist_number"])
