"""What ``tastebench status`` shows (and what ``tastebench build`` prints when done): the last
build, whether one is running, data freshness per source (``dbt source freshness``) and the quality
gate's result, all without writing anything the published warehouse or a running build uses.

Freshness runs dbt against a copy of the published file in a temporary folder: dbt-duckdb opens
its database for writing, and the published file is only ever read.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from warehouse.config import Settings, build_record_path, read_build_record


def last_build(settings: Settings) -> dict | None:
    """The record of the last build of ``settings.db_path`` (``<db>.last_build.json`` beside the
    file), or None: never the record of another warehouse."""
    return read_build_record(settings.db_path, settings.build_dir)


def running_build(settings: Settings) -> dict | None:
    """The build holding the lock right now (its record), or None."""
    from dataclasses import asdict

    from warehouse.pipeline.lock import is_locked, read_holder

    if not is_locked(settings.db_path):
        return None
    holder = read_holder(settings.db_path)
    return asdict(holder) if holder else {"pid": None}


def source_freshness(settings: Settings) -> list[dict]:
    """``dbt source freshness`` over a copy of the published file: one row per source table that
    declares a freshness policy (status pass | warn | error | runtime error, max loaded-at, age)."""
    from warehouse.pipeline.dbt import copy_name, dbt_process

    if not settings.db_path.exists():
        return []
    with tempfile.TemporaryDirectory(prefix="tb-freshness-") as tmp:
        # under the build's staging name, so dbt starts from the build's parse (copy_name)
        copy = copy_name(settings.db_path, Path(tmp))
        shutil.copyfile(settings.db_path, copy)
        out = Path(tmp) / "sources.json"
        args = ["source", "freshness", "--output", str(out)]
        proc = dbt_process(args, settings, copy, Path(tmp), capture=True)
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

    from warehouse.sources.readonly import connect_read_only

    if not settings.db_path.exists():
        return None
    con = connect_read_only(settings.db_path)
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
        "warehouse": str(settings.db_path),
        "build_record": str(build_record_path(settings.db_path)),
        "published": published,
        "running": running_build(settings),
        "last_build": last_build(settings),
        "quality": quality_result(settings),
        "freshness": source_freshness(settings) if freshness else None,
        "python": sys.version.split()[0],
    }


def _fmt(value: float | None) -> str:
    import math

    return (
        "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.4f}"
    )


def _print_human_baseline(console, db_path: Path) -> None:
    """The stored side-by-side table of human-baseline figures (agg_human_baseline)."""
    import duckdb
    from rich.table import Table

    from warehouse.sources.readonly import connect_read_only

    con = connect_read_only(db_path)
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


def render_build(console, result) -> None:
    """What `tastebench build` prints about what it did and why."""
    if result.mode == "current":
        console.print(
            f"[green]warehouse up to date[/green]: nothing changed since the published build "
            f"({result.db_path}); nothing was rebuilt"
        )
    else:
        console.print(
            f"[green]warehouse built[/green] ({result.mode}) from {result.nectar_bundle} "
            f"(data_origin={result.data_origin})"
        )
        if result.mode == "incremental":
            for reason in result.reasons:
                console.print(f"  why: {reason}")
            console.print(f"  reloaded: {', '.join(result.reloaded_tables) or 'no raw table'}")
            console.print(
                f"  rebuilt {len(result.rebuilt_models)} model(s): "
                f"{', '.join(result.rebuilt_models) or 'none'}"
            )
        else:
            console.print(
                f"  why: {'; '.join(result.reasons)}; rebuilt all {len(result.rebuilt_models)} "
                "models and seeds"
            )
    if result.recomputed:
        console.print(
            f"[yellow]caches: {len(result.recomputed)} entr"
            f"{'y' if len(result.recomputed) == 1 else 'ies'} failed its checksum and "
            f"{'was' if len(result.recomputed) == 1 else 'were'} recomputed[/yellow] "
            f"(first: {result.recomputed[0]}; every one in recomputed.jsonl of its cache)"
        )
    elif result.mode != "current":
        console.print("  caches: no entry failed its checksum (0 recomputed)")
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


def render_status(console, info: dict) -> None:
    """`tastebench status` as text."""
    from rich.table import Table

    pub = info["published"]
    console.print(
        f"published: {pub['path']} ({pub['bytes'] / 1e6:.1f} MB, {pub['modified_at']})"
        if pub
        else f"published: [red]no warehouse yet[/red] at {info['warehouse']} (run tastebench build)"
    )
    run = info["running"]
    if run:
        console.print(
            f"[yellow]a build is running[/yellow]: PID {run.get('pid')} on {run.get('host')}, "
            f"started {run.get('started_at')}"
        )
    last = info["last_build"]
    if not last:
        console.print(
            f"last build: [yellow]no build record for {info['warehouse']}[/yellow] (none at "
            f"{info['build_record']}: built before records were kept beside it, or copied)"
        )
    else:
        ok = last.get("result") == "success"
        rebuilt = last.get("rebuilt") or {}
        console.print(
            f"last build: {'[green]success[/green]' if ok else '[red]failed[/red]'} at "
            f"{last.get('finished_at')} in {last.get('duration_s')} s"
            + (f" ({rebuilt.get('mode')})" if rebuilt else "")
        )
        if not ok:
            console.print(f"  error: {last.get('error')}")
        for reason in rebuilt.get("reasons", []):
            console.print(f"  why: {reason}")
        if rebuilt:
            models = rebuilt.get("models") or []
            console.print(
                f"  rebuilt {len(models)} model(s)"
                + (f": {', '.join(models)}" if 0 < len(models) <= 40 else "")
            )
    q = info["quality"]
    if q:
        counts = ", ".join(f"{v} {k}" for k, v in sorted(q["counts"].items()))
        verdict = "[green]passed[/green]" if q["success"] else "[red]FAILED[/red]"
        console.print(f"quality gate: {verdict} at {q['run_at']}: {q['n_suites']} suites, {counts}")
        if q["failed_suites"]:
            console.print(f"  failed: {', '.join(q['failed_suites'])}")
    if info["freshness"] is not None:
        table = Table("source", "status", "max loaded at", "age", title="Data freshness")
        for r in info["freshness"]:
            age = r.get("age_s")
            shown = "" if age is None else f"{age / 3600:.1f} h"
            colour = {"pass": "green", "warn": "yellow"}.get(r["status"], "red")
            table.add_row(
                r["source"],
                f"[{colour}]{r['status']}[/{colour}]",
                str(r.get("max_loaded_at") or r.get("detail") or ""),
                shown,
            )
        console.print(table)
