"""Guards on a written folder (a release or a competition): every table (CSV, TSV, Parquet, and
every table or view inside a DuckDB file) as a public table, the set-level rules over the tables (a
Parquet file or a DuckDB table that twins a CSV is guarded on its own but joins the set only once),
every text file scanned line by line for brands, identifiers and unreadable text, and no file or
DuckDB table named like the gated code map.

A DuckDB table ``<schema>.<table>`` in ``<file>.duckdb`` is read as the table
``<file>.duckdb:<schema>.<table>``; it twins the CSV ``<schema>/<table>.csv`` of the same folder
(``main`` stands for the folder itself: :func:`db_table_csv`), the convention the release's public
DuckDB file follows (``warehouse.release.public_db``)."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from warehouse.quality.guards.base import GatedContext, GuardError, GuardViolation
from warehouse.quality.guards.names import (
    check_brand_in_text,
    check_identifier_values,
    check_unreadable_text,
)
from warehouse.quality.guards.rules import SET_RULES, guard_frame

TABLE_SUFFIXES = {".csv", ".tsv", ".parquet"}
DB_SUFFIXES = {".duckdb"}
TEXT_SUFFIXES = {".md", ".txt", ".json", ".jsonl", ".yaml", ".yml", ".html", ".tex", ".cff"}
MAP_FILE = re.compile(r"code_?map|gated|mapping|crosswalk", re.I)


def read_table_file(path: Path) -> pl.DataFrame:
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return pl.read_parquet(path)
    return pl.read_csv(path, separator="\t" if suffix == ".tsv" else ",", infer_schema_length=None)


def db_table_csv(schema: str, table: str) -> str:
    """The CSV path a DuckDB table ``schema.table`` twins (``main`` is the folder itself)."""
    return f"{table}.csv" if schema == "main" else f"{schema}/{table}.csv"


def db_relations(con) -> list[tuple[str, str, str]]:
    """(schema, name, kind) of every user table and view of an open DuckDB file, sorted."""
    rows = con.execute(
        "select schema_name, table_name, 'table' from duckdb_tables() where not internal "
        "union all select schema_name, view_name, 'view' from duckdb_views() where not internal "
        "order by 1, 2"
    ).fetchall()
    return [(str(s), str(n), str(k)) for s, n, k in rows]


def read_db_file(path: Path, rel: str) -> dict[str, pl.DataFrame]:
    """Every table and view of a DuckDB file, as ``<rel>:<schema>.<name>``, opened truly
    read-only: a view planted to read a host file is refused, never read."""
    import duckdb

    from warehouse.errors import WarehouseError
    from warehouse.sources.readonly import connect_read_only

    try:
        con = connect_read_only(path)
    except WarehouseError as exc:
        raise GuardError(
            f"{rel} cannot be opened as a DuckDB file ({exc.__cause__ or exc}). Fix: write it "
            "with the release writer."
        ) from exc
    out = {}
    try:
        for schema, name, _ in db_relations(con):
            try:
                out[f"{rel}:{schema}.{name}"] = con.sql(f'select * from "{schema}"."{name}"').pl()
            except duckdb.PermissionException as exc:
                raise GuardError(
                    f"{rel}:{schema}.{name} reads outside its DuckDB file (refused: "
                    f"{str(exc).splitlines()[0]}). Fix: a release holds tables only; re-export "
                    "it with tastebench release."
                ) from exc
    finally:
        con.close()
    return out


def read_release_dir(path: Path) -> tuple[dict[str, pl.DataFrame], dict[str, str]]:
    """Tables (by relative path; a DuckDB file's as ``<rel>:<schema>.<name>``) and text files of
    a release folder."""
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
        elif suffix in DB_SUFFIXES:
            tables.update(read_db_file(f, rel))
        elif suffix in TEXT_SUFFIXES:
            texts[rel] = f.read_text(errors="replace")
    return tables, texts


def twin_stem(rel: str) -> str | None:
    """The path without suffix of the CSV/TSV a Parquet file or a DuckDB table would twin; None
    for any other table."""
    if ":" in rel:
        file, qualified = rel.split(":", 1)
        schema, _, table = qualified.partition(".")
        return (Path(file).parent / db_table_csv(schema, table)).with_suffix("").as_posix()
    if rel.endswith(".parquet"):
        return Path(rel).with_suffix("").as_posix()
    return None


def set_members(tables: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """The tables that enter the set-level rules: a Parquet twin of a CSV, or a DuckDB table that
    twins one, is left out (it is guarded on its own)."""
    texts = {Path(r).with_suffix("").as_posix() for r in tables if twin_stem(r) is None}
    return {r: f for r, f in tables.items() if twin_stem(r) not in texts}


def guard_release_dir(path: Path, gated_context: GatedContext) -> list[GuardViolation]:
    """All guards on a release folder: every table as a public table, the set-level rules (the
    cross-file linkage among them), text files scanned for brand names and identifiers, and no
    file that looks like (or holds) the gated code map."""
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
        out.extend(check_unreadable_text(rel, frame, gated_context))
    for name in tables:
        if ":" in name and MAP_FILE.search(name.split(":", 1)[1]):
            out.append(
                GuardViolation(
                    name,
                    "(table name)",
                    "code_map_in_public",
                    "a DuckDB table named like the gated code map is inside the public folder",
                )
            )
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
