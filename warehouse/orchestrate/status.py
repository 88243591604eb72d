"""What ``tastebench status`` shows: the last build, whether one is running, data freshness per
source (``dbt source freshness``) and the quality gate's result, all without writing anything the
published warehouse or a running build uses.

Freshness runs dbt against a copy of the published file in a temporary folder: dbt-duckdb opens
its database for writing, and the published file is only ever read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from warehouse.config import BUILD_RECORD, ENV_DB, REPO_ROOT, Settings, apply_quiet_env


def last_build(settings: Settings) -> dict | None:
    """The record of the last build attempt (``last_build.json`` of the build folder, else beside
    the warehouse file), or None."""
    for folder in (settings.build_dir, settings.db_path.parent):
        try:
            return json.loads((folder / BUILD_RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
    return None


def running_build(settings: Settings) -> dict | None:
    """The build holding the lock right now (its record), or None."""
    from dataclasses import asdict

    from warehouse.orchestrate.lock import is_locked, read_holder

    if not is_locked(settings.db_path):
        return None
    holder = read_holder(settings.db_path)
    return asdict(holder) if holder else {"pid": None}


def source_freshness(settings: Settings) -> list[dict]:
    """``dbt source freshness`` over a copy of the published file: one row per source table that
    declares a freshness policy (status pass | warn | error | runtime error, max loaded-at, age)."""
    from warehouse.build import dbt_command

    if not settings.db_path.exists():
        return []
    apply_quiet_env()
    with tempfile.TemporaryDirectory(prefix="tb-freshness-") as tmp:
        copy = Path(tmp) / "freshness.duckdb"
        shutil.copyfile(settings.db_path, copy)
        out = Path(tmp) / "sources.json"
        cmd = dbt_command(["source", "freshness", "--output", str(out)], settings, Path(tmp))
        env = {**os.environ, **settings.as_env(), ENV_DB: str(copy)}
        proc = subprocess.run(
            cmd, env=env, cwd=REPO_ROOT, check=False, capture_output=True, text=True
        )
        if not out.exists():
            tail = (proc.stdout or "").strip().splitlines()[-3:]
            return [{"source": "(dbt source freshness)", "status": "runtime error",
                     "detail": " ".join(tail)}]  # fmt: skip
        results = json.loads(out.read_text(encoding="utf-8")).get("results", [])
    rows = []
    for r in results:
        parts = r["unique_id"].split(".")
        rows.append(
            {
                "source": ".".join(parts[-2:]),
                "status": r.get("status"),
                "max_loaded_at": r.get("max_loaded_at"),
                "age_s": r.get("max_loaded_at_time_ago_in_s"),
                "warn_after": (r.get("criteria") or {}).get("warn_after"),
                "error_after": (r.get("criteria") or {}).get("error_after"),
            }
        )
    return sorted(rows, key=lambda r: r["source"])


def quality_result(settings: Settings) -> dict | None:
    """The quality gate's result stored in the published file (``reports.rpt_data_quality``):
    when it ran and the counts per status, with the failed suites."""
    import duckdb

    if not settings.db_path.exists():
        return None
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        rows = con.execute(
            "select status, count(*) from reports.rpt_data_quality group by 1 order by 1"
        ).fetchall()
        run_at = con.execute("select max(run_at) from reports.rpt_data_quality").fetchone()[0]
        failed = con.execute(
            "select distinct suite from reports.rpt_data_quality "
            "where status in ('failed', 'error') order by 1"
        ).fetchall()
        n_suites = con.execute(
            "select count(distinct suite) from reports.rpt_data_quality"
        ).fetchone()[0]
    except duckdb.CatalogException:
        return None
    finally:
        con.close()
    counts = dict(rows)
    return {
        "run_at": None if run_at is None else str(run_at),
        "success": not failed,
        "n_suites": int(n_suites),
        "counts": {k: int(v) for k, v in counts.items()},
        "failed_suites": [f[0] for f in failed],
    }


def collect(settings: Settings, freshness: bool = True) -> dict:
    """Everything ``tastebench status`` prints, as one JSON-able dict."""
    published = None
    if settings.db_path.exists():
        st = settings.db_path.stat()
        from datetime import UTC, datetime

        published = {
            "path": str(settings.db_path),
            "bytes": st.st_size,
            "modified_at": datetime.fromtimestamp(st.st_mtime, UTC).isoformat(timespec="seconds"),
        }
    return {
        "published": published,
        "running": running_build(settings),
        "last_build": last_build(settings),
        "quality": quality_result(settings),
        "freshness": source_freshness(settings) if freshness else None,
        "python": sys.version.split()[0],
    }
