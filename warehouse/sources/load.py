"""Write validated inputs into the ``raw`` schema of a DuckDB file.

Every raw table keeps the source values and adds ``_source_file``, ``_loaded_at`` (UTC) and
``data_origin``. Nothing is written until every input has been read and validated.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pandas as pd

from warehouse.config import Settings
from warehouse.sources import registry
from warehouse.sources.nectar import read_bundle
from warehouse.sources.public import (
    RawTable,
    read_fartdb,
    read_foodatlas_v1,
    read_foodatlas_v4,
    read_tastebench_public,
)


def nectar_tables(root: Path, settings: Settings) -> list[RawTable]:
    croissant = registry.resolve("tastebench_nectar_croissant", settings)
    bundle = read_bundle(root, croissant)
    tables = [
        RawTable(
            Path(name).stem.replace(" ", "_"), frame, str(bundle.root / name), bundle.data_origin
        )
        for name, frame in bundle.tables.items()
    ]
    tables.append(
        RawTable("nectar_images", bundle.images, str(bundle.root / "images"), bundle.data_origin)
    )
    return tables


Reader = Callable[[], list[RawTable]]


def readers(settings: Settings, nectar_root: Path) -> list[tuple[str, str, Reader]]:
    """(source name, label, reader) of every loader. The names are the sources the incremental
    build fingerprints (warehouse/orchestrate/state.py)."""
    return [
        ("nectar", "NECTAR bundle", lambda: nectar_tables(nectar_root, settings)),
        ("fartdb", "FartDB splits", lambda: read_fartdb(settings)),
        ("foodatlas", "FoodAtlas extracts", lambda: read_foodatlas_v1(settings)),
        (
            "foodatlas_v4",
            "FoodAtlas v4 bundle",
            lambda: read_foodatlas_v4(settings.foodatlas_v4, settings),
        ),
        (
            "tastebench_public",
            "TasteBench public artifacts",
            lambda: read_tastebench_public(settings),
        ),
    ]


def read_sources(
    settings: Settings,
    nectar_root: Path,
    step: Callable[[str], None] | None = None,
    only: set[str] | None = None,
) -> dict[str, list[RawTable]]:
    """Read and validate every source (or those named in ``only``), no writes: source -> tables."""
    out: dict[str, list[RawTable]] = {}
    for name, label, reader in readers(settings, nectar_root):
        if only is not None and name not in only:
            continue
        if step:
            step(label)
        out[name] = reader()
    return out


def read_all(
    settings: Settings, nectar_root: Path, step: Callable[[str], None] | None = None
) -> list[RawTable]:
    """Read and validate every source (no writes)."""
    return [t for tables in read_sources(settings, nectar_root, step).values() for t in tables]


def write_raw(con: duckdb.DuckDBPyConnection, tables: list[RawTable]) -> dict[str, int]:
    loaded_at = pd.Timestamp(datetime.now(UTC)).tz_convert("UTC").tz_localize(None)
    con.execute("CREATE SCHEMA IF NOT EXISTS raw")
    counts = {}
    for table in tables:
        frame = table.frame.copy()
        if "_source_file" not in frame.columns:
            frame["_source_file"] = table.source_file
        frame["_loaded_at"] = loaded_at
        frame["data_origin"] = table.data_origin
        con.register("_incoming", frame)
        con.execute(f'CREATE OR REPLACE TABLE raw."{table.name}" AS SELECT * FROM _incoming')
        con.unregister("_incoming")
        counts[table.name] = len(frame)
    return counts
