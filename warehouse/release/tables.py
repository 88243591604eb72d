"""Byte-stable serialization of released tables (CSV and its Parquet twin), and the manifest.

Every released table is written by :func:`write_table` from a :class:`TableSpec` (column order,
types, sort key, descriptions (a column that a dbt model has is described by that model's
yml, :mod:`.dbt_docs`): the same spec drives the Croissant record sets and the README):

* CSV: UTF-8, ``,`` separator, ``\\n`` line ends, minimal quoting (Python ``csv``), a header row;
  floats as Python ``repr`` of the float64 (the shortest string that parses back to the same
  float, so ``read(write(x)) == x`` bit for bit), ``-0.0`` written as ``0.0``; integers in
  decimal; booleans ``true``/``false``; a missing value (None, NaN, null) is the empty field;
* rows sorted by the spec's ``sort_by`` columns (released columns only), stable, missing values
  last, so row order is a function of the released columns and nothing else;
* beside each CSV a **Parquet** file (pyarrow, zstd, no pandas metadata) with the same rows in
  the same order, typed ``string | int64 | double | bool`` (the Croissant types ``sc:Text |
  sc:Integer | sc:Float | sc:Boolean``); its values are those the CSV reads back as, so the two
  files hold the same table.

Frames are polars (a caller's pandas frame is converted on entry). The same
frame therefore always gives the same bytes, and a file parsed with :func:`read_table` and written
again is byte-identical.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.errors import WarehouseError
from warehouse.files import sha256_file
from warehouse.release.dbt_docs import column_description

MANIFEST_NAME = "MANIFEST.sha256"
PUBLIC_DB = "tastebench_release.duckdb"  # checked by content, not by hash (release/public_db.py)
TYPES = ("str", "int", "float", "bool")
CROISSANT_TYPES = {"str": "sc:Text", "int": "sc:Integer", "float": "sc:Float", "bool": "sc:Boolean"}
ARROW_TYPES = {"str": pa.string(), "int": pa.int64(), "float": pa.float64(), "bool": pa.bool_()}
POLARS_TYPES = {"str": pl.String, "int": pl.Int64, "float": pl.Float64, "bool": pl.Boolean}


class ReleaseError(WarehouseError):
    """A release or competition export could not be written (nothing was published)."""


@dataclass(frozen=True)
class Column:
    """A released column. ``model``: the dbt model whose yml describes it (the column's one
    declaration, read when :attr:`description` is asked for); otherwise ``text`` describes a
    column that exists only in the release (docs/release.md, "Column descriptions")."""

    name: str
    type: str
    text: str = ""
    model: str = ""

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"column {self.name}: unknown type {self.type!r}")
        if bool(self.text) == bool(self.model):
            raise ValueError(f"column {self.name}: give either a text or a dbt model, not both")

    @property
    def description(self) -> str:
        if self.model:
            return column_description(self.model, self.name)
        return self.text


@dataclass(frozen=True)
class TableSpec:
    """One released CSV: path relative to the release root, columns, sort key, description."""

    path: str
    description: str
    columns: tuple[Column, ...]
    sort_by: tuple[str, ...]
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def with_path(self, path: str, description: str | None = None) -> TableSpec:
        return TableSpec(
            path, description or self.description, self.columns, self.sort_by, self.extra
        )

    @property
    def parquet_path(self) -> str:
        """The Parquet twin of the CSV (same path, ``.parquet``)."""
        return str(Path(self.path).with_suffix(".parquet").as_posix())


def _missing(value: object) -> bool:
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    return isinstance(value, float | np.floating) and math.isnan(float(value))


def format_value(value: object, type_: str) -> str:
    """One field as text (the rules of the module docstring)."""
    if _missing(value):
        return ""
    if type_ == "float":
        x = float(value)  # type: ignore[arg-type]
        if math.isinf(x):
            raise ValueError(f"infinite value {x!r} cannot be released")
        return repr(0.0 if x == 0 else x)
    if type_ == "int":
        if isinstance(value, float | np.floating) and not float(value).is_integer():
            raise ValueError(f"non-integral value {value!r} in an integer column")
        return str(int(value))  # type: ignore[arg-type]
    if type_ == "bool":
        if isinstance(value, str):
            v = value.strip().lower()
            if v not in {"true", "false"}:
                raise ValueError(f"not a boolean: {value!r}")
            return v
        return "true" if bool(value) else "false"
    return str(value)


def parse_value(text: str, type_: str) -> object:
    if text == "":
        return None
    if type_ == "float":
        return float(text)
    if type_ == "int":
        return int(text)
    if type_ == "bool":
        if text not in {"true", "false"}:
            raise ValueError(f"not a boolean: {text!r}")
        return text == "true"
    return text


def as_frame(frame) -> pl.DataFrame:
    """A polars frame. The warehouse's own code passes polars; a caller's pandas frame (a user's
    script, the unit tests' hand-made inputs) is converted here, object columns' missing values
    to null."""
    if isinstance(frame, pl.DataFrame):
        return frame
    import pandas as pd  # only to recognise a caller's pandas frame

    if isinstance(frame, pd.DataFrame):
        f = frame.reset_index(drop=True).copy()
        for c in f.columns:
            if f[c].dtype == object:
                f[c] = f[c].map(lambda v: None if _missing(v) else v)
        return pl.from_pandas(f)
    return pl.DataFrame(frame)


def _sort_key(frame: pl.DataFrame, col: str, type_: str) -> pl.Series:
    s = frame[col]
    if type_ in {"int", "float"}:
        if s.dtype == pl.String:
            s = s.str.strip_chars().cast(pl.Float64, strict=True)
        return s.cast(pl.Float64).fill_nan(None)
    if type_ == "bool":
        return s.cast(pl.Boolean)
    return s.cast(pl.String)


def sort_frame(frame, spec: TableSpec) -> pl.DataFrame:
    """Rows in the order of ``spec.sort_by`` (released columns; stable; missing values last)."""
    frame = as_frame(frame)
    if not spec.sort_by:
        return frame
    types = {c.name: c.type for c in spec.columns}
    keys = pl.DataFrame(
        {f"_k{i}": _sort_key(frame, c, types[c]) for i, c in enumerate(spec.sort_by)}
    )
    order = keys.with_row_index("_i").sort(
        [f"_k{i}" for i in range(len(spec.sort_by))], nulls_last=True, maintain_order=True
    )["_i"]
    return frame.select(pl.all().gather(order))


def _rows(frame, spec: TableSpec) -> list[list[str]]:
    """The released text of every row (columns selected, typed, sorted)."""
    frame = as_frame(frame)
    missing = [c for c in spec.names if c not in frame.columns]
    if missing:
        raise ReleaseError(f"{spec.path}: frame lacks column(s) {missing}")
    frame = sort_frame(frame.select(spec.names), spec)
    types = [c.type for c in spec.columns]
    out = []
    for row in frame.iter_rows():
        try:
            out.append([format_value(v, t) for v, t in zip(row, types, strict=True)])
        except ValueError as exc:
            raise ReleaseError(f"{spec.path}: {exc}") from exc
    return out


def _csv_bytes(rows: list[list[str]], spec: TableSpec) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(spec.names)
    writer.writerows(rows)
    return buf.getvalue().encode("utf-8")


def table_bytes(frame, spec: TableSpec) -> bytes:
    """The released CSV bytes of ``frame`` under ``spec`` (columns selected, typed, sorted)."""
    return _csv_bytes(_rows(frame, spec), spec)


def arrow_table(rows: list[list[str]], spec: TableSpec) -> pa.Table:
    """The rows as the CSV reads them back, typed per spec (the Parquet content)."""
    columns = {
        c.name: pa.array([parse_value(r[i], c.type) for r in rows], type=ARROW_TYPES[c.type])
        for i, c in enumerate(spec.columns)
    }
    return pa.table(columns)


def parquet_bytes(frame, spec: TableSpec) -> bytes:
    """The released Parquet bytes of ``frame`` (deterministic for the same pyarrow version)."""
    return _parquet(arrow_table(_rows(frame, spec), spec))


def _parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd", write_statistics=True, store_schema=False)
    return buf.getvalue()


def write_table(root: Path, frame, spec: TableSpec, *, parquet: bool = True) -> Path:
    """Write the CSV (and its Parquet twin) of ``frame`` under ``root``; returns the CSV path."""
    rows = _rows(frame, spec)
    path = Path(root) / spec.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_csv_bytes(rows, spec))
    if parquet:
        (Path(root) / spec.parquet_path).write_bytes(_parquet(arrow_table(rows, spec)))
    return path


def read_table(path: Path, spec: TableSpec) -> pl.DataFrame:
    """Parse a released CSV with the spec's types (polars: String, Int64, Float64, Boolean; a
    missing value is null). Raises ``ValueError`` on a wrong header or a bad value."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        raise ValueError("empty file (no header)")
    if rows[0] != spec.names:
        raise ValueError(f"header {rows[0]} differs from the released columns {spec.names}")
    data: dict[str, list[object]] = {c.name: [] for c in spec.columns}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(spec.columns):
            raise ValueError(f"line {line}: {len(row)} fields, expected {len(spec.columns)}")
        for col, text in zip(spec.columns, row, strict=True):
            try:
                data[col.name].append(parse_value(text, col.type))
            except ValueError as exc:
                raise ValueError(f"line {line}, column {col.name}: {exc}") from exc
    return pl.DataFrame(data, schema={c.name: POLARS_TYPES[c.type] for c in spec.columns})


