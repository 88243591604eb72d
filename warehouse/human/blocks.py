"""Block assignment (docs/benchmark.md section 2, "Blocks") and per-block rating matrices.

A *block* is, within one category, the set of respondents who rated exactly the same set of
products (references included). Conventions (ours, documented):

* A *rating* is a row with a non-null ``similarity``; a null row does not count as having rated
  the product (``count_null_as_rated=True`` switches to "any row counts", in which case the block
  matrices can hold missing cells and every downstream metric skips them).
* Duplicate ``(category, respondent_id, product_code)`` ratings are averaged.
* Blocks with fewer than ``min_respondents`` respondents or fewer than ``min_analogs`` analogs are
  dropped.
* Numbering: per category, ``block_id`` 0, 1, ... by descending respondent count; ties are broken
  by the block's sorted product-code tuple in ascending lexicographic order (references included),
  so numbering depends on the data only, never on row order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

RATING_COLUMNS = ("category", "respondent_id", "product_code", "is_reference", "similarity")


def _check_ratings(ratings: pl.DataFrame) -> None:
    missing = [c for c in RATING_COLUMNS if c not in ratings.columns]
    if missing:
        raise ValueError(f"ratings frame lacks columns {missing}")


def _product_reference_flags(ratings: pl.DataFrame) -> pl.DataFrame:
    """One row per (category, product_code) with its is_reference flag; raises on conflicts."""
    flags = ratings.select("category", "product_code", "is_reference").unique(maintain_order=True)
    dup = flags.filter(pl.len().over("category", "product_code") > 1)
    if dup.height:
        bad = dup.select("category", "product_code").unique(maintain_order=True).head(5)
        raise ValueError(f"inconsistent is_reference flags for products: {bad.rows()}")
    return flags.with_columns(pl.col("is_reference").cast(pl.Boolean))


def clean_ratings(ratings: pl.DataFrame, count_null_as_rated: bool = False) -> pl.DataFrame:
    """Ratings reduced to one row per (category, respondent_id, product_code).

    Null (or NaN) similarities are dropped unless ``count_null_as_rated``; duplicates are averaged
    (mean of the non-null values, null if none). ``similarity`` comes back as Float64 with null
    (never NaN) for a missing value.
    """
    _check_ratings(ratings)
    df = ratings.select(RATING_COLUMNS).with_columns(
        pl.col("similarity").cast(pl.Float64).fill_nan(None)
    )
    if not count_null_as_rated:
        df = df.filter(pl.col("similarity").is_not_null())
    flags = _product_reference_flags(df)
    keys = ["category", "respondent_id", "product_code"]
    if df.select(pl.struct(keys).is_duplicated().any()).item():
        df = df.group_by(keys, maintain_order=True).agg(pl.col("similarity").mean())
        df = df.join(flags, on=["category", "product_code"], how="left", maintain_order="left")
    return df.select(RATING_COLUMNS)


def assign_blocks(
    ratings: pl.DataFrame,
    min_respondents: int = 20,
    min_analogs: int = 2,
    count_null_as_rated: bool = False,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Group respondents into blocks of identical rated-product sets, per category.

    Returns ``(block_products, block_respondents)``:

    * ``block_products``: ``category, block_id, product_code, is_reference`` (sorted);
    * ``block_respondents``: ``category, block_id, respondent_id`` (sorted).

    See the module docstring for the exact conventions (null ratings, thresholds, tie-break).
    """
    df = clean_ratings(ratings, count_null_as_rated=count_null_as_rated)
    flags = _product_reference_flags(df)
    sets = (
        df.sort(["category", "respondent_id", "product_code"], maintain_order=True)
        .group_by(["category", "respondent_id"], maintain_order=True)
        .agg(pl.col("product_code").alias("products"))
    )
    # respondents per (category, sorted product tuple), in order of first appearance
    groups: dict[tuple, list] = {}
    for cat, rid, prods in sets.iter_rows():
        groups.setdefault((cat, tuple(prods)), []).append(rid)
    ref_codes = set(flags.filter(pl.col("is_reference")).select("category", "product_code").rows())
    kept = [
        (cat, prods, rids)
        for (cat, prods), rids in groups.items()
        if len(rids) >= min_respondents
        and sum((cat, p) not in ref_codes for p in prods) >= min_analogs
    ]
    kept.sort(key=lambda g: (g[0], -len(g[2]), g[1]))
    bp_rows: list[tuple] = []
    br_rows: list[tuple] = []
    next_id: dict[str, int] = {}
    for cat, prods, rids in kept:
        bid = next_id.get(cat, 0)
        next_id[cat] = bid + 1
        bp_rows += [(cat, bid, p) for p in prods]
        br_rows += [(cat, bid, r) for r in rids]
    key_schema = {"category": df.schema["category"], "block_id": pl.Int64}
    bp = pl.DataFrame(
        bp_rows, schema=key_schema | {"product_code": df.schema["product_code"]}, orient="row"
    )
    bp = bp.join(flags, on=["category", "product_code"], how="left", maintain_order="left")
    bp = bp.sort(["category", "block_id", "product_code"], maintain_order=True)
    br = pl.DataFrame(
        br_rows, schema=key_schema | {"respondent_id": df.schema["respondent_id"]}, orient="row"
    )
    br = br.sort(["category", "block_id", "respondent_id"], maintain_order=True)
    return bp.with_columns(pl.col("is_reference").cast(pl.Boolean)), br


