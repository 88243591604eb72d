"""NECTAR bundle validation: each bad input is a clear error naming file, row and column."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl
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
    frame = pl.read_csv(path, infer_schema=False)
    fn(frame).write_csv(path)


def _set(frame: pl.DataFrame, row: int, column: str, value: str) -> pl.DataFrame:
    """``frame`` with the cell at 0-based ``row`` of ``column`` replaced by ``value``."""
    return frame.with_columns(
        pl.when(pl.int_range(pl.len()) == row)
        .then(pl.lit(value))
        .otherwise(pl.col(column))
        .alias(column)
    )


def test_fixture_bundle_validates(croissant: Path) -> None:
    b = read_bundle(FIXTURE, croissant)
    assert b.data_origin == "test_fixture"
    assert len(b.tables[RATINGS]) == 4 * 4 + 3 * 3
    assert b.tables[RATINGS]["similarity"].dtype == pl.Float64
    assert b.tables[RATINGS]["respondent"].dtype == pl.Int64
    assert b.tables["nectar_product_labels.csv"]["is_reference"].dtype == pl.Boolean
    # text columns keep the literal "No response" (staging maps it to null)
    assert (b.tables[RATINGS]["brand"] == "No response").all()
    assert set(b.images["category_folder"]) == {"Bacon", "Salted_Butter"}


def test_missing_column(bundle: Path, croissant: Path) -> None:
    _edit(bundle / RATINGS, lambda f: f.drop("similarity"))
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    msg = str(err.value)
    assert RATINGS in msg and "missing column" in msg and "'similarity'" in msg


def test_unknown_column(bundle: Path, croissant: Path) -> None:
    _edit(bundle / PRODUCTS, lambda f: f.with_columns(Flavour=pl.lit("x")))
    with pytest.raises(DataValidationError, match=r"unknown column.*Flavour"):
        read_bundle(bundle, croissant)


def test_wrong_type_names_row_and_column_never_the_gated_value(
    bundle: Path, croissant: Path
) -> None:
    """An e-mail respondent id: the message names file, row and column, not the id (#15)."""
    _edit(bundle / RATINGS, lambda f: _set(f, 2, "respondent", "ann.lee@example.com"))
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    e = err.value
    assert (e.row, e.column) == (3, "respondent")
    assert "is not an integer" in str(e) and RATINGS in str(e)
    assert "ann.lee" not in str(e) and "example.com" not in str(e)
    # a value of a column that identifies nothing is still quoted
    _edit(bundle / RATINGS, lambda f: _set(_set(f, 2, "respondent", "101"), 3, "similarity", "x"))
    with pytest.raises(DataValidationError, match="'x' is not a"):
        read_bundle(bundle, croissant)


def test_similarity_out_of_range(bundle: Path, croissant: Path) -> None:
    _edit(bundle / RATINGS, lambda f: _set(f, 5, "similarity", "8.0"))
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    e = err.value
    assert (e.row, e.column) == (6, "similarity")
    assert "outside the 1-7 Likert scale" in str(e)


def test_duplicate_rating(bundle: Path, croissant: Path) -> None:
    _edit(bundle / RATINGS, lambda f: pl.concat([f, f[4:5]]))
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    e = err.value
    assert "duplicate rating" in str(e) and "respondent=a value (not shown" in str(e)
    assert e.row == 26 and e.column == "product_code"


def test_rating_for_unknown_product(bundle: Path, croissant: Path) -> None:
    _edit(bundle / RATINGS, lambda f: _set(f, 0, "product_code", "99"))
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    e = err.value
    assert "unknown product" in str(e) and "product_code=99" in str(e)
    assert (e.row, e.column) == (1, "product_code")


def test_unknown_category_says_where_to_add_an_alias(bundle: Path, croissant: Path) -> None:
    _edit(bundle / PRODUCTS, lambda f: _set(f, 1, "Category", "Vegan_Bacon"))
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


def test_cells_convert_under_the_croissant_types(bundle: Path, croissant: Path) -> None:
    before = read_bundle(bundle, croissant).tables[RATINGS]
    respondent = before["respondent"][0]

    def edit(f):
        f = _set(f, 0, "respondent", f" {respondent}.0 ")  # integral float text is an integer
        f = _set(f, 1, "similarity", "  ")  # blank number: null
        f = _set(f, 2, "meatiness", "   ")  # blank text: null
        return _set(f, 3, "liking", "1e0")

    _edit(bundle / RATINGS, edit)
    after = read_bundle(bundle, croissant).tables[RATINGS]
    assert after["respondent"][0] == respondent
    assert after["similarity"][1] is None and before["similarity"][1] is not None
    assert after["meatiness"][2] is None
    assert after["liking"][3] == 1.0
    # every other cell is untouched
    assert after[4:].equals(before[4:])


def _with_blank_lines(path: Path) -> None:
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join([*lines[:3], "\n", *lines[3:], "\n"]))


def test_blank_lines_are_not_records(bundle: Path, croissant: Path, tmp_path: Path) -> None:
    n = len(read_bundle(bundle, croissant).tables[RATINGS])
    _with_blank_lines(bundle / RATINGS)
    assert len(read_bundle(bundle, croissant).tables[RATINGS]) == n
    # rows are counted in records: a blank line before the bad row does not shift its number
    other = tmp_path / "other"
    shutil.copytree(FIXTURE, other)
    _edit(other / RATINGS, lambda f: _set(f, 5, "similarity", "0.5"))
    _with_blank_lines(other / RATINGS)
    with pytest.raises(DataValidationError) as err:
        read_bundle(other, croissant)
    assert (err.value.row, err.value.column) == (6, "similarity")


def test_nan_is_not_a_float(bundle: Path, croissant: Path) -> None:
    _edit(bundle / RATINGS, lambda f: _set(f, 4, "liking", "nan"))
    with pytest.raises(DataValidationError) as err:
        read_bundle(bundle, croissant)
    assert (err.value.row, err.value.column) == (5, "liking")
    assert "'nan' is not a float" in str(err.value)


def test_not_utf8(bundle: Path, croissant: Path) -> None:
    path = bundle / "nectar_product_labels.csv"
    path.write_bytes(path.read_bytes().replace(b"Bacon", "Bäcon".encode("latin-1"), 1))
    with pytest.raises(DataValidationError, match="not UTF-8 text") as err:
        read_bundle(bundle, croissant)
    assert "nectar_product_labels.csv" in str(err.value)


def test_malformed_csv(bundle: Path, croissant: Path) -> None:
    path = bundle / PRODUCTS
    path.write_text(path.read_text() + 'x,"unclosed\n')
    with pytest.raises(DataValidationError, match="not a well-formed CSV") as err:
        read_bundle(bundle, croissant)
    assert PRODUCTS in str(err.value) and "quoting" in str(err.value)
