"""`tastebench sql` and `tastebench snapshot`: read-only looks at the built warehouse."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from warehouse.cli import console as consoles


def sql(
    query: Annotated[
        str | None, typer.Argument(help="SQL to run read-only against the warehouse.")
    ] = None,
    file: Annotated[
        str | None, typer.Option("-f", "--file", help="Read the SQL from FILE (- for stdin).")
    ] = None,
    db: Annotated[Path | None, typer.Option(help="DuckDB file.")] = None,
    output_format: Annotated[
        str,
        typer.Option("--format", help="table (rich), csv, json (one object per row) or markdown."),
    ] = "table",
    limit: Annotated[
        int | None,
        typer.Option(help="Rows to print. Default: 50 for a table on a terminal, else every row."),
    ] = None,
) -> None:
    """Run read-only SQL against the built warehouse (no file access, no settings) and print it."""
    from warehouse.config import load_settings
    from warehouse.evaluate.query import print_query, read_sql

    path = load_settings(db_path=db).db_path
    console = consoles.results()
    print_query(path, read_sql(query, file), output_format, limit, console, console.is_terminal)


def snapshot(
    db: Annotated[Path | None, typer.Option(help="DuckDB file (opened read-only).")] = None,
    out: Annotated[
        Path | None, typer.Option(help="Write the hashes here (JSON), e.g. before a change.")
    ] = None,
    compare: Annotated[
        Path | None,
        typer.Option(
            help="A snapshot written earlier: report every relation and column that differ."
        ),
    ] = None,
) -> None:
    """Hash every relation (rows in a fixed order, per table and per column): prove a refactor or
    an incremental rebuild changed no number (`--out` before, `--compare` after)."""
    from warehouse.config import load_settings
    from warehouse.quality.snapshot import snapshot as run

    lines, equal = run(load_settings(db_path=db).db_path, out, compare)
    console = consoles.results()
    for line in lines:
        console.print(line)
    if not equal:
        raise typer.Exit(1)