def parquet_problems(root: Path, spec: TableSpec) -> list[str]:
    """The Parquet twin must exist, carry the spec's Arrow types and hold the CSV's rows."""
    path = Path(root) / spec.parquet_path
    if not path.is_file():
        return [f"{spec.parquet_path}: missing (every released CSV has a Parquet twin)"]
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException) as exc:
        return [f"{spec.parquet_path}: cannot be read ({exc})"]
    expected = pa.schema([(c.name, ARROW_TYPES[c.type]) for c in spec.columns])
    if not table.schema.equals(expected, check_metadata=False):
        return [f"{spec.parquet_path}: schema {table.schema} differs from {expected}"]
    try:
        csv_rows = _rows(read_table(Path(root) / spec.path, spec), spec)
    except (ValueError, ReleaseError) as exc:
        return [f"{spec.parquet_path}: its CSV cannot be read ({exc})"]
    if not table.equals(arrow_table(csv_rows, spec)):
        return [f"{spec.parquet_path}: rows differ from {spec.path}"]
    return []


# --- hashes and the manifest --------------------------------------------------------------------
def release_files(root: Path) -> list[str]:
    """Every file under ``root`` (relative POSIX paths, sorted), the manifest and the public
    DuckDB file (not byte-stable; verified by content) excluded."""
    root = Path(root)
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).as_posix() not in (MANIFEST_NAME, PUBLIC_DB)
    )


