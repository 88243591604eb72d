"""Build the warehouse: load every source into ``raw``, run ``dbt build``, publish atomically.

The build writes a fresh DuckDB file next to the live one and swaps it in only when loading and
every dbt model and test succeeded (STYLE.md convention 9): a failed build leaves the previous
warehouse file untouched and serving.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from warehouse.config import ENV_DB, REPO_ROOT, Settings, apply_quiet_env, load_settings
from warehouse.errors import WarehouseError


class BuildError(WarehouseError):
    """dbt failed; the previous warehouse was kept."""


@dataclass
class BuildResult:
    db_path: Path
    nectar_bundle: Path
    data_origin: str
    raw_counts: dict[str, int]
    timings: dict[str, float] = field(default_factory=dict)


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
    import json
    import subprocess
    import sys

    apply_quiet_env()
    target = (work_dir or settings.build_dir) / "dbt"
    dbt_exe = Path(sys.executable).with_name("dbt")
    cmd = [
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
    env = {**os.environ, **settings.as_env(), ENV_DB: str(db_path)}
    proc = subprocess.run(cmd, env=env, cwd=REPO_ROOT, check=False)
    if proc.returncode != 0:
        failed: list[str] = []
        results = target / "target" / "run_results.json"
        if results.exists():
            for r in json.loads(results.read_text()).get("results", []):
                if r.get("status") in {"error", "fail", "runtime error"}:
                    parts = r["unique_id"].split(".")
                    name = parts[2] if parts[0] == "test" else parts[-1]
                    failed.append(f"{name} ({r['status']})")
        detail = f": failed {', '.join(failed)}" if failed else ""
        raise BuildError(
            f"dbt {args[0]} failed{detail}. The previous warehouse was kept. "
            f"See {target / 'logs' / 'dbt.log'}"
        )


def ensure_manifest(settings: Settings) -> Path:
    """The dbt manifest of the build folder's last dbt run (it declares which models are public,
    :mod:`warehouse.quality.governance`); ``dbt parse`` writes one when no build left it."""
    from warehouse.quality.governance import manifest_path

    path = manifest_path(settings.build_dir)
    if not path.exists():
        run_dbt(["parse"], settings, settings.build_dir / "dbt" / "parse.duckdb")
    return path


def run_quality_gate(staging_path: Path, settings: Settings, log: Callable[[str], None]) -> None:
    """GX suites and de-identification guards on the staging file, before the swap: writes
    reports.rpt_data_quality into it, the HTML report and a history line beside the warehouse
    file (also when it fails), and raises QualityError (a WarehouseError) if anything failed
    (docs/quality.md)."""
    from warehouse.quality.governance import manifest_path
    from warehouse.quality.runner import report_paths, run_quality

    log("validating: GX suites and de-identification guards")
    report_path, history_path = report_paths(settings.db_path)
    result = run_quality(
        staging_path,
        manifest=manifest_path(settings.build_dir),
        write_table=True,
        report_path=report_path,
        history_path=history_path,
        settings=settings,
        trigger="build",
        published_as=settings.db_path,
    )
    result.raise_for_failures("quality gate failed; the previous warehouse was kept")


def build(
    settings: Settings | None = None,
    nectar: Path | None = None,
    dbt_args: list[str] | None = None,
    log: Callable[[str], None] = print,
) -> BuildResult:
    import duckdb

    from warehouse.sources.load import read_all, write_raw
    from warehouse.sources.nectar import detect_origin

    settings = settings or load_settings()
    timings: dict[str, float] = {}
    bundle = (
        Path(nectar) if nectar else settings.nectar_bundle or default_nectar_bundle(settings, log)
    )
    if not bundle.is_dir():
        raise WarehouseError(
            f"no NECTAR bundle at {bundle}: not a folder. Fix: pass the unpacked bundle folder "
            "(--nectar or TASTEBENCH_NECTAR_BUNDLE), or neither to build on the simulation."
        )
    settings.db_path.parent.mkdir(parents=True, exist_ok=True)
    staging_path = settings.db_path.with_name(f".{settings.db_path.name}.building")
    for leftover in (staging_path, staging_path.with_name(staging_path.name + ".wal")):
        leftover.unlink(missing_ok=True)

    t0 = time.perf_counter()
    tables = read_all(settings, bundle, step=lambda s: log(f"reading {s}"))
    timings["read_and_validate_s"] = time.perf_counter() - t0
    try:
        t1 = time.perf_counter()
        con = duckdb.connect(str(staging_path))
        try:
            counts = write_raw(con, tables)
        finally:
            con.close()
        timings["load_raw_s"] = time.perf_counter() - t1
        t2 = time.perf_counter()
        run_dbt(["build", *(dbt_args or [])], settings, staging_path)
        timings["dbt_build_s"] = time.perf_counter() - t2
        t3 = time.perf_counter()
        run_quality_gate(staging_path, settings, log)
        timings["quality_s"] = time.perf_counter() - t3
        # dbt may leave a write-ahead log beside the file: fold it in before the swap
        con = duckdb.connect(str(staging_path))
        try:
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(staging_path, settings.db_path)
    except BaseException:
        for leftover in (staging_path, staging_path.with_name(staging_path.name + ".wal")):
            leftover.unlink(missing_ok=True)
        raise
    result = BuildResult(settings.db_path, bundle, detect_origin(bundle), counts, timings)
    write_build_record(settings, result)
    return result


def write_build_record(settings: Settings, result: BuildResult) -> Path:
    """``<build_dir>/last_build.json``: what the last successful build published and from which
    inputs (its settings, the bundle, timings). Later commands read the data mirror from it
    (:func:`warehouse.config.recorded_mirror`), so they work in a fresh shell."""
    import json
    from datetime import UTC, datetime

    from warehouse.config import BUILD_RECORD

    record = {
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "db_path": str(result.db_path),
        "nectar_bundle": str(result.nectar_bundle),
        "data_origin": result.data_origin,
        "settings": settings.as_record(),
        "raw_counts": result.raw_counts,
        "timings": {k: round(v, 3) for k, v in result.timings.items()},
    }
    path = settings.build_dir / BUILD_RECORD
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
