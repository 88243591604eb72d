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


def validate_in_batches(
    gxr, con, suite, query: str, params: dict, batch_rows: int = BATCH_ROWS, model: str = ""
) -> tuple[list[CheckRow], int]:
    """The rows ``rows_from_validation`` would give for ``suite`` on the whole result of
    ``query``, computed batch by batch (module docstring); also the number of batches."""
    from warehouse.quality.expectations import group_counts_outcome, group_row_counts

    for e in suite.expectations:
        combine_kind(e)
    # duplicated keys, found by DuckDB before the stream starts (one statement at a time)
    dup_keys: dict[tuple, pl.DataFrame] = {}
    for e in suite.expectations:
        if COMBINE[e.expectation_type] == "unique":
            cols = _key_columns(dict(e.configuration.kwargs))
            sql = ", ".join(f'"{c}"' for c in cols)
            keys = con.sql(f"select {sql} from ({query}) group by all having count(*) > 1").pl()
            if keys.height:
                dup_keys[tuple(cols)] = keys
    head = con.sql(f"select * from ({query}) limit 0").pl()
    masked = _masked_columns(con, query, dict(head.schema))

    order: list[str] = []  # config keys in GX's result order (from the first batch)
    configs: dict[str, Any] = {}
    kind_of: dict[str, str] = {}
    acc: dict[str, dict] = {}
    success: dict[str, bool] = {}
    exception: dict[str, Any] = {}
    groups: dict[str, dict[str, int]] = {}
    dup_rows: dict[tuple, list[pl.DataFrame]] = {k: [] for k in dup_keys}
    stash: list[pd.DataFrame] = []  # example rows of failed batches (a few per expectation)

    offset, n_batches = 0, 0
    cursor = con.cursor()  # the stream has a connection of its own (DuckDB: one result each)
    reader = cursor.sql(query).to_arrow_reader(batch_rows)
    for record_batch in reader:
        frame = pl.from_arrow(record_batch)
        if not isinstance(frame, pl.DataFrame) or frame.is_empty():
            continue
        n_batches += 1
        batch = gx_batch(frame, masked=masked)
        batch.index = pd.RangeIndex(offset, offset + frame.height)
        validation = gxr.validate(batch, suite, params)
        seen: dict[str, int] = {}  # the same expectation twice in a suite: two keys
        for r in validation.results:
            base = _config_key(r.expectation_config)
            seen[base] = seen.get(base, 0) + 1
            key = f"{base}#{seen[base]}"
            kind = combine_kind_of(r.expectation_config.type)
            result = dict(r.result or {})
            if key not in configs:
                order.append(key)
                configs[key], kind_of[key], acc[key], success[key] = (
                    r.expectation_config,
                    kind,
                    {},
                    True,
                )
            if key in exception:
                continue
            if _failed_with_exception(r):
                exception[key] = r
                continue
            if kind == "schema":
                if not acc[key] or (success[key] and not r.success):
                    acc[key], success[key] = result, bool(r.success)
            elif kind == "groups":
                cols = list(dict(r.expectation_config.kwargs)["group_by"])
                totals = groups.setdefault(key, {})
                for g, n in group_row_counts(batch, cols).items():
                    totals[g] = totals.get(g, 0) + n
            elif kind == "query":
                _add_counts(acc[key], result)
                examples = list(result.get("partial_unexpected_list") or [])
                acc[key]["partial_unexpected_list"] = (
                    acc[key].get("partial_unexpected_list", []) + examples
                )[:QUERY_EXAMPLES]
            else:  # map and unique (unique: counts only; its unexpected rows come below)
                _add_counts(acc[key], result)
                if kind == "map":
                    _merge_partial(acc[key], result)
                    idx = list(result.get("partial_unexpected_index_list") or [])[:EXAMPLE_LIMIT]
                    if idx:
                        stash.append(batch.loc[idx])
        for cols, keys in dup_keys.items():
            rows = frame.with_row_index(ROW, offset=offset).join(
                keys, on=list(cols), how="semi", nulls_equal=True
            )
            if rows.height:
                dup_rows[cols].append(rows)
        offset += frame.height
    cursor.close()

    # the unique expectations: GX on the rows with a duplicated key (with their row numbers)
    for key in order:
        if kind_of[key] != "unique" or key in exception:
            continue
        cfg = configs[key]
        cols = tuple(_key_columns(dict(cfg.kwargs)))
        acc[key]["unexpected_count"] = 0
        acc[key].pop("partial_unexpected_list", None)
        acc[key].pop("partial_unexpected_index_list", None)
        if dup_rows.get(cols):
            rows = pl.concat(dup_rows[cols])
            batch = gx_batch(rows.drop(ROW), masked=masked)
            batch.index = pd.Index(rows[ROW].to_list())
            (r,) = gxr.validate(batch, _single_suite(gxr, cfg), params).results
            if _failed_with_exception(r):
                exception[key] = r
                continue
            result = dict(r.result or {})
            acc[key]["unexpected_count"] = int(result.get("unexpected_count") or 0)
            _merge_partial(acc[key], result)
            idx = list(result.get("partial_unexpected_index_list") or [])[:EXAMPLE_LIMIT]
            stash.append(batch.loc[idx])

    results = []
    for key in order:
        cfg, kind = configs[key], kind_of[key]
        if key in exception:
            results.append(exception[key])
            continue
        kw = dict(cfg.kwargs)
        res = acc[key]
        if kind == "groups":
            outcome = group_counts_outcome(groups.get(key, {}), kw)
            ok, res = outcome["success"], outcome["result"]
        elif kind == "query":
            n = res.get("unexpected_count", 0)
            ok = n == 0
            res = {
                "observed_value": f"{n} unexpected row(s)",
                "element_count": res.get("element_count", 0),
                "unexpected_count": n,
                "partial_unexpected_list": res.get("partial_unexpected_list", []),
            }
        elif kind == "schema":
            ok = success[key]
        else:
            mostly = kw.get("mostly")
            ok = _map_success(res, 1.0 if mostly is None else float(mostly))
        results.append(
            SimpleNamespace(expectation_config=cfg, result=res, success=ok, exception_info={})
        )
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
