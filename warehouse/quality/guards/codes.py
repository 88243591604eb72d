"""Rules on public codes and row order: codes are a per-category random permutation unrelated to
the target (``public_code_permutation``), the gated code map is never published
(``code_map_in_public``), and row order is a function of released columns only
(``row_order_hidden_id``). Also :func:`draw_public_codes`, the permutation itself."""

from __future__ import annotations

import secrets
from collections.abc import Mapping

import numpy as np
import polars as pl

from warehouse.quality.guards.base import (
    FIXED_POINT_SHARE,
    RHO_TOL,
    SHAPE_MIN_VALUES,
    Z_CRIT,
    GatedContext,
    GuardError,
    GuardViolation,
    as_polars,
    floats,
    pooled_spearman,
    public_code_columns,
    row_products,
    violation_rows,
)
from warehouse.quality.guards.panelists import dense_columns, row_people


def _code_map_frame(ctx: GatedContext) -> pl.DataFrame:
    cmap = ctx.code_map
    assert cmap is not None
    return pl.DataFrame(
        {
            "category": cmap["category"].cast(pl.String),
            "product_code": floats(cmap, "product_code"),
            "public_code": floats(cmap, "public_code"),
        }
    )


def code_map_violations(table: str, column: str, ctx: GatedContext) -> list[GuardViolation]:
    """The map itself: not the raw codes, unique per category, unrelated to the target."""
    m = _code_map_frame(ctx)
    out = []
    fixed = (m["product_code"] == m["public_code"]).fill_null(False).to_numpy()
    if len(m) >= SHAPE_MIN_VALUES and fixed.mean() >= FIXED_POINT_SHARE:
        out.append(
            GuardViolation(
                table,
                column,
                "public_code_permutation",
                f"public codes equal the raw codes for {int(fixed.sum())} of {len(m)} products",
            )  # fmt: skip
        )
    dup = m.filter(pl.struct("category", "public_code").is_duplicated())
    if len(dup):
        ex = tuple(
            f"{c}:{v:g}" for c, v in dup.select("category", "public_code").head(3).iter_rows()
        )
        out.append(
            GuardViolation(
                table,
                column,
                "public_code_permutation",
                "public codes are not unique within a category",
                ex,
            )  # fmt: skip
        )
    means = ctx.panel_means
    means = pl.DataFrame(
        {
            "category": means["category"].cast(pl.String),
            "product_code": floats(means, "product_code"),
            "panel_mean": floats(means, "panel_mean"),
            "is_analog": means["is_analog"].cast(pl.Boolean)
            if "is_analog" in means.columns
            else pl.Series([True] * len(means), dtype=pl.Boolean),
        }
    ).filter(pl.col("is_analog"))
    j = m.join(means, on=["category", "product_code"], how="inner")
    rho, z, n = pooled_spearman(j["public_code"], j["panel_mean"], j["category"])
    if n and abs(rho) > RHO_TOL and abs(z) > Z_CRIT:
        out.append(
            GuardViolation(
                table,
                column,
                "public_code_permutation",
                f"public codes correlate with the target beyond chance (pooled within-category "
                f"Spearman {rho:+.2f}, z = {z:+.1f}, n = {n})",
            )  # fmt: skip
        )
    return out


def check_public_codes(table: str, frame, ctx: GatedContext) -> list[GuardViolation]:
    frame = as_polars(frame)
    codes = public_code_columns(frame)
    if not codes:
        return []
    if ctx.code_map is None:
        return [
            GuardViolation(
                table,
                codes[0],
                "public_code_permutation",
                "public codes present but no gated code map was given to verify them",
            )  # fmt: skip
        ]
    out = code_map_violations(table, codes[0], ctx)
    if "category" in frame.columns:
        m = _code_map_frame(ctx)
        known = set(zip(m["category"].to_list(), m["public_code"].to_list(), strict=True))
        cats = frame["category"].cast(pl.String).to_list()
        for col in codes:
            vals = floats(frame, col)
            bad = np.array(
                [
                    not np.isnan(v) and (c, float(v)) not in known
                    for c, v in zip(cats, vals, strict=True)
                ],
                dtype=bool,
            )
            if bad.any():
                rows, n = violation_rows(bad)
                unknown = sorted({(cats[i], vals[i]) for i in np.flatnonzero(bad)})
                ex = tuple(f"{c}:{v:g}" for c, v in unknown[:3])
                out.append(
                    GuardViolation(
                        table,
                        col,
                        "public_code_permutation",
                        f"{len(unknown)} (category, code) value(s) are not in the gated code map",
                        ex,
                        rows,
                        n,
                    )  # fmt: skip
                )
    return out