@dataclass(frozen=True)
class BlockMatrix:
    """Ratings of one block as a respondents x products matrix (NaN = missing).

    Respondents are sorted by id and products by code, so results never depend on row order.
    """

    category: str
    block_id: int
    respondent_ids: np.ndarray
    product_codes: np.ndarray
    is_reference: np.ndarray
    ratings: np.ndarray

    @property
    def analogs(self) -> np.ndarray:
        """Ratings restricted to the block's analogs (references dropped)."""
        return self.ratings[:, ~self.is_reference]

    @property
    def analog_codes(self) -> np.ndarray:
        return self.product_codes[~self.is_reference]


def block_matrices(
    ratings: pl.DataFrame,
    block_products: pl.DataFrame,
    block_respondents: pl.DataFrame,
) -> list[BlockMatrix]:
    """Build one :class:`BlockMatrix` per block, in ``(category, block_id)`` order.

    Cells hold the respondent's (non-null, duplicate-averaged) similarity; NaN where the
    respondent has no rating of that block product.
    """
    keys = ["category", "block_id"]
    df = clean_ratings(ratings)
    br = block_respondents.select("category", "block_id", "respondent_id")
    bp = block_products.select("category", "block_id", "product_code", "is_reference")
    merged = (
        df.select("category", "respondent_id", "product_code", "similarity")
        .join(br, on=["category", "respondent_id"], how="inner")
        .join(bp.select(*keys, "product_code"), on=[*keys, "product_code"], how="inner")
    )
    by_block = merged.partition_by(keys, as_dict=True)
    resp_by_block = br.partition_by(keys, as_dict=True)
    prods_by_block = bp.sort([*keys, "product_code"]).partition_by(keys, as_dict=True)
    out: list[BlockMatrix] = []
    for cat, bid in sorted(prods_by_block):
        resp = resp_by_block.get((cat, bid))
        if resp is None:
            continue
        prods = prods_by_block[(cat, bid)]
        rids = np.sort(resp["respondent_id"].unique().to_numpy())
        codes = prods["product_code"].to_numpy()
        is_ref = prods["is_reference"].to_numpy().astype(bool)
        mat = np.full((rids.size, codes.size), np.nan)
        g = by_block.get((cat, bid))
        if g is not None and g.height:
            ri = np.searchsorted(rids, g["respondent_id"].to_numpy())
            pi = np.searchsorted(codes, g["product_code"].to_numpy())
            mat[ri, pi] = g["similarity"].cast(pl.Float64).to_numpy()
        out.append(BlockMatrix(str(cat), int(bid), rids, codes, is_ref, mat))
    return out
