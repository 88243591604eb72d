"""Build the warehouse: load the sources into ``raw``, run ``dbt build``, validate, publish
atomically, one writer at a time, incrementally by default.

* **One writer** (:mod:`warehouse.orchestrate.lock`): the build takes the lock beside the published
  file before it touches anything; a second build refuses at once (or waits ``wait_s``).
* **Atomic publish** (docs/architecture.md convention 9): the build writes a separate file next
  to the live one and swaps it in (``os.replace``) only when loading, every selected dbt model
  and test and the quality gate succeeded; a failed build leaves the previous warehouse
  untouched and serving.
* **Incremental** (:mod:`warehouse.orchestrate.state`): the separate file is a copy of the
  published one; only sources whose inputs changed are re-read and rewritten, and ``dbt build``
  selects what depends on them and on changed code. ``full_refresh`` rebuilds everything into a
  fresh file. The quality gate always validates the whole file before the swap.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from warehouse.config import ENV_DB, REPO_ROOT, Settings, apply_quiet_env, load_settings
from warehouse.errors import ResourceError, WarehouseError, resource_error
from warehouse.files import atomic_text


class BuildError(WarehouseError):
    """dbt failed; the previous warehouse was kept."""


@dataclass
class BuildResult:
    db_path: Path
    nectar_bundle: Path
    data_origin: str
    raw_counts: dict[str, int]
    timings: dict[str, float] = field(default_factory=dict)
    mode: str = "full"
    reasons: list[str] = field(default_factory=list)
    reloaded_tables: list[str] = field(default_factory=list)
    rebuilt_models: list[str] = field(default_factory=list)
    selection: list[str] = field(default_factory=list)
    quality: dict | None = None
    recomputed: list[str] = field(default_factory=list)
    """Cache entries that failed their checksum during this build and were recomputed."""


def default_nectar_bundle(settings: Settings, log: Callable[[str], None] = print) -> Path:
    """The simulated bundle under build/, generated on first use."""
    target = settings.default_simulation_dir
    if not (target / "simulation_manifest.json").exists():
        from warehouse.simulate import simulate_bundle
        from warehouse.sources import registry

        # verify every public input the simulator reads against its pin before using the folder
        for key in registry.load_registry():
            if key.startswith("tastebench_"):
                registry.resolve(key, settings)
        public_dir = registry.resolve("tastebench_gold_pairs", settings).parents[2]
        log(f"generating the simulated NECTAR bundle (seed 42) into {target}")
        simulate_bundle(target, public_dir=public_dir, seed=42, scale=1)
    return target


# The dbt child dies with the build (Linux: PR_SET_PDEATHSIG), so a killed build leaves no dbt
# writing on: set in a tiny launcher that then execs dbt (preexec_fn is unsafe with threads).
_LAUNCHER = (
    "import ctypes, os, signal, sys\n"
    "parent = int(sys.argv[1])\n"
    "try:\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)\n"
    "except (OSError, AttributeError):\n"
    "    pass\n"
    "if os.getppid() != parent:\n"
    "    sys.exit(137)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def dbt_command(args: list[str], settings: Settings, work_dir: Path | None = None) -> list[str]:
    """The dbt command line for ``args`` (project, profiles, target and log paths of the build)."""
    import sys

    target = (work_dir or settings.build_dir) / "dbt"
    dbt_exe = Path(sys.executable).with_name("dbt")
    return [
        str(dbt_exe) if dbt_exe.exists() else "dbt",
        *args,
        "--project-dir",
        str(REPO_ROOT),
        "--profiles-dir",
        str(REPO_ROOT),
        "--target-path",
        str(target / "target"),
        "--log-path",
        str(target / "logs"),
    ]


def run_dbt(
    args: list[str], settings: Settings, db_path: Path, work_dir: Path | None = None
) -> None:
    """Run dbt in a child process against ``db_path``; raise BuildError naming failed nodes.

    The child gets ``settings`` as environment variables (:meth:`Settings.as_env`), so the Python
    models resolve the same build folder, fit store and data mirror as the caller; ``work_dir``
    (default: the build folder) holds dbt's target and logs.

    A child process, not dbtRunner: dbt-duckdb caches its DuckDB handle per process, and a cached
    handle on the file we later swap into place would write into the published warehouse.
    """
    import subprocess
    import sys

    apply_quiet_env()
    target = (work_dir or settings.build_dir) / "dbt"
    cmd = dbt_command(args, settings, work_dir)
    if sys.platform.startswith("linux"):
        cmd = [sys.executable, "-c", _LAUNCHER, str(os.getpid()), *cmd]
    env = {**os.environ, **settings.as_env(), ENV_DB: str(db_path)}
    proc = subprocess.run(cmd, env=env, cwd=REPO_ROOT, check=False)
    if proc.returncode != 0:
        raise dbt_failure(args[0], target, db_path)


def dbt_failure(command: str, target: Path, db_path: Path) -> WarehouseError:
    """The error of a failed ``dbt <command>``: each failed node with its own error line from
    run_results.json; a :class:`~warehouse.errors.ResourceError` when a node ran out of disk or
    memory."""
    failed = [
        f"{name} ({status}): {message}" if message else f"{name} ({status})"
        for name, status, message in _run_results(target, failed=True)
    ]
    detail = f": failed {'; '.join(failed)}" if failed else ""
    log = target / "logs" / "dbt.log"
    resource = resource_error(RuntimeError(detail), db_path) if failed else None
    if resource is not None:
        return ResourceError(f"{resource} dbt {command}{detail}. See {log}")
    return BuildError(f"dbt {command} failed{detail}. The previous warehouse was kept. See {log}")


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _error_line(message: object) -> str:
    """The line of a dbt node's message that says what went wrong: its last non-blank line (a
    Python model's message ends with the exception), cut to 300 characters, without colour codes.
    A failed dbt unit test's message is a table of differences (dbt.log has it): its headline."""
    lines = [_ANSI.sub("", line).strip() for line in str(message or "").splitlines()]
    lines = [line for line in lines if line]
    if lines and lines[0].startswith("actual differs from expected"):
        return lines[0].rstrip(":")
    return lines[-1][:300] if lines else ""


