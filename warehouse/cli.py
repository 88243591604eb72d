"""The ``tastebench`` command line. Heavy imports live inside commands so ``--help`` is instant."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from warehouse.errors import WarehouseError, resource_error

app = typer.Typer(
    name="tastebench",
    help="TasteBench Warehouse: build, query, evaluate and release the benchmark.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
registry_app = typer.Typer(help="The pinned dataset registry.", no_args_is_help=True)
app.add_typer(registry_app, name="registry")
train_app = typer.Typer(help="Heavy training that runs outside `dbt build`.", no_args_is_help=True)
app.add_typer(train_app, name="train")


# Width of a console that is not a terminal: wide enough that rich never wraps or cuts a cell of
# piped output (`tastebench evaluate ... | less`); a terminal keeps its own width.
PIPE_WIDTH = 10_000


def _console():
    """Results (tables, summaries) on stdout; never cut when piped."""
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else PIPE_WIDTH)


def _progress():
    """Progress (spinners, timestamped log lines) and errors on stderr, at the terminal's width,
    so piping stdout captures only results."""
    from rich.console import Console

    return Console(stderr=True)


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
    from warehouse.config import load_settings
    from warehouse.pipeline.run import build as run_build

    console = _console()
    settings = load_settings(db_path=db, mirror=mirror, nectar_bundle=nectar)
    progress = _progress()
    with progress.status("building the warehouse") as status:
        result = run_build(
            settings,
            log=lambda m: status.update(m) or progress.log(m),
            full_refresh=full_refresh,
            wait_s=wait,
            food_models=food_models,
        )
    from warehouse.orchestrate.status import render_build

    render_build(console, result)


@app.command()
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
    with _progress().status("collecting status"):
        info = collect(settings, freshness=freshness)
    if info["published"] is None and info["last_build"] is None and info["running"] is None:
        raise WarehouseError(
            f"nothing to report: no warehouse at {settings.db_path} and no build record beside "
            "it. Fix: run `tastebench build` first, or pass --db."
        )
    if as_json:
        sys.stdout.write(json.dumps(info, indent=1, default=str) + "\n")
        return
    render_status(_console(), info)


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
    from warehouse.simulate.bundle import check_target
    from warehouse.sources import registry

    check_target(out_dir)  # before resolving any input
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
    console = _console()
    print_query(path, read_sql(query, file), output_format, limit, console, console.is_terminal)


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

    from warehouse.evaluate.command import score, show
    from warehouse.evaluate.files import check_json_target

    if bootstrap < 1:
        raise WarehouseError(f"--bootstrap must be positive, got {bootstrap}.")
    check_json_target(json_out)  # before any work (its folder made here)
    check_json_target(html_out, "--html")
    result = score(predictions, alone, html_out, gold, bootstrap, seed, db, ci)
    show(result, per_category, html_out, _console())
    if json_out is not None:
        json_out.write_text(json.dumps(result, indent=2) + "\n")
        _console().print(f"JSON written to {json_out}")


@app.command()
def report(
    out: Annotated[
        Path | None, typer.Option(help="HTML file. Default: reports/results.html beside the db.")
    ] = None,
    db: Annotated[Path | None, typer.Option(help="DuckDB file (read-only).")] = None,
) -> None:
    """Write the self-contained HTML results report from the built warehouse's metrics marts."""
    from warehouse.config import load_settings, reports_dir
    from warehouse.evaluate.results_report import write_report

    path = load_settings(db_path=db).db_path
    written = write_report(path, out or reports_dir(path) / "results.html")
    _console().print(f"report written to {written.resolve()}")


