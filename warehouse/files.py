"""File helpers shared by every layer: sha256 of a file, atomic writes, checksum sidecars, and the
ledger of cache entries that failed their checksum and were recomputed.

A content-addressed cache entry ``<entry>`` is stored with a sidecar ``<entry>.sha256`` holding
the sha256 of its bytes (written after the entry, so a sidecar marks a complete entry). A read
calls :func:`verified`: an entry whose bytes do not match its sidecar (or that has none) is
reported through :func:`record_recomputed` (logged once, one line appended to
``<cache root>/recomputed.jsonl``) and the caller recomputes and overwrites it: a cache is never
a source of truth. The build counts the ledger lines its run appended (docs/operations.md).

Content-addressed frames (:func:`cached_frame`, :func:`cached_mart`): what a dbt Python model
computes from its input frames alone (RDKit featurization, 10,000-resample bootstraps) is stored
once per content as ``<root>/frames/<name>/<key>.parquet`` and read back by every later build,
the key being the sha256 of the inputs, the code and the library versions.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import logging
import os
import secrets
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator
from functools import cache
from importlib import metadata
from pathlib import Path

import polars as pl

SIDECAR_SUFFIX = ".sha256"
LEDGER_NAME = "recomputed.jsonl"

log = logging.getLogger("warehouse.cache")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file's bytes, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def atomic_write(path: Path, write: Callable[[Path], object] | bytes, *, mode: int = 0o600) -> None:
    """Write ``path`` all-or-nothing: into a temporary file in the same folder (``write(tmp)``, or
    the given bytes), flushed to disk, then ``os.replace``-d into place. A failure (a full disk)
    leaves the previous file, if any, untouched and no temporary file behind. The file is created
    with ``mode`` less the umask: 0600 by default (caches, gated files); ``0o666`` gives what a
    plain ``open(path, "w")`` would."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        if isinstance(write, bytes):
            with os.fdopen(fd, "wb") as fh:
                fh.write(write)
                fh.flush()
                os.fsync(fh.fileno())
        else:
            os.close(fd)
            write(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_text(path: Path, text: str, *, mode: int = 0o666) -> Path:
    """:func:`atomic_write` of UTF-8 text, by default with the permissions of a plain
    ``Path.write_text`` (0666 less the umask); return ``path``."""
    atomic_write(path, text.encode("utf-8"), mode=mode)
    return Path(path)


@contextlib.contextmanager
def atomic_dir(out_dir: Path, *, replace_nonempty: bool = False) -> Iterator[Path]:
    """Build the folder ``out_dir`` all-or-nothing: yield a new temporary sibling folder to fill;
    when the block succeeds, the previous ``out_dir`` (if any) is removed and the temporary folder
    renamed into place; when it fails, the temporary folder is removed and ``out_dir`` untouched.
    The previous folder must be empty unless ``replace_nonempty``."""
    out_dir = Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.parent / f".{out_dir.name}.tmp-{secrets.token_hex(4)}"
    tmp.mkdir()
    try:
        yield tmp
        if out_dir.exists():
            if replace_nonempty:
                shutil.rmtree(out_dir)
            else:
                out_dir.rmdir()
        tmp.rename(out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def sidecar(path: Path) -> Path:
    return Path(path).with_name(Path(path).name + SIDECAR_SUFFIX)


def write_checksum(path: Path) -> str:
    """Write ``<path>.sha256`` with the sha256 of ``path``; return the digest."""
    digest = sha256_file(path)
    atomic_write(sidecar(path), f"{digest}  {Path(path).name}\n".encode())
    return digest


def checksum_problem(path: Path) -> str | None:
    """Why ``path`` fails its sidecar check (None when its bytes match ``<path>.sha256``)."""
    try:
        recorded = sidecar(path).read_text(encoding="ascii").split()
    except (OSError, UnicodeDecodeError):
        return f"no readable checksum sidecar {sidecar(path).name}"
    try:
        actual = sha256_file(path)
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    if not recorded or recorded[0] != actual:
        return f"sha256 {actual[:12]}… differs from the recorded {(recorded or ['none'])[0][:12]}…"
    return None


def verified(path: Path, ledger_root: Path | None) -> bool:
    """True when the cache entry ``path`` exists and matches its sidecar. An entry that exists but
    fails the check is recorded (:func:`record_recomputed`) and False is returned: the caller
    recomputes it. An entry without a sidecar (written before sidecars existed, or torn between
    the two writes) is a plain miss: recomputed, not counted."""
    if not Path(path).exists() or not sidecar(path).exists():
        return False
    problem = checksum_problem(path)
    if problem is None:
        return True
    record_recomputed(path, problem, ledger_root)
    return False


_logged: set[str] = set()


def record_recomputed(entry: Path, problem: str, ledger_root: Path | None) -> None:
    """Log (once per entry and process) that a cache entry is recomputed, and append one line to
    ``<ledger_root>/recomputed.jsonl`` (what the build summary counts)."""
    if str(entry) not in _logged:
        _logged.add(str(entry))
        log.warning("cache entry %s failed its checksum (%s): recomputing it", entry, problem)
    if ledger_root is None:
        return
    from datetime import UTC, datetime

    line = {"entry": str(entry), "problem": problem, "at": datetime.now(UTC).isoformat()}
    try:
        Path(ledger_root).mkdir(parents=True, exist_ok=True)
        with open(Path(ledger_root) / LEDGER_NAME, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, sort_keys=True) + "\n")
    except OSError as exc:  # the ledger only counts; failing to write it must not fail a build
        log.warning("could not append to the cache ledger in %s: %s", ledger_root, exc)


def ledger_sizes(roots: list[Path]) -> dict[Path, int]:
    """Byte size of each root's ledger now (0 when absent): the mark :func:`recomputed_since`
    counts from."""
    out = {}
    for root in roots:
        try:
            out[Path(root)] = (Path(root) / LEDGER_NAME).stat().st_size
        except OSError:
            out[Path(root)] = 0
    return out


def recomputed_since(marks: dict[Path, int]) -> list[dict]:
    """The ledger lines appended after ``marks`` (:func:`ledger_sizes`), over every root."""
    out = []
    for root, offset in marks.items():
        try:
            with open(Path(root) / LEDGER_NAME, "rb") as fh:
                fh.seek(offset)
                tail = fh.read().decode("utf-8", errors="replace")
        except OSError:
            continue
        for line in tail.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
    return out


# ------------------------------------------------------------------ content-addressed frames

# The libraries whose versions can change what a cached mart holds (numbers, parsing, types).
FRAME_LIBRARIES = ("numpy", "scipy", "polars", "pyarrow", "scikit-learn", "rdkit")


def frame_key(
    name: str, frames: Iterable[pl.DataFrame], code: Iterable[object], *extra: str
) -> str:
    """sha256 of ``name``, each frame's Arrow IPC bytes (one chunk, uncompressed: the same data
    gives the same bytes), the source of each function or module in ``code`` and ``extra``
    strings (versions, parameters)."""
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
    """The frame stored under ``key`` in ``<root>/frames/<name>/``, or ``compute()`` stored there
    and returned. Parquet round-trips polars' types and values exactly, so a hit returns the frame
    the computation returned; an entry failing its checksum is recorded and recomputed."""
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


@cache
def code_digest() -> str:
    """sha256 of every ``.py`` file of the ``warehouse`` package (path and bytes, sorted by path)
    and of ``dbt_project.yml`` beside it (its ``vars:`` are library constants): any edit to the
    code is a miss of every :func:`cached_mart` entry. Computed once per process."""
    package = Path(__file__).resolve().parent
    h = hashlib.sha256()
    files = sorted(package.rglob("*.py")) + [package.parent / "dbt_project.yml"]
    for path in files:
        if path.is_file():
            h.update(str(path.relative_to(package.parent)).encode() + b"\0")
            h.update(path.read_bytes() + b"\0")
    return h.hexdigest()


@cache
def library_versions() -> str:
    """Python's and :data:`FRAME_LIBRARIES`' versions, one string (``absent`` for one that is
    not installed)."""
    out = [f"python={sys.version_info[:3]}"]
    for dist in FRAME_LIBRARIES:
        try:
            out.append(f"{dist}={metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(f"{dist}=absent")
    return ";".join(out)


def cached_mart(
    root: Path, compute: Callable[..., pl.DataFrame], *inputs: pl.DataFrame, **params: object
) -> pl.DataFrame:
    """``compute(*inputs, **params)``, a pure function of its arguments, stored once per content
    under ``<root>/frames/<compute's name>/``: the key is the inputs' bytes, the same ``params``,
    :func:`code_digest` and :func:`library_versions`, so a build whose inputs, code and libraries
    are the same reads back the identical frame instead of recomputing it."""
    name = compute.__name__
    extra = json.dumps(params, sort_keys=True, default=str)
    key = frame_key(name, inputs, (), code_digest(), library_versions(), extra)
    return cached_frame(root, name, key, lambda: compute(*inputs, **params))
