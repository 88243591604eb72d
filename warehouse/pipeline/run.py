"""Build the warehouse: load the sources into ``raw``, run ``dbt build``, validate, publish
atomically, one writer at a time, incrementally by default.

* **One writer** (:mod:`warehouse.pipeline.lock`): the build takes the lock beside the published
  file before it touches anything; a second build refuses at once (or waits ``wait_s``).
* **Atomic publish** (:mod:`warehouse.pipeline.publish`, docs/architecture.md convention 9): the
  build writes a separate file next to the live one and swaps it in (``os.replace``) only when
  loading, every selected dbt model and test and the quality gate succeeded; a failed build leaves
  the previous warehouse untouched and serving.
* **Incremental** (:mod:`warehouse.pipeline.state`, :mod:`warehouse.pipeline.plan`): the separate
  file is a copy of the published one; only sources whose inputs changed are re-read and
  rewritten, and ``dbt build`` selects what depends on them and on changed code. ``full_refresh``
  rebuilds everything into a fresh file. The quality gate always validates the whole file before
  the swap.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from warehouse.config import Settings
from warehouse.errors import WarehouseError
from warehouse.pipeline import plan as planning
from warehouse.pipeline import publish, state
from warehouse.pipeline.dbt import dbt_dir, run_dbt, run_results
from warehouse.pipeline.gate import run_quality_gate
from warehouse.pipeline.lock import BuildLock
from warehouse.pipeline.record import BuildResult, write_build_record

DbtRunner = Callable[[list[str], Settings, Path], None]


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


def build(
    settings: Settings,
    nectar: Path | None = None,
    dbt_args: list[str] | None = None,
    log: Callable[[str], None] = print,
    *,
    full_refresh: bool = False,
    wait_s: float = 0,
    dbt_runner: DbtRunner | None = None,
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
    run: DbtRunner,
    food_models: bool = True,
) -> BuildResult:
    """The build, lock held: plan, read and load the sources, ``dbt build``, gate, swap; the
    state of the published file last. A failed step removes the staging file."""
    from warehouse.sources.nectar import detect_origin, simulation_scale

    bundle = _nectar_bundle(settings, nectar, log)
    origin = detect_origin(bundle)
    dbt_vars = _dbt_vars(simulation_scale(bundle), food_models, log)
    timings: dict[str, float] = {}
    fp, previous, plan = _plan(settings, bundle, dbt_vars, full_refresh, dbt_args, timings, log)
    result = BuildResult(settings.db_path, bundle, origin, {}, timings, plan.mode, plan.reasons)
    staging = publish.staging_path(settings.db_path)
    publish.clear_leftovers(staging, log)
    if plan.mode == "current":
        assert previous is not None
        result.raw_counts = dict(previous.raw_counts)
        return result
    write, tables_by_source, counts = _read_sources(settings, bundle, plan, previous, timings, log)
    try:
        _load_raw(settings, staging, plan, write, counts, timings)
        result.reloaded_tables = sorted(tb.name for tb in write)
        manifest = _dbt_build(
            settings, staging, plan, previous, write, dbt_args, dbt_vars, run, result, log
        )
        t = time.perf_counter()
        result.quality = run_quality_gate(staging, settings, log, manifest=manifest).summary()
        timings["quality_s"] = time.perf_counter() - t
        publish.swap(staging, settings.db_path)
    except BaseException as exc:
        resource = publish.discard(staging, exc)
        if resource is not None:
            raise resource from exc
        raise
    result.raw_counts = counts
    state.write_state(settings.db_path, fp, tables_by_source, manifest, counts)
    return result


def _dbt_vars(scale: int, food_models: bool, log: Callable[[str], None]) -> dict[str, int]:
    """The dbt vars of the build: the simulation scale (above 1), the food-ranking switch."""
    dbt_vars: dict[str, int] = {"simulation_scale": scale} if scale > 1 else {}
    if not food_models:
        dbt_vars["food_models_max_analogs"] = 0
        log("food-ranking stage switched off (--no-food-models): its marts stay empty")
    return dbt_vars


def _plan(
    settings: Settings,
    bundle: Path,
    dbt_vars: dict[str, int],
    full_refresh: bool,
    dbt_args: list[str] | None,
    timings: dict[str, float],
    log: Callable[[str], None],
) -> tuple[state.Fingerprints, state.State | None, planning.Plan]:
    """Fingerprint this build's inputs, read the published state, plan (and say) what to do."""
    t = time.perf_counter()
    fp = state.fingerprint(settings, bundle, dbt_vars)
    previous = state.read_state(settings.db_path)
    plan = planning.plan_build(
        previous, fp, settings.db_path, full_refresh=full_refresh, explicit_dbt_args=bool(dbt_args)
    )
    timings["plan_s"] = time.perf_counter() - t
    planning.describe(plan, log)
    return fp, previous, plan


