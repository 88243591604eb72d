"""Run every GX suite in ``expectations/`` and every de-identification guard against a warehouse.

``run_quality(db_path, ...)`` reads each suite's model from DuckDB into pandas (the GX SQL
datasource does not work with DuckDB), validates it in an ephemeral GX context, runs the guards on
the public tables and the public candidates (``warehouse.quality.public_tables``), and returns a
``QualityResult``. Optionally it writes ``reports.rpt_data_quality`` into the warehouse (the build
does this on the staging file before the swap), appends a summary line to the history file and
writes the self-contained HTML report (``warehouse.quality.report``).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

from warehouse.config import REPO_ROOT, Settings, apply_quiet_env
from warehouse.quality import QualityError

EXPECTATIONS_DIR = REPO_ROOT / "expectations"
REPORT_SCHEMA = "reports"
REPORT_TABLE = "rpt_data_quality"
GUARD_SUITE_PREFIX = "deidentification."
SET_SUITE = "deidentification.public_set"
SCALE_ORIGINS_SKIPPED = {"test_fixture"}  # benchmark-scale expectations do not apply there
EXAMPLE_LIMIT = 3


@dataclass
class CheckRow:
    """One expectation (or guard rule) outcome: a row of reports.rpt_data_quality."""

    suite: str
    model: str
    kind: str  # suite | guard
    expectation_type: str
    status: str  # passed | failed | skipped | error
    column_name: str | None = None
    rule: str | None = None
    observed_value: str | None = None
    unexpected_count: int | None = None
    element_count: int | None = None
    example: str | None = None  # JSON: example rows / values / violations
    kwargs: str | None = None  # JSON of the expectation's arguments

    @property
    def success(self) -> bool | None:
        return None if self.status == "skipped" else self.status == "passed"

    def describe(self) -> str:
        what = self.expectation_type + (f"[{self.rule}]" if self.rule else "")
        col = f" on {self.column_name}" if self.column_name else ""
        return f"{self.suite}: {what}{col}: {self.observed_value}"


@dataclass
class SuiteResult:
    suite: str
    model: str
    kind: str
    rows: list[CheckRow] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None

    @property
    def success(self) -> bool:
        return self.error is None and all(r.status in ("passed", "skipped") for r in self.rows)

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.rows)


@dataclass
class QualityResult:
    run_id: str
    run_at: datetime
    db_path: Path
    data_origin: str
    trigger: str
    suites: list[SuiteResult]
    seconds: float = 0.0
    report_path: Path | None = None
    history_path: Path | None = None
    table_written: bool = False
    public_tables: tuple[str, ...] = ()
    gated_tables: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return all(s.success for s in self.suites)

    @property
    def failures(self) -> list[CheckRow]:
        return [r for s in self.suites for r in s.rows if r.status in ("failed", "error")]

    @property
    def rows(self) -> list[CheckRow]:
        return [r for s in self.suites for r in s.rows]

    def summary(self) -> dict[str, Any]:
        """The history line of this run."""
        evaluated = [r for r in self.rows if r.status != "skipped"]
        passed = sum(r.status == "passed" for r in evaluated)
        return {
            "run_id": self.run_id,
            "run_at": self.run_at.isoformat(),
            "trigger": self.trigger,
            "db_path": str(self.db_path),
            "data_origin": self.data_origin,
            "success": self.success,
            "n_suites": len(self.suites),
            "n_failed_suites": sum(not s.success for s in self.suites),
            "n_expectations": len(evaluated),
            "n_failed": len(evaluated) - passed,
            "n_skipped": len(self.rows) - len(evaluated),
            "pass_rate": passed / len(evaluated) if evaluated else 1.0,
            "seconds": round(self.seconds, 2),
            "suites": {
                s.suite: [
                    s.count("passed"),
                    s.count("passed") + s.count("failed") + s.count("error"),
                ]
                for s in self.suites
            },
        }

    def failure_message(self, limit: int = 15) -> str:
        failed = [s for s in self.suites if not s.success]
        lines = [f"{len(failed)} quality suite(s) failed: {', '.join(s.suite for s in failed)}"]
        for s in failed:
            if s.error:
                lines.append(f"  - {s.suite}: {s.error}")
        for r in self.failures[:limit]:
            lines.append(f"  - {r.describe()}")
        if len(self.failures) > limit:
            lines.append(f"  ... and {len(self.failures) - limit} more")
        if self.report_path:
            lines.append(f"See {self.report_path}")
        return "\n".join(lines)

    def raise_for_failures(self, context: str = "") -> None:
        if not self.success:
            prefix = f"{context}: " if context else ""
            raise QualityError(prefix + self.failure_message())

    def to_frame(self) -> pd.DataFrame:
        cols = [f.name for f in CheckRow.__dataclass_fields__.values()]
        df = pd.DataFrame([asdict(r) for r in self.rows], columns=cols)
        df.insert(0, "run_id", self.run_id)
        df.insert(1, "run_at", pd.Timestamp(self.run_at).tz_localize(None))
        df.insert(df.columns.get_loc("status") + 1, "success", [r.success for r in self.rows])
        df["data_origin"] = self.data_origin
        df["trigger"] = self.trigger
        for col in ("example", "kwargs", "observed_value", "column_name", "rule"):
            df[col] = df[col].astype("string")
        df["unexpected_count"] = df["unexpected_count"].astype("Int64")
        df["element_count"] = df["element_count"].astype("Int64")
        df["success"] = df["success"].astype("boolean")
        return df


# --- suites -----------------------------------------------------------------------------------
def load_suite_modules(directory: Path = EXPECTATIONS_DIR) -> list[ModuleType]:
    """Import every ``expectations/*.py`` (not starting with ``_``) by path."""
    modules = []
    for path in sorted(Path(directory).glob("*.py")):
        if path.name.startswith("_"):
            continue
        spec = importlib.util.spec_from_file_location(f"tastebench_expectations.{path.stem}", path)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if not hasattr(mod, "MODEL") or not hasattr(mod, "build_suite"):
            raise QualityError(
                f"{path} defines no MODEL/build_suite. Fix: every suite file exposes "
                "MODEL = '<schema>.<table>' and build_suite() -> gx.ExpectationSuite."
            )
        modules.append(mod)
    return modules


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        try:
            return value.item()
        except (ValueError, AttributeError):
            pass
    if isinstance(value, float) and value != value:  # NaN
        return None
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return str(value)


def _json(value: Any, limit: int = 4000) -> str:
    text = json.dumps(_plain(value), default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _exception(result) -> str | None:
    info = getattr(result, "exception_info", None) or {}
    if info.get("raised_exception"):
        return str(info.get("exception_message"))
    for v in info.values():
        if isinstance(v, dict) and v.get("raised_exception"):
            return str(v.get("exception_message"))
    return None


def _column_of(kwargs: dict) -> str | None:
    if "column" in kwargs:
        return str(kwargs["column"])
    if "column_A" in kwargs:
        return f"{kwargs['column_A']}, {kwargs['column_B']}"
    if "column_list" in kwargs and isinstance(kwargs["column_list"], list):
        return ", ".join(map(str, kwargs["column_list"]))
    if "group_by" in kwargs:
        return ", ".join(map(str, kwargs["group_by"]))
    return None


def _observed(result: dict) -> str | None:
    if result.get("observed_value") is not None:
        obs = result["observed_value"]
        return obs if isinstance(obs, str) else _json(obs, 500)
    if "unexpected_count" in result:
        n, total = result.get("unexpected_count"), result.get("element_count")
        return f"{n} of {total} values unexpected"
    return None


def _example(result: dict, frame: pd.DataFrame | None) -> str | None:
    idx = result.get("partial_unexpected_index_list")
    if frame is not None and idx:
        try:
            rows = frame.loc[list(idx)[:EXAMPLE_LIMIT]]
            return _json(rows.astype(object).to_dict("records"))
        except (KeyError, TypeError):
            pass
    values = result.get("partial_unexpected_list")
    if values:
        return _json(list(values)[:EXAMPLE_LIMIT])
    return None


def _rows_from_validation(
    suite: str, model: str, kind: str, validation, frame: pd.DataFrame | None
) -> list[CheckRow]:
    rows = []
    for r in validation.results:
        cfg = r.expectation_config
        kwargs = {k: v for k, v in dict(cfg.kwargs).items() if k != "batch_id"}
        result = dict(r.result or {})
        error = _exception(r)
        status = "error" if error else ("passed" if r.success else "failed")
        violations = (result.get("details") or {}).get("violations")
        if violations is not None and not error:
            rows += _guard_rows(suite, model, cfg.type, kwargs, violations)
            continue
        rows.append(
            CheckRow(
                suite=suite,
                model=model,
                kind=kind,
                expectation_type=cfg.type,
                status=status,
                column_name=_column_of(kwargs),
                observed_value=error or _observed(result),
                unexpected_count=result.get("unexpected_count"),
                element_count=result.get("element_count"),
                example=None if r.success else _example(result, frame),
                kwargs=_json({k: v for k, v in kwargs.items() if k != "context_key"}, 2000),
            )
        )
    return rows


def _guard_rows(
    suite: str, model: str, etype: str, kwargs: dict, violations: dict[str, list[dict]]
) -> list[CheckRow]:
    """One row per de-identification rule of a guard expectation."""
    out = []
    args = {k: v for k, v in kwargs.items() if k not in ("context_key", "rules")}
    for rule, found in violations.items():
        out.append(
            CheckRow(
                suite=suite,
                model=model,
                kind="guard",
                expectation_type=etype,
                status="failed" if found else "passed",
                column_name="; ".join(sorted({v["column"] for v in found})) or None,
                rule=rule,
                observed_value="; ".join(v["message"] for v in found) or "no violation",
                unexpected_count=len(found),
                example=_json(found[:EXAMPLE_LIMIT]) if found else None,
                kwargs=_json({**args, "rule": rule}),
            )
        )
    return out


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
            column_name=_column_of(e.configuration.kwargs),
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


def _read(con, sql: str) -> pd.DataFrame:
    return con.sql(sql).df()


def run_suite_module(gxr: _GX, con, mod: ModuleType, data_origin: str) -> SuiteResult:
    t0 = time.perf_counter()
    model = str(mod.MODEL)
    result = SuiteResult(suite=model, model=model, kind="suite")
    try:
        suite = mod.build_suite()
        result.suite = suite.name
        query = getattr(mod, "QUERY", None) or f"select * from {model}"
        frame = _read(con, query)
        params = mod.parameters(con) if hasattr(mod, "parameters") else {}
        skipped = _skip_scale(suite, data_origin)
        validation = gxr.validate(frame, suite, params)
        result.rows = _rows_from_validation(result.suite, model, "suite", validation, frame)
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
def public_frames(con, ctx, public_tables: Iterable[str]) -> dict[str, pd.DataFrame]:
    """The public tables as stored plus the public candidates derived from gated marts."""
    from warehouse.quality import public_tables as pt

    frames = {t: _read(con, f"select * from {t}") for t in public_tables}
    for cand in pt.PUBLIC_CANDIDATES:
        frames[cand.name] = cand.derive(con, ctx)
    return frames


def run_guards(gxr: _GX, con, public_tables: Iterable[str]) -> list[SuiteResult]:
    from warehouse.quality import guards
    from warehouse.quality.expectations import (
        GUARD_CONTEXTS,
        ExpectTableToPassDeidentificationGuards,
    )

    t0 = time.perf_counter()
    try:
        ctx = guards.GatedContext.from_warehouse(con)
        products = _read(con, "select category, product_code, is_analog from marts.dim_products")
        # a throwaway permutation for the candidates; the release draws and stores the real one
        ctx = ctx.with_code_map(guards.draw_public_codes(products, ctx))
        frames = public_frames(con, ctx, public_tables)
    except Exception as exc:
        msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        row = CheckRow(
            SET_SUITE, "(public set)", "guard", "guard_setup", "error", observed_value=msg
        )
        return [SuiteResult(SET_SUITE, "(public set)", "guard", [row], error=msg)]
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
                validation = gxr.validate(frame, suite)
                res.rows = _rows_from_validation(name, table, "guard", validation, None)
            except Exception as exc:
                res.error = f"{type(exc).__name__}: {exc}"
            res.seconds = time.perf_counter() - t1
            out.append(res)
    finally:
        GUARD_CONTEXTS.pop(key, None)
    t1 = time.perf_counter()
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
                example=_json([v.message for v in found[:EXAMPLE_LIMIT]]) if found else None,
                kwargs=_json({"rule": rule, "tables": sorted(frames)}),
            )
        )
    set_result.seconds = time.perf_counter() - t1
    out.append(set_result)
    if out:
        out[0].seconds += t1 - t0 - sum(s.seconds for s in out)  # context setup time
    return out


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
    settings: Settings | None = None,
    trigger: str = "api",
    public_tables: Iterable[str] | None = None,
    published_as: Path | None = None,
    log: Callable[[str], None] | None = None,
) -> QualityResult:
    """Validate every suite and guard against ``db_path``.

    ``write_table``: write ``reports.rpt_data_quality`` into the file (opens it read-write; only
    the build does this, on its staging file). Otherwise the file is opened read-only.
    ``report_path`` / ``history_path``: where to write the HTML report and append the history line
    (None: not written). ``manifest``: the dbt manifest of the run that built ``db_path``; the
    public tables are the models it declares ``meta.data_access: public``
    (:mod:`warehouse.quality.governance`) unless ``public_tables`` overrides them.
    ``published_as``: the path recorded in the result/history (the build validates its staging
    file, which is published under the live path).
    """
    import duckdb

    from warehouse.quality import governance
    from warehouse.quality.contracts import use_settings

    t0 = time.perf_counter()
    say = log or (lambda m: None)
    db_path = Path(db_path)
    if not db_path.exists():
        raise QualityError(f"no warehouse at {db_path}. Fix: run `tastebench build` first.")
    access = governance.read_access(manifest)
    tables = tuple(
        public_tables if public_tables is not None else governance.public_relations(access)
    )
    timings: dict[str, float] = {}
    con = duckdb.connect(str(db_path), read_only=not write_table)
    try:
        origin = _data_origin(con)
        say("loading Great Expectations")
        t = time.perf_counter()
        gxr = _GX()
        timings["gx_import_s"] = time.perf_counter() - t
        suites: list[SuiteResult] = []
        t = time.perf_counter()
        with use_settings(settings):
            for mod in load_suite_modules():
                say(f"validating {mod.MODEL}")
                suites.append(run_suite_module(gxr, con, mod, origin))
        timings["suites_s"] = time.perf_counter() - t
        say("running de-identification guards")
        t = time.perf_counter()
        suites += run_guards(gxr, con, tables)
        timings["guards_s"] = time.perf_counter() - t
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
    result.seconds = time.perf_counter() - t0
    return result
