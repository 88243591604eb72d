"""Validation of prediction tables before scoring: fail loudly, never drop rows silently.

:func:`validate_predictions` raises :class:`PredictionValidationError` (a ``ValueError`` and a
:class:`warehouse.errors.DataValidationError`) naming the file, the line (1-based, header =
line 1, so data row ``r`` (0-based) is line ``r + 2``) and the column for: missing columns,
empty/unknown categories, unknown product codes, duplicate ``(category, product_code)`` rows, and
NaN / non-numeric / infinite scores. Products that are known but absent are not an error: they
are reported as coverage (:class:`Coverage`), for the caller to decide; nothing is dropped.
Product codes compare after normalization (integral numbers and digit strings become ``int``,
anything else its ``str``), so ``3``, ``3.0`` and ``"3"`` are the same code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from warehouse.errors import DataValidationError

from .core import as_polars


class PredictionValidationError(DataValidationError, ValueError):
    """A prediction table violates its contract (file, line and column in the message)."""


@dataclass(frozen=True)
class Coverage:
    """How many known products a prediction table covers."""

    n_expected: int
    n_present: int
    missing: tuple[tuple[str, object], ...]

    @property
    def coverage(self) -> float:
        return self.n_present / self.n_expected if self.n_expected else float("nan")

    @property
    def complete(self) -> bool:
        return not self.missing

    def __float__(self) -> float:
        return self.coverage


def normalize_code(value: object) -> object:
    """Canonical form of a product code: ``int`` when integral, else ``str``."""
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        return int(value)
    text = str(value).strip()
    if text.lstrip("+-").isdigit():
        return int(text)
    return text


MISSING_TEXT = frozenset({"", "na", "n/a", "nan", "-nan", "null", "none", "#n/a", "<na>"})
"""Cells of a text column that count as missing (case-insensitive, after stripping blanks)."""


def numeric_column(raw: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    """``(values, missing)`` of a score column: float64 values (NaN where the cell is missing or
    not a number) and a mask of missing cells (null, NaN, or a :data:`MISSING_TEXT` text cell).
    Text cells are parsed after stripping blanks; anything unparsable is NaN but not missing."""
    if raw.dtype == pl.String:
        text = raw.str.strip_chars()
        values = text.cast(pl.Float64, strict=False).to_numpy()
        missing = (raw.is_null() | text.str.to_lowercase().is_in(list(MISSING_TEXT))).to_numpy()
        return values, missing
    values = raw.cast(pl.Float64).to_numpy()
    return values, np.isnan(values)


def _known_set(known_products: object) -> set[tuple[str, object]]:
    if isinstance(known_products, pl.DataFrame | pa.Table):
        known_products = as_polars(known_products, "known_products")
        missing = {"category", "product_code"} - set(known_products.columns)
        if missing:
            raise ValueError(f"known_products lacks column(s) {sorted(missing)}")
        pairs: Iterable = zip(
            known_products["category"].to_list(),
            known_products["product_code"].to_list(),
            strict=True,
        )
    else:
        pairs = known_products  # iterable of (category, code)
    return {(str(c), normalize_code(p)) for c, p in pairs}


def validate_predictions(
    df: object,
    known_products: object,
    *,
    source: str = "<predictions>",
    score_column: str = "predicted_score",
    gold_column: str | None = None,
) -> Coverage:
    """Check a prediction table (polars or Arrow) against the known products; return its
    coverage.

    ``known_products``: a polars/Arrow table with ``category, product_code`` or an iterable of
    ``(category, product_code)``. ``gold_column`` (e.g. ``"true_rank"``), when given, gets the
    same numeric checks as the score column.
    """

    df = as_polars(df, "prediction table")
    needed = ["category", "product_code", score_column] + ([gold_column] if gold_column else [])
    for col in needed:
        if col not in df.columns:
            _fail(
                source,
                f"missing column '{col}' (has {list(df.columns)})",
                f"add a '{col}' column",
                column=col,
            )
    known = _known_set(known_products)
    norm = _checked_keys(df, known, source)
    _check_duplicates(norm, source)
    for col in needed[2:]:
        _check_numeric(df[col], col, source)
    present = set(norm)
    missing = tuple(sorted(known - present, key=lambda k: (k[0], str(k[1]))))
    return Coverage(n_expected=len(known), n_present=len(present & known), missing=missing)


def _fail(
    source: str, problem: str, fix: str, pos: int | None = None, column: str | None = None
) -> None:
    """Raise the :class:`PredictionValidationError` of row ``pos`` (0-based data row)."""
    line = None if pos is None else int(pos) + 2
    raise PredictionValidationError(source, problem, fix, row=line, column=column)


def _checked_keys(df: pl.DataFrame, known: set, source: str) -> list[tuple[str, object]]:
    """Each row's ``(category, normalized code)``, after checking every category, then every
    code, against the known products."""
    known_cats = {c for c, _ in known}
    cats = np.asarray(df["category"].to_list(), dtype=object)
    codes = np.asarray(df["product_code"].to_list(), dtype=object)
    for pos, cat in enumerate(cats):
        if cat is None or (isinstance(cat, float) and np.isnan(cat)) or str(cat).strip() == "":
            _fail(source, "empty category", "fill in the category", pos, "category")
        if str(cat) not in known_cats:
            _fail(
                source,
                f"unknown category '{cat}'",
                f"use one of {sorted(known_cats)}",
                pos,
                "category",
            )
    norm = []
    for pos, (cat, code) in enumerate(zip(cats, codes, strict=True)):
        if code is None or (isinstance(code, float) and np.isnan(code)):
            _fail(source, "empty product_code", "fill in the product code", pos, "product_code")
        key = (str(cat), normalize_code(code))
        if key not in known:
            _fail(
                source,
                f"unknown product_code {code!r} in category '{cat}'",
                "score only the benchmark's products (check the category's code list)",
                pos,
                "product_code",
            )
        norm.append(key)
    return norm


def _check_duplicates(norm: list[tuple[str, object]], source: str) -> None:
    first_seen: dict[tuple[str, object], int] = {}
    for pos, key in enumerate(norm):
        if key in first_seen:
            _fail(
                source,
                f"duplicate row for (category, product_code) = {key}, first at line "
                f"{first_seen[key] + 2}",
                "keep exactly one prediction per product",
                pos,
                "product_code",
            )
        first_seen[key] = pos


def _check_numeric(raw: pl.Series, col: str, source: str) -> None:
    values, raw_missing = numeric_column(raw)
    for pos in np.flatnonzero(~np.isfinite(values)):
        if raw_missing[pos]:
            _fail(
                source, "missing (NaN) value", "provide a finite number for every product", pos, col
            )
        if np.isnan(values[pos]):
            _fail(source, f"not a number: {raw[int(pos)]!r}", "provide a finite number", pos, col)
        _fail(source, f"infinite value {values[pos]}", "provide a finite number", pos, col)
