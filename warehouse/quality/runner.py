"""Run every GX suite in ``expectations/`` and every de-identification guard against a warehouse.

``run_quality(db_path, ...)`` reads each suite's model from DuckDB as polars and hands GX a pandas
copy (:func:`warehouse.quality.boundary.gx_batch`: GX's pandas datasource demands pandas, and the
GX SQL datasource does not work with DuckDB), validates it in an ephemeral GX context, runs the
guards on the public tables and the public candidates (``warehouse.quality.public_tables``), and
returns a ``QualityResult``. Optionally it writes ``reports.rpt_data_quality`` into the warehouse
(the build does this on the staging file before the swap), appends a summary line to the history
file and writes the self-contained HTML report (``warehouse.quality.report``).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import pandas as pd  # only for the batches GX validates (_GX.validate)
import polars as pl

from warehouse.config import REPO_ROOT, Settings, apply_quiet_env
from warehouse.errors import require_warehouse
from warehouse.quality import QualityError
from warehouse.quality.batched import BATCH_ROWS, validate_in_batches
from warehouse.quality.boundary import gx_batch
from warehouse.quality.results import (
    EXAMPLE_LIMIT,
    CheckRow,
    QualityResult,
    SuiteResult,
    column_of,
    rows_from_validation,
    to_json,
)

EXPECTATIONS_DIR = REPO_ROOT / "expectations"
REPORT_SCHEMA = "reports"
REPORT_TABLE = "rpt_data_quality"
GUARD_SUITE_PREFIX = "deidentification."
SET_SUITE = "deidentification.public_set"
SCALE_ORIGINS_SKIPPED = {"test_fixture"}  # benchmark-scale expectations do not apply there


# --- suites -----------------------------------------------------------------------------------
def _suite_files(directory: Path) -> list[Path]:
    """Every ``expectations/*.py`` not starting with ``_``, sorted."""
    return [p for p in sorted(Path(directory).glob("*.py")) if not p.name.startswith("_")]


def _no_model(path: Path) -> QualityError:
    return QualityError(
        f"{path} defines no MODEL/build_suite. Fix: every suite file exposes "
        "MODEL = '<schema>.<table>' and build_suite() -> gx.ExpectationSuite."
    )


def suite_relations(directory: Path = EXPECTATIONS_DIR) -> list[str]:
    """The relation (``MODEL``) each suite validates, read from its source without running it:
    what the Dagster definitions need to place a check, without the ~3 s of importing Great
    Expectations that executing a suite file costs every process that loads them. A file is
    refused as :func:`load_suite_modules` refuses it: no literal ``MODEL`` or no ``build_suite``."""
    relations = []
    for path in _suite_files(directory):
        body = ast.parse(path.read_text(encoding="utf-8"), str(path)).body
        found = [
            node.value.value
            for node in body
            if isinstance(node, ast.Assign)
            and [getattr(t, "id", None) for t in node.targets] == ["MODEL"]
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ]
        builds = any(isinstance(n, ast.FunctionDef) and n.name == "build_suite" for n in body)
        if len(found) != 1 or not builds:
            raise _no_model(path)
        relations.append(found[0])
    return relations


def load_suite_modules(directory: Path = EXPECTATIONS_DIR) -> list[ModuleType]:
    """Import every ``expectations/*.py`` (not starting with ``_``) by path."""
    modules = []
    for path in _suite_files(directory):
        spec = importlib.util.spec_from_file_location(f"tastebench_expectations.{path.stem}", path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if not hasattr(mod, "MODEL") or not hasattr(mod, "build_suite"):
            raise _no_model(path)
        modules.append(mod)
    return modules


def _skip_scale(suite, data_origin: str) -> list[CheckRow]:
    """Remove benchmark-scale expectations on the fixture bundle; rows that say so."""
    if data_origin not in SCALE_ORIGINS_SKIPPED:
        return []
    skipped, kept = [], []
    for e in suite.expectations:
        (skipped if (e.meta or {}).get("scale") == "benchmark" else kept).append(e)
    suite.expectations = kept
    return [
        CheckRow(
            suite=suite.name,
            model=suite.name,
            kind="suite",
            expectation_type=e.expectation_type,
            status="skipped",
            column_name=column_of(e.configuration.kwargs),
            observed_value=f"holds at benchmark scale only (data_origin={data_origin})",
        )
        for e in skipped
    ]


class _GX:
    """One ephemeral GX context with a pandas datasource for the whole run."""

    def __init__(self) -> None:
        apply_quiet_env()
        logging.getLogger("great_expectations").setLevel(logging.ERROR)
        import great_expectations as gx
        from great_expectations.data_context.types.base import ProgressBarsConfig

        import warehouse.quality.expectations  # noqa: F401  (registers the custom expectations)

        self.gx = gx
        self.context = gx.get_context(mode="ephemeral")
        self.context.variables.progress_bars = ProgressBarsConfig(
            globally=False, metric_calculations=False
        )
        source = self.context.data_sources.add_pandas(f"warehouse_{uuid.uuid4().hex[:8]}")
        # one asset and batch definition for every frame (adding assets is slow: each is saved)
        self.batch_definition = source.add_dataframe_asset(
            "table"
        ).add_batch_definition_whole_dataframe("whole_table")

    def validate(self, frame: pd.DataFrame, suite, parameters: dict | None = None):
        batch = self.batch_definition.get_batch(batch_parameters={"dataframe": frame})
        return batch.validate(
            suite, expectation_parameters=parameters or {}, result_format="SUMMARY"
        )


def _read(con, sql: str) -> pl.DataFrame:
    return con.sql(sql).pl()


def run_suite_module(
    gxr: _GX, con, mod: ModuleType, data_origin: str, batch_rows: int = BATCH_ROWS
) -> SuiteResult:
    """One suite on its model: the whole table as one GX batch, or, above ``batch_rows`` rows,
    batch by batch with the results combined exactly (:mod:`warehouse.quality.batched`)."""
    t0 = time.perf_counter()
    model = str(mod.MODEL)
    result = SuiteResult(suite=model, model=model, kind="suite")
    try:
        suite = mod.build_suite()
        result.suite = suite.name
        query = getattr(mod, "QUERY", None) or f"select * from {model}"
        params = mod.parameters(con) if hasattr(mod, "parameters") else {}
        skipped = _skip_scale(suite, data_origin)
        ((n_rows,),) = con.execute(f"select count(*) from ({query})").fetchall()
        if batch_rows and n_rows > batch_rows:
            result.rows, result.batches = validate_in_batches(
                gxr, con, suite, query, params, batch_rows, model
            )
        else:
            frame = gx_batch(_read(con, query))  # the GX boundary
            validation = gxr.validate(frame, suite, params)
            result.rows = rows_from_validation(result.suite, model, "suite", validation, frame)
        result.rows += skipped
    except Exception as exc:  # a missing table or a broken suite fails this suite only
        result.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        result.rows.append(
            CheckRow(
                result.suite, model, "suite", "suite_run", "error", observed_value=result.error
            )
        )
    result.seconds = time.perf_counter() - t0
    return result


# --- guards -----------------------------------------------------------------------------------
def public_frames(con, ctx, public_tables: Iterable[str]) -> dict[str, pl.DataFrame]:
    """The public tables as stored plus the public candidates derived from gated marts (polars;
    converted to pandas only where GX validates them)."""
    from warehouse.quality import public_tables as pt

    frames = {t: con.sql(f"select * from {t}").pl() for t in public_tables}
    for cand in pt.PUBLIC_CANDIDATES:
        frames[cand.name] = cand.derive(con, ctx)
    return frames


def run_guards(gxr: _GX, con, public_tables: Iterable[str]) -> list[SuiteResult]:
    """The de-identification guards: each public table (stored or candidate) on its own, then the
    set-level rules over all of them; a failed setup is one error result."""
    t0 = time.perf_counter()
    try:
        ctx, frames = _guard_inputs(con, public_tables)
    except Exception as exc:
        msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        row = CheckRow(
            SET_SUITE, "(public set)", "guard", "guard_setup", "error", observed_value=msg
        )
        return [SuiteResult(SET_SUITE, "(public set)", "guard", [row], error=msg)]
    out = _table_guards(gxr, frames, ctx)
    t1 = time.perf_counter()
    out.append(_set_guards(frames, ctx, t1))
    if out:
        out[0].seconds += t1 - t0 - sum(s.seconds for s in out)  # context setup time
    return out


def _guard_inputs(con, public_tables: Iterable[str]) -> tuple:
    """(the gated context with a throwaway code map, the public frames) the guards check."""
    from warehouse.quality import guards

    ctx = guards.GatedContext.from_warehouse(con)
    products = con.sql("select category, product_code, is_analog from marts.dim_products").pl()
    # a throwaway permutation for the candidates; the release draws and stores the real one
    ctx = ctx.with_code_map(guards.draw_public_codes(products, ctx))
    return ctx, public_frames(con, ctx, public_tables)


def _table_guards(gxr: _GX, frames: dict[str, pl.DataFrame], ctx) -> list[SuiteResult]:
    """One GX suite per public table: the table-level guard rules."""
    from warehouse.quality import guards
    from warehouse.quality.expectations import (
        GUARD_CONTEXTS,
        ExpectTableToPassDeidentificationGuards,
    )

    key = uuid.uuid4().hex
    GUARD_CONTEXTS[key] = ctx
    out = []
    try:
        for table, frame in frames.items():
            t1 = time.perf_counter()
            name = GUARD_SUITE_PREFIX + table
            suite = gxr.gx.ExpectationSuite(name=name)
            suite.add_expectation(
                ExpectTableToPassDeidentificationGuards(
                    rules=list(guards.TABLE_RULES), table_name=table, context_key=key
                )
            )
            res = SuiteResult(name, table, "guard")
            try:
                validation = gxr.validate(frame.to_pandas(), suite)  # the GX boundary
                res.rows = rows_from_validation(name, table, "guard", validation, None)
            except Exception as exc:
                res.error = f"{type(exc).__name__}: {exc}"
            res.seconds = time.perf_counter() - t1
            out.append(res)
    finally:
        GUARD_CONTEXTS.pop(key, None)
    return out


def _set_guards(frames: dict[str, pl.DataFrame], ctx, t1: float) -> SuiteResult:
    """The set-level rules over all public frames (one row per rule); timed from ``t1``."""
    from warehouse.quality import guards

    set_result = SuiteResult(SET_SUITE, "(public set)", "guard")
    for rule, fn in guards.SET_RULES.items():
        found = fn(frames, ctx)
        set_result.rows.append(
            CheckRow(
                suite=SET_SUITE,
                model="(public set)",
                kind="guard",
                expectation_type="guard_public_set",
                status="failed" if found else "passed",
                column_name="; ".join(sorted({f"{v.table}.{v.column}" for v in found})) or None,
                rule=rule,
                observed_value="; ".join(v.message for v in found) or "no violation",
                unexpected_count=len(found),
                element_count=len(frames),
                example=to_json([v.message for v in found[:EXAMPLE_LIMIT]]) if found else None,
                kwargs=to_json({"rule": rule, "tables": sorted(frames)}),
            )
        )
    set_result.seconds = time.perf_counter() - t1
    return set_result


# --- the run ----------------------------------------------------------------------------------
def _data_origin(con) -> str:
    try:
        rows = con.sql("select any_value(data_origin) from marts.dim_products").fetchall()
        return str(rows[0][0]) if rows and rows[0][0] is not None else "unknown"
    except Exception:
        return "unknown"


def write_report_table(con, result: QualityResult) -> None:
    """(Re)create reports.rpt_data_quality with this run's rows."""
    frame = result.to_frame()  # noqa: F841  (read by DuckDB below)
    con.execute(f"create schema if not exists {REPORT_SCHEMA}")
    con.execute(f"create or replace table {REPORT_SCHEMA}.{REPORT_TABLE} as select * from frame")


def report_paths(db_path: Path) -> tuple[Path, Path]:
    """Where a warehouse's quality report and history live: beside its DuckDB file
    (``reports/quality.html``, ``quality/history.jsonl``; ``build/...`` for the default
    ``build/tastebench.duckdb``), so that ``--db X`` never writes into the repository's
    ``build/`` or another warehouse's folder."""
    from warehouse.config import reports_dir

    home = reports_dir(db_path).parent
    return home / "reports" / "quality.html", home / "quality" / "history.jsonl"


def print_summary(console, result: QualityResult) -> None:
    """What `tastebench quality` prints: one row per suite, then where the report went."""
    from rich.table import Table

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


def read_history(path: Path | None) -> list[dict]:
    if path is None or not Path(path).exists():
        return []
    out = []
    for line in Path(path).read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return out


def append_history(path: Path, result: QualityResult) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as f:
        f.write(json.dumps(result.summary()) + "\n")


def run_quality(
    db_path: Path,
    *,
    write_table: bool = True,
    report_path: Path | None = None,
    history_path: Path | None = None,
    manifest: Path,
    settings: Settings,
    trigger: str = "api",
    public_tables: Iterable[str] | None = None,
    published_as: Path | None = None,
    log: Callable[[str], None] | None = None,
    batch_rows: int = BATCH_ROWS,
) -> QualityResult:
    """Validate every suite and guard against ``db_path``.

    ``write_table``: write ``reports.rpt_data_quality`` into the file (opens it read-write; only
    the build does this, on its staging file). Otherwise the file is opened read-only.
    ``report_path`` / ``history_path``: where to write the HTML report and append the history line
    (None: not written). ``manifest``: the dbt manifest of the run that built ``db_path``; the
    public tables are the models it declares ``meta.data_access: public``
    (:mod:`warehouse.quality.governance`) unless ``public_tables`` overrides them.
    ``published_as``: the path recorded in the result/history (the build validates its staging
    file, which is published under the live path). ``batch_rows``: a model with more rows is
    validated in batches of this many rows (:mod:`warehouse.quality.batched`; 0: never).
    """
    import duckdb

    from warehouse.quality import governance

    t0 = time.perf_counter()
    say = log or (lambda m: None)
    db_path = require_warehouse(db_path, QualityError)
    access = governance.read_access(manifest)
    tables = tuple(
        public_tables if public_tables is not None else governance.public_relations(access)
    )
    timings: dict[str, float] = {}
    con = duckdb.connect(str(db_path), read_only=not write_table)
    try:
        origin = _data_origin(con)
        suites = _validate(con, origin, tables, settings, batch_rows, timings, say)
        result = QualityResult(
            run_id=uuid.uuid4().hex[:12],
            run_at=datetime.now(UTC),
            db_path=Path(published_as) if published_as else db_path,
            data_origin=origin,
            trigger=trigger,
            suites=suites,
            public_tables=tables,
            gated_tables=governance.gated_marts(access),
            timings=timings,
        )
        if write_table:
            write_report_table(con, result)
            result.table_written = True
    finally:
        con.close()
    result.seconds = time.perf_counter() - t0
    _write_history_and_report(result, history_path, report_path, timings)
    result.seconds = time.perf_counter() - t0
    return result


def _validate(
    con,
    origin: str,
    tables: tuple[str, ...],
    settings: Settings,
    batch_rows: int,
    timings: dict[str, float],
    say: Callable[[str], None],
) -> list[SuiteResult]:
    """Every suite module on its model, then the guards on ``tables``; timed into ``timings``."""
    from warehouse.quality.contracts import use_settings

    say("loading Great Expectations")
    t = time.perf_counter()
    gxr = _GX()
    timings["gx_import_s"] = time.perf_counter() - t
    suites: list[SuiteResult] = []
    t = time.perf_counter()
    with use_settings(settings):
        for mod in load_suite_modules():
            say(f"validating {mod.MODEL}")
            suites.append(run_suite_module(gxr, con, mod, origin, batch_rows))
    timings["suites_s"] = time.perf_counter() - t
    say("running de-identification guards")
    t = time.perf_counter()
    suites += run_guards(gxr, con, tables)
    timings["guards_s"] = time.perf_counter() - t
    return suites


def _write_history_and_report(
    result: QualityResult,
    history_path: Path | None,
    report_path: Path | None,
    timings: dict[str, float],
) -> None:
    """Append the history line and write the HTML report (with the history so far), where asked."""
    history = []
    if history_path is not None:
        result.history_path = Path(history_path)
        append_history(result.history_path, result)
        history = read_history(result.history_path)
    if report_path is not None:
        from warehouse.quality.report import write_report

        t = time.perf_counter()
        result.report_path = Path(report_path)
        write_report(result, history or [result.summary()], result.report_path)
        timings["report_s"] = time.perf_counter() - t
