"""`tastebench train molecular` and `tastebench train food`: heavy training outside `dbt build`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from warehouse.cli import console as consoles
from warehouse.errors import WarehouseError


def train_molecular(
    grid: Annotated[bool, typer.Option("--grid", help="Run the 12-configuration grid.")] = False,
    config: Annotated[
        str,
        typer.Option(
            help="'best' (the published best: depth 5, dropout 0.2, no weighting) or one grid "
            "configuration by name, e.g. depth5_dropout0.2_sqrt-inverse."
        ),
    ] = "best",
    state_dir: Annotated[
        Path | None, typer.Option(help="Fit registry folder (default <build>/fits/dmpnn).")
    ] = None,
    max_epochs: Annotated[int, typer.Option(help="Epoch cap (early stopping, patience 10).")] = 50,
    subset: Annotated[
        int | None, typer.Option(help="Train on a seeded sample per split (smoke runs).")
    ] = None,
) -> None:
    """Train chemprop D-MPNN fits (resumable) and register them for the next build."""
    from warehouse.config import load_settings
    from warehouse.molecular.train import train_molecular as run
    from warehouse.molecular.train import train_summary

    if grid and config != "best":
        raise WarehouseError(
            f"--grid trains all 12 configurations; --config {config!r} would be ignored. "
            "Fix: pass one of the two."
        )
    settings = load_settings()
    target = state_dir or settings.dmpnn_dir
    result = run(
        settings,
        grid=grid,
        config=config,
        state_dir=target,
        max_epochs=max_epochs,
        subset=subset,
    )
    consoles.results().print(train_summary(result, target))


def train_food(
    grid: Annotated[
        str | None,
        typer.Option(help="'ablation' (full grid), 'ensembles' (NNLS bases); default: build's"),
    ] = None,
    db: Annotated[Path | None, typer.Option(help="The built warehouse to read.")] = None,
    n_jobs: Annotated[int, typer.Option(help="Workers (results never depend on it).")] = 2,
    check_signal: Annotated[
        str | None,
        typer.Option(help="N, C, T or I: BT and Ridge on S + it vs K permutations of it."),
    ] = None,
    permutations: Annotated[int, typer.Option(help="--check-signal: K (seeded 42, 43...).")] = 20,
) -> None:
    """Fit the food-ranking models into the fit cache; the next `tastebench build` reads them."""
    from warehouse.config import load_settings
    from warehouse.ranking.marts import max_analogs_default_stage
    from warehouse.ranking.planted import signal_check_report
    from warehouse.ranking.train import read_warehouse
    from warehouse.ranking.train import train_food as run

    settings = load_settings(db_path=db)
    max_analogs = max_analogs_default_stage()
    with consoles.progress().status(f"food ranking: {check_signal or grid or 'default'}"):
        if check_signal is not None:
            design = read_warehouse(settings.db_path, max_analogs)[0]
            out = signal_check_report(
                design, check_signal, n_jobs, permutations, settings.build_dir
            )
        else:
            cache = settings.ranking_cache_dir
            out = run(settings.db_path, cache, max_analogs, grid, n_jobs).summary()
    consoles.results().print(out)
