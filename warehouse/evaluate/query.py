"""``tastebench sql``: read-only queries against the warehouse, printed as a table, CSV, JSON or
Markdown. The warehouse is opened through :func:`warehouse.sources.readonly.connect_read_only`
(no file, extension or setting outside the warehouse is reachable); a failing query is a
:class:`~warehouse.errors.WarehouseError` with DuckDB's whole message and a fix, never a traceback.
A table on a terminal shows the first rows and says how many there are; piped output and the
csv/json/markdown formats print every row.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from warehouse.errors import WarehouseError

SQL_FORMATS = ("table", "csv", "json", "markdown")
TERMINAL_ROWS = 50  # rows a table shows on a terminal unless --limit says otherwise
LIST_RELATIONS = (
    'tastebench sql "select table_schema, table_name from information_schema.tables order by 1, 2"'
)


@dataclass(frozen=True)
class QueryResult:
    frame: pl.DataFrame  # at most ``limit`` rows
    total: int  # rows the query returned


def read_sql(query: str | None, file: str | None) -> str:
    """The SQL to run: the argument, or the text of ``file`` (``-``: standard input)."""
    if (query is None) == (file is None):
        raise WarehouseError(
            "give the SQL either as the argument or with -f FILE (- for standard input), not "
            f'{"both" if query is not None else "neither"}. Fix: tastebench sql "select 1" or '
            "tastebench sql -f query.sql."
        )
    if file is None:
        return query
    if file == "-":
        return sys.stdin.read()
    try:
        return Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise WarehouseError(
            f"cannot read the SQL file {file} ({exc.__class__.__name__}: {exc}). Fix: pass the "
            "path of a readable UTF-8 text file, or - to read standard input."
        ) from exc


def run_query(db_path: Path, query: str, *, limit: int | None = None) -> QueryResult | None:
    """Run every statement of ``query``; the last one's result (None for a statement without
    one), at most ``limit`` rows kept and every row counted (streamed: a large result is never
    held whole)."""
    import duckdb

    from warehouse.sources.readonly import connect_read_only, refusal

    con = connect_read_only(db_path)
    try:
        statements = con.extract_statements(query)
        if not statements:
            raise WarehouseError(
                "no SQL statement to run (the query is empty or only comments). Fix: pass a "
                'query, e.g. tastebench sql "select * from marts.dim_categories limit 5".'
            )
        rel = None
        for statement in statements:
            try:
                rel = con.sql(statement.query)
            except duckdb.Error as exc:
                raise _query_error(exc, statement.query, refusal) from exc
        return None if rel is None else _collect(rel, limit)
    except duckdb.Error as exc:  # a parse error, or one raised while streaming the rows
        raise _query_error(exc, query, refusal) from exc
    finally:
        con.close()


def _collect(rel, limit: int | None) -> QueryResult:
    import pyarrow as pa

    kept, total = [], 0
    reader = rel.to_arrow_reader(batch_size=10_000)
    for batch in reader:
        if limit is None or total < limit:
            room = batch.num_rows if limit is None else limit - total
            kept.append(batch.slice(0, room))
        total += batch.num_rows
    frame = pl.from_arrow(pa.Table.from_batches(kept, schema=reader.schema))
    return QueryResult(frame=frame, total=total)


def _query_error(exc: Exception, statement: str, refusal) -> WarehouseError:
    line = refusal(exc, statement)
    if line is not None:
        return WarehouseError(line)
    text = str(exc).strip() or type(exc).__name__
    return WarehouseError(
        f"the query failed: {text}\nFix: correct the SQL; the warehouse is read-only, and "
        f"{LIST_RELATIONS} lists its relations."
    )


def print_query(
    db_path: Path, query: str, output_format: str, limit: int | None, console, terminal: bool
) -> None:
    """What ``tastebench sql`` prints: every row, except a table on a ``terminal`` (the first
    ``limit`` or :data:`TERMINAL_ROWS`, and a line saying how many there are)."""
    if output_format not in SQL_FORMATS:
        raise WarehouseError(
            f"unknown --format {output_format!r}. Fix: use one of {', '.join(SQL_FORMATS)}."
        )
    if limit is not None and limit < 0:
        raise WarehouseError(f"--limit must be zero or more, got {limit}. Fix: pass --limit N.")
    cut = output_format == "table" and terminal and limit is None
    result = run_query(db_path, query, limit=TERMINAL_ROWS if cut else limit)
    if result is None:
        return
    if output_format != "table":
        sys.stdout.write(format_result(result.frame, output_format))
        return
    console.print(format_result(result.frame, "table"))
    if result.frame.height < result.total:
        console.print(
            f"showing {result.frame.height} of {result.total} rows "
            "(--limit N or --format csv for all)"
        )


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
