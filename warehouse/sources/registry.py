"""The pinned dataset registry (``warehouse/sources/datasets.toml``) and its resolver.

Each public dataset is pinned by upstream URL at a fixed commit, sha256 and row count. ``resolve``
returns a local path: from the mirror directory when one is configured (``TASTEBENCH_DATA_MIRROR``),
otherwise downloaded from upstream with pooch into ``data/cache``. A hash mismatch is always an
error; there is never a silent fallback from a bad mirror file to upstream or the other way round.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from warehouse.config import Settings
from warehouse.errors import DatasetError, DatasetHashError
from warehouse.files import sha256_file

REGISTRY_FILE = Path(__file__).resolve().parent / "datasets.toml"


@dataclass(frozen=True)
class Dataset:
    key: str
    path: str
    url: str
    sha256: str
    source: str
    license: str
    rows: int | None = None
    kind: str = "file"
    optional: bool = False
    class_counts: dict[str, int] = field(default_factory=dict)


@lru_cache(maxsize=1)
def load_registry(registry_file: Path = REGISTRY_FILE) -> dict[str, Dataset]:
    raw = tomllib.loads(registry_file.read_text())["datasets"]
    return {key: Dataset(key=key, **spec) for key, spec in raw.items()}


def get(key: str) -> Dataset:
    registry = load_registry()
    if key not in registry:
        raise DatasetError(f"unknown dataset '{key}': registered are {', '.join(sorted(registry))}")
    return registry[key]


def sha256_tree(root: Path) -> tuple[str, int]:
    """Folder digest: sha256 over sorted ``<relpath>\\t<sha256>\\n`` lines, and the file count."""
    lines = sorted(
        f"{p.relative_to(root).as_posix()}\t{sha256_file(p)}\n"
        for p in root.rglob("*")
        if p.is_file()
    )
    return hashlib.sha256("".join(lines).encode()).hexdigest(), len(lines)


def verify(dataset: Dataset, path: Path) -> Path:
    """Check a local copy against the pin; raise DatasetHashError naming the file on mismatch."""
    if dataset.kind == "tree":
        actual, n_files = sha256_tree(path)
        if dataset.rows is not None and n_files != dataset.rows:
            raise DatasetHashError(
                f"{path}: dataset '{dataset.key}' has {n_files} files, the registry pins "
                f"{dataset.rows}. Fix: restore the folder from its source (see PROVENANCE.md)."
            )
    else:
        actual = sha256_file(path)
    if actual != dataset.sha256:
        raise DatasetHashError(
            f"{path}: sha256 {actual} does not match the registry pin {dataset.sha256} for "
            f"dataset '{dataset.key}'. The file was changed or is a different version. Fix: "
            "replace it with the pinned file (see its PROVENANCE.md), or, if the new version is "
            "intended, update warehouse/sources/datasets.toml in a reviewed commit."
        )
    return path


def resolve(key: str, settings: Settings) -> Path:
    """Local, verified path of a registered dataset (mirror first, else upstream via pooch)."""
    dataset = get(key)
    if settings.mirror is not None:
        local = settings.mirror / dataset.path
        if not local.exists():
            raise DatasetError(
                f"{local}: dataset '{dataset.key}' is missing from the mirror {settings.mirror}. "
                "Fix: copy it there (same relative path) or unset TASTEBENCH_DATA_MIRROR to "
                "download it from upstream."
            )
        return verify(dataset, local)
    if not dataset.url:
        raise DatasetError(
            f"dataset '{dataset.key}' has no upstream copy (it is derived for this project). "
            "Fix: set TASTEBENCH_DATA_MIRROR to a folder in the ../shared/data layout."
        )
    import pooch  # heavy-ish import, only when downloading

    target_dir = settings.cache_dir / Path(dataset.path).parent
    try:
        fetched = pooch.retrieve(
            url=dataset.url,
            known_hash=f"sha256:{dataset.sha256}",
            fname=Path(dataset.path).name,
            path=target_dir,
            progressbar=False,
        )
    except ValueError as exc:  # pooch raises ValueError on a hash mismatch
        raise DatasetHashError(f"upstream {dataset.url} for dataset '{key}': {exc}") from exc
    except Exception as exc:  # network errors: say what to do instead
        raise DatasetError(
            f"could not download dataset '{key}' from {dataset.url}: {exc}. Fix: set "
            "TASTEBENCH_DATA_MIRROR to a local mirror in the ../shared/data layout."
        ) from exc
    return Path(fetched)
