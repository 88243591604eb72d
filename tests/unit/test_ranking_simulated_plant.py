"""Planted signal end to end from the simulator: `tastebench simulate --plant-signal nutrition`
writes a bundle whose panel preference follows protein per 100 g; Bradley-Terry and Ridge on
S + N (the six label nutrients per 100 g, as the nutrition block reads them) rank its analogs
well above chance (main-table BCa CI above .5), and permuting N inside each category takes the
signal away (BT back in a CI around .5; Ridge below its planted CI and not above chance: the
LOOCV bias of pointwise models, docs/ranking.md). Likewise `--plant-signal text` (fewer
top-level ingredients = higher mean) with S + T, T = the packaged MiniLM embedding of the
cleaned ingredient list (the features library's text block; marked text_model).

The design is read straight from the bundle's CSVs (no warehouse build: the build's N and T
blocks are these columns, tested in the features tests), so the nutrition test runs in seconds,
the text one in about half a minute when its vectors are not yet in the session's cache."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from tests.conftest import built_once
from warehouse.cli import app
from warehouse.config import SEEDS_DIR, load_settings
from warehouse.ranking.design import design_from_frames
from warehouse.ranking.planted import permutation_summary, planted_signal_check
from warehouse.simulate import schema as sim_schema

# the nutrition block's six nutrients (features/nutrition.py), label columns and unit factor to g
NUTRIENTS = {
    "Total Fat (g)": 1.0,
    "Sodium (mg)": 1e-3,
    "Protein (g)": 1.0,
    "Dietary Fiber (g)": 1.0,
    "Total Carbohydrate (g)": 1.0,
    "Total Sugars (g)": 1.0,
}


def _design_from_bundle(bundle: Path):
    ratings = pl.read_csv(bundle / sim_schema.RATINGS_FILE, infer_schema_length=None)
    labels = pl.read_csv(bundle / sim_schema.LABELS_FILE)
    prods = pl.read_csv(
        bundle / sim_schema.PRODUCTS_FILE, schema_overrides={"UPC": pl.String}
    ).rename({"Category": "category", "Product_Code": "product_code"})
    categories = pl.read_csv(SEEDS_DIR / "categories.csv")
    means = (
        ratings.filter(pl.col("year").is_in([2025, 2026]))
        .group_by(pl.col("product_category").alias("category"), "product_code")
        .agg(pl.col("similarity").cast(pl.Float64).mean().alias("panel_mean"))
    )
    products = labels.select(
        "category", "product_code", (~pl.col("is_reference")).alias("is_analog")
    ).join(categories.select("category", "subset", "hbt_group"), on="category")
    per_100g = [
        (pl.col(col).cast(pl.Float64) * factor * 100.0 / pl.col("Serving Size (g)")).fill_null(0.0)
        for col, factor in NUTRIENTS.items()
    ]
    n_block = prods.select("category", "product_code", pl.concat_list(per_100g).alias("vector"))
    return design_from_frames(
        products, means, {"N": n_block}, categories=categories, data_origin="simulation"
    )


def _simulate(public_dir: Path, out: Path, kind: str) -> Path:
    result = CliRunner().invoke(
        app, ["simulate", str(out), "--plant-signal", kind], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return out


def _check(table: pl.DataFrame) -> None:
    got = {
        (r["model"], r["variant"]): r
        for r in table.filter(pl.col("draw") == 0).iter_rows(named=True)
    }
    for model in ("bradley_terry", "ridge"):
        row = got[(model, "planted")]
        assert row["pairwise_accuracy"] > 0.65 and row["ci_excludes_half"], row
    summary = {r["model"]: r for r in permutation_summary(table).iter_rows(named=True)}
    for model in ("bradley_terry", "ridge"):
        assert summary[model]["planted_rank"] == 1, summary[model]
    bt = got[("bradley_terry", "permuted")]
    assert abs(bt["pairwise_accuracy"] - 0.5) < 0.06, bt
    ridge = got[("ridge", "permuted")]
    assert ridge["pairwise_accuracy"] < got[("ridge", "planted")]["ci_lo"], ridge
    assert ridge["pairwise_accuracy"] < 0.5 + 0.03, ridge


def _table(design, block: str) -> pl.DataFrame:
    return planted_signal_check(design, block, "S" + block, n_boot=2000, n_jobs=1, n_permutations=4)


def _nutrition_table(public_dir: Path, root: Path) -> pl.DataFrame:
    design = _design_from_bundle(_simulate(public_dir, root / "bundle", "nutrition"))
    assert design.n == 215 and np.isfinite(design.block("N")).all()
    return _table(design, "N")


def test_simulated_nutrition_plant_is_recovered_and_permutation_removes_it(
    public_dir, tmp_path_factory
):
    """The check's table is computed once and kept between runs while nothing it depends on
    changed (``built_once``); so is the text one's."""
    make = partial(_nutrition_table, public_dir)
    _check(built_once(tmp_path_factory, "simulated_plant_nutrition", make))


def _text_table(public_dir: Path, root: Path) -> pl.DataFrame:
    from warehouse.features.text import text_block

    bundle = _simulate(public_dir, root / "bundle", "text")
    design = _design_from_bundle(bundle)
    labels = pl.read_csv(bundle / "product_labels_manually_cleaned.csv").select(
        "category", "product_code", "cleaned_ingredients", pl.lit("simulation").alias("data_origin")
    )
    # the session's content-addressed vector cache (tests/conftest.py): the bundle is the same
    # every run (seed 42), so only the first run of a checkout encodes its texts
    t = text_block(labels, load_settings().features_cache_dir).to_frame()
    design = design_from_frames(
        design.keys.with_columns(pl.lit(True).alias("is_analog")),
        design.keys.select("category", "product_code").with_columns(
            pl.Series("panel_mean", design.target)
        ),
        {"T": t.select("category", "product_code", "vector")},
        data_origin="simulation",
    )
    assert design.n == 215 and design.block("T").shape == (215, 384)
    return _table(design, "T")


@pytest.mark.text_model
def test_simulated_text_plant_is_recovered_and_permutation_removes_it(public_dir, tmp_path_factory):
    make = partial(_text_table, public_dir)
    _check(built_once(tmp_path_factory, "simulated_plant_text", make))
