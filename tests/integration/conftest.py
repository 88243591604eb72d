"""Session-wide warehouses for the integration tests: each full build runs once per session.

* ``fixture_warehouse``: the hand-written NECTAR fixture bundle + the public mirror + a FoodAtlas
  v4 fixture in the official parquet layout.
* ``default_warehouse``: the default build (the calibrated simulation), as `make build` makes it;
  a copy of `make build`'s own when the build finds that one current (``make_build.py``).
* ``fixture_dbt_docs``: `tastebench docs` of a copy of the fixture warehouse (dbt's static page).
* ``default_release``: `tastebench release` of the default warehouse (public and gated folders).

Under pytest-xdist each is built by one worker and read by the others; each is kept between runs
while nothing it depends on changed (``built_once``, tests/conftest.py). Tests must not modify
these files (a kept build is restored from its snapshot each run); copy one first (tests of
failed builds may point `build` at the same settings: a failed build never touches the published
file).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import built_once
from tests.integration.make_build import reuse_make_build
from tests.unit.test_public_loaders import _write_v4_fixture
from warehouse.cli import app
from warehouse.config import Settings, load_settings
from warehouse.pipeline.record import BuildResult
from warehouse.pipeline.run import build

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
    result = reuse_make_build(settings) or build(settings, log=lambda m: None)
    assert result.data_origin == "simulation"
    return settings, result


@pytest.fixture(scope="session")
def fixture_dbt_docs(tmp_path_factory, fixture_warehouse) -> tuple[Path, str, dict]:
    """`tastebench docs --db <a copy of the fixture warehouse in another folder>`, run once per
    test run as its users run it (a separate process, from a third, empty working folder; a
    minute of dbt): the page it wrote (its default place, reports/ beside the file it read), the
    command's output and what the run left in the working folder."""
    make = partial(_docs, fixture_warehouse[0])
    return built_once(tmp_path_factory, "fixture_dbt_docs", make, code=[_write_v4_fixture])


def _docs(settings: Settings, root: Path) -> tuple[Path, str, dict]:
    home, cwd = root / "elsewhere_wh", root / "cwd"
    home.mkdir()
    cwd.mkdir()
    db = home / settings.db_path.name
    shutil.copyfile(settings.db_path, db)
    done = subprocess.run(
        [sys.executable, "-m", "warehouse.cli", "docs", "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "1000"},
    )
    assert done.returncode == 0, done.stderr
    left = {"db": db, "cwd_left": sorted(p.name for p in cwd.iterdir())}
    return home / "reports" / "dbt_docs.html", done.stdout + done.stderr, left


@pytest.fixture(scope="session")
def operations(fixture_warehouse, tmp_path_factory) -> dict:
    """The scenarios of test_operations.py (builds as real processes on copies of the fixture
    warehouse), run once and kept between runs while nothing they depend on changed: what its
    tests assert on is what these processes did; test_orchestrate.py reads the Dagster job run of
    the ``killed`` scenario."""
    from tests.integration.test_operations import _operations

    make = partial(_operations, fixture_warehouse[0])
    return built_once(tmp_path_factory, "operations", make, code=[_write_v4_fixture])


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
