"""Block assignment (BENCHMARK.md section 2, "Blocks") and per-block rating matrices.

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
import pandas as pd

RATING_COLUMNS = ("category", "respondent_id", "product_code", "is_reference", "similarity")


def _check_ratings(ratings: pd.DataFrame) -> None:
    missing = [c for c in RATING_COLUMNS if c not in ratings.columns]
    if missing:
        raise ValueError(f"ratings frame lacks columns {missing}")


def _product_reference_flags(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per (category, product_code) with its is_reference flag; raises on conflicts."""
    flags = ratings[["category", "product_code", "is_reference"]].drop_duplicates()
    dup = flags.duplicated(["category", "product_code"], keep=False)
    if dup.any():
        bad = flags.loc[dup, ["category", "product_code"]].drop_duplicates().head(5)
        raise ValueError(f"inconsistent is_reference flags for products: {bad.values.tolist()}")
    return flags.assign(is_reference=flags["is_reference"].astype(bool))


def clean_ratings(ratings: pd.DataFrame, count_null_as_rated: bool = False) -> pd.DataFrame:
    """Ratings reduced to one row per (category, respondent_id, product_code).

    Null similarities are dropped unless ``count_null_as_rated``; duplicates are averaged (mean of
    the non-null values, NaN if none).
    """
    _check_ratings(ratings)
    df = ratings.loc[:, list(RATING_COLUMNS)]
    if not count_null_as_rated:
        df = df[df["similarity"].notna()]
    flags = _product_reference_flags(df)
    keys = ["category", "respondent_id", "product_code"]
    if df.duplicated(keys).any():
        df = df.groupby(keys, as_index=False, sort=False)["similarity"].mean()
        df = df.merge(flags, on=["category", "product_code"], how="left")
    df = df.assign(similarity=df["similarity"].astype(float))
    return df.loc[:, list(RATING_COLUMNS)].reset_index(drop=True)


def assign_blocks(
    ratings: pd.DataFrame,
    min_respondents: int = 20,
    min_analogs: int = 2,
    count_null_as_rated: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Group respondents into blocks of identical rated-product sets, per category.

    Returns ``(block_products, block_respondents)``:

    * ``block_products``: ``category, block_id, product_code, is_reference`` (sorted);
    * ``block_respondents``: ``category, block_id, respondent_id`` (sorted).

    See the module docstring for the exact conventions (null ratings, thresholds, tie-break).
    """
    df = clean_ratings(ratings, count_null_as_rated=count_null_as_rated)
    flags = _product_reference_flags(df)
    df = df.sort_values(["category", "respondent_id", "product_code"], kind="stable")
    sets = (
        df.groupby(["category", "respondent_id"], sort=False)["product_code"]
        .agg(tuple)
        .rename("products")
        .reset_index()
    )
    groups = (
        sets.groupby(["category", "products"], sort=False)["respondent_id"]
        .agg(list)
        .rename("respondents")
        .reset_index()
    )
    ref_codes = {
        (c, p) for c, p in flags.loc[flags["is_reference"], ["category", "product_code"]].values
    }
    groups["n_respondents"] = groups["respondents"].map(len)
    groups["n_analogs"] = [
        sum((c, p) not in ref_codes for p in prods)
        for c, prods in zip(groups["category"], groups["products"], strict=True)
    ]
    groups = groups[
        (groups["n_respondents"] >= min_respondents) & (groups["n_analogs"] >= min_analogs)
    ]
    order = sorted(
        range(len(groups)),
        key=lambda r: (
            groups["category"].iat[r],
            -groups["n_respondents"].iat[r],
            groups["products"].iat[r],
        ),
    )
    groups = groups.iloc[order].reset_index(drop=True)
    groups["block_id"] = groups.groupby("category", sort=False).cumcount().astype(int)

    bp = groups[["category", "block_id", "products"]].explode("products")
    bp = bp.rename(columns={"products": "product_code"})
    bp["product_code"] = bp["product_code"].astype(df["product_code"].dtype)
    bp = bp.merge(flags, on=["category", "product_code"], how="left")
    bp = bp.sort_values(["category", "block_id", "product_code"], kind="stable")
    br = groups[["category", "block_id", "respondents"]].explode("respondents")
    br = br.rename(columns={"respondents": "respondent_id"})
    br["respondent_id"] = br["respondent_id"].astype(df["respondent_id"].dtype)
    br = br.sort_values(["category", "block_id", "respondent_id"], kind="stable")
    bp = bp.reset_index(drop=True).astype({"block_id": "int64", "is_reference": bool})
    br = br.reset_index(drop=True).astype({"block_id": "int64"})
    return bp, br


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
    ratings: pd.DataFrame,
    block_products: pd.DataFrame,
    block_respondents: pd.DataFrame,
) -> list[BlockMatrix]:
    """Build one :class:`BlockMatrix` per block, in ``(category, block_id)`` order.

    Cells hold the respondent's (non-null, duplicate-averaged) similarity; NaN where the
    respondent has no rating of that block product.
    """
    df = clean_ratings(ratings)
    br = block_respondents[["category", "block_id", "respondent_id"]]
    bp = block_products[["category", "block_id", "product_code", "is_reference"]]
    merged = df[["category", "respondent_id", "product_code", "similarity"]].merge(
        br, on=["category", "respondent_id"], how="inner"
    )
    merged = merged.merge(
        bp[["category", "block_id", "product_code"]],
        on=["category", "block_id", "product_code"],
        how="inner",
    )
    by_block = dict(list(merged.groupby(["category", "block_id"], sort=False)))
    resp_by_block = dict(list(br.groupby(["category", "block_id"], sort=False)))
    out: list[BlockMatrix] = []
    for (cat, bid), prods in bp.sort_values(["category", "block_id", "product_code"]).groupby(
        ["category", "block_id"], sort=True
    ):
        resp = resp_by_block.get((cat, bid))
        if resp is None:
            continue
        rids = np.sort(resp["respondent_id"].unique())
        codes = prods["product_code"].to_numpy()
        is_ref = prods["is_reference"].to_numpy(dtype=bool)
        mat = np.full((rids.size, codes.size), np.nan)
        g = by_block.get((cat, bid))
        if g is not None and len(g):
            ri = np.searchsorted(rids, g["respondent_id"].to_numpy())
            pi = np.searchsorted(codes, g["product_code"].to_numpy())
            mat[ri, pi] = g["similarity"].to_numpy(dtype=float)
        out.append(BlockMatrix(str(cat), int(bid), rids, codes, is_ref, mat))
    return out