@app.command()
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
    from rich.table import Table

    from warehouse.config import load_settings
    from warehouse.pipeline.dbt import ensure_manifest
    from warehouse.quality.runner import report_paths, run_quality

    settings = load_settings(db_path=db)
    report_path, history_path = report_paths(settings.db_path)
    console = _console()
    with _progress().status("validating the warehouse") as status:
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
    table = Table("suite", "status", "passed", "failed", "skipped", title="Quality")
    for s in result.suites:
        table.add_row(
            s.suite,
            "[green]passed[/green]" if s.success else "[red]FAILED[/red]",
            str(s.count("passed")),
            str(s.count("failed") + s.count("error")),
            str(s.count("skipped")),
        )
    console.print(table)
    console.print(f"report: {result.report_path} ({result.seconds:.1f} s)")
    result.raise_for_failures("tastebench quality")


_GATED_HELP = (
    "Gated folder (code maps, pair sides, solution). Default: gated/ beside the DuckDB file."
)


@app.command()
def release(
    out_dir: Annotated[Path, typer.Argument(help="New or empty folder for the public release.")],
    db: Annotated[Path | None, typer.Option(help="DuckDB file (opened read-only).")] = None,
    gated_dir: Annotated[Path | None, typer.Option(help=_GATED_HELP)] = None,
) -> None:
    """Export the de-identified public benchmark (guards must pass; see docs/release.md)."""
    from warehouse.config import load_settings
    from warehouse.release.export import export_release
    from warehouse.release.gated import gated_dir_for

    settings = load_settings(db_path=db)
    console = _console()
    progress = _progress()
    with progress.status("exporting the release") as status:
        result = export_release(
            out_dir,
            db_path=settings.db_path,
            gated_dir=gated_dir or gated_dir_for(settings.db_path),
            settings=settings,
            log=lambda m: status.update(m) or progress.log(m),
        )
    console.print(
        f"[green]release written[/green] to {result.out_dir}: {len(result.files)} files "
        f"in {result.elapsed_s:.1f} s (data_origin={result.data_origin})"
    )
    if result.data_origin == "simulation":
        console.print(
            "[yellow]Ratings are SIMULATED: no number derived from them is real.[/yellow]"
        )
    reused = "reused" if result.code_map_reused else "drawn now"
    console.print(f"public codes {reused}; gated folder: {result.gated_dir}")
    for r in result.audits.iter_rows(named=True):
        if r["metric"] == "pairwise_accuracy" and r["policy"] != "random":
            console.print(
                f"audit {r['policy']}: {r['point']:.3f} [{r['ci_lo']:.3f}, {r['ci_hi']:.3f}] "
                "(chance 0.5)"
            )
    console.print(f"Check it: tastebench verify {result.out_dir}")


@app.command()
def verify(
    release_dir: Annotated[Path, typer.Argument(help="A folder written by `tastebench release`.")],
) -> None:
    """Re-derive every published number of a release from its own files; fail on any mismatch."""
    from warehouse.config import load_settings
    from warehouse.release.verify import VerifyError, verify_release

    console = _console()
    with _progress().status("verifying the release"):
        report = verify_release(release_dir, load_settings())
    if not report.ok:
        lines = "\n".join(f"  - {p}" for p in report.problems)
        raise VerifyError(
            f"{len(report.problems)} mismatch(es) in {report.root}:\n{lines}\nFix: re-export the "
            "release (tastebench release) or restore the changed files."
        )
    console.print(
        f"[green]release verified[/green]: manifest, Croissant, the DuckDB file and "
        f"{len(report.checked) - 3} "
        f"re-derived tables match ({report.root})"
    )


