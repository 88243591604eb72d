"""Shared pytest fixtures.

The public datasets are never committed: tests read them from the mirror directory named by
``TASTEBENCH_DATA_MIRROR`` (``.ci/run`` and the Makefile point it at ``../shared/data``).
"""

from __future__ import annotations

import base64
import contextlib
import functools
import hashlib
import importlib.metadata
import inspect
import json
import os
import pickle
import platform
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

import coverage
import pytest
from filelock import FileLock

from warehouse.files import sha256_file

T = TypeVar("T")

REPO_ROOT = Path(__file__).resolve().parents[1]


def _mirror_dir() -> Path:
    env = os.environ.get("TASTEBENCH_DATA_MIRROR")
    return Path(env).resolve() if env else (REPO_ROOT.parent / "shared" / "data").resolve()


_PATH_VARIABLES = (
    "TASTEBENCH_BUILD_DIR",
    "TASTEBENCH_DUCKDB_PATH",
    "TASTEBENCH_FITS_DIR",
    "TASTEBENCH_DMPNN_DIR",
    "TASTEBENCH_NECTAR_BUNDLE",
    "TASTEBENCH_RANKING_CACHE",
    "TASTEBENCH_FEATURES_CACHE",
)

# One content-addressed cache for the whole session, shared by every build the suite makes: the
# molecular fit store (fingerprint fits, featurization, embeddings), the food-ranking fit cache
# and the feature-vector cache. Each is keyed by its inputs (data, configuration, library
# versions) and verifies every entry on read (a corrupted one is logged and recomputed), so a
# build only ever reads what it would have computed itself; what does not depend on NECTAR
# (FartDB fits, text and image vectors) is computed once, not once per build. By default the
# suite shares the caches `make build` fills (a second `make test` is warm);
# TASTEBENCH_TEST_CACHE points them elsewhere (an empty folder: a cold run). The D-MPNN registry
# is not a cache (what is registered there changes the build's results): it stays in the
# session's own folder.
SHARED_CACHE = Path(os.environ.get("TASTEBENCH_TEST_CACHE") or REPO_ROOT / "build").resolve()
SHARED_FITS = SHARED_CACHE / "fits"
SHARED_RANKING_CACHE = Path(
    os.environ.get("TASTEBENCH_TEST_RANKING_CACHE") or SHARED_FITS / "ranking"
).resolve()
SHARED_FEATURES_CACHE = SHARED_CACHE / "features" / "cache"


@pytest.fixture(scope="session", autouse=True)
def isolated_build_dir(tmp_path_factory) -> Path:
    """Every test runs against a build folder of its own session, never the developer's
    ``build/`` (its warehouse, D-MPNN registry and reports): results must not depend on what sits
    there. Only the content-addressed caches above are shared."""
    build_dir = tmp_path_factory.mktemp("isolated_build")
    saved = {name: os.environ.pop(name, None) for name in _PATH_VARIABLES}
    os.environ["TASTEBENCH_BUILD_DIR"] = str(build_dir)
    os.environ["TASTEBENCH_FITS_DIR"] = str(SHARED_FITS)
    os.environ["TASTEBENCH_DMPNN_DIR"] = str(build_dir / "dmpnn")
    os.environ["TASTEBENCH_RANKING_CACHE"] = str(SHARED_RANKING_CACHE)
    os.environ["TASTEBENCH_FEATURES_CACHE"] = str(SHARED_FEATURES_CACHE)
    yield build_dir
    for name, value in saved.items():
        os.environ.pop(name, None)
        if value is not None:
            os.environ[name] = value


@pytest.fixture(scope="session")
def data_mirror() -> Path:
    """Root of the local data mirror (``../shared/data`` layout)."""
    path = _mirror_dir()
    if not path.is_dir():
        pytest.fail(f"data mirror {path} not found: set TASTEBENCH_DATA_MIRROR to ../shared/data")
    return path


@pytest.fixture(scope="session")
def public_dir(data_mirror: Path) -> Path:
    """The TasteBench public artifacts folder inside the mirror."""
    return data_mirror / "tastebench_public"


