"""Set-level rules: what two public tables reveal together.

* ``feature_target_join``: a pair of tables (or one table) joining features (ingredients,
  nutrition, images, embeddings) to targets (winner, rank, gold, tie, label) on a product key.
* ``cross_file_linkage``: every pair of tables is joined on **all** the columns they share
  (``data_origin`` aside; ``category`` alone is no product link). Rows whose shared values are
  unique on both sides are one-to-one links. The link is a leak when it

  - maps a code column of one table onto a code column of another **code space** (column names
    differ once the ``_1/_2/_a/_b/_lo/_hi/_winner`` suffix is dropped) for >= 50% of the first
    table's products (for pair tables: consistently, every occurrence of a code to the same
    code), e.g. this release's ``public_code`` onto the TasteBench ``tastebench_public_code``
    through (category, true_rank); the message adds when the links reproduce the gated code map;
  - puts a numeric column of a table without product codes next to the product codes of the
    other, where it is (or nearly is) the panel mean: the target rules of
    :mod:`.target` run on the joined rows.

  Brand <-> code links need a brand or identifier in some table, which the per-table rules
  already refuse in every file; a join cannot add one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import polars as pl

from warehouse.quality.guards.base import (
    JOIN_SHARE,
    LINK_MIN_ROWS,
    LINK_SHARE,
    GatedContext,
    GuardViolation,
    as_polars,
    floats,
    norm,
    numeric_columns,
    public_code_columns,
    violation_rows,
)
from warehouse.quality.guards.target import check_panel_mean_shape, check_target_near_copy

_TARGET_TOKENS = {"winner", "rank", "ranks", "gold", "tie", "label", "labels", "target"}
_TARGET_PREFIXES = ("higher_rated", "true_", "is_tie", "panel_mean", "preferred")
_FEATURE_PATTERN = re.compile(
    r"ingredient|per_100g|nutri|image|photo|embedding|smiles|calorie|_fat|fat_|sodium|protein"
    r"|sugar|carbohydrate|fiber|product_type"
)
_SPACE = re.compile(r"^(?P<space>.*?code)(?:_(?:[0-9]+|a|b|lo|hi|winner))?$")
IGNORED_JOIN_COLUMNS = {"data_origin"}


# --- feature/target joins -----------------------------------------------------------------------
def _is_target_column(col: str) -> bool:
    name = norm(col)
    return bool(set(name.split("_")) & _TARGET_TOKENS) or name.startswith(_TARGET_PREFIXES)


def _keys(frame: pl.DataFrame) -> list[tuple[str, ...]]:
    codes = [c for c in frame.columns if "code" in norm(c)]
    return [("category", c) if "category" in frame.columns else (c,) for c in codes]


def _key_values(frame: pl.DataFrame, key: tuple[str, ...]) -> set[tuple]:
    cols = [
        frame[c].cast(pl.String).to_list() if c == "category" else floats(frame, c).tolist()
        for c in key
    ]
    return {
        t
        for t in zip(*cols, strict=True)
        if not any(v is None or (isinstance(v, float) and np.isnan(v)) for v in t)
    }


def check_feature_target_join(frames: Mapping[str, pl.DataFrame], ctx=None) -> list[GuardViolation]:
    """Feature tables and target tables must not share product keys: one table with both, or a
    pair whose code columns join on >= JOIN_SHARE of the target's keys, is a leak."""
    frames = {t: as_polars(f) for t, f in frames.items()}
    features = {
        t: f for t, f in frames.items() if any(_FEATURE_PATTERN.search(norm(c)) for c in f.columns)
    }
    targets = {t: f for t, f in frames.items() if any(_is_target_column(c) for c in f.columns)}
    out = []
    for t_name, t_frame in targets.items():
        target_cols = [c for c in t_frame.columns if _is_target_column(c)]
        for f_name, f_frame in features.items():
            if f_name == t_name:
                if _keys(t_frame):
                    out.append(
                        GuardViolation(
                            t_name,
                            target_cols[0],
                            "feature_target_join",
                            "the table carries features and targets keyed by product",
                        )  # fmt: skip
                    )
                continue
            hit = None
            for tk in _keys(t_frame):
                for fk in _keys(f_frame):
                    if len(tk) != len(fk):
                        continue
                    tv = _key_values(t_frame, tk)
                    if not tv:
                        continue
                    share = len(tv & _key_values(f_frame, fk)) / len(tv)
                    if share >= JOIN_SHARE:
                        hit = (tk[-1], fk[-1], share)
                        break
                if hit:
                    break
            if hit:
                out.append(
                    GuardViolation(
                        t_name,
                        hit[0],
                        "feature_target_join",
                        f"joins feature table {f_name} on {hit[1]} ({hit[2]:.0%} of keys) and "
                        f"carries targets ({', '.join(target_cols[:3])})",
                    )  # fmt: skip
                )
    return out


