"""`tastebench evaluate` (prediction files in context) and `tastebench report`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from warehouse.cli import console as consoles
from warehouse.errors import WarehouseError


def evaluate(
    predictions: Annotated[
        list[Path],
        typer.Argument(help="Prediction CSVs: category, product_code, predicted_score."),
    ],
    bootstrap: Annotated[int, typer.Option(help="Bootstrap replicates (BCa).")] = 10000,
    seed: Annotated[int, typer.Option(help="Random seed of the bootstrap.")] = 42,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the result (docs/evaluate.md) here.")
    ] = None,
    per_category: Annotated[
        bool, typer.Option("--per-category", help="Also print the per-category table.")
    ] = False,
    gold: Annotated[
        str | None,
        typer.Option(
            help="file (the files' true_rank/true_score; default when every file has one) "
            "or warehouse (panel means of the built DuckDB file)."
        ),
    ] = None,
    db: Annotated[Path | None, typer.Option(help="DuckDB file for --gold warehouse.")] = None,
    ci: Annotated[
        str,
        typer.Option(
            help="Interval convention: default (each metric's sound method, ustat_t "
            "comparisons; docs/statistics.md) or published_bca (the published BCa intervals "
            "and pair-bootstrap comparisons, as printed before schema version 2)."
        ),
    ] = "default",
    alone: Annotated[bool, typer.Option("--alone", help="Only these files, no context.")] = False,
    html_out: Annotated[Path | None, typer.Option("--html", help="In-context HTML page.")] = None,
) -> None:
    """Score prediction files in context (docs/evaluate.md): metrics, ranks, human scale."""
    import json

    from warehouse.config import load_settings
    from warehouse.evaluate.command import score, show
    from warehouse.evaluate.files import check_json_target

    if bootstrap < 1:
        raise WarehouseError(f"--bootstrap must be positive, got {bootstrap}.")
    check_json_target(json_out)  # before any work (its folder made here)
    check_json_target(html_out, "--html")
    settings = load_settings(db_path=db)
    result = score(predictions, alone, html_out, gold, bootstrap, seed, db, ci, settings)
    show(result, per_category, html_out, consoles.results())
    if json_out is not None:
        json_out.write_text(json.dumps(result, indent=2) + "\n")
        consoles.results().print(f"JSON written to {json_out}")


def report(
    out: Annotated[
        Path | None, typer.Option(help="HTML file. Default: reports/results.html beside the db.")
    ] = None,
    db: Annotated[Path | None, typer.Option(help="DuckDB file (read-only).")] = None,
) -> None:
    """Write the self-contained HTML results report from the built warehouse's metrics marts."""
    from warehouse.config import load_settings, reports_dir
    from warehouse.errors import require_warehouse

    path = require_warehouse(load_settings(db_path=db).db_path)  # before the slow imports
    from warehouse.evaluate.results_report import write_report

    written = write_report(path, out or reports_dir(path) / "results.html")
    consoles.results().print(f"report written to {written.resolve()}")
