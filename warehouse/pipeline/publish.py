"""Atomic publish (docs/architecture.md convention 9): the build writes a separate file beside the
live one (``.<db name>.building``) and swaps it in with ``os.replace`` only when every step
succeeded; a failed build removes that file and leaves the previous warehouse serving."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from warehouse.errors import WarehouseError, resource_error


def staging_path(db_path: Path) -> Path:
    """The separate file a build writes before the swap, beside the published ``db_path``."""
    return db_path.with_name(f".{db_path.name}.building")


def _leftovers(staging: Path) -> tuple[Path, Path]:
    return staging, staging.with_name(staging.name + ".wal")


def clear_leftovers(staging: Path, log: Callable[[str], None]) -> None:
    """Remove the unfinished file (and its write-ahead log) of an interrupted build."""
    if staging.exists():
        log(f"removed {staging.name}, the unfinished file of an interrupted build")
    for leftover in _leftovers(staging):
        leftover.unlink(missing_ok=True)


def swap(staging: Path, db_path: Path) -> None:
    """Fold the write-ahead log dbt may leave beside the staging file into it (``CHECKPOINT``),
    then replace the published file with it in one step."""
    import duckdb

    con = duckdb.connect(str(staging))
    try:
        con.execute("CHECKPOINT")
    finally:
        con.close()
    os.replace(staging, db_path)


def discard(staging: Path, exc: BaseException) -> WarehouseError | None:
    """After a failed step: remove the staging file; the error that names a full disk or
    exhausted memory with the file being written, when ``exc`` is such an unnamed error."""
    for leftover in _leftovers(staging):
        leftover.unlink(missing_ok=True)
    unnamed = isinstance(exc, Exception) and not isinstance(exc, WarehouseError)
    return resource_error(exc, staging) if unnamed else None
