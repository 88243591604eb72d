"""Read a CSV/TSV file with polars under a declared schema.

Every cell is first read as the text written in the file (no type inference), then each column is
converted to its declared dtype; a value that does not convert is an error naming the file, the
1-based data row (header excluded), the column and the fix. The conventions, shared by the NECTAR
bundle (dtypes from its Croissant record sets) and the public files (dtypes declared in
``warehouse/sources/public.py``):

- a line with no value at all (blank, or only separators) is not a record;
- text is kept as written; an empty cell is null (NECTAR: a whitespace-only cell too);
- integer: an integral number (``3``, ``3.0``, ``1e3``), surrounding whitespace ignored;
- float: any finite or infinite decimal number; ``nan`` is not a number;
- boolean: true/1/1.0/yes/t or false/0/0.0/no/f, any case;
- numbers and booleans: an empty or whitespace-only cell is null.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import polars as pl

from warehouse.errors import DataValidationError

KIND_DTYPES: dict[str, pl.DataType] = {
    "text": pl.String(),
    "integer": pl.Int64(),
    "float": pl.Float64(),
    "boolean": pl.Boolean(),
}
_KINDS = {dtype: kind for kind, dtype in KIND_DTYPES.items()}
# columns whose values identify a person or a product: an error names their row and column and
# never quotes the value (issue #15; docs/quality.md, "Messages never carry the gated value")
_IDENTIFYING = re.compile(r"respondent|upc|brand|join_?key", re.IGNORECASE)
_TRUE = ["true", "1", "1.0", "yes", "t"]
_FALSE = ["false", "0", "0.0", "no", "f"]

Schema = dict[str, pl.DataType]


def read_cells(path: Path, separator: str = ",") -> pl.DataFrame:
    """Every cell of ``path`` as the text written (``""`` for an empty cell), header as written;
    lines without any value are dropped, so row ``i`` is the ``i``-th record of the file."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataValidationError(
            str(path), f"not UTF-8 text ({exc})", "re-export the file as UTF-8 CSV"
        ) from exc
    try:
        frame = pl.read_csv(
            io.BytesIO(text.removeprefix("\ufeff").encode("utf-8")),
            separator=separator,
            infer_schema=False,
            empty_string_is_null=False,
            raise_if_empty=True,
        )
    except pl.exceptions.NoDataError as exc:
        raise DataValidationError(
            str(path), "the file is empty (no header)", "export the file with its header row"
        ) from exc
    except pl.exceptions.PolarsError as exc:
        reason = str(exc).strip().splitlines()[0]
        raise DataValidationError(
            str(path), f"not a well-formed CSV ({reason})", "check quoting and delimiters"
        ) from exc
    if frame.width == 0:
        return frame
    frame = frame.with_columns(pl.all().fill_null(""))
    return frame.filter(~pl.all_horizontal(pl.all() == ""))


def check_header(
    path: Path,
    frame: pl.DataFrame,
    expected: list[str],
    *,
    what: str,
    fix_missing: str,
    fix_unknown: str,
    optional: tuple[str, ...] = (),
) -> None:
    """Every ``expected`` column (but ``optional`` ones) is present and no other column is."""
    missing = [c for c in expected if c not in frame.columns and c not in optional]
    if missing:
        raise DataValidationError(
            str(path),
            f"missing column(s) {missing} required by {what}",
            fix_missing,
            column=missing[0],
        )
    unknown = [c for c in frame.columns if c not in expected]
    if unknown:
        raise DataValidationError(
            str(path),
            f"unknown column(s) {unknown} not in {what}",
            fix_unknown,
            column=unknown[0],
        )


def shown(column: str, value: object) -> str:
    """``value`` as an error message may show it: values of identifying columns (respondent,
    UPC, brand, join key) are never quoted."""
    return "a value (not shown: identifying column)" if _IDENTIFYING.search(column) else repr(value)


def convert(
    path: Path, values: pl.Series, dtype: pl.DataType, *, blank_text_is_null: bool
) -> pl.Series:
    """One column of cells (as read by :func:`read_cells`) as ``dtype``; raise on the first cell
    that does not convert."""
    kind = _KINDS.get(dtype)
    if kind is None:
        raise TypeError(f"no conversion to {dtype} (declare one of {list(_KINDS)})")
    name = values.name
    stripped = values.str.strip_chars()
    blank = stripped == ""
    if kind == "text":
        empty = blank if blank_text_is_null else values == ""
        return values.set(empty, None).alias(name)
    cells = stripped.set(blank, None)
    if kind == "boolean":
        lowered = cells.str.to_lowercase()
        result = pl.select(
            pl.when(lowered.is_in(_TRUE))
            .then(True)
            .when(lowered.is_in(_FALSE))
            .then(False)
            .otherwise(None)
            .alias(name)
        ).to_series()
    elif kind == "integer":
        as_float = cells.cast(pl.Float64, strict=False)
        integral = as_float.is_finite() & (as_float == as_float.floor())
        from_float = as_float.set(~integral.fill_null(False), None).cast(pl.Int64, strict=False)
        result = cells.cast(pl.Int64, strict=False).fill_null(from_float).alias(name)
    else:
        as_float = cells.cast(pl.Float64, strict=False)
        result = as_float.set(as_float.is_nan().fill_null(False), None).alias(name)
    bad = (result.is_null() & ~blank).to_numpy()
    if bad.any():
        i = int(bad.argmax())
        raise DataValidationError(
            str(path),
            f"value {shown(name, values[i])} is not {'an' if kind == 'integer' else 'a'} {kind} "
            f"({int(bad.sum())} such value(s) in this column)",
            f"write {kind} values in column '{name}' (empty for missing)",
            row=i + 1,
            column=name,
        )
    return result


def read_typed(
    path: Path,
    schema: Schema,
    *,
    separator: str = ",",
    what: str,
    fix_missing: str,
    fix_unknown: str,
    optional: tuple[str, ...] = (),
    blank_text_is_null: bool = False,
) -> pl.DataFrame:
    """Read ``path`` and convert every column to its ``schema`` dtype, columns in schema order
    (``optional`` columns absent from the file are left out)."""
    cells = read_cells(path, separator)
    check_header(
        path,
        cells,
        list(schema),
        what=what,
        fix_missing=fix_missing,
        fix_unknown=fix_unknown,
        optional=optional,
    )
    return pl.DataFrame(
        {
            c: convert(path, cells[c], dtype, blank_text_is_null=blank_text_is_null)
            for c, dtype in schema.items()
            if c in cells.columns
        }
    )


def first_row(mask: pl.Series) -> int:
    """1-based data row of the first true value of ``mask``."""
    return int(mask.fill_null(False).arg_max()) + 1


def with_file_row(frame: pl.DataFrame) -> pl.DataFrame:
    """Append ``_file_row``: the 1-based data row of each record in its file (header excluded)."""
    return frame.with_columns(pl.int_range(1, frame.height + 1, dtype=pl.Int64).alias("_file_row"))
