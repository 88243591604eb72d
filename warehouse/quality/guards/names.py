"""Rules on what a column is called and what its text says: forbidden column names, gated
identifiers (UPC digits, join keys) in any column, brand names in free text, and text that cannot
be read (invisible characters, undeclared scripts, mixed-script words). Text is matched by the one
matcher of :mod:`warehouse.quality.identifiers` that redaction uses too."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import polars as pl

from warehouse.quality.guards.base import (
    GatedContext,
    GuardViolation,
    as_polars,
    is_text,
    norm,
    public_code_columns,
    text_columns,
    violation_rows,
)
from warehouse.quality.identifiers import Match, Matcher, digits_key, fingerprint
from warehouse.quality.skeleton import first_unreadable

_FORBIDDEN_NAMES: tuple[tuple[str, str], ...] = (
    (r"brand", "a brand"),
    (r"upc|gtin|barcode|\bean\b", "a UPC/barcode"),
    (r"join_?key", "the bundle join_key"),
    (r"respondent", "a respondent id"),
    (
        r"^(raw_)?product_codes?(_\w+)?$|^(winner|higher_rated|lower_rated)_product(_code)?$"
        r"|^product_key$|^(pair|block_pair|block_product|rating|label|product_year|image)_key$"
        r"|^(relative_path|image_path)$",
        "a raw product code (public codes are named public_code*)",
    ),
    (r"panel_mean|panel_sd|similarity|true_score|mean_rating", "a per-product panel mean"),
)
COUNT_NAME = re.compile(r"^n_\w+$")  # n_respondents etc. are counts, not ids


def forbidden_reason(column: object) -> str | None:
    """What a column's name says it holds when that is gated ("a brand", ...), else None."""
    name = norm(column)
    for pattern, what in _FORBIDDEN_NAMES:
        if re.search(pattern, name) and not (what == "a respondent id" and COUNT_NAME.match(name)):
            return what
    return None


def check_forbidden_columns(
    table: str, frame, ctx: GatedContext | None = None
) -> list[GuardViolation]:
    out = []
    for col in as_polars(frame).columns:
        what = forbidden_reason(col)
        if what:
            out.append(
                GuardViolation(table, str(col), "forbidden_column_name", f"the name says {what}")
            )
    return out


def text_matches(values: list[object], matcher: Matcher) -> list[list[Match]]:
    """Per value, the matcher's matches (empty for non-text)."""
    return [matcher.find(v) if isinstance(v, str) else [] for v in values]


def _summary(found: list[list[Match]]) -> tuple[str, tuple[str, ...]]:
    kinds = Counter(m.source for ms in found for m in ms)
    what = ", ".join(f"{k}: {n}" for k, n in sorted(kinds.items()))
    return what, tuple(sorted({m.fingerprint for ms in found for m in ms}))


def _text_violation(
    table: str, col, values: pl.Series, matcher, rule: str, verb: str
) -> GuardViolation | None:
    """One violation of ``rule`` for the rows of a text column that ``matcher`` finds names in
    ("<n> row(s) <verb> (<kinds>)", the matches' fingerprints), or None."""
    found = text_matches(values.cast(pl.String).to_list(), matcher)
    hit = np.array([bool(m) for m in found])
    if not hit.any():
        return None
    rows, n = violation_rows(hit)
    what, fps = _summary(found)
    return GuardViolation(table, str(col), rule, f"{n} row(s) {verb} ({what})", fps, rows, n)


