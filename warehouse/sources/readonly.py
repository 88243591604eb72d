"""The one way the CLI opens a warehouse for a user: truly read-only.

``read_only=True`` alone only keeps DuckDB from writing the database file: ``COPY ... TO``,
``EXPORT DATABASE``, ``read_text``/``read_csv``/``glob``, ``ATTACH`` and ``INSTALL``/``LOAD``
would still read and write the host's file system. :func:`connect_read_only` also disables
external access and locks the configuration (so no ``SET`` can turn it back on); the warehouse
file itself still opens, because DuckDB checks external access only for files a query names.
:func:`refusal` turns the errors these settings raise into one line that says what was refused
and why.
"""

from __future__ import annotations

from pathlib import Path

from warehouse.errors import WarehouseError, require_warehouse

# DuckDB settings of every connection opened for a user: external access off at connect; then
# the session settings below, then the configuration is locked (no SET, PRAGMA or RESET after).
READ_ONLY_CONFIG: dict[str, object] = {"enable_external_access": False}
SESSION_SETTINGS = ("SET enable_progress_bar = false", "SET lock_configuration = true")

# The leading keyword of a refused statement -> how the refusal names it.
_STATEMENT_NAMES = {
    "COPY": "COPY … TO/FROM",
    "EXPORT": "EXPORT DATABASE",
    "IMPORT": "IMPORT DATABASE",
    "ATTACH": "ATTACH",
    "INSTALL": "INSTALL",
    "FORCE": "FORCE INSTALL",
    "LOAD": "LOAD",
}


def connect_read_only(db_path: Path):
    """A DuckDB connection to ``db_path`` that can read the warehouse's relations and nothing
    else: no file outside it, no extension, no setting change. A missing or unreadable file is a
    :class:`WarehouseError` naming it."""
    import duckdb

    db_path = require_warehouse(db_path)
    try:
        con = duckdb.connect(str(db_path), read_only=True, config=dict(READ_ONLY_CONFIG))
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise WarehouseError(
            f"cannot open {db_path} read-only ({first}). Fix: pass the path of a warehouse built "
            "by `tastebench build`."
        ) from exc
    try:
        # a second connection in this process shares the first one's database instance: its
        # configuration is already locked (with external access off), and can't be set again
        if not con.execute("select current_setting('lock_configuration')").fetchall()[0][0]:
            for statement in SESSION_SETTINGS:
                con.execute(statement)
    except BaseException:
        con.close()
        raise
    return con


def refusal(exc: Exception, statement: str, who: str = "tastebench sql") -> str | None:
    """One line for an error the read-only settings raised (what was refused and why), or None
    when ``exc`` is an ordinary SQL error."""
    text = str(exc)
    keyword = (statement.strip().split(None, 1) or [""])[0].upper()
    if "configuration has been locked" in text:
        option = text.split('option "', 1)[1].split('"', 1)[0] if 'option "' in text else "?"
        what, why = f"{keyword} {option}", "the configuration is locked"
    elif keyword in ("INSTALL", "FORCE", "LOAD") or "external extensions" in text:
        what = _STATEMENT_NAMES.get(keyword, "LOAD")
        why = "extensions cannot be installed or loaded"
    elif "file system operations are disabled" in text:
        target = text.split('"', 2)[1] if text.count('"') >= 2 else "?"
        what = f"{_STATEMENT_NAMES.get(keyword, 'reading the file')} '{target}'"
        why = "file access is disabled"
    else:
        return None
    return (
        f"{who} is read-only: {what} was refused ({why}); it reads only the warehouse's own "
        "tables. Fix: query its relations (to save a result, use --format csv > FILE)."
    )
