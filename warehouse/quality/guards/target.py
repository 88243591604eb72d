"""Rules on the target: a public column may not be (or nearly be) the per-product panel mean.

* ``panel_mean_shape``: a float column equal to the panel means under any name: key-joined
  equality within the column's own precision or a rescaled copy (|r| >= 0.9999); without a key,
  sorted-value matching against the gated means.
* ``target_near_copy``: product-keyed numeric columns with |Pearson r| >= 0.99 with the panel
  mean or within 0.1 of it on >= 90% of products; the same after dividing by a count (a count
  column of the frame, or the product's number of ratings, which the public block design gives
  away), which catches per-product rating sums; pair-keyed columns equal to |delta mean| of the
  pair (within 0.01) or correlated >= 0.99 with delta or |delta|.

Messages name rows and columns, never a value.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl

from warehouse.quality.guards.base import (
    AFFINE_MIN_ABS_R,
    MIN_GROUP,
    NEAR_ABS_TOL,
    NEAR_MIN_ABS_R,
    NEAR_SHARE,
    PAIR_ABS_TOL,
    SHAPE_MATCH_SHARE,
    SHAPE_MIN_DECIMALS,
    SHAPE_MIN_VALUES,
    GatedContext,
    GuardViolation,
    as_polars,
    decimals,
    float_columns,
    floats,
    norm,
    numeric_columns,
    pearson,
    public_code_columns,
    row_products,
    tolerance,
    violation_rows,
)

_PAIR_SUFFIXES = (("_1", "_2"), ("_a", "_b"), ("_lo", "_hi"))
_COUNT = re.compile(r"^n_\w+$|(^|_)count(s)?($|_)")


def _tol(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return tolerance(decimals(np.unique(finite)[:5000])) if finite.size else 1e-9


def _shape_detail(values: np.ndarray, pm: np.ndarray | None, target: np.ndarray):
    """(detail, row mask) when ``values`` are the panel means, else (None, None)."""
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return None, None
    tol = _tol(values)
    if pm is not None:
        ok = np.isfinite(pm) & np.isfinite(values)
        if ok.sum() >= MIN_GROUP:
            equal = ok & (np.abs(values - np.where(ok, pm, 0)) <= tol)
            if equal.sum() / ok.sum() >= SHAPE_MATCH_SHARE:
                detail = (
                    f"{int(equal.sum())} of {int(ok.sum())} rows equal the product's panel "
                    "mean (joined on the product key)"
                )
                return detail, equal
            if ok.sum() >= SHAPE_MIN_VALUES and np.std(values[ok]) > 0 and np.std(pm[ok]) > 0:
                r = float(np.corrcoef(values[ok], pm[ok])[0, 1])
                if abs(r) >= AFFINE_MIN_ABS_R:
                    return f"a rescaled panel mean (Pearson r = {r:.5f} on the product key)", ok
    distinct = np.unique(finite)
    if distinct.size >= SHAPE_MIN_VALUES and decimals(distinct[:5000]) >= SHAPE_MIN_DECIMALS:
        if target.size == 0:
            return None, None
        idx = np.clip(np.searchsorted(target, values), 1, max(target.size - 1, 1))
        lo = target[np.minimum(idx - 1, target.size - 1)]
        hi = target[np.minimum(idx, target.size - 1)]
        near_rows = np.isfinite(values) & (
            np.minimum(np.abs(values - lo), np.abs(values - hi)) <= tol
        )
        di = np.clip(np.searchsorted(target, distinct), 1, max(target.size - 1, 1))
        near = np.minimum(
            np.abs(distinct - target[np.minimum(di - 1, target.size - 1)]),
            np.abs(distinct - target[np.minimum(di, target.size - 1)]),
        )
        share = float((near <= tol).mean())
        if share >= SHAPE_MATCH_SHARE:
            detail = (
                f"{share:.0%} of its {distinct.size} distinct values are panel means "
                "(sorted-value match)"
            )
            return detail, near_rows
    return None, None


def check_panel_mean_shape(table: str, frame, ctx: GatedContext) -> list[GuardViolation]:
    frame = as_polars(frame)
    cols = float_columns(frame)
    if not cols or ctx.panel_means.is_empty():
        return []
    target = np.sort(floats(ctx.panel_means, "panel_mean"))
    target = target[np.isfinite(target)]
    rows = row_products(frame, ctx)
    pm = None if rows is None else rows["panel_mean"].to_numpy()
    out = []
    for col in cols:
        detail, mask = _shape_detail(floats(frame, col), pm, target)
        if detail:
            r, n = violation_rows(mask)
            out.append(GuardViolation(table, str(col), "panel_mean_shape", detail, (), r, n))
    return out


def _value_columns(frame: pl.DataFrame) -> list[str]:
    """Numeric columns that may carry a value (not codes, ids or flags)."""
    return [
        c
        for c in numeric_columns(frame)
        if "code" not in norm(c) and not norm(c).endswith("_id") and norm(c) != "pair_id"
    ]


def _near(values: np.ndarray, pm: np.ndarray, tol: float, min_r: float) -> str | None:
    ok = np.isfinite(values) & np.isfinite(pm)
    if ok.sum() < SHAPE_MIN_VALUES:
        return None
    within = np.abs(values[ok] - pm[ok]) <= tol
    if within.mean() >= NEAR_SHARE:
        return f"within {tol:g} of it on {within.mean():.0%} of {int(ok.sum())} rows"
    r = pearson(values, pm)
    if r is not None and abs(r) >= min_r:
        return f"Pearson r = {r:.4f} over {int(ok.sum())} rows"
    return None


def pair_columns(frame: pl.DataFrame) -> list[tuple[str, str]]:
    """Pairs of public code columns that key a row by two products (``public_code_1/_2``,
    ``_a/_b``, ``_lo/_hi``)."""
    codes = set(public_code_columns(frame))
    out = []
    for c in sorted(codes):
        for s1, s2 in _PAIR_SUFFIXES:
            if c.endswith(s1) and c[: -len(s1)] + s2 in codes:
                out.append((c, c[: -len(s1)] + s2))
    return out


def check_target_near_copy(table: str, frame, ctx: GatedContext) -> list[GuardViolation]:
    frame = as_polars(frame)
    if ctx.panel_means.is_empty() or "category" not in frame.columns:
        return []
    values = {c: floats(frame, c) for c in _value_columns(frame)}
    if not values:
        return []
    target = np.sort(floats(ctx.panel_means, "panel_mean"))
    target = target[np.isfinite(target)]
    out: list[GuardViolation] = []
    pairs = pair_columns(frame)
    rows = None if pairs else row_products(frame, ctx)
    if rows is not None:
        out += _product_near_copies(table, frame, rows, values, target)
    for c1, c2 in pairs:
        out += _pair_near_copies(table, frame, ctx, values, c1, c2)
    return out


def _product_near_copies(
    table: str, frame: pl.DataFrame, rows: pl.DataFrame, values: dict, target: np.ndarray
) -> list[GuardViolation]:
    """Product-level rows: a value column that is the panel mean, or is it once divided by a
    count column (or the product's number of ratings)."""
    pm = rows["panel_mean"].to_numpy()
    counts = {
        c: floats(frame, c)
        for c in numeric_columns(frame)
        if _COUNT.search(norm(c)) and frame[c].dtype.is_integer()
    }
    counts["the product's number of ratings"] = rows["n_ratings"].fill_null(np.nan).to_numpy()
    out = []
    for col, v in values.items():
        if _shape_detail(v, pm, target)[0]:
            continue  # reported by panel_mean_shape
        detail = _near(v, pm, NEAR_ABS_TOL, NEAR_MIN_ABS_R)
        if detail:
            detail = f"a near-copy of the panel mean ({detail})"
        else:
            detail = _near_once_divided(col, v, pm, counts)
        if detail:
            ok = np.isfinite(v) & np.isfinite(pm)
            r, n_rows = violation_rows(ok)
            out.append(GuardViolation(table, str(col), "target_near_copy", detail, (), r, n_rows))
    return out


def _near_once_divided(col: str, v: np.ndarray, pm: np.ndarray, counts: dict) -> str | None:
    """The first count column (not ``col`` itself) that ``v`` divided by is the panel mean."""
    for cname, n in counts.items():
        if cname == col:
            continue
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(n > 0, v / n, np.nan)
        d = _near(q, pm, NEAR_ABS_TOL, NEAR_MIN_ABS_R)
        if d:
            return f"divided by {cname} it is the panel mean ({d})"
    return None


def _pair_near_copies(
    table: str, frame: pl.DataFrame, ctx: GatedContext, values: dict, c1: str, c2: str
) -> list[GuardViolation]:
    """Pair-level rows (products ``c1``, ``c2``): a value column that is the pair's |delta panel
    mean| or correlates with the signed difference."""
    r1, r2 = row_products(frame, ctx, c1), row_products(frame, ctx, c2)
    if r1 is None or r2 is None:
        return []
    delta = r1["panel_mean"].to_numpy() - r2["panel_mean"].to_numpy()
    out = []
    for col, v in values.items():
        detail = _near(v, np.abs(delta), max(PAIR_ABS_TOL, _tol(v)), NEAR_MIN_ABS_R)
        if detail is None:
            r = pearson(v, delta)
            if r is not None and abs(r) >= NEAR_MIN_ABS_R:
                detail = f"Pearson r = {r:.4f} with the signed difference"
        if detail:
            ok = np.isfinite(v) & np.isfinite(delta)
            rr, n_rows = violation_rows(ok)
            out.append(
                GuardViolation(
                    table,
                    str(col),
                    "target_near_copy",
                    f"the pair's |delta panel mean| of ({c1}, {c2}) ({detail})",
                    (),
                    rr,
                    n_rows,
                )
            )
    return out
