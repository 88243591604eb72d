"""The ``tastebench`` command line. Heavy imports live inside commands so ``--help`` is instant."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from warehouse.errors import WarehouseError

app = typer.Typer(
    name="tastebench",
    help="TasteBench Warehouse: build, query, evaluate and release the benchmark.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
registry_app = typer.Typer(help="The pinned dataset registry.", no_args_is_help=True)
app.add_typer(registry_app, name="registry")


def _console():
    from rich.console import Console

    return Console(stderr=False)


@app.command()
def build(
    nectar: Annotated[
        Path | None,
        typer.Option(help="A NECTAR bundle directory (official layout). Default: the simulation."),
    ] = None,
    db: Annotated[Path | None, typer.Option(help="DuckDB file to publish.")] = None,
    mirror: Annotated[
        Path | None, typer.Option(help="Local data mirror (overrides TASTEBENCH_DATA_MIRROR).")
    ] = None,
) -> None:
    """Load every source, run dbt build (models + tests), publish the DuckDB file atomically."""
    from warehouse.build import build as run_build
    from warehouse.config import load_settings

    console = _console()
    settings = load_settings(db_path=db, mirror=mirror, nectar_bundle=nectar)
    with console.status("building the warehouse") as status:
        result = run_build(settings, log=lambda m: status.update(m) or console.log(m))
    console.print(
        f"[green]warehouse built[/green] from {result.nectar_bundle} "
        f"(data_origin={result.data_origin})"
    )
    if result.data_origin == "simulation":
        console.print(
            "[yellow]NECTAR ratings are SIMULATED (calibrated to public aggregates): no number "
            "computed from them is a real result.[/yellow]"
        )
    _print_human_baseline(console, result.db_path)
    console.print(f"Warehouse: {result.db_path}")
    console.print(
        f'Query it read-only: tastebench sql "select * from marts.dim_categories" '
        f"or duckdb -readonly {result.db_path}"
    )


def _fmt(value: float | None) -> str:
    import math

    return (
        "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"
    )


def _print_human_baseline(console, db_path: Path) -> None:
    """The stored side-by-side table of human-baseline figures (agg_human_baseline)."""
    import duckdb
    from rich.table import Table

    con = duckdb.connect(str(db_path), read_only=True)
    try:
        rows = con.execute(
            "select metric, warehouse_value, published_value, data_origin "
            "from marts.agg_human_baseline order by metric"
        ).fetchall()
    except duckdb.CatalogException:
        return
    finally:
        con.close()
    if not rows:
        return
    origin = rows[0][3]
    table = Table("metric", f"this build ({origin})", "published", title="Human baseline")
    for metric, ours, published, _ in rows:
        table.add_row(metric, _fmt(ours), _fmt(published))
    console.print(table)


@app.command()
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
    from warehouse.sources import registry

    settings = load_settings()
    public_dir = registry.resolve("tastebench_gold_pairs", settings).parents[2]
    report = simulate_bundle(
        out_dir, public_dir=public_dir, seed=seed, scale=scale, plant_signal=plant_signal
    )
    console = _console()
    console.print(f"simulated bundle written to {out_dir} in {report.elapsed_s:.1f} s")
    console.print(
        f"{report.n_categories} categories, {report.n_analogs} analogs + {report.n_references} "
        f"references, {report.n_respondents} respondents, {report.n_ratings} ratings"
    )
    console.print(f"calibration: {report.calibration}")


@app.command()
def sql(
    query: Annotated[str, typer.Argument(help="SQL to run read-only against the warehouse.")],
    db: Annotated[Path | None, typer.Option(help="DuckDB file.")] = None,
    limit: Annotated[int, typer.Option(help="Rows to print.")] = 50,
) -> None:
    """Run a read-only SQL query against the built warehouse and print the result."""
    import duckdb
    from rich.table import Table

    from warehouse.config import load_settings

    path = load_settings(db_path=db).db_path
    if not path.exists():
        raise WarehouseError(f"no warehouse at {path}. Fix: run `make build` first.")
    con = duckdb.connect(str(path), read_only=True)
    try:
        rel = con.sql(query)
        if rel is None:
            return
        rows = rel.limit(limit).fetchall()
        table = Table(*rel.columns)
        for row in rows:
            table.add_row(*[("" if v is None else str(v)) for v in row])
        _console().print(table)
    finally:
        con.close()


@app.command()
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
) -> None:
    """Score prediction files: Table-2 metrics with BCa CIs, comparisons, trivial policies."""
    import json

    from warehouse.evaluate import evaluate_files, render_table

    if bootstrap < 1:
        raise WarehouseError(f"--bootstrap must be positive, got {bootstrap}.")
    result = evaluate_files(predictions, gold=gold, n_boot=bootstrap, seed=seed, db_path=db)
    _console().print(render_table(result, per_category=per_category))
    if json_out is not None:
        json_out.parent.mkdir(parents=True, exist_ok=True)
        json_out.write_text(json.dumps(result, indent=2) + "\n")
        _console().print(f"JSON written to {json_out}")


@app.command()
def report(
    out: Annotated[Path, typer.Option(help="HTML file to write.")] = Path(
        "build/reports/results.html"
    ),
    db: Annotated[Path | None, typer.Option(help="DuckDB file (read-only).")] = None,
) -> None:
    """Write the self-contained HTML results report from the built warehouse's metrics marts."""
    from warehouse.config import load_settings
    from warehouse.report import write_report

    path = write_report(load_settings(db_path=db).db_path, out)
    _console().print(f"report written to {path}")


@registry_app.command("list")
def registry_list() -> None:
    """List registered datasets with their pins."""
    from rich.table import Table

    from warehouse.sources.registry import load_registry

    table = Table("key", "path", "rows", "sha256", "license")
    for d in load_registry().values():
        table.add_row(d.key, d.path, str(d.rows or ""), d.sha256[:12], d.license)
    _console().print(table)


@registry_app.command("verify")
def registry_verify(
    mirror: Annotated[Path | None, typer.Option(help="Local data mirror.")] = None,
) -> None:
    """Resolve and hash-check every non-optional dataset."""
    from warehouse.config import load_settings
    from warehouse.sources.registry import load_registry, resolve

    settings = load_settings(mirror=mirror)
    for d in load_registry().values():
        if not d.optional:
            resolve(d.key, settings)
            _console().print(f"[green]ok[/green] {d.key}")


def main() -> None:
    from warehouse.config import apply_quiet_env

    apply_quiet_env()
    try:
        app()
    except WarehouseError as exc:
        from rich.console import Console

        Console(stderr=True).print(f"[bold red]error:[/bold red] {exc}", highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
