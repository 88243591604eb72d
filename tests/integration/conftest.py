"""Session-wide warehouses for the integration tests: each full build runs once per session.

* ``fixture_warehouse``: the hand-written NECTAR fixture bundle + the public mirror + a FoodAtlas
  v4 fixture in the official parquet layout.
* ``default_warehouse``: the default build (the calibrated simulation), as `make build` makes it;
  a copy of `make build`'s own warehouse when the build finds that one current.
* ``fixture_dbt_docs``: `tastebench docs` of the fixture warehouse (dbt's static page).
* ``default_release``: `tastebench release` of the default warehouse (public and gated folders).

Under pytest-xdist each is built by one worker and read by the others; each is kept between runs
while nothing it depends on changed (``built_once``, tests/conftest.py). Tests must not modify
these files (a kept build is restored from its snapshot each run); copy one first (tests of
failed builds may point `build` at the same settings: a failed build never touches the published
file).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from functools import partial
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import KEEP_BUILDS, KEEP_HOURS, REPO_ROOT, SHARED_CACHE, built_once
from tests.unit.test_public_loaders import _write_v4_fixture
from warehouse.cli import app
from warehouse.config import Settings, build_record_path, load_settings
from warehouse.files import sha256_file
from warehouse.pipeline.record import BuildResult
from warehouse.pipeline.run import build, default_nectar_bundle
from warehouse.pipeline.state import state_dir

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "nectar_mini"


@pytest.fixture(scope="session")
def fixture_warehouse(tmp_path_factory, data_mirror: Path) -> tuple[Settings, BuildResult]:
    make = partial(_fixture_build, data_mirror)
    return built_once(tmp_path_factory, "fixture_wh", make, code=[_write_v4_fixture])


def _fixture_build(data_mirror: Path, root: Path) -> tuple[Settings, BuildResult]:
    _write_v4_fixture(root / "foodatlas-v4.0")
    settings = load_settings(
        build_dir=root / "build",
        db_path=root / "build" / "tastebench.duckdb",
        mirror=data_mirror,
        foodatlas_v4=root / "foodatlas-v4.0",
        dmpnn_dir=root / "dmpnn",
    )
    return settings, build(settings, nectar=FIXTURE, log=lambda m: None)


@pytest.fixture(scope="session")
def default_warehouse(tmp_path_factory, data_mirror: Path) -> tuple[Settings, BuildResult]:
    return built_once(tmp_path_factory, "default_wh", partial(_default_build, data_mirror))


def _default_build(data_mirror: Path, root: Path) -> tuple[Settings, BuildResult]:
    settings = load_settings(
        build_dir=root / "build",
        db_path=root / "build" / "tastebench.duckdb",
        mirror=data_mirror,
        dmpnn_dir=root / "dmpnn",
    )
    bundle = _make_build_bundle(settings)
    if bundle is not None and _copy_make_build(settings):
        try:  # the build itself says whether the copy is current: it never reaches dbt then
            result = build(settings, nectar=bundle, log=lambda m: None, dbt_runner=_refuse_dbt)
        except _NotCurrent:
            settings.db_path.unlink()
            shutil.rmtree(state_dir(settings.db_path))
            shutil.rmtree(settings.build_dir / "dbt")
        else:
            assert result.mode == "current" and result.data_origin == "simulation"
            return settings, result
    result = build(settings, log=lambda m: None)
    assert result.data_origin == "simulation"
    return settings, result


def _make_build_bundle(settings: Settings) -> Path | None:
    """`make build`'s simulated bundle when it is, file for file, the one this session generates
    (raw tables record the path they were read from, so only a build on that path can find
    `make build`'s warehouse current)."""
    ours = default_nectar_bundle(settings, log=lambda m: None)
    theirs = REPO_ROOT / "build" / ours.name
    files = sorted(p.relative_to(ours) for p in ours.rglob("*") if p.is_file())
    same = sorted(p.relative_to(theirs) for p in theirs.rglob("*") if p.is_file()) == files
    if same and all(sha256_file(ours / f) == sha256_file(theirs / f) for f in files):
        return theirs
    return None


class _NotCurrent(Exception):
    """The build found `make build`'s warehouse out of date (it wanted dbt)."""


def _refuse_dbt(*args, **kwargs):
    raise _NotCurrent


def _copy_make_build(settings: Settings) -> bool:
    """Start the session's default warehouse from `make build`'s, when there is one younger than
    KEEP_HOURS whose last build was a full, successful build on the simulation whose dbt
    artifacts are still those of that build: its file, state and dbt run results are copied in
    (the tests read dbt's run results). Whether it is current (same code, data, settings,
    D-MPNN registry and library versions) is then the build's own decision
    (:func:`_default_build`). Not with TASTEBENCH_TEST_CACHE or TASTEBENCH_TEST_KEEP_BUILDS=0,
    which ask for a cold run."""
    home = REPO_ROOT / "build"
    db, target = home / "tastebench.duckdb", home / "dbt" / "target"
    record_path = build_record_path(db)
    if not KEEP_BUILDS or home != SHARED_CACHE or not record_path.is_file():
        return False
    record = json.loads(record_path.read_text())
    started, finished = (datetime.fromisoformat(record.get(k) or "1970-01-01T00:00:00+00:00")
                         for k in ("started_at", "finished_at"))  # fmt: skip
    results = target / "run_results.json"
    usable = (
        record.get("result") == "success"
        and record.get("data_origin") == "simulation"
        and (record.get("rebuilt") or {}).get("mode") == "full"
        and not record["rebuilt"].get("selection")
        and (datetime.now(UTC) - finished).total_seconds() < KEEP_HOURS * 3600
        and results.is_file()
        and started.timestamp() <= results.stat().st_mtime <= finished.timestamp()
        and state_dir(db).is_dir()
    )
    if not usable:
        return False
    settings.db_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(db, settings.db_path)  # modification time kept: the state recognises the file
    shutil.copytree(state_dir(db), state_dir(settings.db_path), copy_function=shutil.copy2)
    copied = settings.build_dir / "dbt" / "target"
    copied.mkdir(parents=True)
    for name in ("run_results.json", "manifest.json"):
        shutil.copy2(target / name, copied / name)
    return True


@pytest.fixture(scope="session")
def fixture_dbt_docs(tmp_path_factory, fixture_warehouse) -> tuple[Path, str]:
    """`tastebench docs --out` on the fixture warehouse, run once per test run as its users run
    it (a separate process; a minute of dbt): the page and the command's output."""
    return built_once(tmp_path_factory, "fixture_dbt_docs", partial(_docs, fixture_warehouse[0]))


def _docs(settings: Settings, root: Path) -> tuple[Path, str]:
    page = root / "dbt_docs.html"
    cmd = [sys.executable, "-m", "warehouse.cli", "docs", "--db", str(settings.db_path)]
    done = subprocess.run(
        [*cmd, "--out", str(page)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": "1000"},
    )
    assert done.returncode == 0, done.stderr
    return page, done.stdout + done.stderr


@pytest.fixture(scope="session")
def default_release(tmp_path_factory, default_warehouse) -> tuple[Path, Path]:
    """`tastebench release` of the default warehouse, once per test run: the public and the gated
    folder. A test that changes a file works on a copy."""
    return built_once(tmp_path_factory, "default_release", partial(_release, default_warehouse[0]))


def _release(settings: Settings, root: Path) -> tuple[Path, Path]:
    out, gated = root / "release", root / "gated"
    args = ["release", str(out), "--db", str(settings.db_path), "--gated-dir", str(gated)]
    done = CliRunner().invoke(app, args)
    assert done.exit_code == 0, (done.output, done.exception)
    return out, gated
