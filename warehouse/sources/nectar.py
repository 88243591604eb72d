"""Load and validate a NECTAR bundle directory (official layout, BENCHMARK.md §1).

Every file is checked against the Croissant record sets before anything is written: missing or
unknown columns, values of the wrong type, duplicate (year, category, respondent, product) ratings,
similarity outside 1-7, ratings of unknown products and unknown categories are errors that name the
file, the data row (1-based, header excluded) and the column, with the fix.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from warehouse.errors import DataValidationError
from warehouse.sources.croissant import NECTAR_FILES, Field, record_sets
from warehouse.sources.seeds import category_lookup

RATINGS, INGREDIENTS, LABELS, LABELS_MANUAL = NECTAR_FILES
LIKERT_RANGE = (1.0, 7.0)
IMAGE_PATTERN = re.compile(
    r"^(?P<year>\d{4})/(?P<category>[^/]+)/(?P<code>\d+)/(?P<view>[^/]+)\.(?P<ext>jpg|jpeg|png)$",
    re.IGNORECASE,
)
_TRUE = {"true", "1", "1.0", "yes", "t"}
_FALSE = {"false", "0", "0.0", "no", "f"}


@dataclass
class NectarBundle:
    """A validated bundle: typed frames (raw values, original column names) plus its origin."""

    root: Path
    data_origin: str
    tables: dict[str, pd.DataFrame]
    images: pd.DataFrame


def detect_origin(root: Path) -> str:
    """``simulation`` for simulator output, ``test_fixture`` for test bundles, else ``nectar``."""
    if (root / "simulation_manifest.json").exists():
        return "simulation"
    if (root / "FIXTURE.md").exists():
        return "test_fixture"
    return "nectar"


def _read_strings(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[], encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataValidationError(
            str(path), f"not UTF-8 text ({exc})", "re-export the file as UTF-8 CSV"
        ) from exc
    except pd.errors.ParserError as exc:
        raise DataValidationError(
            str(path), f"not a well-formed CSV ({exc})", "check quoting and delimiters"
        ) from exc


def _check_columns(path: Path, frame: pd.DataFrame, fields: tuple[Field, ...]) -> None:
    expected = [f.name for f in fields]
    missing = [c for c in expected if c not in frame.columns]
    if missing:
        raise DataValidationError(
            str(path),
            f"missing column(s) {missing} required by the Croissant record set",
            "export the file with every column of the schema (croissant/nectar.json)",
            column=missing[0],
        )
    unknown = [c for c in frame.columns if c not in expected]
    if unknown:
        raise DataValidationError(
            str(path),
            f"unknown column(s) {unknown} not in the Croissant record set",
            "remove them or rename them to the schema's names (croissant/nectar.json)",
            column=unknown[0],
        )


def _convert(path: Path, frame: pd.DataFrame, field: Field) -> pd.Series:
    values = frame[field.name]
    empty = values.str.strip() == ""
    if field.kind == "text":
        return values.where(~empty, None).astype("string")
    bad_mask: np.ndarray
    if field.kind == "boolean":
        lowered = values.str.strip().str.lower()
        is_true, is_false = lowered.isin(_TRUE), lowered.isin(_FALSE)
        bad_mask = (~(is_true | is_false | empty)).to_numpy().copy()
        result = pd.Series(pd.NA, index=values.index, dtype="boolean")
        result[is_true] = True
        result[is_false] = False
    else:
        numeric = pd.to_numeric(values.where(~empty, None), errors="coerce")
        bad_mask = (numeric.isna() & ~empty).to_numpy().copy()
        if field.kind == "integer":
            frac = numeric.notna() & (numeric != np.floor(numeric))
            bad_mask = bad_mask | frac.to_numpy(dtype=bool, na_value=False)
            result = numeric.astype("Float64").astype("Int64") if not bad_mask.any() else numeric
        else:
            result = numeric.astype("Float64")
    if bad_mask.any():
        i = int(np.flatnonzero(bad_mask)[0])
        raise DataValidationError(
            str(path),
            f"value {values.iloc[i]!r} is not {'an' if field.kind == 'integer' else 'a'} "
            f"{field.kind} ({bad_mask.sum()} such value(s) in this column)",
            f"write {field.kind} values in column '{field.name}' (empty for missing)",
            row=i + 1,
            column=field.name,
        )
    return result


def _typed(path: Path, fields: tuple[Field, ...]) -> pd.DataFrame:
    frame = _read_strings(path)
    _check_columns(path, frame, fields)
    return pd.DataFrame({f.name: _convert(path, frame, f) for f in fields})


def _first_row(mask: pd.Series) -> int:
    return int(np.flatnonzero(mask.to_numpy())[0]) + 1


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


def _canonical_categories(path: Path, values: pd.Series, column: str, scale: int = 1) -> pd.Series:
    lookup = category_lookup(scale)
    mapped = values.map(lambda v: lookup.get(v) if v is not None and v is not pd.NA else None)
    unknown = values.notna() & mapped.isna()
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
            f"unknown category {values[unknown].iloc[0]!r}",
            "use a canonical category from seeds/categories.csv or add the spelling to "
            "seeds/category_aliases.csv" + scaled,
            row=_first_row(unknown),
            column=column,
        )
    return mapped


def _check_unique(path: Path, frame: pd.DataFrame, key: list[str], what: str) -> None:
    dup = frame.duplicated(subset=key, keep="first")
    if dup.any():
        i = _first_row(dup)
        values = ", ".join(f"{k}={frame[k].iloc[i - 1]!r}" for k in key)
        raise DataValidationError(
            str(path),
            f"duplicate {what} ({values}); {int(dup.sum())} duplicate row(s) in total",
            f"keep one row per ({', '.join(key)})",
            row=i,
            column=key[-1],
        )


def _check_not_null(path: Path, frame: pd.DataFrame, columns: list[str]) -> None:
    for col in columns:
        null = frame[col].isna()
        if null.any():
            raise DataValidationError(
                str(path),
                "key value is empty",
                f"fill column '{col}'",
                row=_first_row(null),
                column=col,
            )


def _validate_ratings(
    path: Path, ratings: pd.DataFrame, products: set[tuple[str, int]], scale: int = 1
) -> None:
    key = ["year", "product_category", "respondent", "product_code"]
    _check_not_null(path, ratings, key)
    sim = ratings["similarity"]
    lo, hi = LIKERT_RANGE
    out = sim.notna() & ((sim < lo) | (sim > hi))
    if out.any():
        i = _first_row(out)
        raise DataValidationError(
            str(path),
            f"similarity {sim.iloc[i - 1]} outside the 1-7 Likert scale "
            f"({int(out.sum())} such rating(s))",
            "similarity must be 1..7 (empty when the respondent gave none)",
            row=i,
            column="similarity",
        )
    _check_unique(path, ratings, key, "rating of one product by one respondent")
    cats = _canonical_categories(path, ratings["product_category"], "product_category", scale)
    codes = ratings["product_code"].astype("int64")
    known = np.array(
        [(c, int(p)) in products for c, p in zip(cats, codes, strict=True)], dtype=bool
    )
    if not known.all():
        i = int(np.flatnonzero(~known)[0]) + 1
        raise DataValidationError(
            str(path),
            f"rating for unknown product (category={cats.iloc[i - 1]!r}, "
            f"product_code={int(codes.iloc[i - 1])}); {int((~known).sum())} such rating(s)",
            f"add the product to {INGREDIENTS} or correct the product code",
            row=i,
            column="product_code",
        )


def scan_images(root: Path, scale: int = 1) -> pd.DataFrame:
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
    frame = pd.DataFrame(
        rows, columns=["year", "category_folder", "product_code", "view", "relative_path", "bytes"]
    )
    if len(frame):
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
    tables: dict[str, pd.DataFrame] = {}
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
    ing_cats = _canonical_categories(root / INGREDIENTS, ing["Category"], "Category", scale)
    products = set(zip(ing_cats, ing["Product_Code"].astype("int64").tolist(), strict=True))
    for name in (LABELS, LABELS_MANUAL):
        lab = tables[name]
        _check_not_null(root / name, lab, ["category", "product_code"])
        _check_unique(root / name, lab, ["category", "product_code"], "product row")
        _canonical_categories(root / name, lab["category"], "category", scale)
    _validate_ratings(root / RATINGS, tables[RATINGS], products, scale)
    return NectarBundle(
        root=root, data_origin=detect_origin(root), tables=tables, images=scan_images(root, scale)
    )
