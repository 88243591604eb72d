"""Content-addressed vector cache: one ``.npy`` file per (content hash, encoder, version).

The caller passes the cache directory (the build passes ``<build_dir>/features/cache``); the
library never picks one itself. A vector is written once, atomically (temporary file, then
``os.replace``), and read back byte for byte: ``np.save`` / ``np.load`` round-trip the dtype
and bytes exactly, so a cache hit returns the identical vector the encoder produced.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import numpy as np

from warehouse.features.block import FeatureError

_SAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class VectorCache:
    """Vectors of one encoder and version under ``<root>/<encoder>/<version>/<key[:2]>/``."""

    def __init__(self, root: Path | str, encoder: str, version: str) -> None:
        if root is None or str(root) == "":
            raise FeatureError(
                "feature cache: no cache directory given. Fix: pass cache_dir "
                "(the build uses <build_dir>/features/cache)"
            )
        self.dir = Path(root) / _SAFE.sub("_", encoder) / _SAFE.sub("_", version)

    def path(self, key: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{64}", key):
            raise FeatureError(f"feature cache: key {key!r} is not a sha256 hex digest")
        return self.dir / key[:2] / f"{key}.npy"

    def get(self, key: str) -> np.ndarray | None:
        path = self.path(key)
        if not path.exists():
            return None
        try:
            return np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None  # a torn or foreign file is recomputed and overwritten

    def put(self, key: str, vector: np.ndarray) -> None:
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.stem}.{os.getpid()}.tmp.npy")
        np.save(tmp, np.ascontiguousarray(vector), allow_pickle=False)
        os.replace(tmp, path)
