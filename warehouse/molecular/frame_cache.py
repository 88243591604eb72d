"""Content-addressed frames in the molecular fit store: ``<root>/frames/<name>/<key>.parquet``.

What does not depend on NECTAR and costs seconds of RDKit on every build (the featurization of
every FartDB and FoodAtlas molecule) is computed once per content and read back after. The key
is the sha256 of the inputs, the RDKit version and the source code that computes the frame, so a
change to any of them is a miss. An entry is written atomically with a ``.sha256`` sidecar
(:mod:`warehouse.files`); one that fails its checksum is logged, counted in
``<root>/recomputed.jsonl`` and recomputed. Parquet round-trips polars' types and values exactly,
so a hit returns the frame the computation returned.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Iterable
from pathlib import Path

import polars as pl

from warehouse.files import atomic_write, verified, write_checksum


def frame_key(
    name: str, frames: Iterable[pl.DataFrame], code: Iterable[object], *extra: str
) -> str:
    """sha256 of ``name``, each frame's Arrow IPC bytes (one chunk, uncompressed: the same data
    gives the same bytes), the source of each function or module in ``code`` and ``extra``
    strings (versions)."""
    h = hashlib.sha256(name.encode() + b"\0")
    for frame in frames:
        h.update(frame.rechunk().write_ipc(None, compression="uncompressed").getvalue() + b"\0")
    for obj in code:
        h.update(inspect.getsource(obj).encode("utf-8") + b"\0")
    for text in extra:
        h.update(text.encode("utf-8") + b"\0")
    return h.hexdigest()


def cached_frame(
    root: Path, name: str, key: str, compute: Callable[[], pl.DataFrame]
) -> pl.DataFrame:
    """The frame stored under ``key``, or ``compute()`` stored there and returned."""
    path = Path(root) / "frames" / name / f"{key}.parquet"
    if verified(path, root):
        try:
            return pl.read_parquet(path)
        except (OSError, pl.exceptions.PolarsError):
            pass  # a torn or foreign file is recomputed and overwritten
    frame = compute()
    atomic_write(path, lambda tmp: frame.write_parquet(tmp))
    write_checksum(path)
    return frame