def _run_results(target: Path, failed: bool = False) -> list[tuple[str, str, str]]:
    """(node name, status, error line) of dbt's last run: failed nodes, or models and seeds that
    ran."""
    import json

    results = target / "target" / "run_results.json"
    if not results.exists():
        return []
    out = []
    for r in json.loads(results.read_text()).get("results", []):
        parts = r["unique_id"].split(".")
        name = parts[2] if parts[0] == "test" else parts[-1]
        if parts[0] == "unit_test":  # dbt's own name for it: <model>::<unit test>
            name = f"{parts[2]}::{parts[-1]}"
        is_failure = r.get("status") in {"error", "fail", "runtime error"}
        ran = parts[0] in {"model", "seed"} and r.get("status") == "success"
        if (failed and is_failure) or (not failed and ran):
            out.append((name, r["status"], _error_line(r.get("message")) if failed else ""))
    return out


def ensure_manifest(settings: Settings) -> Path:
    """The dbt manifest of the build folder's last dbt run (it declares which models are public,
    :mod:`warehouse.quality.governance`); ``dbt parse`` writes one when no build left it."""
    from warehouse.quality.governance import manifest_path

    path = manifest_path(settings.build_dir)
    if not path.exists():
        run_dbt(["parse"], settings, settings.build_dir / "dbt" / "parse.duckdb")
    return path


def run_quality_gate(
    staging_path: Path, settings: Settings, log: Callable[[str], None], manifest: Path | None = None
):
    """GX suites and de-identification guards on the staging file, before the swap: writes
    reports.rpt_data_quality into it, the HTML report and a history line beside the warehouse
    file (also when it fails), and raises QualityError (a WarehouseError) if anything failed
    (docs/quality.md). Returns the :class:`~warehouse.quality.runner.QualityResult`."""
    from warehouse.quality.governance import manifest_path
    from warehouse.quality.runner import report_paths, run_quality

    log("validating: GX suites and de-identification guards")
    report_path, history_path = report_paths(settings.db_path)
    result = run_quality(
        staging_path,
        manifest=manifest or manifest_path(settings.build_dir),
        write_table=True,
        report_path=report_path,
        history_path=history_path,
        settings=settings,
        trigger="build",
        published_as=settings.db_path,
    )
    result.raise_for_failures("quality gate failed; the previous warehouse was kept")
    return result


def build(
    settings: Settings | None = None,
    nectar: Path | None = None,
    dbt_args: list[str] | None = None,
    log: Callable[[str], None] = print,
    *,
    full_refresh: bool = False,
    wait_s: float = 0,
    dbt_runner: Callable[[list[str], Settings, Path], None] | None = None,
    food_models: bool = True,
) -> BuildResult:
    """Build and publish the warehouse (see the module docstring). ``full_refresh``: rebuild
    everything into a fresh file; ``dbt_args``: extra ``dbt build`` arguments (a full build: the
    caller selects); ``wait_s``: wait that long for a running build instead of refusing;
    ``dbt_runner``: runs ``dbt <args>`` against a file (default :func:`run_dbt`; the Dagster
    definitions pass one that streams dbt's events as asset materializations); ``food_models``
    False: skip the food-ranking stage (dbt var ``food_models_max_analogs`` = 0, its marts
    empty)."""
    from datetime import UTC, datetime

    from warehouse.files import ledger_sizes, recomputed_since
    from warehouse.orchestrate.lock import BuildLock

    settings = settings or load_settings()
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    with BuildLock(settings.db_path, wait_s=wait_s, log=log):
        marks = ledger_sizes(settings.cache_roots)
        try:
            result = _build_locked(
                settings, nectar, dbt_args, log, full_refresh, dbt_runner or run_dbt, food_models
            )
            result.recomputed = [line["entry"] for line in recomputed_since(marks)]
        except BaseException as exc:
            write_build_record(settings, None, started, time.perf_counter() - t0, error=exc)
            raise
        write_build_record(settings, result, started, time.perf_counter() - t0)
    return result


