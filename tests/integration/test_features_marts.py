"""Feature marts after a real build: the default (simulated) bundle and the fixture bundle with
the FoodAtlas v4 fixture (issue #11, features part)."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from warehouse.features import FeatureBlock

pytestmark = pytest.mark.integration

BLOCK_MARTS = {
    "S": "fct_features_subset",
    "N": "fct_features_nutrition",
    "C": "fct_features_compound",
    "T": "fct_features_text",
    "I": "fct_features_image",
}


def _connect(warehouse):
    return duckdb.connect(str(warehouse[1].db_path), read_only=True)


@pytest.fixture(scope="module")
def con(default_warehouse):
    c = _connect(default_warehouse)
    yield c
    c.close()


def test_every_block_has_every_product_in_key_order(con) -> None:
    products = con.sql("select category, product_code from marts.dim_products").pl()
    products = products.sort("category", "product_code")
    for name, mart in BLOCK_MARTS.items():
        block = FeatureBlock.from_frame(con.sql(f"select * from marts.{mart}").pl())
        assert block.name == name
        assert block.keys.equals(products.cast(block.keys.schema)), mart
        assert set(block.data_origin) == {"simulation"}


def test_image_imputation_matches_missing_photos(con) -> None:
    photos = con.sql("select distinct product_key from staging.stg_nectar__images").pl()
    image = con.sql("select * from marts.fct_features_image").pl()
    native = set(image.filter(~image["is_imputed"] & image["has_block"])["product_key"])
    assert native == set(photos["product_key"])
    imputed = image.filter(image["is_imputed"])
    assert imputed.height == image.height - len(native)
    assert (imputed["n_imputation_neighbours"] > 0).all()


def test_compound_block_flags_agree_with_its_coverage(con) -> None:
    c = con.sql("select * from marts.fct_features_compound").pl()
    assert (c["has_block"] == (c["n_ingredients_used"] > 0)).all()
    assert (c["n_ingredients_used"] <= 3).all()
    zero = np.asarray(c.filter(~c["has_block"])["vector"].to_list())
    assert not zero.any()  # no C vector is invented for an unmapped product
    assert set(c["kg_version"]) == {"v1"}
    variants = con.sql("select * from marts.fct_features_compound_variants").pl()
    assert variants.filter(variants["is_main"]).height == c.height


def test_coverage_has_one_row_per_block(con) -> None:
    cov = con.sql("select * from marts.agg_feature_coverage order by block").pl()
    assert sorted(cov["block"]) == ["C", "I", "N", "S", "T"]
    row = {r["block"]: r for r in cov.iter_rows(named=True)}
    assert row["S"]["share_with_block"] == 1.0 and row["T"]["share_with_block"] == 1.0
    assert 0 < row["C"]["share_with_block"] < 1  # low on the v1 extracts, and shown
    assert row["C"]["ingredients_mapped_max"] >= 1 and row["S"]["ingredients_mapped_max"] is None


def test_fixture_build_uses_foodatlas_v4(fixture_warehouse) -> None:
    c = _connect(fixture_warehouse)
    try:
        kg = c.sql("select distinct kg_version from marts.fct_features_compound").pl()
        conc = c.sql("select count(*) as n from staging.stg_foodatlas__concentrations").pl()
        cov = c.sql("select block from marts.agg_feature_coverage").pl()
    finally:
        c.close()
    assert kg["kg_version"].to_list() == ["v4"]
    assert conc["n"][0] == 2  # the fixture's two attestations
    assert cov.height == 5