# --- cross-file linkage -------------------------------------------------------------------------
def code_space(col: str) -> str | None:
    """The code space of a code column (``public_code_winner`` -> ``public_code``), None for a
    column that holds no product code."""
    name = norm(col)
    if "code" not in name:
        return None
    m = _SPACE.match(name)
    return m.group("space") if m else name


def _canonical(frame: pl.DataFrame, col: str) -> pl.Series:
    """Join values: numbers as float64 (1 == 1.0 across files), everything else as text."""
    s = frame[col]
    if s.dtype.is_numeric() or s.dtype == pl.Boolean:
        return pl.Series(col, floats(frame, col)).fill_nan(None)
    return s.cast(pl.String)


def one_to_one(a: pl.DataFrame, b: pl.DataFrame, on: list[str]) -> pl.DataFrame:
    """Rows of ``a`` and ``b`` whose values on ``on`` are unique on both sides, joined: the key
    columns, ``_row_a``/``_row_b`` (0-based) and every other column as ``a::<col>``/``b::<col>``."""

    def side(f: pl.DataFrame, tag: str) -> pl.DataFrame:
        cols = {c: _canonical(f, c) for c in on}
        cols.update({f"{tag}::{c}": f[c] for c in f.columns if c not in on})
        g = pl.DataFrame(cols).with_row_index(f"_row_{tag}").drop_nulls(on)
        return g.filter(pl.len().over(on) == 1)

    return side(a, "a").join(side(b, "b"), on=on, how="inner")


def _code_map_share(links: pl.DataFrame, ctx: GatedContext) -> float:
    """Share of the gated code map's non-identity pairs that ``links`` (category, x, y)
    reproduces, in either direction."""
    if ctx.code_map is None or ctx.code_map.is_empty() or "category" not in links.columns:
        return 0.0
    m = pl.DataFrame(
        {
            "category": ctx.code_map["category"].cast(pl.String),
            "x": floats(ctx.code_map, "product_code"),
            "y": floats(ctx.code_map, "public_code"),
        }
    ).filter(pl.col("x") != pl.col("y"))
    if m.is_empty():
        return 0.0
    fwd = m.join(links, on=["category", "x", "y"], how="semi")
    back = m.join(links.rename({"x": "y", "y": "x"}), on=["category", "x", "y"], how="semi")
    return max(len(fwd), len(back)) / len(m)


def _cross_space(
    names: tuple[str, str], frames: tuple[pl.DataFrame, pl.DataFrame], on: list[str], link, ctx
) -> list[GuardViolation]:
    out = []
    (na, nb), (fa, fb) = names, frames
    with_cat = "category" in on
    for ca in [c for c in fa.columns if c not in on and code_space(c)]:
        for cb in [c for c in fb.columns if c not in on and code_space(c)]:
            if code_space(ca) == code_space(cb):
                continue
            cols = {"x": floats(link, f"a::{ca}"), "y": floats(link, f"b::{cb}")}
            if with_cat:
                cols["category"] = link["category"]
            m = pl.DataFrame(cols).with_columns(_row=link["_row_a"]).drop_nans(["x", "y"])
            key = ["category", "x"] if with_cat else ["x"]
            a_cols = {"x": floats(fa, ca)}
            if with_cat:
                a_cols["category"] = fa["category"].cast(pl.String)
            # products of the first table that could link at all (join values present)
            joinable = pl.DataFrame({c: _canonical(fa, c) for c in on}).select(
                pl.all_horizontal(pl.all().is_not_null())
            )
            a_keys = pl.DataFrame(a_cols).filter(joinable.to_series()).drop_nans("x")
            total = a_keys.unique().height
            if total == 0:
                continue
            if a_keys.is_unique().all():  # one row per product: each link is a mapping
                linked = m.select(key).unique().height
                rows_hit = m["_row"].to_numpy()
            else:  # pair rows: a code must map to the same code every time it recurs
                g = m.group_by(key).agg(pl.col("y").n_unique().alias("ny"), pl.len().alias("n"))
                recurring = g.filter(pl.col("n") >= 2)
                consistent = recurring.filter(pl.col("ny") == 1)
                if recurring.is_empty() or len(consistent) < 0.9 * len(recurring):
                    continue
                linked = len(consistent)
                rows_hit = m.join(consistent.select(key), on=key, how="semi")["_row"].to_numpy()
            if linked < max(LINK_MIN_ROWS, LINK_SHARE * total):
                continue
            detail = (
                f"joining it with {nb} on ({', '.join(on)}) maps {ca} one-to-one onto {cb} for "
                f"{linked} of {total} products: two code spaces linked"
            )
            share = _code_map_share(m.select(*(["category"] if with_cat else []), "x", "y"), ctx)
            if share >= 0.9:
                detail += f"; the links reproduce {share:.0%} of the gated code map"
            mask = np.zeros(len(fa), dtype=bool)
            mask[rows_hit.astype(np.int64)] = True
            rows, n = violation_rows(mask)
            out.append(GuardViolation(na, ca, "cross_file_linkage", detail, (), rows, n))
    return out


