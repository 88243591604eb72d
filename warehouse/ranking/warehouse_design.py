"""The build's design from the warehouse's frames: ``marts.dim_products``,
``marts.fct_panel_means``, ``seeds.categories``, ``seeds.nutrition_subset_columns`` and the feature
marts (one frame per block letter with a ``vector`` list column and ``has_block``), the C-block
variants of ``fct_features_compound_variants``, and the target-leak audit (:mod:`.guards`)."""

from __future__ import annotations

import re
from collections.abc import Mapping

import polars as pl

from warehouse.ranking.ablation import unfittable_reason
from warehouse.ranking.design import BLOCK_LETTERS, Design, DesignError, design_from_frames
from warehouse.ranking.guards import assert_no_target_leak

MAIN_C_AGGREGATION = "log"
#: feature mart of each block letter (``python_models/marts/features/``)
FEATURE_MARTS = {
    "S": "fct_features_subset",
    "N": "fct_features_nutrition",
    "C": "fct_features_compound",
    "T": "fct_features_text",
    "I": "fct_features_image",
}


def _block_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """``category, product_code, vector`` with the vector null where ``has_block`` is false:
    an analog gets the feature mart's zero row for the supervised models (the design's
    ``missing='zero'``, marked in ``Design.absent``), which the distance baselines skip like a
    reference's NaN (= modality absent)."""
    return frame.select(
        "category",
        "product_code",
        pl.when(pl.col("has_block")).then(pl.col("vector")).otherwise(None).alias("vector"),
    )


def _variant_name(text: str) -> str:
    return re.sub(r"[^\w.-]", "-", text)


def compound_variant_frames(variants: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """C-block variants of ``fct_features_compound_variants`` as design blocks: the main
    encoder with another aggregation rule -> ``C:<aggregation>``; another encoder with the main
    (log) rule -> ``C:<encoder>`` (the encoder swap). The main row (``is_main``) is ``C``."""
    if variants.height == 0:
        return {}
    main = variants.filter(pl.col("is_main"))
    if main.height == 0:
        return {}
    main_encoder = main["encoder"][0]
    out: dict[str, pl.DataFrame] = {}
    for (encoder, aggregation), rows in variants.filter(~pl.col("is_main")).group_by(
        ["encoder", "aggregation"], maintain_order=True
    ):
        if encoder == main_encoder:
            name = f"C:{_variant_name(str(aggregation))}"
        elif aggregation == MAIN_C_AGGREGATION:
            name = f"C:{_variant_name(str(encoder))}"
        else:
            continue  # encoder x rule cross terms are not in the grid
        out[name] = _block_frame(rows)
    return dict(sorted(out.items()))


def warehouse_design(
    products: pl.DataFrame,
    panel_means: pl.DataFrame,
    categories: pl.DataFrame,
    nutrition_subset_columns: pl.DataFrame,
    features: Mapping[str, pl.DataFrame],
    compound_variants: pl.DataFrame | None,
    max_analogs: int,
) -> Design:
    """The design of the build: the feature marts by letter (``features``: ``S, N, C, T, I`` ->
    the mart's frame), a block no product has is absent (left out of the feature set, never
    faked); the main feature set is ``S`` + the present letters in ``SNCTI`` order. The leak
    audit runs when the default stage can (:func:`.ablation.unfittable_reason` with
    ``max_analogs``)."""
    frames: dict[str, pl.DataFrame] = {}
    for letter, frame in features.items():
        if letter not in BLOCK_LETTERS:
            raise DesignError(f"unknown feature block {letter!r}; expected one of SNCTI")
        if frame.height and frame["has_block"].any():
            frames[letter] = _block_frame(frame)
    if compound_variants is not None and "C" in frames:
        frames.update(compound_variant_frames(compound_variants))
    letters = "S" + "".join(c for c in "NCTI" if c in frames)
    design = design_from_frames(
        products.filter(
            pl.col("category").is_in(
                categories.filter(pl.col("is_benchmark"))["category"].to_list()
            )
        ),
        panel_means,
        frames,
        categories=categories,
        subset_columns=nutrition_subset_columns,
        feature_set=letters,
        missing="zero",
    )
    if unfittable_reason(design, max_analogs) is None:
        assert_no_target_leak(design)
    return design
