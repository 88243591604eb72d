"""``tastebench sql``: one read-only query against the warehouse, printed as a table, CSV, JSON or
Markdown. The warehouse is opened read-only (readers never block the build's atomic swap); a
failing query is a :class:`~warehouse.errors.WarehouseError` with DuckDB's own message and a fix,
never a traceback.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl

from warehouse.errors import WarehouseError

LIST_RELATIONS = (
    'tastebench sql "select table_schema, table_name from information_schema.tables order by 1, 2"'
)


def run_query(db_path: Path, query: str, *, limit: int | None = None) -> pl.DataFrame | None:
    """The result of ``query`` (None for a statement without a result), at most ``limit`` rows."""
    import duckdb

    if not Path(db_path).exists():
        raise WarehouseError(
            f"no warehouse at {db_path}. Fix: run `make build` (or `tastebench build`) first, or "
            "pass --db with the path of a built warehouse."
        )
    try:
        con = duckdb.connect(str(db_path), read_only=True)
    except duckdb.Error as exc:
        raise WarehouseError(
            f"cannot open {db_path} read-only ({_first_line(exc)}). Fix: pass the path of a "
            "warehouse built by `tastebench build`."
        ) from exc
    try:
        rel = con.sql(query)
        if rel is None:
            return None
        if limit is not None:
            rel = rel.limit(limit)
        return rel.pl()
    except duckdb.Error as exc:
        raise WarehouseError(
            f"the query failed: {_first_line(exc).rstrip('.')}. Fix: correct the SQL; the "
            f"warehouse is read-only, and {LIST_RELATIONS} lists its relations."
        ) from exc
    finally:
        con.close()


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    return str(value)


def format_result(frame: pl.DataFrame, output_format: str):
    """``table``: a rich Table; ``csv``/``json``/``markdown``: the text to print (complete, never
    cut: the caller writes it to stdout as is)."""
    if output_format == "table":
        from rich.table import Table

        table = Table(*frame.columns)
        for row in frame.iter_rows():
            table.add_row(*[_cell(v) for v in row])
        return table
    if output_format == "csv":
        text = _stringify_nested(frame).write_csv()
        return text if text.endswith("\n") else text + "\n"
    if output_format == "json":
        rows = [{k: _json_value(v) for k, v in row.items()} for row in frame.to_dicts()]
        return json.dumps(rows, indent=1, default=str, allow_nan=False) + "\n"
    if output_format == "markdown":
        header = "| " + " | ".join(frame.columns) + " |"
        rule = "|" + "|".join(" --- " for _ in frame.columns) + "|"
        body = [
            "| " + " | ".join(_cell(v).replace("|", "\\|") for v in row) + " |"
            for row in frame.iter_rows()
        ]
        return "\n".join([header, rule, *body]) + "\n"
    raise WarehouseError(f"unknown format {output_format!r}")


def _json_value(value: object) -> object:
    """JSON has no NaN or infinity: they become null (as DuckDB's own JSON export does)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _json_value(v) for k, v in value.items()}
    return value


def _stringify_nested(frame: pl.DataFrame) -> pl.DataFrame:
    """CSV has no lists or structs: such columns are written as JSON text."""
    nested = [c for c, t in frame.schema.items() if t.is_nested()]
    if not nested:
        return frame
    return frame.with_columns(
        pl.col(c).map_elements(lambda v: json.dumps(v, default=str), return_dtype=pl.String)
        for c in nested
    )
