"""Shared pytest fixtures.

The public datasets are never committed: tests read them from the mirror directory named by
``TASTEBENCH_DATA_MIRROR`` (``.ci/run`` and the Makefile point it at ``../shared/data``).
"""

from __future__ import annotations

import os
import pickle
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from filelock import FileLock

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


def built_once(tmp_path_factory, name: str, make: Callable[[Path], T]) -> T:
    """What ``make(folder)`` returns, computed once per test run even under pytest-xdist.

    Session fixtures run once per xdist worker; a warehouse build is minutes, so the first worker
    to ask builds it in the run's shared temporary folder (under a file lock) and pickles the
    result; the others wait on the lock and read it. Without xdist this is a plain call. A build
    that fails leaves no result, so the next worker to ask builds again (and fails the same way).
    """
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, done = shared / name, shared / f"{name}.pickle"
    with FileLock(shared / f"{name}.lock"):
        if done.exists():
            return pickle.loads(done.read_bytes())
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir()
        value = make(folder)
        done.write_bytes(pickle.dumps(value))
        return value
