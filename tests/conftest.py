"""Shared pytest fixtures.

The public datasets are never committed: tests read them from the mirror directory named by
``TASTEBENCH_DATA_MIRROR`` (``.ci/run`` and the Makefile point it at ``../shared/data``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
)

# The food-ranking fit cache is content-addressed (training rows, configuration, library versions)
# and every read is checked against its sha256: a fit is only ever read for identical inputs, so
# the suite's builds share the project's cache (the one `make build` fills) instead of refitting
# the default models cold in every build folder. An unrelated or planted file there is never read;
# a corrupted one is logged and refitted. TASTEBENCH_TEST_RANKING_CACHE points it elsewhere.
SHARED_RANKING_CACHE = Path(
    os.environ.get("TASTEBENCH_TEST_RANKING_CACHE") or REPO_ROOT / "build" / "fits" / "ranking"
)


@pytest.fixture(scope="session", autouse=True)
def isolated_build_dir(tmp_path_factory) -> Path:
    """Every test runs against a build folder of its own session, never the developer's
    ``build/`` (its warehouse, fits and reports): results must not depend on what sits there."""
    build_dir = tmp_path_factory.mktemp("isolated_build")
    saved = {name: os.environ.pop(name, None) for name in _PATH_VARIABLES}
    os.environ["TASTEBENCH_BUILD_DIR"] = str(build_dir)
    os.environ["TASTEBENCH_RANKING_CACHE"] = str(SHARED_RANKING_CACHE.resolve())
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
