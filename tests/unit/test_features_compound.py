"""Block C on hand-made FoodAtlas frames: parsing, matching, units, weighting, the first-three
rule, aggregation variants, coverage; and the v4 layout end to end through the staging SQL."""

from __future__ import annotations

import math
import re
from pathlib import Path

import duckdb
import numpy as np
import polars as pl
import pytest

from warehouse.features import FeatureError, compound_features
from warehouse.features.compounds import (
    FoodAtlasGraph,
    _aggregate,
    main_encoder,
    to_mg_per_100g,
)
from warehouse.features.ingredients import (
    FoodMatcher,
    clean_ingredient,
    normalize_name,
    parse_ingredients,
)

REPO = Path(__file__).resolve().parents[2]

# -- parsing and matching ---------------------------------------------------------------------


def test_parse_keeps_label_order_and_strips_brackets_and_percentages() -> None:
    text = (
        "Water | Protein Blend (Rice Flour, Wheat (Gluten) Protein) | Cocoa 12% | "
        "Contains 2% or less of: Salt | Natural Flavors* | Soy Protein(Water, Soy | | ."
    )
    assert parse_ingredients(text) == [
        "Water",
        "Protein Blend",
        "Cocoa",
        "Salt",
        "Natural Flavors",
        "Soy Protein",
    ]
    assert clean_ingredient("Less than 2% of Garlic") == "Garlic"
    assert parse_ingredients(None) == []


def test_normalize_name_singularizes_and_folds() -> None:
    assert normalize_name("Tomatoes") == "tomato"
    assert normalize_name("Berries & Jalapeño Peppers") == "berry and jalapeno pepper"
    assert normalize_name("Hummus") == "hummus"  # -us is not a plural


def _foods(*rows: tuple[str, str, list[str] | None]) -> pl.DataFrame:
    return pl.DataFrame(
        [list(r) for r in rows],
        schema={
            "food_entity_id": pl.String,
            "food_name": pl.String,
            "synonyms": pl.List(pl.String),
        },
        orient="row",
    )


SYN = pl.DataFrame({"ingredient_name": ["soya", "cacao"], "food_name": ["soybean", "cocoa"]})


def test_match_rules_in_order() -> None:
    foods = _foods(
        ("f1", "garlic", None), ("f2", "soybean", ["edamame"]), ("f3", "cocoa", None),
        ("f4", "cocoa", None), ("f5", "tomato", None),
    )  # fmt: skip
    m = FoodMatcher(foods, SYN)
    assert m.match("Garlic").rule == "exact"
    assert m.match("EDAMAME").rule == "exact"  # a FoodAtlas synonym, case-folded
    assert m.match("Tomatoes").rule == "normalized"
    hit = m.match("Organic Cocoa Powder")
    assert (hit.rule, hit.food_name, hit.food_entity_ids) == (
        "modifier_stripped",
        "cocoa",
        ("f3", "f4"),
    )
    assert m.match("Soya Protein Isolate").rule == "synonym"  # stripped, then the seed
    assert m.match("Cacao").food_name == "cocoa"
    assert m.match("Coconut Oil").rule == "none"  # whole words only: never 'cocoa'
    assert m.match("Protein").rule == "none"  # nothing left after stripping


def test_synonym_seed_errors_name_the_seed() -> None:
    bad = pl.DataFrame({"ingredient_name": ["soy", "Soy"], "food_name": ["soybean", "tofu"]})
    with pytest.raises(FeatureError, match="foodatlas_food_synonyms.*maps to both"):
        FoodMatcher(_foods(("f1", "soybean", None)), bad)


# -- units and aggregation ----------------------------------------------------------------------


def test_units_convert_to_mg_per_100g_before_anything_else() -> None:
    values = pl.Series(["0.1", "500", "2", "1", "5", None])
    units = pl.Series(["%", "mg/100g", "g / 100 g", "mg/100 ml", "µg/g", "mg/100g"])
    out = to_mg_per_100g(values, units).to_list()
    # 0.1 % = 0.1 g/100 g = 100 mg/100 g; a volume unit has no density: not converted
    assert out == [pytest.approx(100.0), 500.0, 2000.0, None, pytest.approx(0.5), None]


