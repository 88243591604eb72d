"""Block S: one-hot of the category subset, in the seed's order (seeds/categories.csv)."""

from __future__ import annotations

import numpy as np
import polars as pl

from warehouse.features.block import KEY_COLUMNS, FeatureBlock, FeatureError
from warehouse.features.products import product_frame

SUBSET_ENCODER = "subset_onehot"


def subset_order(categories: pl.DataFrame) -> list[str]:
    """Subsets in one-hot order: ascending ``subset_order`` (one order per subset, distinct)."""
    missing = [c for c in ("category", "subset", "subset_order") if c not in categories.columns]
    if missing:
        raise FeatureError(
            f"seeds.categories: missing column(s) {missing}. Fix: pass the categories seed"
        )
    per_subset = categories.group_by("subset").agg(pl.col("subset_order").unique())
    bad = per_subset.filter(pl.col("subset_order").list.len() != 1)
    if bad.height:
        raise FeatureError(
            f"seeds.categories: subset {bad['subset'][0]!r} has several subset_order values. "
            "Fix: give each subset exactly one subset_order"
        )
    table = per_subset.with_columns(pl.col("subset_order").list.first()).sort("subset_order")
    if table["subset_order"].n_unique() != table.height:
        raise FeatureError(
            "seeds.categories: two subsets share a subset_order. Fix: make the orders distinct"
        )
    return table["subset"].to_list()


def subset_block(products: pl.DataFrame, categories: pl.DataFrame) -> FeatureBlock:
    """S: ``subset_<name>`` columns in :func:`subset_order`; exactly one 1 per product.

    A product whose category is not in the seed raises :class:`FeatureError`.
    """
    keys = product_frame(products)
    order = subset_order(categories)
    joined = keys.join(
        categories.select("category", "subset"), on="category", how="left", maintain_order="left"
    )
    unknown = joined.filter(pl.col("subset").is_null())
    if unknown.height:
        raise FeatureError(
            f"seeds.categories: category {unknown['category'][0]!r} (product_code "
            f"{unknown['product_code'][0]}) has no subset. Fix: add it to seeds/categories.csv"
        )
    index = {s: j for j, s in enumerate(order)}
    cols = np.array([index[s] for s in joined["subset"].to_list()], dtype=np.int64)
    matrix = np.zeros((keys.height, len(order)), dtype=np.float64)
    matrix[np.arange(keys.height), cols] = 1.0
    return FeatureBlock(
        name="S",
        keys=keys.select(KEY_COLUMNS),
        matrix=matrix,
        feature_names=tuple(f"subset_{s}" for s in order),
        encoder=SUBSET_ENCODER,
        encoder_version="1:" + ",".join(order),
        has_block=np.ones(keys.height, dtype=bool),
        is_imputed=np.zeros(keys.height, dtype=bool),
        data_origin=tuple(keys["data_origin"].to_list()),
        extra=joined.select("subset"),
    )