def _nectar_bundle(settings: Settings, nectar: Path | None, log: Callable[[str], None]) -> Path:
    bundle = (
        Path(nectar) if nectar else settings.nectar_bundle or default_nectar_bundle(settings, log)
    )
    if not bundle.is_dir():
        raise WarehouseError(
            f"no NECTAR bundle at {bundle}: not a folder. Fix: pass the unpacked bundle folder "
            "(--nectar or TASTEBENCH_NECTAR_BUNDLE), or neither to build on the simulation."
        )
    return bundle


def _build_locked(
    settings: Settings,
    nectar: Path | None,
    dbt_args: list[str] | None,
    log: Callable[[str], None],
    full_refresh: bool,
    run: Callable[[list[str], Settings, Path], None],
    food_models: bool = True,
) -> BuildResult:
    import shutil

    import duckdb

    from warehouse.orchestrate import state
    from warehouse.sources.load import read_sources, write_raw
    from warehouse.sources.nectar import detect_origin, simulation_scale

    timings: dict[str, float] = {}
    bundle = _nectar_bundle(settings, nectar, log)
    origin = detect_origin(bundle)
    scale = simulation_scale(bundle)
    dbt_vars: dict[str, int] = {"simulation_scale": scale} if scale > 1 else {}
    if not food_models:
        dbt_vars["food_models_max_analogs"] = 0
        log("food-ranking stage switched off (--no-food-models): its marts stay empty")

    t = time.perf_counter()
    fp = state.fingerprint(settings, bundle, dbt_vars)
    previous = state.read_state(settings.db_path)
    plan = state.plan_build(
        previous, fp, settings.db_path, full_refresh=full_refresh, explicit_dbt_args=bool(dbt_args)
    )
    timings["plan_s"] = time.perf_counter() - t
    state.describe(plan, log)
    result = BuildResult(settings.db_path, bundle, origin, {}, timings, plan.mode, plan.reasons)
    staging_path = settings.db_path.with_name(f".{settings.db_path.name}.building")
    leftovers = (staging_path, staging_path.with_name(staging_path.name + ".wal"))
    if staging_path.exists():
        log(f"removed {staging_path.name}, the unfinished file of an interrupted build")
    for leftover in leftovers:
        leftover.unlink(missing_ok=True)
    if plan.mode == "current":
        assert previous is not None
        result.raw_counts = dict(previous.raw_counts)
        return result

    t = time.perf_counter()
    read = read_sources(
        settings, bundle, step=lambda s: log(f"reading {s}"), only=set(plan.reload_sources)
    )
    timings["read_and_validate_s"] = time.perf_counter() - t
    tables_by_source = dict(previous.tables_by_source) if plan.mode == "incremental" else {}
    counts = dict(previous.raw_counts) if plan.mode == "incremental" else {}
    write = []
    for source, tables in read.items():
        tables_by_source[source] = [tb.name for tb in tables]
        if plan.mode == "incremental" and source == "nectar":
            tables = [tb for tb in tables if tb.name in plan.rewrite_tables]
        write += tables
    try:
        t = time.perf_counter()
        if plan.mode == "incremental":
            shutil.copyfile(settings.db_path, staging_path)
        con = duckdb.connect(str(staging_path))
        try:
            counts.update(write_raw(con, write))
        finally:
            con.close()
        timings["load_raw_s"] = time.perf_counter() - t
        result.reloaded_tables = sorted(tb.name for tb in write)
        vars_args = ["--vars", _json(dbt_vars)] if dbt_vars else []
        t = time.perf_counter()
        ran_dbt = True
        if plan.mode == "full":
            run(["build", *(dbt_args or []), *vars_args], settings, staging_path)
        else:
            select = plan.select + state.selectors_for_tables(
                [tb.name for tb in write if tb.name not in plan.rewrite_tables],
                previous.manifest_dir / "manifest.json",
            )
            result.selection = select
            if select:
                log(f"dbt build --select {' '.join(select)}")
                # one --select value (space-separated union): what dbt and dagster-dbt both parse
                run(
                    ["build", "--select", " ".join(select), "--state", str(previous.manifest_dir),
                     *vars_args],
                    settings,
                    staging_path,
                )  # fmt: skip
            ran_dbt = bool(select)
        timings["dbt_build_s"] = time.perf_counter() - t
        result.rebuilt_models = (
            sorted(n for n, _, _ in _run_results(settings.build_dir / "dbt")) if ran_dbt else []
        )
        if plan.mode == "incremental":
            log(
                f"rebuilt {len(result.rebuilt_models)} model(s)"
                + (f": {', '.join(result.rebuilt_models)}" if result.rebuilt_models else "")
            )
        from warehouse.quality.governance import manifest_path

        manifest = (
            manifest_path(settings.build_dir)
            if ran_dbt
            else previous.manifest_dir / ("manifest.json")
        )
        t = time.perf_counter()
        quality = run_quality_gate(staging_path, settings, log, manifest=manifest)
        result.quality = quality.summary()
        timings["quality_s"] = time.perf_counter() - t
        # dbt may leave a write-ahead log beside the file: fold it in before the swap
        con = duckdb.connect(str(staging_path))
        try:
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(staging_path, settings.db_path)
    except BaseException as exc:
        for leftover in leftovers:
            leftover.unlink(missing_ok=True)
        # a full disk or exhausted memory is named as such, with the file being written
        unnamed = isinstance(exc, Exception) and not isinstance(exc, WarehouseError)
        resource = resource_error(exc, staging_path) if unnamed else None
        if resource is not None:
            raise resource from exc
        raise
    result.raw_counts = counts
    state.write_state(settings.db_path, fp, tables_by_source, manifest, counts)
    return result


