"""Paths and settings, resolved from the environment with defaults under the repository."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
SEEDS_DIR = REPO_ROOT / "seeds"

ENV_MIRROR = "TASTEBENCH_DATA_MIRROR"
ENV_DB = "TASTEBENCH_DUCKDB_PATH"
ENV_NECTAR = "TASTEBENCH_NECTAR_BUNDLE"
ENV_FOODATLAS_V4 = "TASTEBENCH_FOODATLAS_V4"
ENV_BUILD_DIR = "TASTEBENCH_BUILD_DIR"

# Every run: no telemetry from dbt or Great Expectations.
QUIET_ENV = {
    "DO_NOT_TRACK": "1",
    "GX_ANALYTICS_ENABLED": "false",
    "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
}


def apply_quiet_env() -> None:
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)


@dataclass(frozen=True)
class Settings:
    build_dir: Path
    db_path: Path
    mirror: Path | None
    nectar_bundle: Path | None
    foodatlas_v4: Path | None

    @property
    def cache_dir(self) -> Path:
        """Where upstream downloads land (gitignored)."""
        return REPO_ROOT / "data" / "cache"

    @property
    def default_simulation_dir(self) -> Path:
        return self.build_dir / "nectar_simulated"


def _opt_path(name: str) -> Path | None:
    value = os.environ.get(name)
    return Path(value).expanduser().resolve() if value else None


def load_settings(**overrides: Path | None) -> Settings:
    """Settings from the environment; keyword overrides win (CLI options)."""
    build_dir = _opt_path(ENV_BUILD_DIR) or (REPO_ROOT / "build")
    values = {
        "build_dir": build_dir,
        "db_path": _opt_path(ENV_DB) or (build_dir / "tastebench.duckdb"),
        "mirror": _opt_path(ENV_MIRROR),
        "nectar_bundle": _opt_path(ENV_NECTAR),
        "foodatlas_v4": _opt_path(ENV_FOODATLAS_V4),
    }
    for key, value in overrides.items():
        if value is not None:
            values[key] = Path(value).expanduser().resolve()
    return Settings(**values)
