"""Byte-stable serialization of released tables, and the sha256 manifest.

Every released CSV is written by :func:`write_table` from a :class:`TableSpec` (column order,
types, sort key, descriptions: the same spec drives the Croissant record sets and the README):

* UTF-8, ``,`` separator, ``\\n`` line ends, minimal quoting (Python ``csv``), a header row;
* floats as Python ``repr`` of the float64 (the shortest string that parses back to the same
  float, so ``read(write(x)) == x`` bit for bit), ``-0.0`` written as ``0.0``; integers in
  decimal; booleans ``true``/``false``; a missing value (None, NaN, NA) is the empty field;
* rows sorted by the spec's ``sort_by`` columns (released columns only), stable, missing values
  last, so row order is a function of the released columns and nothing else.

The same frame therefore always gives the same bytes, and a file parsed with
:func:`read_table` and written again is byte-identical.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from warehouse.errors import WarehouseError

MANIFEST_NAME = "MANIFEST.sha256"
TYPES = ("str", "int", "float", "bool")
CROISSANT_TYPES = {"str": "sc:Text", "int": "sc:Integer", "float": "sc:Float", "bool": "sc:Boolean"}


class ReleaseError(WarehouseError):
    """A release or competition export could not be written (nothing was published)."""


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    description: str

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"column {self.name}: unknown type {self.type!r}")


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


def _missing(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
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


def sort_frame(frame: pd.DataFrame, spec: TableSpec) -> pd.DataFrame:
    """Rows in the order of ``spec.sort_by`` (released columns; stable; missing values last)."""
    if not spec.sort_by:
        return frame.reset_index(drop=True)
    keys = frame[list(spec.sort_by)].copy()
    types = {c.name: c.type for c in spec.columns}
    for col in spec.sort_by:
        if types[col] in {"int", "float"}:
            keys[col] = pd.to_numeric(keys[col], errors="raise").astype("float64")
        elif types[col] == "bool":
            keys[col] = keys[col].map(lambda v: None if _missing(v) else bool(v)).astype("float")
        else:
            keys[col] = keys[col].map(lambda v: None if _missing(v) else str(v))
    order = keys.sort_values(list(spec.sort_by), kind="mergesort", na_position="last").index
    return frame.loc[order].reset_index(drop=True)


def table_bytes(frame: pd.DataFrame, spec: TableSpec) -> bytes:
    """The released bytes of ``frame`` under ``spec`` (columns selected, typed, sorted)."""
    missing = [c for c in spec.names if c not in frame.columns]
    if missing:
        raise ReleaseError(f"{spec.path}: frame lacks column(s) {missing}")
    frame = sort_frame(frame[spec.names], spec)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(spec.names)
    types = [c.type for c in spec.columns]
    for row in frame.itertuples(index=False, name=None):
        try:
            writer.writerow([format_value(v, t) for v, t in zip(row, types, strict=True)])
        except ValueError as exc:
            raise ReleaseError(f"{spec.path}: {exc}") from exc
    return buf.getvalue().encode("utf-8")


def write_table(root: Path, frame: pd.DataFrame, spec: TableSpec) -> Path:
    path = Path(root) / spec.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(table_bytes(frame, spec))
    return path


def read_table(path: Path, spec: TableSpec) -> pd.DataFrame:
    """Parse a released CSV with the spec's types (object columns holding Python values; floats
    as float64 with NaN for missing). Raises ``ValueError`` on a wrong header or a bad value."""
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
    out = pd.DataFrame(data, columns=spec.names)
    for col in spec.columns:
        if col.type == "float":
            out[col.name] = pd.to_numeric(out[col.name]).astype("float64")
    return out


# --- hashes and the manifest --------------------------------------------------------------------
def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def release_files(root: Path) -> list[str]:
    """Every file under ``root`` (relative POSIX paths, sorted), the manifest excluded."""
    root = Path(root)
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and p.relative_to(root).as_posix() != MANIFEST_NAME
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
    "CROISSANT_TYPES",
    "MANIFEST_NAME",
    "Column",
    "ReleaseError",
    "TableSpec",
    "format_value",
    "manifest_text",
    "parse_manifest",
    "parse_value",
    "read_table",
    "release_files",
    "sha256_file",
    "sort_frame",
    "table_bytes",
    "write_manifest",
    "write_table",
]
