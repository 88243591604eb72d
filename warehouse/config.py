"""Paths and settings, resolved from the environment with defaults under the repository."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from warehouse.errors import WarehouseError

PACKAGE_DIR = Path(__file__).resolve().parent
ENV_PROJECT_DIR = "TASTEBENCH_PROJECT_DIR"
# The dbt project (dbt_project.yml, models/, seeds/, python_models/, expectations/): the folder
# TASTEBENCH_PROJECT_DIR names, else the source checkout the package sits in (an editable install
# or a run from the checkout). A regular install has no project beside the package: see
# project_dir().
REPO_ROOT = (
    Path(os.environ[ENV_PROJECT_DIR]).expanduser().resolve()
    if os.environ.get(ENV_PROJECT_DIR)
    else PACKAGE_DIR.parent
)
SEEDS_DIR = REPO_ROOT / "seeds"

ENV_MIRROR = "TASTEBENCH_DATA_MIRROR"
ENV_DB = "TASTEBENCH_DUCKDB_PATH"
ENV_NECTAR = "TASTEBENCH_NECTAR_BUNDLE"
ENV_FOODATLAS_V4 = "TASTEBENCH_FOODATLAS_V4"
ENV_BUILD_DIR = "TASTEBENCH_BUILD_DIR"
ENV_FITS_DIR = "TASTEBENCH_FITS_DIR"
ENV_DMPNN_DIR = "TASTEBENCH_DMPNN_DIR"
ENV_RANKING_CACHE = "TASTEBENCH_RANKING_CACHE"
ENV_FEATURES_CACHE = "TASTEBENCH_FEATURES_CACHE"

# Every run: no telemetry from dbt or Great Expectations.
QUIET_ENV = {
    "DO_NOT_TRACK": "1",
    "GX_ANALYTICS_ENABLED": "false",
    "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
}


def project_dir() -> Path:
    """The dbt project folder (:data:`REPO_ROOT`), or an error naming the fix when it holds no
    ``dbt_project.yml`` (a regular, non-editable install without TASTEBENCH_PROJECT_DIR)."""
    if not (REPO_ROOT / "dbt_project.yml").is_file():
        where = (
            f"{ENV_PROJECT_DIR} names {REPO_ROOT}, which"
            if os.environ.get(ENV_PROJECT_DIR)
            else f"this installation has no source checkout beside the package: {REPO_ROOT}"
        )
        raise WarehouseError(
            f"no dbt project found: {where} has no dbt_project.yml. Fix: set {ENV_PROJECT_DIR} "
            "to the source checkout (the folder with dbt_project.yml), or install from the "
            "checkout with `pip install -e .`."
        )
    return REPO_ROOT


@cache
def project_var(name: str) -> object:
    """A ``vars:`` value of ``dbt_project.yml``: the one place a constant shared by the SQL models,
    the Python library and the GX suites is set (e.g. ``tie_tolerance``)."""
    import yaml

    values = yaml.safe_load((project_dir() / "dbt_project.yml").read_text(encoding="utf-8"))
    values = values["vars"]
    if name not in values:
        raise KeyError(f"dbt_project.yml has no var {name!r}")
    return values[name]


def apply_quiet_env() -> None:
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)


@contextmanager
def environment(values: dict[str, str | None]) -> Iterator[None]:
    """Set environment variables for the block (e.g. for a child process or library started in
    it), a ``None`` value unsets one; on leaving, each is back to its earlier value, or unset
    when it had none."""
    saved = {k: os.environ.get(k) for k in values}
    for key, value in values.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@dataclass(frozen=True)
class Settings:
    """Where everything lives. ``fits_dir`` is the content-addressed fit store (default
    ``<build_dir>/fits``), ``dmpnn_dir`` the D-MPNN registry of ``tastebench train molecular``
    (default ``<fits_dir>/dmpnn``): both follow the build folder, so a build (or a test) with its
    own ``build_dir`` never sees fits that sit in another one. ``ranking_cache_dir`` (default
    ``<fits_dir>/ranking``) is the food-ranking models' fit cache: content-addressed by training
    rows, configuration and library versions, every read checked against its sha256, so several
    builds may share one (the test suite does) and a fit is only ever read for identical inputs."""

    build_dir: Path
    db_path: Path
    mirror: Path | None
    nectar_bundle: Path | None
    foodatlas_v4: Path | None
    fits_dir: Path
    dmpnn_dir: Path
    ranking_cache_dir: Path
    features_cache_dir: Path

    @property
    def cache_dir(self) -> Path:
        """Where upstream downloads land (gitignored)."""
        return REPO_ROOT / "data" / "cache"

    @property
    def default_simulation_dir(self) -> Path:
        return self.build_dir / "nectar_simulated"

    @property
    def cache_roots(self) -> list[Path]:
        """Every content-addressed cache's root, each with its ``recomputed.jsonl`` ledger of
        entries that failed their checksum (:mod:`warehouse.files`): the feature vectors, the
        molecular fit store (with the D-MPNN embeddings) and the food-ranking fit cache."""
        roots = [self.features_cache_dir, self.fits_dir, self.ranking_cache_dir]
        return list(dict.fromkeys(roots))

    def as_record(self) -> dict[str, str | None]:
        """Every setting by name, paths as strings (what a build records)."""
        return {
            "build_dir": str(self.build_dir),
            "db_path": str(self.db_path),
            "mirror": None if self.mirror is None else str(self.mirror),
            "nectar_bundle": None if self.nectar_bundle is None else str(self.nectar_bundle),
            "foodatlas_v4": None if self.foodatlas_v4 is None else str(self.foodatlas_v4),
            "fits_dir": str(self.fits_dir),
            "dmpnn_dir": str(self.dmpnn_dir),
            "ranking_cache_dir": str(self.ranking_cache_dir),
            "features_cache_dir": str(self.features_cache_dir),
        }

    def as_env(self) -> dict[str, str]:
        """These settings as the environment variables :func:`load_settings` reads: what a child
        process (dbt and its Python models) needs to resolve exactly the same paths."""
        env = {
            ENV_BUILD_DIR: str(self.build_dir),
            ENV_DB: str(self.db_path),
            ENV_FITS_DIR: str(self.fits_dir),
            ENV_DMPNN_DIR: str(self.dmpnn_dir),
            ENV_RANKING_CACHE: str(self.ranking_cache_dir),
            ENV_FEATURES_CACHE: str(self.features_cache_dir),
        }
        for name, value in (
            (ENV_MIRROR, self.mirror),
            (ENV_NECTAR, self.nectar_bundle),
            (ENV_FOODATLAS_V4, self.foodatlas_v4),
        ):
            if value is not None:
                env[name] = str(value)
        return env


BUILD_RECORD = "last_build.json"  # the record's name before it moved beside each warehouse


def reports_dir(db_path: Path) -> Path:
    """Where the HTML reports of a warehouse go by default: ``reports/`` beside its file
    (``build/reports`` for the default build), never the folder a command happens to run in."""
    return Path(db_path).expanduser().resolve().parent / "reports"


def build_record_path(db_path: Path) -> Path:
    """``<db>.last_build.json`` beside the warehouse file (like its lock): the last build of that
    file, whatever build folder or ``--db`` produced it."""
    db_path = Path(db_path)
    return db_path.with_name(f"{db_path.name}.{BUILD_RECORD}")


def read_build_record(db_path: Path, build_dir: Path | None = None) -> dict | None:
    """The last build record of the warehouse ``db_path`` (None when it has none). A record left
    in ``build_dir`` by an older version counts only when it names this very file."""
    import json

    db_path = Path(db_path)
    for path, must_name in ((build_record_path(db_path), False),
                            (build_dir and Path(build_dir) / BUILD_RECORD, True)):  # fmt: skip
        try:
            record = json.loads(path.read_text(encoding="utf-8")) if path else None
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and (not must_name or record.get("db_path") == str(db_path)):
            return record
    return None


def recorded_mirror(db_path: Path, build_dir: Path | None = None) -> Path | None:
    """The data mirror recorded by the last build of the warehouse ``db_path`` (None when there
    is none, or the folder it names is gone)."""
    record = read_build_record(db_path, build_dir) or {}
    mirror = (record.get("settings") or {}).get("mirror")
    return Path(mirror) if mirror and Path(mirror).is_dir() else None


def _opt_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value).expanduser().resolve() if value else None


def load_settings(**overrides: Path | None) -> Settings:
    """Settings from the environment; keyword overrides win (CLI options)."""
    values: dict[str, Path | None] = {
        "build_dir": _opt_path(ENV_BUILD_DIR),
        "db_path": _opt_path(ENV_DB),
        "mirror": _opt_path(ENV_MIRROR),
        "nectar_bundle": _opt_path(ENV_NECTAR),
        "foodatlas_v4": _opt_path(ENV_FOODATLAS_V4),
        "fits_dir": _opt_path(ENV_FITS_DIR),
        "dmpnn_dir": _opt_path(ENV_DMPNN_DIR),
        "ranking_cache_dir": _opt_path(ENV_RANKING_CACHE),
        "features_cache_dir": _opt_path(ENV_FEATURES_CACHE),
    }
    for key, value in overrides.items():
        if key not in values:
            raise TypeError(f"load_settings() got an unknown setting {key!r}")
        if value is not None:
            values[key] = Path(value).expanduser().resolve()
    # derived defaults follow the (possibly overridden) build folder
    build_dir = values["build_dir"] or REPO_ROOT / "build"
    fits_dir = values["fits_dir"] or build_dir / "fits"
    db_path = values["db_path"] or build_dir / "tastebench.duckdb"
    if values["mirror"] is None:
        # the data mirror the last build of this warehouse resolved its inputs from: a command run
        # later in a fresh shell finds the same files without exporting anything
        values["mirror"] = recorded_mirror(db_path, build_dir)
    return Settings(
        build_dir=build_dir,
        db_path=db_path,
        mirror=values["mirror"],
        nectar_bundle=values["nectar_bundle"],
        foodatlas_v4=values["foodatlas_v4"],
        fits_dir=fits_dir,
        dmpnn_dir=values["dmpnn_dir"] or fits_dir / "dmpnn",
        ranking_cache_dir=values["ranking_cache_dir"] or fits_dir / "ranking",
        features_cache_dir=values["features_cache_dir"] or build_dir / "features" / "cache",
    )