def built_once(
    tmp_path_factory, name: str, make: Callable[[Path], T], code: Sequence[Callable] = ()
) -> T:
    """What ``make(folder)`` returns, computed once per test run even under pytest-xdist, and
    kept between runs while nothing it depends on changed.

    Session fixtures run once per xdist worker; a warehouse build is a minute, so the first worker
    to ask builds it (under a file lock) and pickles the result; the others wait on the lock and
    read it. A build that fails leaves no result, so the next worker to ask builds again (and
    fails the same way). Between runs the build is kept (:func:`_kept`); ``code`` names the
    functions from other test modules that the build runs (their files join ``make``'s own in
    the key).
    """
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    done = shared / f"{name}.pickle"
    with FileLock(shared / f"{name}.lock"):
        if done.exists():
            return pickle.loads(done.read_bytes())
        if KEEP_BUILDS:
            value = _kept(name, make, [_source_file(f) for f in (make, *code)])
        else:
            folder = shared / name
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            value = make(folder)
        done.write_bytes(pickle.dumps(value))
        return value


# Session builds are kept between runs under <cache>/test-builds/<name>/<key>, the key a sha256 of
# everything that can change what they hold: every file git sees outside docs/, benchmarks/ and
# the test modules (the code, the dbt project, seeds, expectations, the fixtures and conftests),
# the test files whose code the build runs, every file of the data mirror, the installed
# distributions and their versions, the Python version and the TASTEBENCH_* settings. A run
# builds in <key>/live and copies it to <key>/snapshot with a manifest of file hashes; a later run
# with the same key checks the snapshot against its manifest (a changed or missing file: built
# again) and restores live from it, so whatever a test wrote beside a build is gone. A kept build
# expires after KEEP_HOURS: builds stamp the time they loaded each source and the freshness
# tests read those stamps. TASTEBENCH_TEST_KEEP_BUILDS=0 builds everything in the run's own
# folder; two runs at once in one checkout must not share a cache (TASTEBENCH_TEST_CACHE).
KEEP_BUILDS = os.environ.get("TASTEBENCH_TEST_KEEP_BUILDS", "1") != "0"
KEEP_HOURS = 20
TEST_BUILDS = SHARED_CACHE / "test-builds"
_NOT_KEYED = ("docs/", "benchmarks/")


def _kept(name: str, make: Callable[[Path], T], code: Sequence[Path]) -> T:
    key = _key(name, code)
    home = TEST_BUILDS / name
    entry = home / key
    live, snapshot, manifest = entry / "live", entry / "snapshot", entry / "manifest.pickle"
    home.mkdir(parents=True, exist_ok=True)
    with FileLock(TEST_BUILDS / f"{name}.lock"):
        if manifest.exists() and time.time() - manifest.stat().st_mtime < KEEP_HOURS * 3600:
            hashes, value, lines = pickle.loads(manifest.read_bytes())
            if _hashes(snapshot) == hashes:
                shutil.rmtree(live, ignore_errors=True)
                shutil.copytree(snapshot, live, symlinks=True)
                _replay(name, entry / "coverage", lines)
                return value
        for old in home.iterdir():
            shutil.rmtree(old, ignore_errors=True)
        live.mkdir(parents=True)
        with _measured(name, entry / "coverage") as lines:
            value = make(live)
        shutil.copytree(live, snapshot, symlinks=True)
        manifest.with_suffix(".tmp").write_bytes(pickle.dumps((_hashes(snapshot), value, lines)))
        manifest.with_suffix(".tmp").replace(manifest)
        return value


