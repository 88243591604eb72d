"""Fits are data: content addresses and the on-disk fit cache.

* ``config_hash`` = sha256 of the canonical JSON (sorted keys, no spaces, ASCII) of
  ``{"config": <model, feature set, protocol, preprocessing, model settings>, "versions":
  <numpy, scipy, scikit-learn, lightgbm, python, ranking algorithm version>}``;
* ``fit_id`` = sha256 of the canonical JSON of ``{"config_hash": ..., "training_rows":
  <Design.fingerprint of the rows and blocks the fit reads>}``.

A fit here is one *run* of a protocol (all LOOCV folds of one model and feature set; all 23,005
inner fits of a nested ensemble base): the folds of a LOOCV share all but one training row, so a
change to any row changes every fold and per-fold keys would never hit where the run key misses.

:class:`FitCache` stores ``<root>/<fit_id[:2]>/<fit_id>.npz`` (arrays) and ``<fit_id>.json``
(configuration, versions, sha256 of the npz, diagnostics). Both are written to a temporary file in
the same folder and moved into place with ``os.replace`` (npz first; the JSON, written last, marks
the fit complete). A read checks the sha256: an unreadable entry or a mismatch is logged once,
counted in ``<root>/recomputed.jsonl`` (:mod:`warehouse.files`) and read as a miss, so the fit is
recomputed and the entry overwritten: a cache is never a source of truth. The root is always
passed in by the caller; the library reads no environment variable.
"""

from __future__ import annotations

import hashlib
import io
import json
import platform
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from warehouse.files import atomic_write, record_recomputed, sha256_bytes

ALGORITHM_VERSION = "ranking-1"
"""Bump when the code changes any number a fit produces (part of every configuration hash)."""


def canonical_json(obj: object) -> str:
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    )


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def fit_record(
    model: str,
    feature_set: str,
    protocol: str,
    config: Mapping[str, object],
    config_hash: str,
    versions: Mapping[str, str],
    n_rows: int,
    data_origin: str,
    **extra: object,
) -> dict[str, object]:
    """The JSON record every fit stores beside its arrays (:meth:`FitCache.put`): what it is, its
    content address and inputs, plus ``extra`` diagnostics of its protocol."""
    return {
        "model": model,
        "feature_set": feature_set,
        "protocol": protocol,
        "config": config,
        "config_hash": config_hash,
        "versions": versions,
        "n_rows": n_rows,
        "data_origin": data_origin,
        **extra,
    }


def library_versions() -> dict[str, str]:
    """Versions of everything that can change a fitted number."""
    import lightgbm
    import scipy
    import sklearn

    return {
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "scikit-learn": sklearn.__version__,
        "lightgbm": lightgbm.__version__,
        "python": ".".join(platform.python_version_tuple()[:2]),
        "algorithm": ALGORITHM_VERSION,
    }


def config_hash(config: Mapping[str, object], versions: Mapping[str, str] | None = None) -> str:
    versions = library_versions() if versions is None else versions
    return sha256_text(canonical_json({"config": config, "versions": dict(versions)}))


def fit_id(cfg_hash: str, training_rows: str) -> str:
    return sha256_text(canonical_json({"config_hash": cfg_hash, "training_rows": training_rows}))


class FitCache:
    """Content-addressed store of fits under ``root`` (``None``: nothing is stored)."""

    def __init__(self, root: Path | str | None) -> None:
        self.root = Path(root) if root is not None else None
        self.reads = 0
        self.writes = 0

    def _paths(self, key: str) -> tuple[Path, Path]:
        assert self.root is not None
        folder = self.root / key[:2]
        return folder / f"{key}.npz", folder / f"{key}.json"

    def has(self, key: str) -> bool:
        return self.root is not None and self._paths(key)[1].exists()

    def get(self, key: str) -> tuple[dict[str, np.ndarray], dict[str, object]] | None:
        """(arrays, metadata) of a stored fit, or None when absent or failing its sha256 (the
        caller refits and :meth:`put` overwrites the entry)."""
        if self.root is None:
            return None
        npz, meta_path = self._paths(key)
        if not meta_path.exists():
            return None
        try:
            meta = json.loads(meta_path.read_text())
            data = npz.read_bytes()
        except (OSError, ValueError) as exc:
            record_recomputed(npz, f"unreadable ({exc})", self.root)
            return None
        if not isinstance(meta, dict) or sha256_bytes(data) != meta.get("arrays_sha256"):
            record_recomputed(npz, f"does not match the sha256 in {meta_path.name}", self.root)
            return None
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
        except (OSError, ValueError) as exc:  # matching bytes that are no npz: a foreign entry
            record_recomputed(npz, f"not an npz archive ({exc})", self.root)
            return None
        self.reads += 1
        return arrays, meta

    def put(self, key: str, arrays: Mapping[str, np.ndarray], meta: Mapping[str, object]) -> None:
        if self.root is None:
            return
        npz, meta_path = self._paths(key)
        npz.parent.mkdir(parents=True, exist_ok=True)
        buf = io.BytesIO()
        np.savez(buf, **{k: np.asarray(v) for k, v in arrays.items()})
        data = buf.getvalue()
        record = dict(meta)
        record["fit_id"] = key
        record["arrays_sha256"] = sha256_bytes(data)
        atomic_write(npz, data)
        atomic_write(meta_path, (json.dumps(record, sort_keys=True, indent=1) + "\n").encode())
        self.writes += 1