def _read_sources(
    settings: Settings,
    bundle: Path,
    plan: planning.Plan,
    previous: state.State | None,
    timings: dict[str, float],
    log: Callable[[str], None],
) -> tuple[list, dict[str, list[str]], dict[str, int]]:
    """Read and validate the sources the plan reloads: (raw tables to write, table names per
    source, row counts so far); an incremental build keeps the published file's others."""
    from warehouse.sources.load import read_sources

    t = time.perf_counter()
    read = read_sources(
        settings, bundle, step=lambda s: log(f"reading {s}"), only=set(plan.reload_sources)
    )
    timings["read_and_validate_s"] = time.perf_counter() - t
    incremental = plan.mode == "incremental"
    tables_by_source = dict(previous.tables_by_source) if incremental else {}
    counts = dict(previous.raw_counts) if incremental else {}
    write = []
    for source, tables in read.items():
        tables_by_source[source] = [tb.name for tb in tables]
        if incremental and source == "nectar":
            tables = [tb for tb in tables if tb.name in plan.rewrite_tables]
        write += tables
    return write, tables_by_source, counts


def _load_raw(
    settings: Settings,
    staging: Path,
    plan: planning.Plan,
    write: list,
    counts: dict[str, int],
    timings: dict[str, float],
) -> None:
    """Write the raw tables into the staging file (a copy of the published one when
    incremental); ``counts`` gains their row counts."""
    import shutil

    import duckdb

    from warehouse.sources.load import write_raw

    t = time.perf_counter()
    if plan.mode == "incremental":
        shutil.copyfile(settings.db_path, staging)
    con = duckdb.connect(str(staging))
    try:
        counts.update(write_raw(con, write))
    finally:
        con.close()
    timings["load_raw_s"] = time.perf_counter() - t


def _dbt_build(
    settings: Settings,
    staging: Path,
    plan: planning.Plan,
    previous: state.State | None,
    write: list,
    dbt_args: list[str] | None,
    dbt_vars: dict[str, int],
    run: DbtRunner,
    result: BuildResult,
    log: Callable[[str], None],
) -> Path:
    """``dbt build`` into the staging file: everything (full), or the plan's selection and what
    reads the reloaded raw tables (incremental; nothing selected, no dbt). The manifest the gate
    reads: this run's, or the published build's when dbt did not run."""
    from warehouse.quality.governance import manifest_path

    vars_args = ["--vars", json.dumps(dbt_vars, sort_keys=True)] if dbt_vars else []
    t = time.perf_counter()
    ran_dbt = True
    if plan.mode == "full":
        run(["build", *(dbt_args or []), *vars_args], settings, staging)
    else:
        assert previous is not None
        select = plan.select + planning.selectors_for_tables(
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
                staging,
            )  # fmt: skip
        ran_dbt = bool(select)
    result.timings["dbt_build_s"] = time.perf_counter() - t
    result.rebuilt_models = (
        sorted(n for n, _, _ in run_results(dbt_dir(settings))) if ran_dbt else []
    )
    if plan.mode == "incremental":
        log(
            f"rebuilt {len(result.rebuilt_models)} model(s)"
            + (f": {', '.join(result.rebuilt_models)}" if result.rebuilt_models else "")
        )
    return manifest_path(settings.build_dir) if ran_dbt else previous.manifest_dir / "manifest.json"