# A kept build's line coverage travels with it: a run that reuses the build counts the lines
# that making it ran, as a run that makes it does (measured by the same code: the key says so).
# In this process they are the lines recorded under a coverage context of the build's own; in
# the processes it starts (the CLI, dbt and its Python models) the data files those processes
# write, sent to the build's folder while it is made. A reused build adds the lines to this
# process's data and copies the files where the run's own are combined.
@contextlib.contextmanager
def _measured(name: str, folder: Path) -> Iterator[dict[str, list[int]]]:
    lines: dict[str, list[int]] = {}
    cov = coverage.Coverage.current()
    config = os.environ.get("COVERAGE_PROCESS_CONFIG")
    if cov is None or config is None:
        yield lines
        return
    folder.mkdir(parents=True, exist_ok=True)
    settings = json.loads(base64.b64decode(config))
    settings["data_file"] = str(folder / ".coverage")
    previous = cov.switch_context(f"kept:{name}")
    os.environ["COVERAGE_PROCESS_CONFIG"] = base64.b64encode(json.dumps(settings).encode()).decode()
    try:
        yield lines
    finally:
        os.environ["COVERAGE_PROCESS_CONFIG"] = config
        cov.switch_context(previous or "")
    data = cov.get_data()
    data.set_query_contexts([f"^{re.escape(f'kept:{name}')}$"])
    lines.update({f: sorted(data.lines(f) or []) for f in data.measured_files()})
    data.set_query_contexts(None)
    _replay(name, folder, {})


def _replay(name: str, folder: Path, lines: dict[str, list[int]]) -> None:
    cov = coverage.Coverage.current()
    if cov is None:
        return
    if lines:
        cov.get_data().add_lines({f: numbers for f, numbers in lines.items() if numbers})
    target = Path(cov.config.data_file).resolve()
    for part in sorted(folder.glob(".coverage.*")) if folder.is_dir() else []:
        shutil.copyfile(part, target.with_name(f"{target.name}.kept-{name}-{part.name[10:]}"))


def _hashes(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    files = sorted(p for p in folder.rglob("*") if p.is_file() and not p.is_symlink())
    return {str(p.relative_to(folder)): sha256_file(p) for p in files}


def _source_file(make: Callable) -> Path:
    func = make.func if isinstance(make, functools.partial) else make
    return Path(inspect.getsourcefile(func)).resolve()


def _key(name: str, code: Sequence[Path]) -> str:
    digest = hashlib.sha256(f"{name}\0{_project_key()}".encode())
    for path in sorted({Path(p).resolve() for p in code}):
        digest.update(f"{path.relative_to(REPO_ROOT)}\0{sha256_file(path)}\0".encode())
    return digest.hexdigest()[:20]


@functools.cache
def _project_key() -> str:
    """sha256 of what every kept build depends on (see the comment above ``KEEP_BUILDS``)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO_ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    digest = hashlib.sha256()
    for rel in sorted(r for r in listed if r and not r.startswith(_NOT_KEYED)):
        path = REPO_ROOT / rel
        test_module = rel.startswith("tests/") and path.name.startswith("test_")
        if path.is_file() and not test_module:
            digest.update(f"{rel}\0{sha256_file(path)}\0".encode())
    mirror = _mirror_dir()
    for path in sorted(p for p in mirror.rglob("*") if p.is_file()):
        digest.update(f"{path}\0{sha256_file(path)}\0".encode())
    dists = importlib.metadata.distributions()
    versions = sorted(f"{d.metadata['Name']}=={d.version}" for d in dists)
    settings = sorted(
        f"{k}={v}" for k, v in os.environ.items()
        if k.startswith("TASTEBENCH_") and k not in ("TASTEBENCH_BUILD_DIR", "TASTEBENCH_DMPNN_DIR")
    )  # fmt: skip
    for line in (*versions, *settings, sys.version, platform.machine()):
        digest.update(f"{line}\0".encode())
    return digest.hexdigest()


# Under pytest-xdist (--dist loadfile, --no-loadscope-reorder) test files go to the workers in
# collection order, the first two to the two workers, then each to the first worker free. The
# files below start the session builds, in an order that keeps both workers busy on a first run:
# the default (a copy of `make build`'s, seconds) and the fixture warehouse (a minute) first, then
# a planted build that starts from the default, then the operations scenarios on the fixture
# (two minutes; test_orchestrate.py's last test reads their Dagster job run), then the other
# planted build; a file that reads a build another worker is still making waits for it. Every
# other file keeps its place.
START_FILES = (
    "tests/integration/test_analysts.py",
    "tests/integration/test_build_fixture.py",
    "tests/integration/test_deidentification_target.py",
    "tests/integration/test_operations.py",
    "tests/integration/test_deidentification.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    first = {REPO_ROOT / name: rank for rank, name in enumerate(START_FILES)}
    items.sort(key=lambda item: first.get(item.path, len(first)))
