"""Content-addressed vector cache: one ``.npy`` file per (content hash, encoder, version).

The caller passes the cache directory (the build passes ``<build_dir>/features/cache``); the
library never picks one itself. A vector is written once, atomically (temporary file, then
``os.replace``), with a ``<key>.npy.sha256`` sidecar (:mod:`warehouse.files`), and read back byte
for byte: ``np.save`` / ``np.load`` round-trip the dtype and bytes exactly, so a cache hit returns
the identical vector the encoder produced. An entry that fails its checksum is logged, counted in
``<cache_dir>/recomputed.jsonl`` and read as a miss, so the caller recomputes and overwrites it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np

from warehouse.features.block import FeatureError
from warehouse.files import atomic_write, sha256_file, verified, write_checksum

__all__ = ["VectorCache", "sha256_file", "sha256_text"]

_SAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class VectorCache:
    """Vectors of one encoder and version under ``<root>/<encoder>/<version>/<key[:2]>/``."""

    def __init__(self, root: Path | str, encoder: str, version: str) -> None:
        if root is None or str(root) == "":
            raise FeatureError(
                "feature cache: no cache directory given. Fix: pass cache_dir "
                "(the build uses <build_dir>/features/cache)"
            )
        self.root = Path(root)
        self.dir = self.root / _SAFE.sub("_", encoder) / _SAFE.sub("_", version)

    def path(self, key: str) -> Path:
        if not re.fullmatch(r"[0-9a-f]{64}", key):
            raise FeatureError(f"feature cache: key {key!r} is not a sha256 hex digest")
        return self.dir / key[:2] / f"{key}.npy"

    def get(self, key: str) -> np.ndarray | None:
        """The stored vector, or None (absent, no checksum, or failing it: recompute)."""
        path = self.path(key)
        if not verified(path, self.root):
            return None
        try:
            return np.load(path, allow_pickle=False)
        except (OSError, ValueError):
            return None  # a torn or foreign file is recomputed and overwritten

    def put(self, key: str, vector: np.ndarray) -> None:
        path = self.path(key)
        vector = np.ascontiguousarray(vector)
        atomic_write(path, lambda tmp: _save(tmp, vector))
        write_checksum(path)


def _save(tmp: Path, vector: np.ndarray) -> None:
    with open(tmp, "wb") as fh:  # a file object: np.save would append .npy to a bare name
        np.save(fh, vector, allow_pickle=False)
