"""The release's public DuckDB file: every released table, queryable with SQL outside the NDA.

``tastebench release`` writes ``tastebench_release.duckdb`` at the release root, one table per
released CSV, built from its Parquet twin (same rows, same order, same types): the CSV
``<dir>/<name>.csv`` becomes the table ``<dir>.<name>`` (``benchmark.products``,
``metrics.model_metrics``, ``oof."<model>"``; a CSV at the root would be ``main.<name>``, the
convention of ``warehouse.quality.guards.folders.db_table_csv``), commented with the table's
description. Nothing else: no views, no other tables.

A DuckDB file is not byte-stable (DuckDB writes a random database identifier and checksums into
its header), so it is the one file that ``MANIFEST.sha256`` and ``croissant.json`` leave out: they
stay byte-identical across re-exports. ``tastebench verify`` checks it by content instead
(:func:`public_db_problems`: exactly the released tables, each equal to its CSV), and the release
guards read every table and view in it (``guard_release_dir``), so a table planted in it fails
the gate like a planted CSV.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from warehouse.quality.guards.folders import db_relations
from warehouse.release.tables import PUBLIC_DB, TableSpec, read_table


def db_name(spec: TableSpec) -> tuple[str, str]:
    """(schema, table) of a released CSV in the public DuckDB file."""
    path = Path(spec.path)
    return ("main" if path.parent == Path(".") else path.parent.as_posix(), path.stem)


def _q(name: tuple[str, str]) -> str:
    return ".".join('"' + part.replace('"', '""') + '"' for part in name)


def write_public_db(root: Path, specs: Iterable[TableSpec]) -> Path:
    """Write ``root/tastebench_release.duckdb`` from the Parquet twins under ``root``."""
    import duckdb

    root = Path(root)
    path = root / PUBLIC_DB
    if path.exists():
        path.unlink()
    con = duckdb.connect(str(path))
    try:
        con.execute("set threads = 1")  # rows stay in the Parquet file's order
        for spec in sorted(specs, key=lambda s: s.path):
            schema, table = db_name(spec)
            con.execute(f'create schema if not exists "{schema}"')
            con.execute(
                f"create table {_q((schema, table))} as select * from read_parquet(?)",
                [str(root / spec.parquet_path)],
            )
            comment = spec.description.replace("'", "''")  # COMMENT ON takes no parameter
            con.execute(f"comment on table {_q((schema, table))} is '{comment}'")
        con.execute("checkpoint")
    finally:
        con.close()
    return path


def public_db_problems(root: Path, specs: Iterable[TableSpec]) -> list[str]:
    """The public DuckDB file must hold exactly one table per released CSV (no view, no other
    table), each with the CSV's columns, types and rows in the CSV's order."""
    from warehouse.errors import WarehouseError
    from warehouse.sources.readonly import connect_read_only

    root = Path(root)
    path = root / PUBLIC_DB
    if not path.is_file():
        return [f"{PUBLIC_DB}: missing (every release has its public DuckDB file)"]
    try:
        con = connect_read_only(path)  # a tampered file's views cannot read the host
    except WarehouseError as exc:
        return [f"{PUBLIC_DB}: cannot be opened ({exc.__cause__ or exc})"]
    out = []
    try:
        expected = {db_name(s): s for s in specs}
        found = {(s, n): kind for s, n, kind in db_relations(con)}
        for (schema, name), kind in sorted(found.items()):
            if (schema, name) not in expected or kind != "table":
                out.append(f"{PUBLIC_DB}: {kind} {schema}.{name} is not a released table")
        for name, spec in sorted(expected.items()):
            if name not in found:
                out.append(f"{PUBLIC_DB}: no table {'.'.join(name)} (the twin of {spec.path})")
                continue
            csv_path = root / spec.path
            if not csv_path.is_file():
                continue  # reported as missing by the CSV checks
            try:
                ours = read_table(csv_path, spec)
            except (ValueError, UnicodeDecodeError):
                continue  # reported by the CSV checks
            theirs = con.sql(f"select * from {_q(name)}").pl()
            if theirs.schema != ours.schema:
                out.append(
                    f"{PUBLIC_DB}: table {'.'.join(name)} has columns {dict(theirs.schema)}, "
                    f"{spec.path} has {dict(ours.schema)}"
                )
            elif not theirs.equals(ours):
                out.append(f"{PUBLIC_DB}: rows of table {'.'.join(name)} differ from {spec.path}")
    finally:
        con.close()
    return out


__all__ = ["PUBLIC_DB", "db_name", "public_db_problems", "write_public_db"]
