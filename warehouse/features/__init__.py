"""Food-level feature blocks S, N, C, T, I (docs/benchmark.md §2; docs/features.md).

Each builder returns a :class:`FeatureBlock`: a float64 matrix aligned with the product keys
sorted by (category, product_code), with per-row ``has_block`` / ``is_imputed`` flags, the
encoder's name and version, and per-row extras (coverage). Per-fold scaling and PCA belong to
the models (``warehouse.ranking``), not here.
"""

from warehouse.features.block import BLOCK_NAMES, FeatureBlock, FeatureError, sort_keys
from warehouse.features.compounds import (
    AGGREGATIONS,
    CompoundFeatures,
    FoodAtlasGraph,
    compound_features,
    main_encoder,
)
from warehouse.features.coverage import coverage_table
from warehouse.features.images import image_block
from warehouse.features.impute import impute_same_category
from warehouse.features.nutrition import nutrition_block
from warehouse.features.subset import subset_block
from warehouse.features.text import text_block

__all__ = [
    "AGGREGATIONS",
    "BLOCK_NAMES",
    "CompoundFeatures",
    "FeatureBlock",
    "FeatureError",
    "FoodAtlasGraph",
    "compound_features",
    "coverage_table",
    "image_block",
    "impute_same_category",
    "main_encoder",
    "nutrition_block",
    "sort_keys",
    "subset_block",
    "text_block",
]
