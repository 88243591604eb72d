"""Panelist-level rows: no column may join one panelist across blocks
(``cross_block_panelist_key``). Values that pick out a person are never quoted: the message gives
the column, the rows and how many values link one person across blocks."""

from __future__ import annotations

import re

import numpy as np
import polars as pl

from warehouse.quality.guards.base import (
    GatedContext,
    GuardViolation,
    as_polars,
    floats,
    norm,
    violation_rows,
)

_PERSON_LEVEL = re.compile(r"panelist|respondent|person|participant|rater|subject|user|pid")
_COUNT_NAME = re.compile(r"^n_\w+$")
NON_KEY_COLUMNS = {"category", "block_id", "block_key", "data_origin", "panelist_block_key"}


def _block(frame: pl.DataFrame) -> pl.Series:
    return (frame["category"].cast(pl.String) + ":" + frame["block_id"].cast(pl.String)).alias("b")


def row_people(frame: pl.DataFrame, ctx: GatedContext) -> np.ndarray | None:
    """Per row, a number standing for the respondent behind (category, block_id,
    panelist_number); None without the gated panelist map or those columns."""
    need = {"category", "block_id", "panelist_number"}
    if ctx.panelists is None or not need <= set(frame.columns):
        return None
    keys = pl.DataFrame(
        {
            "category": frame["category"].cast(pl.String),
            "block_id": floats(frame, "block_id"),
            "panelist_number": floats(frame, "panelist_number"),
        }
    ).with_row_index("_row")
    p = ctx.panelists
    ids = p["respondent_id"].cast(pl.String)
    numeric = ids.str.strip_chars().cast(pl.Float64, strict=False)
    order = numeric if numeric.null_count() == ids.null_count() else ids.rank("dense")
    person = pl.DataFrame(
        {
            "category": p["category"].cast(pl.String),
            "block_id": floats(p, "block_id"),
            "panelist_number": floats(p, "panelist_number"),
            # numeric ids as numbers (row order vs id), other ids by their sorted position
            "person": order.cast(pl.Float64),
        }
    ).unique(["category", "block_id", "panelist_number"], keep="first")
    merged = keys.join(person, on=["category", "block_id", "panelist_number"], how="left")
    merged = merged.sort("_row")
    if merged["person"].is_null().all():
        return None
    return merged["person"].fill_null(np.nan).to_numpy()


def dense_columns(frame: pl.DataFrame) -> list[str]:
    """Integer columns numbered exactly 1..n inside every block (per-block numbering)."""
    if not {"category", "block_id"} <= set(frame.columns):
        return []
    b = _block(frame)
    out = []
    for col, dtype in frame.schema.items():
        if col in NON_KEY_COLUMNS or not dtype.is_integer():
            continue
        f = pl.DataFrame({"b": b, "v": frame[col]})
        ok = f.group_by("b").agg(
            (pl.col("v").sort() == pl.int_range(1, pl.len() + 1)).all().alias("ok")
        )
        if ok["ok"].all():
            out.append(col)
    return out


def check_cross_block_key(table: str, frame, ctx: GatedContext) -> list[GuardViolation]:
    """A column of panelist-level rows that links one panelist across blocks (docs/benchmark.md
    §7): with known people, a value that picks out one person in several blocks (or, for a
    per-block numbering, equal numbers that mostly mean the same person); without, a column
    unique within every block whose values recur across blocks."""
    frame = as_polars(frame)
    if not {"category", "block_id"} <= set(frame.columns) or frame.is_empty():
        return []
    if not any(
        _PERSON_LEVEL.search(norm(c)) and not _COUNT_NAME.match(norm(c)) for c in frame.columns
    ):
        return []  # not panelist-level rows (blocks, block products, ...)
    block = _block(frame)
    if block.n_unique() < 2:
        return []
    dense = set(dense_columns(frame))
    people = row_people(frame, ctx)
    out = []
    for col in _key_candidates(frame):
        df = pl.DataFrame({"v": frame[col].cast(pl.String), "b": block}).with_row_index("_row")
        if people is not None:
            df = df.with_columns(pl.Series("p", people))
        df = df.drop_nulls(["v"])
        if people is not None and col in dense:
            found = _dense_key_links_people(table, str(col), df)
        elif people is not None:
            found = _value_picks_out_a_person(table, str(col), df, len(frame))
        elif col not in dense:
            found = _recurring_block_unique_key(table, str(col), df)
        else:
            found = None
        if found is not None:
            out.append(found)
    return out


