"""Error types with messages that say what is wrong, where, and how to fix it."""

from __future__ import annotations


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
