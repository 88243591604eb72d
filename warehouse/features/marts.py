"""Functions the feature dbt Python models call (python_models/marts/features/).

Each takes polars frames read from existing models and returns a polars frame with one row per
product (``FeatureBlock.to_frame``), or per product and variant for the C-block ablation.
Paths (vector cache, photo folder) are arguments; :func:`feature_cache_dir` is the build's
default (``<build_dir>/features/cache``), resolved from the warehouse settings.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from warehouse.features.block import FeatureBlock, FeatureError
from warehouse.features.compounds import (
    AGGREGATIONS,
    MAIN_AGGREGATION,
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


def feature_cache_dir() -> Path:
    """``<build_dir>/features/cache`` of the current settings (the build's vector cache)."""
    from warehouse.config import load_settings

    return load_settings().features_cache_dir


def subset_features(products: pl.DataFrame, categories: pl.DataFrame) -> pl.DataFrame:
    """fct_features_subset (S)."""
    return subset_block(products, categories).to_frame()


def nutrition_features(products: pl.DataFrame, nutrition: pl.DataFrame) -> pl.DataFrame:
    """fct_features_nutrition (N)."""
    return nutrition_block(products, nutrition).to_frame()


def text_features(products: pl.DataFrame, cache_dir: Path | str) -> pl.DataFrame:
    """fct_features_text (T)."""
    return text_block(products, cache_dir).to_frame()


def _json_list(col: str) -> pl.Expr:
    return (
        pl.when(pl.col(col).str.starts_with("["))
        .then(pl.col(col).str.json_decode(pl.List(pl.String)))
        .otherwise(pl.lit(None, dtype=pl.List(pl.String)))
    )


def foodatlas_graph(
    entities: pl.DataFrame,
    edges: pl.DataFrame,
    concentrations: pl.DataFrame,
    kg_version: str = "auto",
) -> FoodAtlasGraph:
    """Block C's view of the staged FoodAtlas (``stg_foodatlas__entities``, ``__edges``,
    ``__concentrations``) for one KG version. ``auto``: v4 when it has any ``contains`` edge,
    else v1. v1 food entities are named after their extract ("cocoa (e1314)" -> "cocoa"): the
    v1 files list food parts by taxon only, so every part of cocoa is food "cocoa"."""
    contains_all = edges.filter(pl.col("relationship") == "contains")
    if kg_version == "auto":
        kg_version = "v4" if (contains_all["kg_version"] == "v4").any() else "v1"
    if kg_version not in {"v1", "v4"}:
        raise FeatureError(f"FoodAtlas: kg_version must be auto, v1 or v4, got {kg_version!r}")
    ents = entities.filter(pl.col("kg_version") == kg_version)
    foods = ents.filter(pl.col("entity_type") == "food").select(
        pl.col("entity_id").alias("food_entity_id"),
        (
            pl.col("entity_name").str.replace(r"\s*\([^()]*\)$", "")
            if kg_version == "v1"
            else pl.col("entity_name")
        ).alias("food_name"),
        (
            pl.lit(None, dtype=pl.List(pl.String))
            if kg_version == "v1"
            else _json_list("synonyms_text")
        ).alias("synonyms"),
    )
    compounds = ents.filter(pl.col("entity_type") == "chemical").select(
        pl.col("entity_id").alias("compound_entity_id"), "pubchem_cid", "inchikey"
    )
    contains = contains_all.filter(pl.col("kg_version") == kg_version).select(
        pl.col("head_entity_id").alias("food_entity_id"),
        pl.col("tail_entity_id").alias("compound_entity_id"),
        "edge_id",
    )
    conc = concentrations.filter(pl.col("kg_version") == kg_version).select(
        "edge_id", "conc_value", "conc_unit"
    )
    return FoodAtlasGraph(kg_version, foods, contains, conc, compounds)


def compound_feature_variants(
    products: pl.DataFrame,
    entities: pl.DataFrame,
    edges: pl.DataFrame,
    concentrations: pl.DataFrame,
    molecules: pl.DataFrame,
    embeddings: pl.DataFrame,
    synonyms: pl.DataFrame,
    kg_version: str = "auto",
) -> pl.DataFrame:
    """fct_features_compound_variants: C for every compound encoder x aggregation, one row per
    product and variant (``variant_key``); ``is_main`` marks the main configuration (the
    selected D-MPNN when registered, else the fingerprint encoder; log weighting)."""
    graph = foodatlas_graph(entities, edges, concentrations, kg_version)
    result = compound_features(products, graph, molecules, embeddings, synonyms)
    main = (main_encoder([e for e, _ in result.blocks]), MAIN_AGGREGATION)
    frames = []
    for enc, agg in sorted(result.blocks, key=lambda k: (k[0], AGGREGATIONS.index(k[1]))):
        frame = result.blocks[(enc, agg)].to_frame()
        frames.append(
            frame.with_columns(
                (pl.col("product_key") + ":" + pl.lit(f"{enc}:{agg}")).alias("variant_key"),
                pl.lit((enc, agg) == main).alias("is_main"),
            )
        )
    out = pl.concat(frames)
    return out.select("variant_key", *[c for c in out.columns if c != "variant_key"])


def ingredient_matches(
    products: pl.DataFrame,
    entities: pl.DataFrame,
    edges: pl.DataFrame,
    synonyms: pl.DataFrame,
    kg_version: str = "auto",
) -> pl.DataFrame:
    """fct_features_ingredient_matches: every parsed ingredient of every product (label order)
    with the FoodAtlas food it matched and the rule that matched it (``none`` when unmatched):
    block C's mapping, row by row, so its coverage can be inspected."""
    from warehouse.features.ingredients import FoodMatcher, parse_ingredients
    from warehouse.features.products import product_frame

    empty = pl.DataFrame(schema={"edge_id": pl.String, "kg_version": pl.String})
    graph = foodatlas_graph(
        entities, edges, empty.with_columns(conc_value=None, conc_unit=None), kg_version
    )
    matcher = FoodMatcher(graph.foods, synonyms)
    keys = product_frame(products, "dim_products", "cleaned_ingredients")
    rows = []
    for cat, code, origin, text in keys.iter_rows():
        for pos, item in enumerate(parse_ingredients(text), start=1):
            m = matcher.match(item)
            rows.append(
                (f"{cat}:{code}:{pos}", cat, code, pos, item, m.rule, m.food_name,
                 len(m.food_entity_ids), graph.kg_version, origin)
            )  # fmt: skip
    return pl.DataFrame(
        rows,
        schema=[
            ("ingredient_key", pl.String),
            ("category", pl.String),
            ("product_code", pl.Int32),
            ("position", pl.Int32),
            ("ingredient_name", pl.String),
            ("match_rule", pl.String),
            ("food_name", pl.String),
            ("n_food_entities", pl.Int32),
            ("kg_version", pl.String),
            ("data_origin", pl.String),
        ],
        orient="row",
    )


def main_compound_features(variants: pl.DataFrame) -> pl.DataFrame:
    """fct_features_compound (C): the ``is_main`` rows of the variants mart, one per product."""
    out = variants.filter(pl.col("is_main")).drop("variant_key", "is_main")
    if out["product_key"].n_unique() != out.height:
        raise FeatureError("fct_features_compound_variants: is_main is not one row per product")
    return out.sort("category", "product_code")


def image_features(
    products: pl.DataFrame,
    images: pl.DataFrame,
    other_blocks: list[pl.DataFrame],
    cache_dir: Path | str,
) -> pl.DataFrame:
    """fct_features_image (I): photo descriptors, then the k=5 same-category imputation on the
    other blocks' marts (N, C, T). The photo folder is the images view's ``bundle_dir``."""
    roots = images["bundle_dir"].unique().to_list() if images.height else []
    if len(roots) > 1:
        raise FeatureError(
            f"staging.stg_nectar__images: photos from several bundles {roots}. Fix: build from one"
        )
    block = image_block(products, images, roots[0] if roots else None, cache_dir)
    others = [FeatureBlock.from_frame(f) for f in other_blocks]
    return impute_same_category(block, others).to_frame()


def feature_coverage(products: pl.DataFrame, feature_frames: list[pl.DataFrame]) -> pl.DataFrame:
    """agg_feature_coverage: one row per block (coverage_table) with ``coverage_key``."""
    from warehouse.features.products import product_frame

    keys = product_frame(products, "dim_products", "is_analog")
    blocks = []
    for frame in feature_frames:
        blk = FeatureBlock.from_frame(frame)
        if not blk.keys.equals(keys.select("category", "product_code")):
            raise FeatureError(
                f"feature mart of block {blk.name}: products differ from marts.dim_products. "
                "Fix: rebuild the feature marts"
            )
        blocks.append(blk)
    out = coverage_table(blocks, keys["is_analog"].to_numpy().astype(np.bool_))
    return out.select((pl.col("block") + ":" + pl.col("encoder")).alias("coverage_key"), pl.all())
