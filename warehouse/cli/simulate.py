"""`tastebench simulate`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from warehouse.cli import console as consoles


def simulate(
    out_dir: Annotated[Path, typer.Argument(help="Folder to write the bundle into.")],
    seed: Annotated[int, typer.Option(help="Random seed.")] = 42,
    scale: Annotated[int, typer.Option(help="Multiply categories/products/respondents.")] = 1,
    plant_signal: Annotated[
        str | None, typer.Option(help="Make the target depend on one feature block.")
    ] = None,
) -> None:
    """Write a simulated NECTAR bundle in the exact raw schema (calibrated to public aggregates)."""
    from warehouse.config import load_settings
    from warehouse.simulate import simulate_bundle
    from warehouse.simulate.bundle import check_target
    from warehouse.simulate.report import summary_lines
    from warehouse.sources import registry

    check_target(out_dir)  # before resolving any input
    settings = load_settings()
    public_dir = registry.resolve("tastebench_gold_pairs", settings).parents[2]
    report = simulate_bundle(
        out_dir, public_dir=public_dir, seed=seed, scale=scale, plant_signal=plant_signal
    )
    console = consoles.results()
    for line in summary_lines(report, out_dir):
        console.print(line)