def check_identifier_values(table: str, frame, ctx: GatedContext) -> list[GuardViolation]:
    """UPCs (digits in numeric columns, or digit runs with any separators in text; with or without
    the check digit) and join keys (text, any separators) of the gated products table."""
    frame = as_polars(frame)
    matcher = ctx.identifier_matcher
    if not matcher:
        return []
    out = []
    upc_keys = matcher.id_keys
    for col, dtype in frame.schema.items():
        s = frame[col]
        if s.null_count() == len(s) or dtype == pl.Boolean:
            continue
        if dtype.is_numeric():
            v = s.cast(pl.Float64).fill_null(np.nan).to_numpy()
            whole = np.isfinite(v) & (np.abs(v) >= 1e7) & (v == np.round(v))
            hit = np.zeros(len(v), dtype=bool)
            for i in np.flatnonzero(whole):
                hit[i] = digits_key(str(int(v[i]))) in upc_keys
            if hit.any():
                rows, n = violation_rows(hit)
                fps = tuple(sorted({fingerprint(digits_key(str(int(x)))) for x in v[hit]}))
                out.append(
                    GuardViolation(
                        table,
                        str(col),
                        "gated_identifier_values",
                        f"{n} value(s) are UPCs of the gated products table",
                        fps,
                        rows,
                        n,
                    )  # fmt: skip
                )
        elif is_text(dtype):
            v = _text_violation(
                table, col, s, matcher, "gated_identifier_values", "hold gated identifiers"
            )
            if v is not None:
                out.append(v)
    return out


def check_brand_in_text(table: str, frame, ctx: GatedContext) -> list[GuardViolation]:
    """Brands of the gated products table and of the curated seed, in any spelling variant."""
    frame = as_polars(frame)
    matcher = ctx.brand_matcher
    if not matcher:
        return []
    found = (
        _text_violation(table, col, frame[col], matcher, "brand_in_text", "name a gated brand")
        for col in text_columns(frame)
    )
    return [v for v in found if v is not None]


def check_unreadable_text(
    table: str, frame, ctx: GatedContext | None = None
) -> list[GuardViolation]:
    """Text the export cannot read (:func:`~warehouse.quality.skeleton.first_unreadable`): an
    invisible or control character, a character outside the declared scripts, a mixed-script
    word. The message names the rows, their public codes and the first offending code point."""
    frame = as_polars(frame)
    codes = public_code_columns(frame)
    out = []
    for col in text_columns(frame):
        values = frame[col].cast(pl.String).to_list()
        found = [first_unreadable(v) if isinstance(v, str) else None for v in values]
        hit = np.array([f is not None for f in found])
        if not hit.any():
            continue
        rows, n = violation_rows(hit)
        first = next(f for f in found if f is not None)
        examples = tuple(f"row {r}{_product(frame, codes, r - 1)}: {found[r - 1]}" for r in rows)
        detail = (
            f"{n} row(s) hold text the export cannot read, first {first}. Fix: rewrite the text "
            "in the declared scripts without invisible characters"
        )
        out.append(GuardViolation(table, str(col), "unreadable_text", detail, examples, rows, n))
    return out


def _product(frame: pl.DataFrame, codes: list[str], i: int) -> str:
    """`` (category x, public_code n)`` of row ``i`` when the table has them."""
    keys = [c for c in ("category", *codes) if c in frame.columns]
    return " (" + ", ".join(f"{c} {frame[c][i]}" for c in keys) + ")" if keys else ""


def redact_names(values, ctx_or_names) -> pl.Series:
    """Brand names, join keys and UPCs removed from free text (the competition's rewrite of
    "<Brand> Plant-Based Pork Blend (...)" to "Plant-Based Pork Blend (...)"), whitespace
    collapsed. ``ctx_or_names``: a :class:`GatedContext`, a :class:`Matcher` or names."""
    if isinstance(ctx_or_names, GatedContext):
        matcher = ctx_or_names.text_matcher
    elif isinstance(ctx_or_names, Matcher):
        matcher = ctx_or_names
    else:
        matcher = Matcher(dict.fromkeys(ctx_or_names, "name"))
    name = values.name if isinstance(values, pl.Series) else "text"
    vals = values.to_list() if isinstance(values, pl.Series) else list(values)
    return pl.Series(name, [matcher.redact(v) for v in vals], dtype=pl.String)
