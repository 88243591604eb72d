"""Block N: the six label nutrients per 100 g from ``marts.fct_nutrition_per_100g``.

The SQL mart already scales per serving to per 100 g, converts sodium mg -> g and sets a
missing value to 0 with a per-nutrient ``is_imputed_*`` flag (docs/benchmark.md §2). This module
only aligns the rows with the product keys and carries the per-subset distance vector
(``subset_distance_vector``: the subset's columns of seeds/nutrition_subset_columns.csv, in
column_order) for the distance baseline. ``is_imputed`` = any of the six was missing.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from warehouse.features.block import KEY_COLUMNS, FeatureBlock, FeatureError
from warehouse.features.products import product_frame
from warehouse.sources.seeds import nutrient_columns

NUTRIENT_COLUMNS = nutrient_columns()  # var nutrition_block of dbt_project.yml
IMPUTED_FLAGS = tuple("is_imputed_" + c.removesuffix("_per_100g") for c in NUTRIENT_COLUMNS)
NUTRITION_ENCODER = "label_per_100g"
NUTRITION_ENCODER_VERSION = "1"


def nutrition_block(products: pl.DataFrame, nutrition: pl.DataFrame) -> FeatureBlock:
    """N for every product of ``products``; a product with no nutrition row has
    ``has_block = False`` and a zero row (it does not happen on dim_products, whose products
    all have a label row, but is not faked if it does)."""
    keys = product_frame(products)
    needed = [*KEY_COLUMNS, *NUTRIENT_COLUMNS, *IMPUTED_FLAGS, "subset_distance_vector"]
    missing = [c for c in needed if c not in nutrition.columns]
    if missing:
        raise FeatureError(
            f"marts.fct_nutrition_per_100g: missing column(s) {missing}. "
            "Fix: pass the nutrition mart as built by dbt"
        )
    nut = nutrition.select(needed).with_columns(
        pl.col("category").cast(pl.String),
        pl.col("product_code").cast(pl.Int32),
        pl.lit(True).alias("_present"),
    )
    if (nut.group_by(KEY_COLUMNS).len()["len"].max() or 0) > 1:
        raise FeatureError(
            "marts.fct_nutrition_per_100g: a product has several rows. Fix: one row per product"
        )
    joined = keys.join(nut, on=list(KEY_COLUMNS), how="left", maintain_order="left")
    present = joined["_present"].fill_null(False).to_numpy().astype(bool)
    values = joined.select(NUTRIENT_COLUMNS)
    nulls = values.filter(pl.Series(present)).null_count().sum_horizontal()[0]
    if nulls:
        raise FeatureError(
            "marts.fct_nutrition_per_100g: null nutrient values. Fix: the mart must set a "
            "missing nutrient to 0 and flag it (is_imputed_*)"
        )
    matrix = values.fill_null(0.0).to_numpy().astype(np.float64)
    flags = joined.select([pl.col(f).fill_null(False) for f in IMPUTED_FLAGS])
    any_imputed = flags.select(pl.any_horizontal(pl.all())).to_series().to_numpy() & present
    extra = pl.concat([flags, joined.select("subset_distance_vector")], how="horizontal")
    return FeatureBlock(
        name="N",
        keys=keys.select(KEY_COLUMNS),
        matrix=np.ascontiguousarray(matrix),
        feature_names=NUTRIENT_COLUMNS,
        encoder=NUTRITION_ENCODER,
        encoder_version=NUTRITION_ENCODER_VERSION,
        has_block=present,
        is_imputed=any_imputed.astype(bool),
        data_origin=tuple(keys["data_origin"].to_list()),
        extra=extra,
    )
