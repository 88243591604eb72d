"""The session's default warehouse from `make build`'s, when the build finds that one current.

The README runs `make build` before `make test` (and so does .ci/run): without this the session's
default build is a second, identical minute of work. `make build`'s warehouse is a candidate when
its last build was a full, successful build on the simulation, younger than the kept builds
(``KEEP_HOURS``: builds stamp their load times and the freshness tests read them), whose dbt run
results, gate history and gate report are still that build's own (the tests read them), and when
the simulated bundle this session generates equals `make build`'s file for file. Its file, state
and those artifacts are copied into the session's build folder, and the project's own build then
decides with a dbt runner that refuses: a current warehouse (same code, data, settings, D-MPNN
registry, library versions) needs no dbt; anything else falls back to the full build. Raw tables
record the path they were read from, so the build reads `make build`'s bundle path. Not with
TASTEBENCH_TEST_CACHE or TASTEBENCH_TEST_KEEP_BUILDS=0, which ask for a cold run.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

from tests.conftest import KEEP_BUILDS, KEEP_HOURS, REPO_ROOT, SHARED_CACHE
from warehouse.config import Settings, build_record_path
from warehouse.files import sha256_file
from warehouse.pipeline.record import BuildResult
from warehouse.pipeline.run import build, default_nectar_bundle
from warehouse.pipeline.state import state_dir

HOME = REPO_ROOT / "build"
DB = HOME / "tastebench.duckdb"
# what the tests read of the build besides the file, relative to the build folder
ARTIFACTS = (
    "dbt/target/run_results.json",
    "dbt/target/manifest.json",
    "quality/history.jsonl",
    "reports/quality.html",
)
SLACK_S = 2  # the record's times are whole seconds


class _NotCurrent(Exception):
    """The build found the copy out of date (it wanted dbt)."""


def _refuse_dbt(*args, **kwargs) -> None:
    raise _NotCurrent


def reuse_make_build(settings: Settings) -> BuildResult | None:
    """`make build`'s result, with its warehouse copied to ``settings``, when the build finds the
    copy current; else None (nothing left behind but the session's own bundle)."""
    record = _candidate_record()
    bundle = _same_bundle(settings) if record is not None else None
    if record is None or bundle is None:
        return None
    settings.db_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(DB, settings.db_path)  # modification time kept: the state recognises the file
    shutil.copytree(state_dir(DB), state_dir(settings.db_path), copy_function=shutil.copy2)
    for rel in ARTIFACTS:
        (settings.build_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(HOME / rel, settings.build_dir / rel)
    try:
        build(settings, nectar=bundle, log=lambda m: None, dbt_runner=_refuse_dbt)
    except _NotCurrent:
        settings.db_path.unlink()
        shutil.rmtree(state_dir(settings.db_path))
        for folder in {rel.split("/")[0] for rel in ARTIFACTS}:
            shutil.rmtree(settings.build_dir / folder)
        return None
    return _recorded_result(record, settings.db_path)


def _candidate_record() -> dict | None:
    if not KEEP_BUILDS or HOME != SHARED_CACHE or not build_record_path(DB).is_file():
        return None
    record = json.loads(build_record_path(DB).read_text())
    rebuilt = record.get("rebuilt") or {}
    if not (
        record.get("result") == "success"
        and record.get("data_origin") == "simulation"
        and rebuilt.get("mode") == "full"
        and not rebuilt.get("selection")
        and state_dir(DB).is_dir()
        and all((HOME / rel).is_file() for rel in ARTIFACTS)
    ):
        return None
    started, finished = (datetime.fromisoformat(record[k]).timestamp()
                         for k in ("started_at", "finished_at"))  # fmt: skip
    if datetime.now(UTC).timestamp() - finished > KEEP_HOURS * 3600:
        return None
    within = [started - SLACK_S <= (HOME / rel).stat().st_mtime <= finished + SLACK_S
              for rel in ARTIFACTS]  # fmt: skip
    last = json.loads((HOME / "quality" / "history.jsonl").read_text().splitlines()[-1])
    gate = datetime.fromisoformat(last["run_at"]).timestamp()
    ours = last["trigger"] == "build" and last["success"] and started <= gate <= finished + SLACK_S
    return record if all(within) and ours else None


def _same_bundle(settings: Settings) -> Path | None:
    """`make build`'s simulated bundle when it is, file for file, the one this session
    generates."""
    ours = default_nectar_bundle(settings, log=lambda m: None)
    theirs = HOME / ours.name
    files = sorted(p.relative_to(ours) for p in ours.rglob("*") if p.is_file())
    if sorted(p.relative_to(theirs) for p in theirs.rglob("*") if p.is_file()) != files:
        return None
    same = all(sha256_file(ours / f) == sha256_file(theirs / f) for f in files)
    return theirs if same else None


def _recorded_result(record: dict, db_path: Path) -> BuildResult:
    """The result `make build` recorded for the build that made the warehouse."""
    rebuilt = record["rebuilt"]
    return BuildResult(
        db_path=db_path,
        nectar_bundle=Path(record["nectar_bundle"]),
        data_origin=record["data_origin"],
        raw_counts=record["raw_counts"],
        timings=record["timings"],
        mode=rebuilt["mode"],
        reasons=rebuilt.get("reasons", []),
        reloaded_tables=rebuilt.get("reloaded_tables", []),
        rebuilt_models=rebuilt.get("models", []),
        quality=record.get("quality"),
    )
