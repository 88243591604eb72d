"""`tastebench build` and `tastebench status`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from warehouse.cli import console as consoles
from warehouse.errors import WarehouseError


def build(
    nectar: Annotated[
        Path | None,
        typer.Option(help="A NECTAR bundle directory (official layout). Default: the simulation."),
    ] = None,
    db: Annotated[Path | None, typer.Option(help="DuckDB file to publish.")] = None,
    mirror: Annotated[
        Path | None, typer.Option(help="Local data mirror (overrides TASTEBENCH_DATA_MIRROR).")
    ] = None,
    full_refresh: Annotated[
        bool,
        typer.Option(
            "--full-refresh",
            help="Rebuild everything into a fresh file (default: only what changed since the "
            "published build).",
        ),
    ] = False,
    wait: Annotated[
        float,
        typer.Option(
            "--wait",
            metavar="SECONDS",
            help="If another build is running, wait up to this long for it (default: refuse).",
        ),
    ] = 0,
    food_models: Annotated[
        bool,
        typer.Option("--food-models/--no-food-models", help="Fit the food-ranking models."),
    ] = True,
) -> None:
    """Load the sources, run dbt build (models + tests), validate, publish the DuckDB file
    atomically. Incremental by default: only what changed since the published build is reloaded
    and rebuilt (printed with the reason); one build at a time (a lock beside the file)."""
    from warehouse.config import load_settings, project_dir
    from warehouse.orchestrate.status import render_build
    from warehouse.pipeline.run import build as run_build

    console = consoles.results()
    settings = load_settings(db_path=db, mirror=mirror, nectar_bundle=nectar)
    project_dir()  # the dbt project must be found before anything runs
    progress = consoles.progress()
    with progress.status("building the warehouse") as status:
        result = run_build(
            settings,
            log=lambda m: status.update(m) or progress.log(m),
            full_refresh=full_refresh,
            wait_s=wait,
            food_models=food_models,
        )
    render_build(console, result)


def status(
    db: Annotated[Path | None, typer.Option(help="DuckDB file (read only).")] = None,
    freshness: Annotated[
        bool, typer.Option(help="Run dbt source freshness (on a copy of the file).")
    ] = True,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """The last build (time, duration, result, what was rebuilt), a running build, data
    freshness per source and the quality gate's result."""
    import json

    from warehouse.config import load_settings
    from warehouse.orchestrate.status import collect, render_status

    settings = load_settings(db_path=db)
    with consoles.progress().status("collecting status"):
        info = collect(settings, freshness=freshness)
    if info["published"] is None and info["last_build"] is None and info["running"] is None:
        raise WarehouseError(
            f"nothing to report: no warehouse at {settings.db_path} and no build record beside "
            "it. Fix: run `tastebench build` first, or pass --db."
        )
    if as_json:
        sys.stdout.write(json.dumps(info, indent=1, default=str) + "\n")
        return
    render_status(consoles.results(), info)