def _json(values: dict) -> str:
    import json

    return json.dumps(values, sort_keys=True)


def write_build_record(
    settings: Settings,
    result: BuildResult | None,
    started_at=None,
    duration_s: float | None = None,
    error: BaseException | None = None,
) -> Path:
    """``<db>.last_build.json`` beside the warehouse file (like its lock): the last build attempt
    (time, duration, result, what it rebuilt and why, the quality gate's summary) and what the
    published warehouse was built from (its settings, the bundle, timings). A failed attempt is
    recorded too, with its error, and keeps the last successful build under ``last_success``.
    Later commands read the data mirror from it (:func:`warehouse.config.recorded_mirror`), so
    they work in a fresh shell."""
    import json
    from datetime import UTC, datetime

    from warehouse.config import build_record_path, read_build_record

    path = build_record_path(settings.db_path)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    record: dict = {
        "started_at": started_at.isoformat(timespec="seconds") if started_at else None,
        "finished_at": now,
        "duration_s": None if duration_s is None else round(duration_s, 3),
        "settings": settings.as_record(),
        "db_path": str(settings.db_path),
    }
    if result is None:
        previous = read_build_record(settings.db_path, settings.build_dir) or {}
        last = previous if previous.get("result", "success") == "success" else None
        last = last or previous.get("last_success")
        first = str(error).splitlines()[0] if error is not None and str(error) else ""
        record |= {
            "result": "failed",
            "error": f"{type(error).__name__}: {first}" if error is not None else "",
            "last_success": last,
        }
    else:
        record |= {
            "result": "success",
            "nectar_bundle": str(result.nectar_bundle),
            "data_origin": result.data_origin,
            "raw_counts": result.raw_counts,
            "timings": {k: round(v, 3) for k, v in result.timings.items()},
            "rebuilt": {
                "mode": result.mode,
                "reasons": result.reasons,
                "reloaded_tables": result.reloaded_tables,
                "selection": result.selection,
                "models": result.rebuilt_models,
            },
            "quality": result.quality,
            "recomputed_cache_entries": result.recomputed,
        }
    return atomic_text(path, json.dumps(record, indent=1, sort_keys=True) + "\n")


def write_dbt_docs(settings: Settings, out: Path | None = None) -> Path:
    """dbt's documentation site of the warehouse as one static page (``out``, default
    ``reports/dbt_docs.html`` beside the warehouse file); its path."""
    import shutil
    import tempfile

    from warehouse.config import reports_dir

    if not settings.db_path.exists():
        raise WarehouseError(f"no warehouse at {settings.db_path}. Fix: run `make build` first.")
    out = (out or reports_dir(settings.db_path) / "dbt_docs.html").resolve()
    with tempfile.TemporaryDirectory(prefix="tb-docs-") as tmp:
        # dbt opens its database for writing: document a copy, never the published file; named
        # like it, since dbt-duckdb names the database after the file (docs show tastebench.…)
        copy = Path(tmp) / settings.db_path.name
        shutil.copyfile(settings.db_path, copy)
        run_dbt(["docs", "generate", "--static"], settings, copy, Path(tmp))
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(Path(tmp) / "dbt" / "target" / "static_index.html", out)
    return out
