"""Load and validate a NECTAR bundle directory (official layout, docs/benchmark.md §1).

Every file is read with polars under the dtypes of its Croissant record set (conventions in
``warehouse/sources/typed_csv.py``) and checked before anything is written: missing or unknown
columns, values of the wrong type, duplicate (year, category, respondent, product) ratings,
similarity outside 1-7, ratings of unknown products and unknown categories are errors that name the
file, the data row (1-based, header excluded) and the column, with the fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from warehouse.errors import DataValidationError
from warehouse.sources.croissant import NECTAR_FILES, Field, record_sets
from warehouse.sources.seeds import category_lookup
from warehouse.sources.typed_csv import KIND_DTYPES, first_row, read_typed, shown

RATINGS, INGREDIENTS, LABELS, LABELS_MANUAL = NECTAR_FILES
LIKERT_RANGE = (1.0, 7.0)
IMAGE_PATTERN = re.compile(
    r"^(?P<year>\d{4})/(?P<category>[^/]+)/(?P<code>\d+)/(?P<view>[^/]+)\.(?P<ext>jpg|jpeg|png)$",
    re.IGNORECASE,
)
IMAGE_SCHEMA = {
    "year": pl.Int64(),
    "category_folder": pl.String(),
    "product_code": pl.Int64(),
    "view": pl.String(),
    "relative_path": pl.String(),
    "bytes": pl.Int64(),
}


@dataclass
class NectarBundle:
    """A validated bundle: typed frames (raw values, original column names) plus its origin."""

    root: Path
    data_origin: str
    tables: dict[str, pl.DataFrame]
    images: pl.DataFrame


def detect_origin(root: Path) -> str:
    """``simulation`` for simulator output, ``test_fixture`` for test bundles, else ``nectar``."""
    if (root / "simulation_manifest.json").exists():
        return "simulation"
    if (root / "FIXTURE.md").exists():
        return "test_fixture"
    return "nectar"


def schema_of(fields: tuple[Field, ...]) -> dict[str, pl.DataType]:
    """The polars schema of a Croissant record set (text, integer, float, boolean fields)."""
    return {f.name: KIND_DTYPES[f.kind] for f in fields}


def _typed(path: Path, fields: tuple[Field, ...]) -> pl.DataFrame:
    return read_typed(
        path,
        schema_of(fields),
        what="the Croissant record set",
        fix_missing="export the file with every column of the schema (croissant/nectar.json)",
        fix_unknown="remove them or rename them to the schema's names (croissant/nectar.json)",
        blank_text_is_null=True,
    )


def simulation_scale(root: Path) -> int:
    """The ``scale`` of a simulated bundle (its ``simulation_manifest.json``); 1 for any other
    bundle. A scaled bundle's category copies ``<Category>_s<k>`` are valid only up to it."""
    if detect_origin(root) != "simulation":
        return 1
    path = Path(root) / "simulation_manifest.json"
    try:
        scale = json.loads(path.read_text(encoding="utf-8")).get("scale", 1)
    except (OSError, ValueError) as exc:
        raise DataValidationError(
            str(path), f"unreadable simulation manifest ({exc})", "re-run tastebench simulate"
        ) from exc
    if not isinstance(scale, int) or scale < 1:
        raise DataValidationError(
            str(path), f"scale {scale!r} is not a positive integer", "re-run tastebench simulate"
        )
    return scale


def _canonical_categories(path: Path, values: pl.Series, column: str, scale: int = 1) -> pl.Series:
    lookup = category_lookup(scale)
    mapped = values.replace_strict(lookup, default=None, return_dtype=pl.String)
    unknown = values.is_not_null() & mapped.is_null()
    if unknown.any():
        scaled = (
            f"; this bundle's simulation scale is {scale}, so copies <Category>_s2 .. _s{scale} "
            "are accepted"
            if scale > 1
            else "; copies <Category>_s<k> are accepted only in a simulated bundle whose "
            "simulation_manifest.json declares scale >= k"
        )
        raise DataValidationError(
            str(path),
            f"unknown category {values.filter(unknown)[0]!r}",
            "use a canonical category from seeds/categories.csv or add the spelling to "
            "seeds/category_aliases.csv" + scaled,
            row=first_row(unknown),
            column=column,
        )
    return mapped


def _check_unique(path: Path, frame: pl.DataFrame, key: list[str], what: str) -> None:
    dup = ~frame.select(pl.struct(key).is_first_distinct()).to_series()
    if dup.any():
        i = first_row(dup)
        values = ", ".join(f"{k}={shown(k, frame[k][i - 1])}" for k in key)
        raise DataValidationError(
            str(path),
            f"duplicate {what} ({values}); {int(dup.sum())} duplicate row(s) in total",
            f"keep one row per ({', '.join(key)})",
            row=i,
            column=key[-1],
        )


