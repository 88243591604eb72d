"""Validating a big table with GX in bounded memory: the suite on row batches, combined exactly.

The runner hands GX a pandas copy of a table (``boundary.gx_batch``). For a table of more than
``batch_rows`` rows (:data:`BATCH_ROWS`; the ratings tables and the one-row-per-panelist marts of
a scaled simulation) that copy, and the copies GX makes while computing metrics, grow with the
table: 2.8 GB at scale 10 (0.28M ratings), extrapolated 16-25 GB at scale 100. Here the table is
streamed from DuckDB in batches of ``batch_rows`` rows (``to_arrow_reader``), each validated by GX
with the whole suite, and the per-batch results are combined into the result GX would have given
on the whole table. How each kind of expectation combines (:data:`COMBINE`):

* ``schema`` (column set, column kinds, forbidden columns): the same on every batch (a batch has the
  table's columns and DuckDB types; integer and boolean columns are masked in every batch where the
  table has a null, as ``gx_batch`` does on the whole table); the first failing batch's result,
  else the first batch's.
* ``map`` (not null, between, in set, regex, ...): a row passes or fails on its own. Counts
  (``element_count``, ``missing_count``, ``unexpected_count``) add up; the example lists are the
  first unexpected rows in table order (batches keep the global row numbers as their index);
  success is GX's own rule (``_mostly_success`` over the rows considered, vacuously true without
  any) on the sums.
* ``unique`` (a column or a compound key): a row fails when its key occurs more than once in the
  *table*. DuckDB finds the duplicated keys (``group by ... having count(*) > 1``); every batch
  contributes its counts of rows and nulls and the rows whose key is duplicated (with their global
  row numbers); GX then validates the expectation on those rows alone, which gives exactly its
  whole-table unexpected rows (only they can fail, and all of them are there).
* ``query`` (``ExpectNoRowsToMatchQuery``): row-wise; counts add up, examples are the first rows.
* ``groups`` (``ExpectGroupRowCountsToEqual``): rows per group add up over batches
  (``group_row_counts``, the metric's own code); the expectation's outcome is computed once on the
  sums (``group_counts_outcome``).

An expectation of another type on a big table raises :class:`QualityError` (say how it combines
here first): nothing is validated on a sample or skipped. Memory is then bounded by the batch size,
the number of groups and the number of duplicated rows (none when the check passes), not by the
table. Row numbers in examples are positions in DuckDB's scan order, as in the whole-table path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pandas as pd
import polars as pl

from warehouse.quality import QualityError
from warehouse.quality.boundary import gx_batch
from warehouse.quality.results import EXAMPLE_LIMIT, CheckRow, rows_from_validation

BATCH_ROWS = 100_000
GX_PARTIAL = 20  # length of GX's partial_unexpected lists (result_format SUMMARY)
QUERY_EXAMPLES = 5  # warehouse.quality.expectations.EXAMPLE_ROWS
ROW = "__tastebench_row"

COMBINE: dict[str, str] = {
    "expect_table_columns_to_match_set": "schema",
    "expect_table_columns_to_match_ordered_list": "schema",
    "expect_column_to_exist": "schema",
    "expect_table_column_kinds_to_match": "schema",
    "expect_table_columns_to_not_contain": "schema",
    "expect_column_values_to_not_be_null": "map",
    "expect_column_values_to_be_null": "map",
    "expect_column_values_to_be_between": "map",
    "expect_column_values_to_be_in_set": "map",
    "expect_column_values_to_not_be_in_set": "map",
    "expect_column_values_to_match_regex": "map",
    "expect_column_values_to_not_match_regex": "map",
    "expect_column_pair_values_a_to_be_greater_than_b": "map",
    "expect_column_values_to_be_unique": "unique",
    "expect_compound_columns_to_be_unique": "unique",
    "expect_no_rows_to_match_query": "query",
    "expect_group_row_counts_to_equal": "groups",
}


def combine_kind(expectation) -> str:
    return combine_kind_of(expectation.expectation_type)


def combine_kind_of(expectation_type: str) -> str:
    kind = COMBINE.get(expectation_type)
    if kind is None:
        raise QualityError(
            f"expectation {expectation_type} has no batched combination rule, so a "
            "table above the batch size cannot be validated with it. Fix: add it to "
            "warehouse.quality.batched.COMBINE with how its per-batch results add up."
        )
    return kind


def _key_columns(kwargs: dict) -> list[str]:
    return [kwargs["column"]] if "column" in kwargs else list(kwargs["column_list"])


def _config_key(cfg) -> str:
    kwargs = {k: v for k, v in dict(cfg.kwargs).items() if k != "batch_id"}
    return cfg.type + json.dumps(kwargs, sort_keys=True, default=str)


def _masked_columns(con, query: str, frame_schema: dict) -> set[str]:
    """Integer and boolean columns with a null anywhere in the table (masked in every batch)."""
    cols = [c for c, d in frame_schema.items() if d.is_integer() or d == pl.Boolean]
    if not cols:
        return set()
    sql = ", ".join(f'count(*) - count("{c}")' for c in cols)
    (nulls,) = con.execute(f"select {sql} from ({query})").fetchall()
    return {c for c, n in zip(cols, nulls, strict=True) if n}


def _merge_partial(acc: dict, result: dict) -> None:
    """Append a batch's partial lists (batches arrive in table order), keep GX's first 20."""
    idx = list(result.get("partial_unexpected_index_list") or [])
    vals = list(result.get("partial_unexpected_list") or [])
    acc["partial_unexpected_index_list"] = (acc.get("partial_unexpected_index_list", []) + idx)[
        :GX_PARTIAL
    ]
    acc["partial_unexpected_list"] = (acc.get("partial_unexpected_list", []) + vals)[:GX_PARTIAL]


def _add_counts(acc: dict, result: dict) -> None:
    for key in ("element_count", "missing_count", "unexpected_count"):
        if key in result:
            acc[key] = acc.get(key, 0) + int(result[key] or 0)


def _map_success(result: dict, mostly: float) -> bool:
    """GX's success rule of a map expectation (ColumnMapExpectation / MulticolumnMap / the
    not-null expectation) on whole-table counts."""
    from great_expectations.expectations.expectation import _mostly_success

    considered = result.get("element_count", 0) - result.get("missing_count", 0)
    unexpected = result.get("unexpected_count")
    if unexpected is None or result.get("element_count", 0) == 0 or considered == 0:
        return True
    return _mostly_success(considered, unexpected, mostly)


def _failed_with_exception(r) -> bool:
    info = getattr(r, "exception_info", None) or {}
    if info.get("raised_exception"):
        return True
    return any(isinstance(v, dict) and v.get("raised_exception") for v in info.values())


class _Combiner:
    """One expectation's per-batch results, combined as its kind says (module docstring). A
    batch whose validation raised ends the combination: that result is reported as it is."""

    def __init__(self, cfg) -> None:
        self.cfg = cfg
        self.acc: dict = {}
        self.exception: Any = None

    def take(self, r, batch: pd.DataFrame, stash: list[pd.DataFrame]) -> None:
        if self.exception is not None:
            return
        if _failed_with_exception(r):
            self.exception = r
            return
        self.add(r, dict(r.result or {}), batch, stash)

    def add(self, r, result: dict, batch: pd.DataFrame, stash: list[pd.DataFrame]) -> None:
        raise NotImplementedError

    def outcome(self) -> tuple[bool, dict]:
        """(success, result) on the whole table."""
        raise NotImplementedError

    def result(self):
        if self.exception is not None:
            return self.exception
        ok, res = self.outcome()
        return SimpleNamespace(
            expectation_config=self.cfg, result=res, success=ok, exception_info={}
        )


class _Schema(_Combiner):
    """The first failing batch's result, else the first batch's."""

    success = True

    def add(self, r, result, batch, stash) -> None:
        if not self.acc or (self.success and not r.success):
            self.acc, self.success = result, bool(r.success)

    def outcome(self) -> tuple[bool, dict]:
        return self.success, self.acc


class _Map(_Combiner):
    """Counts add up; the first unexpected rows in table order are the examples."""

    def add(self, r, result, batch, stash) -> None:
        _add_counts(self.acc, result)
        _merge_partial(self.acc, result)
        idx = list(result.get("partial_unexpected_index_list") or [])[:EXAMPLE_LIMIT]
        if idx:
            stash.append(batch.loc[idx])

    def outcome(self) -> tuple[bool, dict]:
        mostly = dict(self.cfg.kwargs).get("mostly")
        return _map_success(self.acc, 1.0 if mostly is None else float(mostly)), self.acc


class _Unique(_Map):
    """Counts add up over the batches; the unexpected rows come from GX on the rows whose key is
    duplicated in the table (:meth:`finish`)."""

    def add(self, r, result, batch, stash) -> None:
        _add_counts(self.acc, result)

    def finish(self, gxr, params: dict, dup_rows: dict, masked: set[str], stash: list) -> None:
        if self.exception is not None:
            return
        cols = tuple(_key_columns(dict(self.cfg.kwargs)))
        self.acc["unexpected_count"] = 0
        self.acc.pop("partial_unexpected_list", None)
        self.acc.pop("partial_unexpected_index_list", None)
        if not dup_rows.get(cols):
            return
        rows = pl.concat(dup_rows[cols])
        batch = gx_batch(rows.drop(ROW), masked=masked)
        batch.index = pd.Index(rows[ROW].to_list())
        (r,) = gxr.validate(batch, _single_suite(gxr, self.cfg), params).results
        if _failed_with_exception(r):
            self.exception = r
            return
        result = dict(r.result or {})
        self.acc["unexpected_count"] = int(result.get("unexpected_count") or 0)
        _merge_partial(self.acc, result)
        idx = list(result.get("partial_unexpected_index_list") or [])[:EXAMPLE_LIMIT]
        stash.append(batch.loc[idx])


class _Query(_Combiner):
    """Row-wise: counts add up, the examples are the first rows."""

    def add(self, r, result, batch, stash) -> None:
        _add_counts(self.acc, result)
        examples = list(result.get("partial_unexpected_list") or [])
        self.acc["partial_unexpected_list"] = (
            self.acc.get("partial_unexpected_list", []) + examples
        )[:QUERY_EXAMPLES]

    def outcome(self) -> tuple[bool, dict]:
        n = self.acc.get("unexpected_count", 0)
        return n == 0, {
            "observed_value": f"{n} unexpected row(s)",
            "element_count": self.acc.get("element_count", 0),
            "unexpected_count": n,
            "partial_unexpected_list": self.acc.get("partial_unexpected_list", []),
        }


class _Groups(_Combiner):
    """Rows per group add up; the outcome is computed once on the sums."""

    def __init__(self, cfg) -> None:
        super().__init__(cfg)
        self.totals: dict[str, int] = {}

    def add(self, r, result, batch, stash) -> None:
        from warehouse.quality.expectations import group_row_counts

        cols = list(dict(r.expectation_config.kwargs)["group_by"])
        for g, n in group_row_counts(batch, cols).items():
            self.totals[g] = self.totals.get(g, 0) + n

    def outcome(self) -> tuple[bool, dict]:
        from warehouse.quality.expectations import group_counts_outcome

        outcome = group_counts_outcome(self.totals, dict(self.cfg.kwargs))
        return outcome["success"], outcome["result"]


_COMBINERS: dict[str, type[_Combiner]] = {
    "schema": _Schema,
    "map": _Map,
    "unique": _Unique,
    "query": _Query,
    "groups": _Groups,
}


def _duplicated_keys(con, suite, query: str) -> dict[tuple, pl.DataFrame]:
    """Key columns of each uniqueness expectation -> its keys that occur more than once, found by
    DuckDB before the stream starts (one statement at a time)."""
    dup_keys: dict[tuple, pl.DataFrame] = {}
    for e in suite.expectations:
        if COMBINE[e.expectation_type] == "unique":
            cols = _key_columns(dict(e.configuration.kwargs))
            sql = ", ".join(f'"{c}"' for c in cols)
            keys = con.sql(f"select {sql} from ({query}) group by all having count(*) > 1").pl()
            if keys.height:
                dup_keys[tuple(cols)] = keys
    return dup_keys


def _batches(con, query: str, batch_rows: int) -> Iterator[tuple[int, pl.DataFrame]]:
    """(global row number of its first row, batch) for each non-empty batch, in table order; the
    stream has a connection of its own (DuckDB: one result each)."""
    offset = 0
    cursor = con.cursor()
    try:
        for record_batch in cursor.sql(query).to_arrow_reader(batch_rows):
            frame = pl.from_arrow(record_batch)
            if not isinstance(frame, pl.DataFrame) or frame.is_empty():
                continue
            yield offset, frame
            offset += frame.height
    finally:
        cursor.close()


def _take_batch(
    combiners: dict[str, _Combiner], validation, batch: pd.DataFrame, stash: list
) -> None:
    """Hand each result of a batch's validation to its expectation's combiner (created on the
    first batch, in GX's result order; the same expectation twice in a suite: two keys)."""
    seen: dict[str, int] = {}
    for r in validation.results:
        base = _config_key(r.expectation_config)
        seen[base] = seen.get(base, 0) + 1
        key = f"{base}#{seen[base]}"
        kind = combine_kind_of(r.expectation_config.type)
        if key not in combiners:
            combiners[key] = _COMBINERS[kind](r.expectation_config)
        combiners[key].take(r, batch, stash)


def _duplicated_rows(
    dup_keys: dict[tuple, pl.DataFrame], frame: pl.DataFrame, offset: int, dup_rows: dict
) -> None:
    """The rows of a batch whose key is duplicated in the table, with their row numbers."""
    for cols, keys in dup_keys.items():
        rows = frame.with_row_index(ROW, offset=offset).join(
            keys, on=list(cols), how="semi", nulls_equal=True
        )
        if rows.height:
            dup_rows[cols].append(rows)


def validate_in_batches(
    gxr, con, suite, query: str, params: dict, batch_rows: int = BATCH_ROWS, model: str = ""
) -> tuple[list[CheckRow], int]:
    """The rows ``rows_from_validation`` would give for ``suite`` on the whole result of
    ``query``, computed batch by batch (module docstring); also the number of batches."""
    for e in suite.expectations:
        combine_kind(e)
    dup_keys = _duplicated_keys(con, suite, query)
    head = con.sql(f"select * from ({query}) limit 0").pl()
    masked = _masked_columns(con, query, dict(head.schema))
    combiners: dict[str, _Combiner] = {}  # in GX's result order (from the first batch)
    dup_rows: dict[tuple, list[pl.DataFrame]] = {k: [] for k in dup_keys}
    stash: list[pd.DataFrame] = []  # example rows of failed batches (a few per expectation)
    n_batches = 0
    for offset, frame in _batches(con, query, batch_rows):
        n_batches += 1
        batch = gx_batch(frame, masked=masked)
        batch.index = pd.RangeIndex(offset, offset + frame.height)
        _take_batch(combiners, gxr.validate(batch, suite, params), batch, stash)
        _duplicated_rows(dup_keys, frame, offset, dup_rows)
    for combiner in combiners.values():
        if isinstance(combiner, _Unique):
            combiner.finish(gxr, params, dup_rows, masked, stash)
    results = [combiner.result() for combiner in combiners.values()]
    examples = pd.concat(stash) if stash else None
    if examples is not None:
        examples = examples[~examples.index.duplicated()]
    rows = rows_from_validation(
        suite.name, model or suite.name, "suite", SimpleNamespace(results=results), examples
    )
    return rows, n_batches


def _single_suite(gxr, cfg):
    """A suite of one expectation, from a (resolved) configuration of a validation result."""
    kwargs = {k: v for k, v in dict(cfg.kwargs).items() if k != "batch_id"}
    suite = gxr.gx.ExpectationSuite(name=f"duplicated_keys_{cfg.type}")
    suite.add_expectation(type(cfg.to_domain_obj())(**kwargs))
    return suite


__all__ = ["BATCH_ROWS", "COMBINE", "combine_kind", "validate_in_batches"]
