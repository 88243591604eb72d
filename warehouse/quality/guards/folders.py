"""Guards on a written folder (a release or a competition): every table (CSV, TSV, Parquet) as a
public table, the set-level rules over the tables (a Parquet file that twins a CSV of the same
path is guarded on its own but joins the set only once), every text file scanned for brands and
identifiers line by line, and no file named like the gated code map."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from warehouse.quality.guards.base import GatedContext, GuardError, GuardViolation

TABLE_SUFFIXES = {".csv", ".tsv", ".parquet"}
TEXT_SUFFIXES = {".md", ".txt", ".json", ".jsonl", ".yaml", ".yml", ".html", ".tex", ".cff"}
MAP_FILE = re.compile(r"code_?map|gated|mapping|crosswalk", re.I)


def read_table_file(path: Path) -> pl.DataFrame:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return pl.read_parquet(path)
    return pl.read_csv(path, separator="\t" if suffix == ".tsv" else ",", infer_schema_length=None)


def read_release_dir(path: Path) -> tuple[dict[str, pl.DataFrame], dict[str, str]]:
    """Tables (by relative path) and text files of a release folder."""
    path = Path(path)
    tables: dict[str, pl.DataFrame] = {}
    texts: dict[str, str] = {}
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = f.relative_to(path).as_posix()
        suffix = f.suffix.lower()
        if suffix in TABLE_SUFFIXES:
            try:
                tables[rel] = read_table_file(f)
            except (pl.exceptions.PolarsError, OSError) as exc:
                raise GuardError(
                    f"{rel} in {path} cannot be read as a table ({exc}). Fix: write it with "
                    "the release writer."
                ) from exc
        elif suffix in TEXT_SUFFIXES:
            texts[rel] = f.read_text(errors="replace")
    return tables, texts


def set_members(tables: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """The tables that enter the set-level rules: a Parquet twin of a CSV is left out."""
    csvs = {Path(r).with_suffix("").as_posix() for r in tables if not r.endswith(".parquet")}
    return {
        r: f
        for r, f in tables.items()
        if not (r.endswith(".parquet") and Path(r).with_suffix("").as_posix() in csvs)
    }


def guard_release_dir(path: Path, gated_context: GatedContext) -> list[GuardViolation]:
    """All guards on a release folder: every table as a public table, the set-level rules (the
    cross-file linkage among them), text files scanned for brand names and identifiers, and no
    file that looks like (or holds) the gated code map."""
    from warehouse.quality.guards import SET_RULES, guard_frame
    from warehouse.quality.guards.names import check_brand_in_text, check_identifier_values

    path = Path(path)
    if not path.is_dir():
        raise GuardError(f"release folder {path} does not exist. Fix: export the release first.")
    tables, texts = read_release_dir(path)
    out: list[GuardViolation] = []
    for name, frame in tables.items():
        out.extend(guard_frame(name, frame, gated_context))
    members = set_members(tables)
    for rule in SET_RULES.values():
        out.extend(rule(members, gated_context))
    for rel, text in texts.items():
        frame = pl.DataFrame(
            {"(file text)": text.splitlines() or [""]}, schema={"(file text)": pl.String}
        )
        out.extend(check_brand_in_text(rel, frame, gated_context))
        out.extend(check_identifier_values(rel, frame, gated_context))
    for f in sorted(p for p in path.rglob("*") if p.is_file()):
        if MAP_FILE.search(f.stem):
            out.append(
                GuardViolation(
                    f.relative_to(path).as_posix(),
                    "(file name)",
                    "code_map_in_public",
                    "a file named like the gated code map is inside the public folder",
                )
            )
    return out