def test_log_weighting_of_two_compounds_by_hand() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 1.0]])
    conc = np.array([math.e**2 - 1, math.e - 1])  # log1p -> 2 and 1
    out = _aggregate(vectors, conc, "log")
    w1, w2 = 2 + 1e-6, 1 + 1e-6
    np.testing.assert_allclose(out, [w1 / (w1 + w2), w2 / (w1 + w2)], rtol=0, atol=1e-15)
    assert out[0] == pytest.approx(2 / 3, abs=1e-6)
    # no concentration at all: every weight is 1e-6, i.e. the uniform mean
    np.testing.assert_allclose(_aggregate(vectors, np.array([np.nan, np.nan]), "log"), [0.5, 0.5])


def test_aggregation_variants_by_hand() -> None:
    vectors = np.array([[1.0], [2.0], [3.0], [4.0]])
    conc = np.array([10.0, np.nan, 30.0, 20.0])
    assert _aggregate(vectors, conc, "uniform")[0] == pytest.approx(2.5)
    assert _aggregate(vectors, conc, "max")[0] == 4.0
    assert _aggregate(vectors, conc, "top3")[0] == pytest.approx((3 + 4 + 1) / 3)  # 30, 20, 10
    lin = (10 * 1 + 0 * 2 + 30 * 3 + 20 * 4 + 1e-6 * 10) / (60 + 4e-6)
    assert _aggregate(vectors, conc, "linear")[0] == pytest.approx(lin, rel=1e-12)
    with pytest.raises(FeatureError, match="unknown aggregation"):
        _aggregate(vectors, conc, "median")


# -- the block on a tiny graph -----------------------------------------------------------------


def _graph() -> FoodAtlasGraph:
    foods = _foods(("f1", "garlic", None), ("f2", "soybean", None), ("f3", "pea", None))
    contains = pl.DataFrame(
        {
            "food_entity_id": ["f1", "f1", "f2", "f3", "f3"],
            "compound_entity_id": ["cA", "cB", "cC", "cD", "cX"],
            "edge_id": ["e1", "e2", "e3", "e4", "e5"],
        }
    )
    conc = pl.DataFrame(
        {
            "edge_id": ["e1", "e1", "e2", "e4"],
            "conc_value": ["0.1", "500", "2", "1"],
            "conc_unit": ["%", "mg/100g", "g/100g", "mg/100 ml"],
        }
    )
    compounds = pl.DataFrame(
        {
            "compound_entity_id": ["cA", "cB", "cC", "cD", "cX"],
            "pubchem_cid": [1, None, 3, 4, 99],
            "inchikey": [None, "KEYB", None, None, None],
        }
    )
    return FoodAtlasGraph("v4", foods, contains, conc, compounds)


