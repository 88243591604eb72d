"""`tastebench docs`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from warehouse.cli import console as consoles


def docs(
    db: Annotated[Path | None, typer.Option(help="DuckDB file to document.")] = None,
    out: Annotated[
        Path | None, typer.Option(help="The page. Default: reports/dbt_docs.html beside the db.")
    ] = None,
) -> None:
    """Write the dbt documentation site (models, columns, tests, lineage) as one static page."""
    from warehouse.config import load_settings, project_dir
    from warehouse.pipeline.dbt import write_dbt_docs

    settings = load_settings(db_path=db)
    project_dir()  # the dbt project must be found before dbt runs
    out = write_dbt_docs(settings, out)
    consoles.results().print(f"dbt docs written to {out}")