def _key_candidates(frame: pl.DataFrame) -> list[str]:
    """Columns that could be a key: not a block column, a float or a boolean, not constant."""
    return [
        c
        for c, d in frame.schema.items()
        if c not in NON_KEY_COLUMNS
        and not d.is_float()
        and d != pl.Boolean
        and frame[c].drop_nulls().n_unique() > 1
    ]


def _dense_key_links_people(table: str, col: str, df: pl.DataFrame) -> GuardViolation | None:
    """Per-block numbering: a leak only if equal numbers mean the same person."""
    same = _same_person_share(df)
    if same is None or same < 0.5:
        return None
    return GuardViolation(
        table,
        col,
        "cross_block_panelist_key",
        f"equal values in different blocks are the same panelist in {same:.0%} of cases",
    )


def _value_picks_out_a_person(
    table: str, col: str, df: pl.DataFrame, n_rows: int
) -> GuardViolation | None:
    """Values that each occur in two or more blocks and belong to one person only."""
    stats = df.group_by("v").agg(
        pl.col("b").n_unique().alias("blocks"), pl.col("p").n_unique().alias("people")
    )
    linking = stats.filter((pl.col("blocks") >= 2) & (pl.col("people") == 1))
    if not len(linking):
        return None
    hit = df["v"].is_in(linking["v"].implode()).to_numpy()
    rows, n = violation_rows(np.isin(np.arange(n_rows), df["_row"].to_numpy()[hit]))
    return GuardViolation(
        table,
        col,
        "cross_block_panelist_key",
        f"{len(linking)} value(s) each pick out one panelist across blocks "
        f"(up to {int(linking['blocks'].max())} blocks)",
        (),
        rows,
        n,
    )


def _recurring_block_unique_key(table: str, col: str, df: pl.DataFrame) -> GuardViolation | None:
    """Without known people: unique within every block and recurring across blocks."""
    within = df.group_by("b").agg(pl.col("v").is_unique().all().alias("u"))
    recurring = df.group_by("v").agg(pl.col("b").n_unique().alias("n"))
    n_rec = int((recurring["n"] >= 2).sum())
    if not (within["u"].all() and n_rec):
        return None
    return GuardViolation(
        table,
        col,
        "cross_block_panelist_key",
        f"unique within every block and {n_rec} value(s) recur across blocks "
        "(a person key; use per-block 1..n numbering)",
    )


def _same_person_share(df: pl.DataFrame) -> float | None:
    """Of the pairs of rows with equal ``v`` in different blocks ``b``, the share whose person
    ``p`` is the same (None without such pairs). Counted per group, never materialized: the pairs
    grow with the square of the rows per value (~10^9 for panelist numbers at a scale-100
    simulation) while the counts need one group-by: n(n-1)/2 minus the pairs inside one block."""
    d = df.select("v", "b", "p").drop_nulls(["v", "b"])
    if _cross_block_pairs(d, ["v"]) == 0:
        return None
    d = d.drop_nulls(["p"])  # a pair with a null person compares as null: not counted
    total = _cross_block_pairs(d, ["v"])
    if total == 0:
        return None
    return _cross_block_pairs(d, ["v", "p"]) / total  # NaN persons are equal, as polars' ==


def _cross_block_pairs(d: pl.DataFrame, keys: list[str]) -> int:
    """Unordered pairs of rows equal on ``keys`` and in different blocks."""
    per_block = d.group_by([*keys, "b"]).agg(n=pl.len().cast(pl.Int64))
    per_key = per_block.group_by(keys).agg(
        n=pl.col("n").sum(), within=(pl.col("n") * pl.col("n")).sum()
    )
    return int(((per_key["n"] * per_key["n"] - per_key["within"]) // 2).sum())
