"""Planted signal end to end from the simulator: `tastebench simulate --plant-signal nutrition`
writes a bundle whose panel preference follows protein per 100 g; Bradley-Terry and Ridge on
S + N (the six label nutrients per 100 g, as the nutrition block reads them) rank its analogs
well above chance (main-table BCa CI above .5), and permuting N inside each category takes the
signal away (BT back in a CI around .5; Ridge below its planted CI and not above chance: the
LOOCV bias of pointwise models, docs/ranking.md).

The design is read straight from the bundle's CSVs (no warehouse build: the build's N block is
tested to equal these columns in the features tests), so the test runs in seconds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from warehouse.cli import app
from warehouse.config import SEEDS_DIR
from warehouse.ranking.design import design_from_frames
from warehouse.ranking.planted import planted_signal_check
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


@pytest.fixture(scope="module")
def planted_bundle(public_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("plant") / "bundle"
    result = CliRunner().invoke(
        app, ["simulate", str(out), "--plant-signal", "nutrition"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return out


def test_simulated_nutrition_plant_is_recovered_and_permutation_removes_it(planted_bundle):
    design = _design_from_bundle(planted_bundle)
    assert design.n == 215 and np.isfinite(design.block("N")).all()
    table = planted_signal_check(design, "N", "SN", n_boot=2000, n_jobs=1)
    got = {(r["model"], r["variant"]): r for r in table.iter_rows(named=True)}
    for model in ("bradley_terry", "ridge"):
        row = got[(model, "planted")]
        assert row["pairwise_accuracy"] > 0.7 and row["ci_excludes_half"], row
    bt = got[("bradley_terry", "permuted")]
    assert not bt["ci_excludes_half"] and abs(bt["pairwise_accuracy"] - 0.5) < 0.06, bt
    ridge = got[("ridge", "permuted")]
    assert ridge["ci_hi"] < got[("ridge", "planted")]["ci_lo"], ridge
    assert ridge["pairwise_accuracy"] < 0.5 + 0.03, ridge