MOLECULES = pl.DataFrame(
    {
        "canonical_smiles": ["A", "B", "C", "D"],
        "pubchem_cid": [1.0, None, 3.0, 4.0],
        "inchikey": ["KEYA", "KEYB", "KEYC", "KEYD"],
    }
)
EMB = pl.DataFrame(
    {
        "canonical_smiles": ["A", "B", "C", "D"],
        "encoder": ["fp"] * 4,
        "fit_hash": ["h"] * 4,
        "embedding": [[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [4.0, 0.0]],
    }
)
PRODUCTS = pl.DataFrame(
    {
        "category": ["Bacon", "Bacon"],
        "product_code": [2, 1],
        "data_origin": ["test", "test"],
        "cleaned_ingredients": [
            "Water | Salt",
            "Water | Pea Protein Isolate (Pea, Water) | Salt | Garlic Powder | Soya | Garlic",
        ],
    }
)


def test_first_three_mapped_ingredients_with_units_and_log_weights() -> None:
    res = compound_features(PRODUCTS, _graph(), MOLECULES, EMB, SYN)
    blk = res.blocks[("fp", "log")]
    assert blk.keys["product_code"].to_list() == [1, 2]  # sorted keys
    # garlic: A averages 0.1 % (=100) and 500 mg/100 g -> 300; B 2 g/100 g -> 2000
    wa, wb = math.log1p(300) + 1e-6, math.log1p(2000) + 1e-6
    garlic = np.array([wa, wb]) / (wa + wb)
    pea = np.array([4.0, 0.0])  # D only (cX has no structure); its volume unit is not converted
    soy = np.array([2.0, 2.0])  # via the synonym seed; no concentration -> uniform
    # first three usable in label order: pea, garlic powder, soya; the last 'Garlic' is not used
    np.testing.assert_allclose(blk.matrix[0], (pea + garlic + soy) / 3, rtol=0, atol=1e-15)
    assert blk.has_block.tolist() == [True, False]
    assert not blk.matrix[1].any()
    cov = blk.extra.row(0, named=True)
    assert cov["n_ingredients_parsed"] == 6
    assert cov["n_ingredients_mapped"] == 4
    assert cov["n_ingredients_used"] == 3
    assert cov["n_compounds_linked"] == 5
    assert cov["n_compounds_with_structure"] == 4  # cB via InChIKey, cX unresolved
    assert cov["n_compounds_used"] == 4
    assert cov["n_compounds_used_with_concentration"] == 2
    assert blk.extra.row(1, named=True)["n_ingredients_parsed"] == 2
    units = {r["conc_unit"]: r for r in res.units.iter_rows(named=True)}
    assert units["mg/100 ml"]["n_converted"] == 0 and units["%"]["n_converted"] == 1
    rules = res.ingredients.filter(pl.col("product_code") == 1)["match_rule"].to_list()
    assert rules == ["none", "modifier_stripped", "none", "modifier_stripped", "synonym", "exact"]


def test_every_variant_and_encoder_choice() -> None:
    emb = pl.concat([EMB, EMB.with_columns(encoder=pl.lit("dmpnn"), fit_hash=pl.lit("k"))])
    res = compound_features(PRODUCTS, _graph(), MOLECULES, emb, SYN)
    assert len(res.blocks) == 10
    assert main_encoder([e for e, _ in res.blocks]) == "dmpnn"
    assert main_encoder(["morgan2_2048_tsvd64"]) == "morgan2_2048_tsvd64"
    top = res.blocks[("fp", "max")].matrix[0]
    np.testing.assert_allclose(top, (np.array([4.0, 0]) + np.array([1.0, 1]) + [2.0, 2]) / 3)
    with pytest.raises(FeatureError, match="encoder 'x' has no rows"):
        compound_features(PRODUCTS, _graph(), MOLECULES, EMB, SYN, encoders=["x"])


def test_no_mapped_ingredient_anywhere_is_recorded_not_faked() -> None:
    graph = _graph()
    empty = FoodAtlasGraph("v1", graph.foods.clear(), graph.contains.clear(),
                           graph.concentrations.clear(), graph.compounds.clear())  # fmt: skip
    blk = compound_features(PRODUCTS, empty, MOLECULES, EMB, SYN).blocks[("fp", "log")]
    assert blk.is_absent and not blk.matrix.any()
    assert blk.extra["n_ingredients_parsed"].to_list() == [6, 2]


# -- the v4 layout through the real staging SQL -------------------------------------------------


def _render(sql_path: Path) -> str:
    """A staging model's SQL with its sources as raw tables and its base models inlined."""
    sql = sql_path.read_text()
    sql = re.sub(r"\{\{\s*source\('foodatlas',\s*'(\w+)'\)\s*\}\}", r'raw."\1"', sql)
    return re.sub(
        r"\{\{\s*ref\('(base_foodatlas__\w+)'\)\s*\}\}",
        lambda m: f"(\n{_render(sql_path.parent / 'base' / f'{m.group(1)}.sql')})",
        sql,
    )


def test_v4_fixture_through_staging_sql(tmp_path: Path, data_mirror: Path) -> None:
    from tests.unit.test_public_loaders import _write_v4_fixture
    from warehouse.config import load_settings
    from warehouse.features import marts
    from warehouse.sources import public
    from warehouse.sources.load import write_raw

    settings = load_settings(mirror=data_mirror)
    root = tmp_path / "foodatlas-v4.0"
    _write_v4_fixture(root)
    con = duckdb.connect()
    write_raw(con, public.read_foodatlas_v1(settings) + public.read_foodatlas_v4(root, settings))
    staging = REPO / "models" / "staging" / "foodatlas"
    frames = {
        name: con.sql(_render(staging / f"stg_foodatlas__{name}.sql")).pl()
        for name in ("entities", "edges", "concentrations")
    }
    conc = frames["concentrations"].sort("edge_id")
    assert conc.select("edge_id", "conc_value", "conc_unit").rows() == [
        ("v4:e1:contains:e2", 1.5, "mg/100g"),
        ("v4:e1:contains:e3", None, None),  # attestation a2 has no concentration
    ]
    graph = marts.foodatlas_graph(frames["entities"], frames["edges"], frames["concentrations"])
    assert graph.kg_version == "v4"  # auto: v4 has contains edges
    molecules = pl.DataFrame(
        {"canonical_smiles": ["G", "S"], "pubchem_cid": [5280961, 5988], "inchikey": [None, None]}
    )
    emb = pl.DataFrame(
        {
            "canonical_smiles": ["G", "S"],
            "encoder": ["fp", "fp"],
            "fit_hash": ["h", "h"],
            "embedding": [[1.0, 0.0], [0.0, 1.0]],
        }
    )
    products = pl.DataFrame(
        {
            "category": ["Milk"],
            "product_code": [1],
            "data_origin": ["test"],
            "cleaned_ingredients": ["Filtered Water | Soy Protein Isolate | Sugar"],
        }
    )
    res = compound_features(products, graph, molecules, emb, SYN)
    blk = res.blocks[("fp", "log")]
    # 'soy' is a FoodAtlas synonym of soybean; genistein 1.5 mg/100 g, sucrose none (weight 1e-6)
    wg, ws = math.log1p(1.5) + 1e-6, 1e-6
    np.testing.assert_allclose(blk.matrix[0], [wg / (wg + ws), ws / (wg + ws)], atol=1e-15)
    assert res.ingredients["match_rule"].to_list() == ["none", "modifier_stripped", "none"]
    v1 = marts.foodatlas_graph(
        frames["entities"], frames["edges"], frames["concentrations"], kg_version="v1"
    )
    assert sorted(v1.foods["food_name"].unique()) == ["cocoa", "garlic"]
    with pytest.raises(FeatureError, match="kg_version"):
        marts.foodatlas_graph(frames["entities"], frames["edges"], frames["concentrations"], "v9")


def test_coverage_of_the_compound_block_by_hand() -> None:
    from warehouse.features import coverage_table

    blk = compound_features(PRODUCTS, _graph(), MOLECULES, EMB, SYN).blocks[("fp", "log")]
    row = coverage_table([blk]).row(0, named=True)
    # product 1: 6 parsed, 4 mapped, 5 compounds linked, 4 used; product 2: 2 parsed, nothing else
    assert (row["ingredients_parsed_mean"], row["ingredients_parsed_max"]) == (4.0, 6.0)
    assert (row["ingredients_mapped_mean"], row["ingredients_mapped_min"]) == (2.0, 0.0)
    assert (row["compounds_linked_median"], row["compounds_used_max"]) == (2.5, 4.0)
    assert row["share_with_block"] == 0.5 and not row["is_absent"]
