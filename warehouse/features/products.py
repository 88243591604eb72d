"""The product list every block is built for (analogs and references, docs/benchmark.md §1)."""

from __future__ import annotations

import polars as pl

from warehouse.features.block import FeatureError, sort_keys


def product_frame(products: pl.DataFrame, table: str = "dim_products", *extra: str) -> pl.DataFrame:
    """``category, product_code, data_origin`` (+ ``extra`` columns) sorted by the key order.

    ``products`` is ``marts.dim_products`` or any frame with those columns, one row per product.
    """
    needed = ["category", "product_code", "data_origin", *extra]
    missing = [c for c in needed if c not in products.columns]
    if missing:
        raise FeatureError(
            f"{table}: missing column(s) {missing}. Fix: read the products from "
            "marts.dim_products (one row per analog and reference)"
        )
    return sort_keys(products.select(needed), table)