def _target_via_join(
    names: tuple[str, str], frames: tuple[pl.DataFrame, pl.DataFrame], on: list[str], link, ctx
) -> list[GuardViolation]:
    out = []
    for (nx, fx, tx), (ny, fy, ty) in (
        ((names[0], frames[0], "a"), (names[1], frames[1], "b")),
        ((names[1], frames[1], "b"), (names[0], frames[0], "a")),
    ):
        codes = [c for c in public_code_columns(fx) if c not in on]
        if not codes or public_code_columns(fy):
            continue  # the other side's values are tied to products by the per-table rules
        values = [c for c in numeric_columns(fy) if c not in on and "code" not in norm(c)]
        if not values:
            continue
        if "category" in on:
            category = link["category"]
        elif "category" in fx.columns:
            category = link[f"{tx}::category"].cast(pl.String)
        else:
            continue
        joined = pl.DataFrame(
            {"category": category, codes[0]: link[f"{tx}::{codes[0]}"]}
            | {f"{ny}:{c}": link[f"{ty}::{c}"] for c in values}
        )
        found = check_panel_mean_shape(nx, joined, ctx) + check_target_near_copy(nx, joined, ctx)
        rows_x = link[f"_row_{tx}"].to_numpy()
        for v in found:
            mask = np.zeros(len(fx), dtype=bool)
            mask[rows_x.astype(np.int64)] = True
            rows, n = violation_rows(mask)
            col = v.column.split(":", 1)[-1]
            out.append(
                GuardViolation(
                    nx,
                    codes[0],
                    "cross_file_linkage",
                    f"joining it with {ny} on ({', '.join(on)}) puts {ny}'s column {col} next "
                    f"to its product codes, and that column is the target: {v.detail}",
                    (),
                    rows,
                    n,
                )  # fmt: skip
            )
    return out


def check_linkage(frames: Mapping[str, pl.DataFrame], ctx: GatedContext) -> list[GuardViolation]:
    """Every pair of tables joined on their shared columns (see the module docstring)."""
    frames = {t: as_polars(f) for t, f in frames.items()}
    names = sorted(frames)
    out: list[GuardViolation] = []
    for i, na in enumerate(names):
        for nb in names[i + 1 :]:
            fa, fb = frames[na], frames[nb]
            on = [c for c in fa.columns if c in fb.columns and c not in IGNORED_JOIN_COLUMNS]
            if not [c for c in on if c != "category"] or fa.is_empty() or fb.is_empty():
                continue
            link = one_to_one(fa, fb, on)
            if len(link) < LINK_MIN_ROWS:
                continue
            found = _cross_space((na, nb), (fa, fb), on, link, ctx)
            out += found or _cross_space((nb, na), (fb, fa), on, _swap(link), ctx)
            out += _target_via_join((na, nb), (fa, fb), on, link, ctx)
    return out


def _swap(link: pl.DataFrame) -> pl.DataFrame:
    def rename(c: str) -> str:
        if c.startswith("a::"):
            return "b::" + c[3:]
        if c.startswith("b::"):
            return "a::" + c[3:]
        return {"_row_a": "_row_b", "_row_b": "_row_a"}.get(c, c)

    return link.rename({c: rename(c) for c in link.columns})