def check_row_order(table: str, frame, ctx: GatedContext) -> list[GuardViolation]:
    frame = as_polars(frame)
    out = []
    position = np.arange(len(frame), dtype=float)
    rows = row_products(frame, ctx)
    if rows is not None:
        # within category and product kind (analog/reference is public), so that "references
        # last" is not mistaken for a hidden order
        groups = [
            f"{c}:{a}"
            for c, a in zip(rows["category"].to_list(), rows["is_analog"].to_list(), strict=True)
        ]
        for hidden, label in (("product_code", "raw product code"), ("panel_mean", "panel mean")):
            y = rows[hidden].cast(pl.Float64).fill_null(np.nan).to_numpy()
            rho, z, n = pooled_spearman(position, y, groups)
            if n and abs(rho) > RHO_TOL and abs(z) > Z_CRIT:
                out.append(
                    GuardViolation(
                        table,
                        "(row order)",
                        "row_order_hidden_id",
                        f"rows follow the {label} (pooled within-category Spearman {rho:+.2f}, "
                        f"z = {z:+.1f}, n = {n})",
                    )  # fmt: skip
                )
    people = row_people(frame, ctx)
    if people is not None:
        block = [
            f"{c}:{b}"
            for c, b in zip(
                frame["category"].cast(pl.String).to_list(),
                frame["block_id"].cast(pl.String).to_list(),
                strict=True,
            )
        ]
        checks = [("(row order)", position)]
        checks += [(c, floats(frame, c)) for c in dense_columns(frame)]
        for col, values in checks:
            rho, z, n = pooled_spearman(values, people, block)
            if n and abs(rho) > RHO_TOL and abs(z) > Z_CRIT:
                out.append(
                    GuardViolation(
                        table,
                        col,
                        "row_order_hidden_id",
                        f"follows the respondent id within blocks (pooled Spearman {rho:+.2f}, "
                        f"z = {z:+.1f}, n = {n})",
                    )  # fmt: skip
                )
    return out


def _integer_columns(frame: pl.DataFrame) -> list[str]:
    out = []
    for c, d in frame.schema.items():
        if d.is_numeric():
            v = floats(frame, c)
            v = v[np.isfinite(v)]
            if v.size and (v == np.round(v)).all():
                out.append(c)
    return out


def check_code_map_published(
    frames: Mapping[str, pl.DataFrame], ctx: GatedContext
) -> list[GuardViolation]:
    """No public frame may hold the (raw code, public code) map, under any column names.

    Codes are per category: when both the map and the frame carry ``category``, pairs are matched
    on (category, a, b); a category-blind match would flag any complete table of within-category
    code pairs (gold pairs list every pair of small codes), since small codes coincide across
    categories. Frames without ``category`` are matched category-blind.
    """
    out = []
    if ctx.code_map is None or ctx.code_map.is_empty():
        return out
    m = _code_map_frame(ctx)
    pairs = m.rename({"product_code": "a", "public_code": "b"}).filter(pl.col("a") != pl.col("b"))
    pairs = pairs.unique()  # fixed points say nothing
    if len(pairs) < SHAPE_MIN_VALUES:
        return out
    for name, frame in frames.items():
        frame = as_polars(frame)
        with_cat = "category" in frame.columns
        keys = ["category", "a", "b"] if with_cat else ["a", "b"]
        ref = pairs.select(keys).unique()
        ints = _integer_columns(frame)
        found = None
        for a in ints:
            for b in ints:
                if a == b:
                    continue
                cols = {"a": floats(frame, a), "b": floats(frame, b)}
                if with_cat:
                    cols["category"] = frame["category"].cast(pl.String)
                vals = pl.DataFrame(cols).drop_nans().drop_nulls().unique()
                if len(vals) < 0.9 * len(ref):
                    continue
                share = len(ref.join(vals, on=keys, how="inner")) / len(ref)
                if share >= 0.9:
                    found = (a, b, share)
                    break
            if found:
                break
        if found:
            a, b, share = found
            out.append(
                GuardViolation(
                    name,
                    f"{a}, {b}",
                    "code_map_in_public",
                    f"the columns reproduce {share:.0%} of the gated raw-to-public code map",
                )  # fmt: skip
            )
    return out


def draw_public_codes(products, ctx: GatedContext | None = None, max_tries: int = 100):
    """A per-category cryptographically random permutation (``secrets``): analogs get 1..n_c,
    references n_c+1, ... Redrawn (rarely) until it passes the public-code rule against ``ctx``.

    ``products``: category, product_code, is_analog. Returns category, product_code, public_code
    (polars). Store the result only in the gated area.
    """
    products = as_polars(products)
    rng = secrets.SystemRandom()
    for _ in range(max_tries):
        parts: list[tuple[str, object, int]] = []
        for (cat,), g in products.sort("category").group_by("category", maintain_order=True):
            analog = g["is_analog"].cast(pl.Boolean).to_list()
            codes = g["product_code"].to_list()
            analogs = [c for c, a in zip(codes, analog, strict=True) if a]
            refs = [c for c, a in zip(codes, analog, strict=True) if not a]
            rng.shuffle(analogs)
            rng.shuffle(refs)
            parts += [(cat, code, i) for i, code in enumerate(analogs + refs, start=1)]
        cmap = pl.DataFrame(
            parts,
            schema={
                "category": pl.String,
                "product_code": products.schema["product_code"],
                "public_code": pl.Int64,
            },
            orient="row",
        )
        if ctx is None or not code_map_violations(
            "code_map", "public_code", ctx.with_code_map(cmap)
        ):
            return cmap
    raise GuardError("could not draw public codes that pass the permutation rule")