@app.command()
def competition(
    out_dir: Annotated[Path, typer.Argument(help="New or empty folder for the competition data.")],
    db: Annotated[Path | None, typer.Option(help="DuckDB file (opened read-only).")] = None,
    gated_dir: Annotated[Path | None, typer.Option(help=_GATED_HELP)] = None,
) -> None:
    """Export the competition (decoys, global codes, random sides); solution goes to the gated
    folder only."""
    from warehouse.config import load_settings
    from warehouse.release.competition import export_competition
    from warehouse.release.gated import gated_dir_for

    settings = load_settings(db_path=db)
    console = _console()
    progress = _progress()
    with progress.status("exporting the competition") as status:
        result = export_competition(
            out_dir,
            db_path=settings.db_path,
            gated_dir=gated_dir or gated_dir_for(settings.db_path),
            log=lambda m: status.update(m) or progress.log(m),
        )
    console.print(
        f"[green]competition written[/green] to {result.out_dir}: {result.n_products} products "
        f"({result.n_rated} rated, {result.n_decoys} decoys), {result.n_pairs} pairs, "
        f"{result.n_public_pairs} public / {result.n_private_pairs} private scored"
    )
    for name in ("slot1_wins", "lower_code_wins"):
        a = result.audit[name]
        console.print(
            f"audit {name}: {a['point']:.3f} [{a['ci_lo']:.3f}, {a['ci_hi']:.3f}] (chance 0.5)"
        )
    console.print(f"hidden solution (gated): {result.solution_path}")


@app.command()
def docs(
    db: Annotated[Path | None, typer.Option(help="DuckDB file to document.")] = None,
    out: Annotated[
        Path | None, typer.Option(help="The page. Default: reports/dbt_docs.html beside the db.")
    ] = None,
) -> None:
    """Write the dbt documentation site (models, columns, tests, lineage) as one static page."""
    from warehouse.config import load_settings
    from warehouse.pipeline.dbt import write_dbt_docs

    out = write_dbt_docs(load_settings(db_path=db), out)
    _console().print(f"dbt docs written to {out}")


@app.command()
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
    console = _console()
    for line in lines:
        console.print(line)
    if not equal:
        raise typer.Exit(1)


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


@train_app.command("molecular")
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
    best = result.best
    _console().print(
        f"registered in {target}: best of this run {best['name']} "
        f"(val macro-F1 {best['val_macro_f1']:.3f}, "
        f"test accuracy {best['test_metrics']['accuracy']:.3f}, "
        f"test macro-F1 {best['test_metrics']['macro_f1']:.3f}, {best['wall_s']:.0f} s); "
        f"trained {len(result.trained)}, skipped {len(result.skipped)}. "
        "Run `tastebench build` to add it to the warehouse (which selects among all registered "
        "fits)."
    )


@train_app.command("food")
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
    from warehouse.ranking import marts

    path = load_settings(db_path=db).db_path
    with _progress().status(f"food ranking: {check_signal or grid or 'default'}"):
        if check_signal is not None:
            design = marts.read_warehouse(path)[0]
            out = marts.planted_signal_table(design, check_signal, n_jobs, permutations)
        else:
            out = marts.train_food(path, grid=grid, n_jobs=n_jobs)
    _console().print(out)


def _fail(message: str, code: int = 2) -> None:
    from rich.markup import escape

    _progress().print(
        f"[bold red]error:[/bold red] {escape(message)}", highlight=False, soft_wrap=True
    )
    sys.exit(code)


def main() -> None:
    """Entry point: a user error prints one paragraph (what is wrong, where, the fix) and exits
    2; an unexpected exception prints one paragraph naming it and exits 1, with the traceback only
    when ``TASTEBENCH_DEBUG=1`` (a traceback is for developers, not for someone mistyping)."""
    import os

    from warehouse.config import apply_quiet_env

    apply_quiet_env()
    try:
        app()
    except WarehouseError as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        _fail("interrupted; a build in progress left the published warehouse untouched.", 130)
    except Exception as exc:  # noqa: BLE001 - the last line of defence of the CLI
        if os.environ.get("TASTEBENCH_DEBUG") == "1":
            raise
        if (resource := resource_error(exc)) is not None:
            _fail(str(resource), 1)
        first = str(exc).splitlines()[0] if str(exc) else ""
        _fail(
            f"unexpected {type(exc).__name__}: {first}. This is a bug in tastebench, not in your "
            "input: please report it with the command you ran (TASTEBENCH_DEBUG=1 shows the "
            "traceback).",
            1,
        )


if __name__ == "__main__":
    main()
