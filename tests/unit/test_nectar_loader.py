"""NECTAR bundle validation: each bad input is a clear error naming file, row and column."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from warehouse.errors import DataValidationError
from warehouse.sources.nectar import read_bundle

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "nectar_mini"
RATINGS = "nectar_consolidated_sensory_rating.csv"
PRODUCTS = "nectar_consolidated_ingredients_nutrition.csv"


@pytest.fixture(scope="module")
def croissant(public_dir: Path) -> Path:
    return public_dir / "croissant" / "nectar.json"


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    target = tmp_path / "bundle"
    shutil.copytree(FIXTURE, target)
    return target


def _edit(path: Path, fn) -> None:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame = fn(frame)
    frame.to_csv(path, index=False)


def test_fixture_bundle_validates(croissant: Path) -> None:
    b = read_bundle(FIXTURE, croissant)
    assert b.data_origin == "test_fixture"
    assert len(b.tables[RATINGS]) == 4 * 4 + 3 * 3
    assert b.tables[RATINGS]["similarity"].dtype == "Float64"
    assert b.tables[RATINGS]["respondent"].dtype == "Int64"
    assert b.tables["nectar_product_labels.csv"]["is_reference"].dtype == "boolean"
    # text columns keep the literal "No response" (staging maps it to null)
    assert (b.tables[RATINGS]["brand"] == "No response").all()
    assert set(b.images["category_folder"]) == {"Bacon", "Salted_Butter"}


def test_missing_column(bundle: Path, croissant: Path) -> None:
    _edit(bundle / RATINGS, lambda f: f.drop(columns=["similarity"]))
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    msg = str(err.value)
    assert RATINGS in msg and "missing column" in msg and "'similarity'" in msg


def test_unknown_column(bundle: Path, croissant: Path) -> None:
    _edit(bundle / PRODUCTS, lambda f: f.assign(Flavour="x"))
    with pytest.raises(DataValidationError, match=r"unknown column.*Flavour"):
        read_bundle(bundle, croissant)


def test_wrong_type_names_row_and_column_never_the_gated_value(
    bundle: Path, croissant: Path
) -> None:
    """An e-mail respondent id: the message names file, row and column, not the id (#15)."""

    def bad(f):
        f.loc[2, "respondent"] = "ann.lee@example.com"
        return f

    _edit(bundle / RATINGS, bad)
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    e = err.value
    assert (e.row, e.column) == (3, "respondent")
    assert "is not an integer" in str(e) and RATINGS in str(e)
    assert "ann.lee" not in str(e) and "example.com" not in str(e)
    # a value of a column that identifies nothing is still quoted
    _edit(bundle / RATINGS, lambda f: f.assign(respondent="101").assign(similarity="x"))
    with pytest.raises(DataValidationError, match="'x' is not a"):
        read_bundle(bundle, croissant)


def test_similarity_out_of_range(bundle: Path, croissant: Path) -> None:
    def bad(f):
        f.loc[5, "similarity"] = "8.0"
        return f

    _edit(bundle / RATINGS, bad)
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    e = err.value
    assert (e.row, e.column) == (6, "similarity")
    assert "outside the 1-7 Likert scale" in str(e)


def test_duplicate_rating(bundle: Path, croissant: Path) -> None:
    _edit(bundle / RATINGS, lambda f: pd.concat([f, f.iloc[[4]]], ignore_index=True))
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    e = err.value
    assert "duplicate rating" in str(e) and "respondent=a value (not shown" in str(e)
    assert e.row == 26 and e.column == "product_code"


def test_rating_for_unknown_product(bundle: Path, croissant: Path) -> None:
    def bad(f):
        f.loc[0, "product_code"] = "99"
        return f

    _edit(bundle / RATINGS, bad)
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    e = err.value
    assert "unknown product" in str(e) and "product_code=99" in str(e)
    assert (e.row, e.column) == (1, "product_code")


def test_unknown_category_says_where_to_add_an_alias(bundle: Path, croissant: Path) -> None:
    def bad(f):
        f.loc[1, "Category"] = "Vegan_Bacon"
        return f

    _edit(bundle / PRODUCTS, bad)
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    e = err.value
    assert "unknown category 'Vegan_Bacon'" in str(e)
    assert "seeds/category_aliases.csv" in str(e)
    assert (e.row, e.column) == (2, "Category")


def test_missing_file(bundle: Path, croissant: Path) -> None:
    (bundle / "nectar_product_labels.csv").unlink()
    with pytest.raises(DataValidationError, match="required bundle file is missing"):
        read_bundle(bundle, croissant)


def test_bad_image_path(bundle: Path, croissant: Path) -> None:
    (bundle / "images" / "2025" / "Bacon" / "notes.txt").write_text("x")
    with pytest.raises(DataValidationError, match="image path does not follow"):
        read_bundle(bundle, croissant)
