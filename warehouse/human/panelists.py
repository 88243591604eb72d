"""Benchmark ratings, blocks with their sizes, and the de-identified panelist numbering.

Respondent ids come in from gated staging and never go out: block memberships leave as a per-block
``panelist_number`` (1..n within the block, ordered by a hash of the id) that cannot join one person
across blocks.
"""

from __future__ import annotations

import hashlib

import pandas as pd

from warehouse.human.blocks import assign_blocks


def benchmark_ratings(ratings: pd.DataFrame, products: pd.DataFrame) -> pd.DataFrame:
    """Benchmark-year ratings of benchmark products in the human library's frame."""
    r = ratings[ratings["is_benchmark_year"] & ratings["is_benchmark_category"]]
    merged = r.merge(
        products[["product_key", "is_reference"]], on="product_key", how="inner", validate="m:1"
    )
    return merged[["category", "respondent_id", "product_code", "is_reference", "similarity"]]


def panelist_numbers(block_respondents: pd.DataFrame) -> pd.DataFrame:
    """Add ``panelist_number`` (1..n within each block, ordered by a hash of the respondent id)."""
    br = block_respondents.copy()
    keys = (
        br["category"].astype(str)
        + "|"
        + br["block_id"].astype(str)
        + "|"
        + br["respondent_id"].astype(str)
    )
    br["_h"] = keys.map(lambda s: hashlib.sha256(s.encode()).hexdigest())
    br["panelist_number"] = (
        br.groupby(["category", "block_id"])["_h"].rank(method="first").astype("int64")
    )
    return br.drop(columns="_h")


def blocks(ratings: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """assign_blocks on benchmark ratings, with respondent counts on the products table."""
    bp, br = assign_blocks(ratings)
    sizes = br.groupby(["category", "block_id"]).size().rename("n_respondents").reset_index()
    bp = bp.merge(sizes, on=["category", "block_id"], how="left")
    return bp, br


def block_products_table(bp: pd.DataFrame, data_origin: str) -> pd.DataFrame:
    out = bp.sort_values(["category", "block_id", "product_code"]).reset_index(drop=True)
    out.insert(
        0,
        "block_product_key",
        out["category"] + ":" + out["block_id"].astype(str) + ":" + out["product_code"].astype(str),
    )
    out["data_origin"] = data_origin
    return out


def block_respondents_table(br: pd.DataFrame, ratings: pd.DataFrame, data_origin: str):
    """De-identified memberships: panelist_number per block plus how many categories the person
    rated (a count, not a key)."""
    numbered = panelist_numbers(br)
    n_cats = ratings.groupby("respondent_id")["category"].nunique().rename("n_categories_rated")
    numbered = numbered.merge(n_cats, left_on="respondent_id", right_index=True, how="left")
    out = numbered.drop(columns="respondent_id").sort_values(
        ["category", "block_id", "panelist_number"]
    )
    out.insert(
        0,
        "panelist_block_key",
        out["category"]
        + ":"
        + out["block_id"].astype(str)
        + ":"
        + out["panelist_number"].astype(str),
    )
    out["data_origin"] = data_origin
    return out.reset_index(drop=True)


def deidentify_panelist_rows(frame: pd.DataFrame, br: pd.DataFrame) -> pd.DataFrame:
    """Replace respondent_id by the block's panelist_number in a per-panelist-block frame."""
    numbered = panelist_numbers(br)[["category", "block_id", "respondent_id", "panelist_number"]]
    out = frame.merge(
        numbered, on=["category", "block_id", "respondent_id"], how="left", validate="1:1"
    )
    out = out.drop(columns="respondent_id")
    out.insert(
        0,
        "panelist_block_key",
        out["category"]
        + ":"
        + out["block_id"].astype(str)
        + ":"
        + out["panelist_number"].astype(str),
    )
    return out.sort_values(["category", "block_id", "panelist_number"]).reset_index(drop=True)