def manifest_text(root: Path, files: Iterable[str] | None = None) -> str:
    files = release_files(root) if files is None else sorted(files)
    return "".join(f"{sha256_file(Path(root) / f)}  {f}\n" for f in files)


def write_manifest(root: Path) -> Path:
    path = Path(root) / MANIFEST_NAME
    path.write_text(manifest_text(root), encoding="utf-8", newline="\n")
    return path


def parse_manifest(text: str) -> dict[str, str]:
    """``{relpath: sha256}``; raises ``ValueError`` naming a malformed line."""
    out: dict[str, str] = {}
    for i, line in enumerate(text.splitlines(), start=1):
        digest, sep, rel = line.partition("  ")
        if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError(f"line {i} is not '<sha256>  <relpath>'")
        if rel in out:
            raise ValueError(f"line {i}: {rel} listed twice")
        out[rel] = digest
    return out


__all__ = [
    "ARROW_TYPES",
    "CROISSANT_TYPES",
    "MANIFEST_NAME",
    "PUBLIC_DB",
    "Column",
    "ReleaseError",
    "TableSpec",
    "arrow_table",
    "as_frame",
    "format_value",
    "manifest_text",
    "parquet_bytes",
    "parquet_problems",
    "parse_manifest",
    "parse_value",
    "read_table",
    "release_files",
    "sort_frame",
    "table_bytes",
    "write_manifest",
    "write_table",
]
