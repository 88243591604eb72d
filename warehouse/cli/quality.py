"""`tastebench quality`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from warehouse.cli import console as consoles


def quality(
    db: Annotated[Path | None, typer.Option(help="DuckDB file (opened read-only).")] = None,
    out: Annotated[
        Path | None,
        typer.Option(help="HTML report. Default: reports/quality.html beside the warehouse."),
    ] = None,
    history: Annotated[
        Path | None,
        typer.Option(help="History (JSON lines). Default: quality/history.jsonl beside it."),
    ] = None,
) -> None:
    """Re-validate the warehouse read-only: GX suites + de-identification guards, HTML report."""
    from warehouse.config import load_settings, project_dir
    from warehouse.errors import require_warehouse

    settings = load_settings(db_path=db)
    require_warehouse(settings.db_path)  # before the slow imports and the dbt parse
    project_dir()  # the dbt manifest and the suites come from the project
    from warehouse.pipeline.dbt import ensure_manifest
    from warehouse.quality.runner import print_summary, report_paths, run_quality

    report_path, history_path = report_paths(settings.db_path)
    console = consoles.results()
    with consoles.progress().status("validating the warehouse") as status:
        result = run_quality(
            settings.db_path,
            manifest=ensure_manifest(settings),
            write_table=False,
            report_path=out or report_path,
            history_path=history or history_path,
            settings=settings,
            trigger="cli",
            log=status.update,
        )
    print_summary(console, result)
    result.raise_for_failures("tastebench quality")
