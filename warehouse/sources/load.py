"""Write validated inputs into the ``raw`` schema of a DuckDB file.

Every raw table keeps the source values and adds ``_source_file``, ``_loaded_at`` (UTC, one value
per build: the source freshness field) and ``data_origin``; tables read from public files also
carry ``_file_row``. Frames go to DuckDB as Arrow. Nothing is written until every input has been
read and validated.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl

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
    build fingerprints (warehouse/pipeline/state.py)."""
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
    loaded_at = datetime.now(UTC).replace(tzinfo=None)
    con.execute("CREATE SCHEMA IF NOT EXISTS raw")
    counts = {}
    for table in tables:
        frame = table.frame
        if "_source_file" not in frame.columns:
            frame = frame.with_columns(
                pl.lit(table.source_file, dtype=pl.String).alias("_source_file")
            )
        frame = frame.with_columns(
            pl.lit(loaded_at, dtype=pl.Datetime("us")).alias("_loaded_at"),
            pl.lit(table.data_origin, dtype=pl.String).alias("data_origin"),
        )
        con.register("_incoming", frame.to_arrow())
        con.execute(f'CREATE OR REPLACE TABLE raw."{table.name}" AS SELECT * FROM _incoming')
        con.unregister("_incoming")
        counts[table.name] = frame.height
    return counts
