"""The calibrated NECTAR simulation (docs/benchmark.md §8): layout, gold, blocks, calibration."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest

from warehouse.config import load_settings
from warehouse.pipeline.run import default_nectar_bundle
from warehouse.simulate import (
    PUBLISHED,
    SimulationError,
    calibration_summary,
    is_valid_upc,
    simulate_bundle,
    upc_check_digit,
)
from warehouse.simulate import schema as sim_schema
from warehouse.simulate.calibration import read_bundle_ratings, summarize
from warehouse.simulate.design import IMAGE_FOLDER_VARIANTS, SUBSET_OF
from warehouse.simulate.text import clean_ingredient_list, split_top_level

GOLD = "food_similarity/results/oof_predictions/ridge_SNCTI_bench.csv"
PAIRS = "food_similarity/data/pairs.csv"
LOO = "human_baseline/results/individual_loo_accuracy.csv"
EXPECTED_TIES = {("Barista_Milk", 4, 8), ("Cheddar_Cheese", 1, 3), ("Deli_Ham", 2, 3)}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory, public_dir: Path):
    out = tmp_path_factory.mktemp("sim") / "bundle"
    report = simulate_bundle(out, public_dir)  # seed 42, scale 1: calibration computed
    return out, report


@pytest.fixture(scope="module")
def ratings(bundle) -> pd.DataFrame:
    return pd.read_csv(bundle[0] / sim_schema.RATINGS_FILE)


@pytest.fixture(scope="module")
def labels(bundle) -> pd.DataFrame:
    return pd.read_csv(bundle[0] / sim_schema.LABELS_FILE)


@pytest.fixture(scope="module")
def products(bundle) -> pd.DataFrame:
    return pd.read_csv(bundle[0] / sim_schema.PRODUCTS_FILE, dtype={"UPC": str})


def _panel_means(ratings: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    r = ratings[ratings["year"].isin([2025, 2026])]
    m = (
        r.groupby(["product_category", "product_code"])["similarity"]
        .mean()
        .rename("panel_mean")
        .reset_index()
        .rename(columns={"product_category": "category"})
    )
    return m.merge(labels[["category", "product_code", "is_reference"]], how="left")


# ------------------------------------------------------------------------------ small pieces


def test_upc_check_digit_known_codes():
    assert upc_check_digit("03600029145") == 2  # 036000291452
    assert upc_check_digit("01234567890") == 5  # 012345678905
    assert is_valid_upc("036000291452")
    assert not is_valid_upc("036000291453")
    assert not is_valid_upc("36000291452")
    with pytest.raises(ValueError):
        upc_check_digit("1234")


def test_ingredient_splitting_respects_brackets():
    text = "Water, Protein Blend (Pea, Soy [Isolate, 2%]), Oil. Contains 2% or less of: Salt, Spice"
    assert split_top_level(text) == [
        "Water",
        "Protein Blend (Pea, Soy [Isolate, 2%])",
        "Oil. Contains 2% or less of: Salt",
        "Spice",
    ]
    cleaned = "Water, Protein Blend (Pea, Soy [Isolate, 2%]), Oil, Salt, Spice"
    assert clean_ingredient_list(text) == cleaned


def test_schema_module_matches_croissant(public_dir: Path):
    doc = json.loads((public_dir / "croissant" / "nectar.json").read_text())
    sets = {rs["name"]: rs for rs in doc["recordSet"]}
    for name, fields in sim_schema.SCHEMA.items():
        fields_cr = sets[name]["field"]
        expected = [(f["source"]["extract"]["column"], f["dataType"][0]) for f in fields_cr]
        assert list(fields) == expected, name


# ------------------------------------------------------------------------------ the bundle


def test_csv_headers_and_types_follow_croissant(bundle, public_dir: Path):
    out, _ = bundle
    doc = json.loads((public_dir / "croissant" / "nectar.json").read_text())
    sets = {rs["name"]: rs for rs in doc["recordSet"]}
    for name in sim_schema.CSV_FILES:
        raw = pd.read_csv(out / name, dtype=str, keep_default_na=False)
        fields = sets[name]["field"]
        assert list(raw.columns) == [f["source"]["extract"]["column"] for f in fields], name
        for f in fields:
            col, kind = f["source"]["extract"]["column"], f["dataType"][0]
            values = raw[col][raw[col] != ""]
            if kind == "sc:Integer":
                assert values.str.fullmatch(r"-?\d+").all(), (name, col)
            elif kind == "sc:Float":
                assert pd.to_numeric(values).notna().all(), (name, col)
                assert values.str.contains(r"[.e]").all(), (name, col)
            elif kind == "sc:Boolean":
                assert set(values) <= {"True", "False"} and len(values) == len(raw), (name, col)


def test_bundle_is_byte_deterministic(bundle, data_mirror: Path, tmp_path: Path):
    """Seed 42 again, as a build makes its default bundle (under its build folder, on first use
    only): the same bytes."""
    out, report = bundle
    settings = load_settings(build_dir=tmp_path / "build", mirror=data_mirror)
    logged: list[str] = []
    again = default_nectar_bundle(settings, logged.append)
    assert again == settings.default_simulation_dir and len(logged) == 1
    for rel in sim_schema.CSV_FILES + ("SIMULATION.md", "simulation_manifest.json"):
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel
    assert default_nectar_bundle(settings, logged.append) == again and len(logged) == 1
    manifest = json.loads((out / "simulation_manifest.json").read_text())
    assert manifest["data_origin"] == "simulation" and manifest["seed"] == 42
    assert manifest["files"] == report.files
    assert "every row is simulated" in (out / "SIMULATION.md").read_text()


def test_other_seed_gives_other_ratings(bundle, public_dir: Path, tmp_path: Path):
    out, _ = bundle
    simulate_bundle(tmp_path / "seed7", public_dir, seed=7, calibrate=False)
    a = (out / sim_schema.RATINGS_FILE).read_bytes()
    assert a != (tmp_path / "seed7" / sim_schema.RATINGS_FILE).read_bytes()


def test_realized_panel_means_reproduce_public_gold(ratings, labels, public_dir: Path):
    means = _panel_means(ratings, labels)
    analogs = means[~means["is_reference"]]
    untied, ties = set(), set()
    for cat, g in analogs.groupby("category"):
        m = dict(zip(g["product_code"], g["panel_mean"], strict=True))
        for i, j in itertools.combinations(sorted(m), 2):
            if abs(m[i] - m[j]) < 1e-10:
                assert m[i] == m[j]  # bit-identical, not merely close
                ties.add((cat, i, j))
            else:
                untied.add((cat, i, j, i if m[i] > m[j] else j))
    pairs = pd.read_csv(public_dir / PAIRS)
    gold = {
        (c, min(a, b), max(a, b), h)
        for c, a, b, h in zip(
            pairs["category"],
            pairs["product_code_1"],
            pairs["product_code_2"],
            pairs["higher_rated_product"],
            strict=True,
        )
    }
    assert len(untied) == 932 and untied == gold
    assert ties == EXPECTED_TIES
    public = pd.read_csv(public_dir / GOLD)
    tied_in_public = {
        (c, a, b)
        for c, g in public.groupby("category")
        for (a, ra), (b, rb) in itertools.combinations(
            sorted(zip(g["product_code"], g["true_rank"], strict=True)), 2
        )
        if ra == rb
    }
    assert ties == tied_in_public


def test_products_codes_and_references(labels, products, ratings, public_dir: Path):
    public = pd.read_csv(public_dir / GOLD)
    n_c = public.groupby("category").size()
    assert len(labels) == 247 and labels["is_reference"].sum() == 32
    for cat, g in labels.groupby("category"):
        codes = sorted(g["product_code"])
        analogs = sorted(g.loc[~g["is_reference"], "product_code"])
        assert analogs == list(range(1, n_c[cat] + 1))
        refs = sorted(g.loc[g["is_reference"], "product_code"])
        assert refs == list(range(n_c[cat] + 1, n_c[cat] + 1 + len(refs))) and 1 <= len(refs) <= 2
        assert codes == analogs + refs
    refs = labels[labels["is_reference"]]
    assert refs["product_type"].str.startswith("animal").all()
    assert not labels.loc[~labels["is_reference"], "product_type"].str.startswith("animal").any()
    meat = labels["category"].map(SUBSET_OF).eq("meat")
    assert refs.loc[meat[refs.index], "has_meat"].all()
    assert refs.loc[~meat[refs.index], "has_dairy"].all()
    analog = labels[~labels["is_reference"]]
    # the benchmark's analog rule (docs/benchmark.md §1) must classify them as analogs
    is_ref_rule = (meat[analog.index] & analog["has_meat"]) | (
        ~meat[analog.index] & analog["has_dairy"]
    )
    assert not is_ref_rule.any()
    keyed = products.rename(columns={"Category": "category", "Product_Code": "product_code"})
    assert set(zip(keyed["category"], keyed["product_code"], strict=True)) == set(
        zip(labels["category"], labels["product_code"], strict=True)
    )
    # references are rated high: above their category's analog median and at least 4.5
    means = _panel_means(ratings, labels)
    med = means[~means["is_reference"]].groupby("category")["panel_mean"].median()
    r = means[means["is_reference"]]
    assert (r["panel_mean"].to_numpy() > med[r["category"]].to_numpy()).all()
    assert (r["panel_mean"] >= 4.5).all()


def test_rating_rows(ratings, products, labels):
    assert set(ratings["year"]) == {2025, 2026}
    years = ratings.groupby("product_category")["year"].first()
    for cat, year in years.items():
        assert year == (2025 if SUBSET_OF[cat] == "meat" else 2026)
    assert not ratings.duplicated(["product_category", "respondent", "product_code"]).any()
    sim = ratings["similarity"]
    assert sim.notna().all() and sim.between(1, 7).all() and (sim == sim.round()).all()
    for col in ("appearance", "flavor", "liking", "nutrition_purchase_intent", "texture"):
        v = ratings[col].dropna()
        assert v.between(1, 7).all() and (v == v.round()).all()
        assert ratings[col].corr(sim) > 0.2, col
    assert (ratings["purchase_intent"] == "No response").any()
    breaded = ratings["product_category"].isin(["Nuggets", "Breaded_Chicken_Filet"])
    assert ratings.loc[~breaded, ["crispiness", "breading_flavor"]].isna().all().all()
    assert ratings.loc[breaded, "crispiness"].notna().all()
    dairy = ratings["product_category"].map(SUBSET_OF).ne("meat")
    assert ratings.loc[dairy, "meatiness"].isna().all()
    # join keys agree between the files; every rated product is in the products file
    assert set(ratings["join_key"]) == set(products["join_key"])
    expected = (
        ratings["year"].astype(str)
        + "_"
        + ratings["product_category"]
        + "_"
        + ratings["product_code"].astype(str)
    )
    assert (ratings["join_key"] == expected).all()
    # the ratings file carries the product brand
    brand = products.set_index("join_key")["Brand"]
    assert (ratings["brand"] == ratings["join_key"].map(brand)).all()
    # every product has at least 100 raters (RAI) and CSV categories are canonical
    assert ratings.groupby(["product_category", "product_code"]).size().min() >= 100
    assert not set(ratings["product_category"]) & set(IMAGE_FOLDER_VARIANTS.values())


def _recover_blocks(ratings: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """(category, block_id, n_respondents, n_analogs), via warehouse.human when available."""
    frame = ratings.rename(columns={"product_category": "category", "respondent": "respondent_id"})
    frame = frame.merge(labels[["category", "product_code", "is_reference"]], how="left")
    try:
        from warehouse.human import assign_blocks
    except ImportError:
        sets = frame.groupby(["category", "respondent_id"])["product_code"].agg(
            lambda s: tuple(sorted(s))
        )
        ref_rows = labels[labels["is_reference"]]
        refs = set(zip(ref_rows["category"], ref_rows["product_code"], strict=True))
        rows = []
        for (cat, codes), grp in sets.reset_index().groupby(["category", "product_code"]):
            n_an = sum((cat, c) not in refs for c in codes)
            if len(grp) >= 20 and n_an >= 2:
                rows.append((cat, codes, len(grp), n_an))
        rows.sort(key=lambda r: (r[0], -r[2], r[1]))
        out = pd.DataFrame(rows, columns=["category", "codes", "n_respondents", "n_analogs"])
        out["block_id"] = out.groupby("category").cumcount()
        return out[["category", "block_id", "n_respondents", "n_analogs"]]
    # warehouse.human takes polars frames; this test's frames are pandas
    bp, br = (f.to_pandas() for f in assign_blocks(pl.from_pandas(frame)))
    n_r = br.groupby(["category", "block_id"]).size().rename("n_respondents")
    n_a = bp[~bp["is_reference"]].groupby(["category", "block_id"]).size().rename("n_analogs")
    return pd.concat([n_r, n_a], axis=1).reset_index()


def test_block_structure_equals_published(ratings, labels, public_dir: Path):
    got = _recover_blocks(ratings, labels).sort_values(["category", "block_id"])
    loo = pd.read_csv(public_dir / LOO)
    pub = (
        loo.groupby(["category", "block_id"])
        .agg(n_respondents=("n_analogs", "size"), n_analogs=("n_analogs", "first"))
        .reset_index()
    )
    assert len(got) == 49 and got["n_respondents"].sum() == 4664
    pd.testing.assert_frame_equal(
        got.reset_index(drop=True)[["category", "block_id", "n_respondents", "n_analogs"]],
        pub[["category", "block_id", "n_respondents", "n_analogs"]],
        check_dtype=False,
    )


def test_upcs_and_branded_ingredient_lists(products):
    assert products["UPC"].map(is_valid_upc).all()
    assert products["UPC"].is_unique
    assert products["UPC"].str.startswith("0").any()  # leading zeros survive: UPC is text
    named = [
        bool(re.search(rf"(?<!\w){re.escape(b)}(?!\w)", t, flags=re.IGNORECASE))
        for b, t in zip(products["Brand"], products["Ingredient List"], strict=True)
    ]
    share = float(np.mean(named))
    assert 0.08 <= share <= 0.3
    assert products["Brand"].nunique() > 30
    assert products["Servings Per Container (#)"].dropna().between(1, 100).all()


def test_images_layout_and_category_variants(bundle):
    out, report = bundle
    files = sorted((out / "images").rglob("*"))
    jpgs = [p for p in files if p.is_file()]
    assert len(jpgs) == report.n_images > 200
    pattern = re.compile(r"^images/(2025|2026)/[A-Za-z_0-9]+/\d+/front\.jpg$")
    for p in jpgs:
        assert pattern.match(p.relative_to(out).as_posix()), p
        assert p.read_bytes()[:2] == b"\xff\xd8"
    folders = {p.relative_to(out).parts[2] for p in jpgs}
    assert set(IMAGE_FOLDER_VARIANTS.values()) <= folders
    assert not set(IMAGE_FOLDER_VARIANTS) & folders


def test_calibration_within_tolerance(bundle):
    out, report = bundle
    cal = calibration_summary(out)
    tol = 0.03
    assert abs(cal.alpha_mean - PUBLISHED["alpha_mean"]) <= tol
    assert abs(cal.loo_median - PUBLISHED["loo_median"]) <= tol
    assert abs(cal.split_half_median - PUBLISHED["split_half_median"]) <= tol
    assert 0.45 <= cal.loo_q25 <= 0.55 and 0.70 <= cal.loo_q75 <= 0.80
    assert cal.within_tolerance()
    assert (cal.n_blocks, cal.n_panelist_blocks) == (49, 4664)
    assert report.calibration is not None
    assert report.calibration.alpha_mean == pytest.approx(cal.alpha_mean, abs=1e-12)


def test_own_calibration_backend_agrees_with_human(bundle):
    pytest.importorskip("warehouse.human")
    ratings, labels = read_bundle_ratings(bundle[0])
    own = summarize(ratings, labels, backend="own")
    human = summarize(ratings, labels, backend="human")
    assert own.alpha_mean == pytest.approx(human.alpha_mean, abs=1e-9)
    assert own.loo_median == pytest.approx(human.loo_median, abs=1e-12)
    assert own.loo_mean == pytest.approx(human.loo_mean, abs=1e-9)
    assert own.split_half_median == pytest.approx(human.split_half_median, abs=0.01)


# ------------------------------------------------------------------------------ options


def test_scale_copies_categories(public_dir: Path, tmp_path: Path):
    report = simulate_bundle(tmp_path / "s2", public_dir, scale=2, calibrate=False)
    assert report.n_categories == 48 and report.n_products == 494
    labels = pd.read_csv(tmp_path / "s2" / sim_schema.LABELS_FILE)
    assert "Bacon_s2" in set(labels["category"])
    ratings = pd.read_csv(
        tmp_path / "s2" / sim_schema.RATINGS_FILE,
        usecols=["product_category", "respondent", "product_code"],
    )
    assert ratings["respondent"].nunique() > 627
    assert report.n_published_blocks == 98


def test_plant_signal_nutrition_orders_by_protein(public_dir: Path, tmp_path: Path):
    out = tmp_path / "signal"
    simulate_bundle(out, public_dir, plant_signal="nutrition", calibrate=False)
    ratings = pd.read_csv(out / sim_schema.RATINGS_FILE)
    labels = pd.read_csv(out / sim_schema.LABELS_FILE)
    prods = pd.read_csv(out / sim_schema.PRODUCTS_FILE, dtype={"UPC": str})
    prods["protein_100g"] = (100 * prods["Protein (g)"] / prods["Serving Size (g)"]).fillna(0.0)
    m = _panel_means(ratings, labels).merge(
        prods.rename(columns={"Category": "category", "Product_Code": "product_code"})[
            ["category", "product_code", "protein_100g"]
        ]
    )
    m = m[~m["is_reference"]]
    for _, g in m.groupby("category"):
        f, y = g["protein_100g"].to_numpy(), g["panel_mean"].to_numpy()
        i, j = np.triu_indices(len(g), k=1)
        distinct = np.abs(f[i] - f[j]) > 1e-9
        assert (np.sign(f[i] - f[j]) == np.sign(y[i] - y[j]))[distinct].all()


def test_bad_arguments_and_foreign_folder(public_dir: Path, tmp_path: Path):
    with pytest.raises(SimulationError):
        simulate_bundle(tmp_path / "x", public_dir, plant_signal="image")
    with pytest.raises(SimulationError):
        simulate_bundle(tmp_path / "x", public_dir, scale=0)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(SimulationError):
        simulate_bundle(foreign, public_dir, calibrate=False)
    assert (foreign / "notes.txt").read_text() == "keep me"
