"""The dbt entry points of warehouse.ranking.marts on frames shaped like the feature marts: the
design they build (absent blocks, has_block, C variants), the rows for fct_oof_predictions and
dim_food_fits, agg_ablation_metrics, and the too-small design that leaves the marts empty."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from warehouse.config import SEEDS_DIR
from warehouse.ranking import marts
from warehouse.ranking.ablation import grid_jobs, unfittable_reason
from warehouse.ranking.nested import GEMINI_STEM
from warehouse.ranking.oof import FOOD_OOF_SCHEMA
from warehouse.ranking.synthetic import SMALL_CATEGORIES, SMALL_DIMS, synthetic_design


def _frames(design, has_c: np.ndarray, has_i: bool = True):
    """Warehouse-shaped frames (dim_products, fct_panel_means, seeds, feature marts) of a
    synthetic design; C is missing where ``has_c`` is false (zero row, has_block false)."""
    keys = design.keys.with_columns(pl.lit(True).alias("is_analog"))
    refs = design.reference_keys.with_columns(pl.lit(False).alias("is_analog"))
    products = pl.concat([keys.drop("hbt_group"), refs], how="diagonal").with_columns(
        pl.lit("simulation").alias("data_origin")
    )
    cats = pl.read_csv(SEEDS_DIR / "categories.csv")
    subset_cols = pl.read_csv(SEEDS_DIR / "nutrition_subset_columns.csv")
    means = keys.select("category", "product_code").with_columns(
        pl.Series("panel_mean", design.target)
    )
    key_frame = pl.concat(
        [keys.select("category", "product_code"), refs.select(pl.exclude("subset", "is_analog"))]
    )

    def block(letter, present, scale=1.0):
        mat = np.vstack([design.blocks[letter], design.reference_blocks[letter]]) * scale
        mat = np.where(present[:, None], mat, 0.0)
        return key_frame.with_columns(
            pl.Series("vector", mat.tolist(), dtype=pl.List(pl.Float64)),
            pl.Series("has_block", present),
            pl.lit(f"enc_{letter}").alias("encoder"),
            pl.lit("1").alias("encoder_version"),
        )

    n_all = key_frame.height
    everyone = np.ones(n_all, dtype=bool)
    features = {
        "S": block("S", everyone),
        "N": block("N", everyone),
        "C": block("C", has_c),
        "T": block("T", everyone),
        "I": block("I", everyone if has_i else ~everyone),
    }
    variants = pl.concat(
        [
            features["C"].with_columns(
                pl.lit("enc_C").alias("encoder"),
                pl.lit(agg).alias("aggregation"),
                pl.lit(agg == "log").alias("is_main"),
            )
            for agg in ("log", "max")
        ]
        + [
            features["C"].with_columns(
                pl.lit("dmpnn d300").alias("encoder"),
                pl.lit(agg).alias("aggregation"),
                pl.lit(False).alias("is_main"),
            )
            for agg in ("log", "max")
        ]
    )
    return products, means, cats, subset_cols, features, variants


@pytest.fixture(scope="module")
def small():
    return synthetic_design(seed=4, plant="nutrition", dims=SMALL_DIMS, layout=SMALL_CATEGORIES)


def test_design_from_feature_marts(small):
    n_all = small.n + small.reference_keys.height
    has_c = np.arange(n_all) % 3 != 0
    products, means, cats, subset_cols, features, variants = _frames(small, has_c, has_i=False)
    d = marts.food_design(products, means, cats, subset_cols, features, variants)
    assert d.feature_set == "SNCT"  # I: no product has it -> absent, not faked
    assert sorted(d.blocks) == ["C", "C:dmpnn-d300", "C:max", "N", "S", "T"]
    assert d.data_origin == "simulation" and d.n == small.n
    np.testing.assert_array_equal(d.target, small.target)
    # an analog without C gets the mart's zero row, a reference without C is an absent modality
    np.testing.assert_array_equal(d.block("C")[~has_c[: small.n]], 0.0)
    ref_missing = ~has_c[small.n :]
    assert np.isnan(d.reference_blocks["C"][ref_missing]).all()
    assert np.isfinite(d.reference_blocks["C"][~ref_missing]).all()
    np.testing.assert_allclose(d.block("T"), small.block("T"))
    enc = json.loads(marts.feature_encoders_json(features))
    assert enc["T"] == "enc_T@1" and set(enc) == set("SNCTI")


def test_grid_skips_the_distance_set_a_category_cannot_score(small):
    """C missing for every product of one category (the small FoodAtlas extracts do this to the
    default build): the ablation grid skips the distance baselines on C alone, naming the analog
    with no modality (no made-up score), and keeps every set where another block gives that
    analog a vector, and every supervised set."""
    categories = pl.concat(
        [small.keys.select("category"), small.reference_keys.select("category")]
    ).to_series()
    d = marts.food_design(*_frames(small, (categories != categories[0]).to_numpy()))
    assert {"C", "C:max"} <= set(d.blocks)
    jobs, skipped = grid_jobs(d)
    first = small.keys.row(0, named=True)
    assert skipped == [
        f"C (distance: analog {first['category']}:{first['product_code']} has no modality among"
        " ['C'] (no vector, or no reference of its category with one))"
    ]
    distance = {(j.model, j.feature_set.name) for j in jobs if j.model.startswith("dist_pred")}
    assert ("dist_pred_cosine", "C") not in distance and ("dist_pred_l2", "NC") in distance
    assert ("dist_pred_cosine", "NCTI[C=max]") in distance
    assert any(j.feature_set.name == "SC" for j in jobs), "supervised sets with C still fit"


def test_default_stage_rows_dim_and_ablation(small, tmp_path):
    n_all = small.n + small.reference_keys.height
    products, means, cats, subset_cols, features, variants = _frames(
        small, np.ones(n_all, dtype=bool)
    )
    d = marts.food_design(products, means, cats, subset_cols, features, variants)
    oof = small.keys.select("category", "product_code").with_columns(
        pl.lit(GEMINI_STEM).alias("model_file_stem"),
        pl.Series("predicted_score", np.random.default_rng(3).random(small.n)),
    )
    enc = marts.feature_encoders_json(features)
    rows = marts.fct_food_oof_predictions(d, oof, enc, cache_dir=tmp_path, n_jobs=1)
    assert rows.columns == list(FOOD_OOF_SCHEMA)
    assert rows.height == 18 * small.n and rows["source"].unique().to_list() == ["warehouse_fit"]
    assert (rows["feature_encoders_json"] == enc).all()
    dim = marts.dim_food_fits(rows)
    assert dim.height == 18 and dim["fit_id"].is_unique().all()
    assert dim["is_ensemble"].sum() == 3 + 8 and dim["is_distance"].sum() == 2
    assert (dim["n_rows"] == small.n).all()
    # a rebuild reads every fit: same rows, byte for byte
    again = marts.fct_food_oof_predictions(d, oof, enc, cache_dir=tmp_path, n_jobs=1)
    assert again.equals(rows)
    table = marts.agg_ablation_metrics(d, rows, cache_dir=tmp_path, n_boot=200)
    # the default stage's fits are grid cells: 5 supervised on SNCTI + 2 distance on NCI
    assert table.height == 7 and table["is_default_stage"].all()
    assert (table["n_grid_fits_missing"] == table["n_grid_fits"] - 7).all()
    assert table["ablation_key"].is_unique().all()


def test_too_small_design_leaves_the_marts_empty(small, tmp_path):
    tiny = (("Bacon", "meat", "meat", 3, 1), ("Butter", "nonsweet_dairy", "nonsweet_dairy", 2, 1))
    d0 = synthetic_design(seed=1, dims=SMALL_DIMS, layout=tiny)
    n_all = d0.n + d0.reference_keys.height
    products, means, cats, subset_cols, features, variants = _frames(d0, np.ones(n_all, bool))
    d = marts.food_design(products, means, cats, subset_cols, features, variants)
    assert "Bacon has 3 analogs (< 5; 2 such categories)" in unfittable_reason(
        d, marts.max_analogs_default_stage()
    )
    rows = marts.fct_food_oof_predictions(d, pl.DataFrame(), "{}", cache_dir=tmp_path)
    assert rows.height == 0 and rows.columns == list(FOOD_OOF_SCHEMA)
    assert marts.dim_food_fits(rows).height == 0
    table = marts.agg_ablation_metrics(d, rows, cache_dir=tmp_path)
    assert table.height == 0 and "ablation_key" in table.columns
    assert not any(tmp_path.iterdir())  # nothing was fitted


def test_stage_off_leaves_the_marts_empty_and_size_is_no_reason(small, tmp_path):
    d0 = synthetic_design(seed=1, dims=SMALL_DIMS)
    n_all = d0.n + d0.reference_keys.height
    products, means, cats, subset_cols, features, variants = _frames(d0, np.ones(n_all, bool))
    d = marts.food_design(products, means, cats, subset_cols, features, variants)
    assert unfittable_reason(d, marts.max_analogs_default_stage()) is None
    # above the cap the stage runs grouped K-fold (tests/unit/test_ranking_kfold.py)
    assert unfittable_reason(d, d.n - 1) is None
    # the dbt var food_models_max_analogs = 0 (tastebench build --no-food-models)
    assert "switched off" in unfittable_reason(d, 0)
    rows = marts.fct_food_oof_predictions(d, pl.DataFrame(), "{}", tmp_path, max_analogs=0)
    assert rows.height == 0 and rows.columns == list(FOOD_OOF_SCHEMA)
    table = marts.agg_ablation_metrics(d, rows, cache_dir=tmp_path, max_analogs=0)
    assert table.height == 0
    assert not any(tmp_path.iterdir())  # nothing was fitted
