"""Helpers of the operations tests: copies of a session warehouse, builds as real processes."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from warehouse.config import Settings, environment, load_settings
from warehouse.pipeline.lock import read_holder
from warehouse.pipeline.state import state_dir


def copy_warehouse(settings: Settings, root: Path) -> Settings:
    """The published file, its state and (when it lives in the build folder) the fit store of
    ``settings`` under ``root`` (modification times kept: the state recognises the file), as a
    build folder of its own. The session's shared content-addressed caches stay shared, and so
    does the D-MPNN registry the warehouse was built with (a build only reads it; its content is
    part of the build's fingerprint)."""
    root.mkdir(parents=True, exist_ok=True)
    db = root / "tastebench.duckdb"
    shutil.copy2(settings.db_path, db)
    shutil.copytree(state_dir(settings.db_path), state_dir(db), copy_function=shutil.copy2)
    if settings.fits_dir.is_dir() and settings.fits_dir.is_relative_to(settings.build_dir):
        shutil.copytree(settings.fits_dir, root / "fits")
    return load_settings(
        build_dir=root,
        db_path=db,
        mirror=settings.mirror,
        foodatlas_v4=settings.foodatlas_v4,
        dmpnn_dir=settings.dmpnn_dir,
    )


def start_build(settings: Settings, *args: str, stderr: Path | None = None) -> subprocess.Popen:
    """`tastebench build --db <settings.db_path> ARGS` as a separate process."""
    env = {**os.environ, **settings.as_env()}
    return subprocess.Popen(
        [sys.executable, "-m", "warehouse.cli", "build", "--db", str(settings.db_path), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr.open("w") if stderr else subprocess.PIPE,
        text=True,
    )


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.1)


def hold_paused(settings: Settings, proc: subprocess.Popen, staging: bool = False) -> None:
    """Wait until ``proc`` holds the build lock (and, with ``staging``, has started writing its
    separate file), then stop it (SIGSTOP): a build deterministically 'running'."""

    def ready() -> bool:
        assert proc.poll() is None, f"build exited early: {proc.communicate()}"
        holder = read_holder(settings.db_path)
        started = holder is not None and holder.pid == proc.pid
        return started and (not staging or staging_file(settings).exists())

    wait_for(ready, "the build to take the lock")
    proc.send_signal(signal.SIGSTOP)


def staging_file(settings: Settings) -> Path:
    return settings.db_path.with_name(f".{settings.db_path.name}.building")


def processes_mentioning(text: str) -> list[int]:
    """PIDs whose command line mentions ``text`` (Linux /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            out.append(int(entry.name))
    return out


def run_build_job(settings: Settings, nectar: Path) -> dict:
    """The scheduled Dagster job (``tastebench_build``) run in-process on ``settings``' warehouse
    with ``nectar``, as the schedule and the sensor run it: what it did, as plain data (a run
    result does not outlive the process): success, the assets it materialized, its asset checks
    (asset, check, passed), the messages the build logged, and the rating years it published."""
    import dagster as dg

    from warehouse.orchestrate import definitions  # its asset graph: the session's manifest

    instance = dg.DagsterInstance.ephemeral()
    with environment(settings.as_env()):
        config = definitions.BuildConfig(nectar=str(nectar))
        job = definitions.defs.resolve_job_def("tastebench_build")  # the scheduled job itself
        ops = {"tastebench_dbt": config}
        result = job.execute_in_process(run_config=dg.RunConfig(ops=ops), instance=instance)
    events = {kind: [] for kind in ("ASSET_MATERIALIZATION", "ASSET_CHECK_EVALUATION")}
    for event in result.all_events:
        if event.event_type_value in events:
            events[event.event_type_value].append(event.event_specific_data)
    logs = [e.user_message for e in instance.all_logs(result.run_id) if not e.is_dagster_event]
    return {
        "success": result.success,
        "materialized": {
            e.materialization.asset_key.path[-1] for e in events["ASSET_MATERIALIZATION"]
        },
        "checks": [
            (ev.asset_key.path[-1], ev.check_name, ev.passed)
            for ev in events["ASSET_CHECK_EVALUATION"]
        ],
        "logs": logs,
        "years": dict(read_rating_years(settings.db_path)),
    }


def read_rating_years(db: Path) -> list[tuple]:
    """(rating year, ratings) of the published file, by year: what a reader of the warehouse sees
    (the connection closed before returning: no handle left open in-process)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        sql = "select rating_year, count(*) from staging.stg_nectar__ratings group by 1 order by 1"
        return con.execute(sql).fetchall()
    finally:
        con.close()
