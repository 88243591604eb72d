"""Error types with messages that say what is wrong, where, and how to fix it."""

from __future__ import annotations

from pathlib import Path


class WarehouseError(Exception):
    """Base class: every error the CLI reports without a traceback."""


class DatasetError(WarehouseError):
    """A registered dataset could not be resolved (missing, unpinned, no upstream)."""


class DatasetHashError(DatasetError):
    """A dataset's sha256 differs from the registry pin."""


class DataValidationError(WarehouseError):
    """An input file violates its contract.

    The message always names the file, and the row and column where one applies, plus the fix.
    ``row`` is the 1-based line number in the file (the header is line 1).
    """

    def __init__(
        self,
        file: str,
        problem: str,
        fix: str,
        row: int | None = None,
        column: str | None = None,
    ) -> None:
        self.file, self.problem, self.fix, self.row, self.column = file, problem, fix, row, column
        where = [f"file {file}"]
        if row is not None:
            where.append(f"line {row}")
        if column is not None:
            where.append(f"column '{column}'")
        super().__init__(f"{', '.join(where)}: {problem}. Fix: {fix}")


def require_warehouse(
    db_path: str | Path, error: type[WarehouseError] = WarehouseError, or_else: str = ""
) -> Path:
    """``db_path`` as a Path when a warehouse file is there, else ``error`` saying how to get one
    (``or_else``: another way out, e.g. ``"score against the files' own gold with --gold file"``).
    Commands call it before any slow work (a dbt parse), so a wrong path fails at once."""
    path = Path(db_path)
    if not path.is_file():
        alternative = f", or {or_else}" if or_else else ""
        raise error(
            f"no warehouse at {path}. Fix: run `make build` (or `tastebench build`) first, or pass "
            f"--db with the path of a built warehouse{alternative}."
        )
    return path


class ResourceError(WarehouseError):
    """The machine ran out of something (disk space, memory): neither a bug nor bad input."""


_NO_SPACE = ("no space left on device", "disk quota exceeded", "not enough space on the disk")
_NO_MEMORY = ("out of memory", "cannot allocate memory")


def resource_error(exc: BaseException, path: object = None) -> ResourceError | None:
    """A :class:`ResourceError` naming what was being written when ``exc`` (or an exception it
    was raised from) is a full disk or an exhausted memory: an ``OSError`` with ``ENOSPC`` /
    ``EDQUOT`` / ``ENOMEM``, a ``MemoryError``, or a DuckDB error whose text says so (DuckDB
    reports a full disk as an ``IOException`` or a ``TransactionException`` on commit). None for
    anything else. ``path``: the file being written (an ``OSError``'s own filename wins)."""
    import errno

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        text = str(exc).lower()
        code = getattr(exc, "errno", None) if isinstance(exc, OSError) else None
        where = getattr(exc, "filename", None) or path
        target = f" while writing {where}" if where else ""
        if code in (errno.ENOSPC, errno.EDQUOT) or any(s in text for s in _NO_SPACE):
            return ResourceError(
                f"no space left on device{target}; free space or point TASTEBENCH_BUILD_DIR "
                "elsewhere (the previous warehouse, if any, was kept unchanged)."
            )
        if (
            isinstance(exc, MemoryError)
            or code == errno.ENOMEM
            or any(s in text for s in _NO_MEMORY)
        ):
            return ResourceError(
                f"out of memory{target}; close other programs or run on a machine with more "
                "memory (the previous warehouse, if any, was kept unchanged)."
            )
        exc = exc.__cause__ or exc.__context__
    return None