def _check_not_null(path: Path, frame: pl.DataFrame, columns: list[str]) -> None:
    for col in columns:
        null = frame[col].is_null()
        if null.any():
            raise DataValidationError(
                str(path),
                "key value is empty",
                f"fill column '{col}'",
                row=first_row(null),
                column=col,
            )


def _validate_ratings(
    path: Path, ratings: pl.DataFrame, products: pl.DataFrame, scale: int = 1
) -> None:
    key = ["year", "product_category", "respondent", "product_code"]
    _check_not_null(path, ratings, key)
    sim = ratings["similarity"]
    lo, hi = LIKERT_RANGE
    out = (sim < lo) | (sim > hi)
    if out.any():
        i = first_row(out)
        raise DataValidationError(
            str(path),
            f"similarity {sim[i - 1]} outside the 1-7 Likert scale "
            f"({int(out.sum())} such rating(s))",
            "similarity must be 1..7 (empty when the respondent gave none)",
            row=i,
            column="similarity",
        )
    _check_unique(path, ratings, key, "rating of one product by one respondent")
    rated = pl.DataFrame(
        {
            "category": _canonical_categories(
                path, ratings["product_category"], "product_category", scale
            ),
            "product_code": ratings["product_code"],
        }
    )
    known = rated.join(
        products.with_columns(pl.lit(True).alias("_known")),
        on=["category", "product_code"],
        how="left",
        maintain_order="left",
    )["_known"].is_not_null()
    if not known.all():
        i = first_row(~known)
        raise DataValidationError(
            str(path),
            f"rating for unknown product (category={rated['category'][i - 1]!r}, "
            f"product_code={rated['product_code'][i - 1]}); {int((~known).sum())} such rating(s)",
            f"add the product to {INGREDIENTS} or correct the product code",
            row=i,
            column="product_code",
        )


def scan_images(root: Path, scale: int = 1) -> pl.DataFrame:
    """One row per product photo under ``images/``; unexpected paths are errors."""
    images_dir = root / "images"
    rows = []
    if images_dir.is_dir():
        for p in sorted(images_dir.rglob("*")):
            if not p.is_file() or p.name.startswith("."):
                continue
            rel = p.relative_to(images_dir).as_posix()
            m = IMAGE_PATTERN.match(rel)
            if m is None:
                raise DataValidationError(
                    str(p),
                    "image path does not follow images/<year>/<category>/<product_code>/<view>."
                    "(jpg|jpeg|png)",
                    "move or rename the file to the official layout",
                )
            rows.append(
                {
                    "year": int(m["year"]),
                    "category_folder": m["category"],
                    "product_code": int(m["code"]),
                    "view": m["view"],
                    "relative_path": f"images/{rel}",
                    "bytes": p.stat().st_size,
                }
            )
    frame = pl.DataFrame(rows, schema=IMAGE_SCHEMA)
    if frame.height:
        _canonical_categories(images_dir, frame["category_folder"], "category folder", scale)
    return frame


def read_bundle(root: Path, croissant_path: Path) -> NectarBundle:
    """Read and validate a bundle; raise DataValidationError on the first problem found."""
    root = Path(root)
    if not root.is_dir():
        raise DataValidationError(
            str(root),
            "NECTAR bundle directory not found",
            "pass --nectar PATH to the unpacked bundle, or omit it to use the simulation",
        )
    schemas = record_sets(Path(croissant_path))
    tables: dict[str, pl.DataFrame] = {}
    for name in NECTAR_FILES:
        path = root / name
        if not path.exists():
            raise DataValidationError(
                str(path),
                "required bundle file is missing",
                f"unpack the complete bundle: it must contain {', '.join(NECTAR_FILES)}",
            )
        tables[name] = _typed(path, schemas[name])

    ing = tables[INGREDIENTS]
    _check_not_null(root / INGREDIENTS, ing, ["Year", "Category", "Product_Code"])
    _check_unique(root / INGREDIENTS, ing, ["Year", "Category", "Product_Code"], "product-year row")
    scale = simulation_scale(root)
    products = pl.DataFrame(
        {
            "category": _canonical_categories(
                root / INGREDIENTS, ing["Category"], "Category", scale
            ),
            "product_code": ing["Product_Code"],
        }
    ).unique()
    for name in (LABELS, LABELS_MANUAL):
        lab = tables[name]
        _check_not_null(root / name, lab, ["category", "product_code"])
        _check_unique(root / name, lab, ["category", "product_code"], "product row")
        _canonical_categories(root / name, lab["category"], "category", scale)
    _validate_ratings(root / RATINGS, tables[RATINGS], products, scale)
    return NectarBundle(
        root=root, data_origin=detect_origin(root), tables=tables, images=scan_images(root, scale)
    )
