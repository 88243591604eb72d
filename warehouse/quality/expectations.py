"""Custom Great Expectations (GX 1.x) for what GX has no expectation for, on pandas batches.

The warehouse reads DuckDB tables as polars and validates pandas copies of them (the GX SQL
datasource does not work with DuckDB; :func:`warehouse.quality.boundary.gx_batch`), so every metric
here has a pandas implementation only: pandas is what GX's ``PandasExecutionEngine`` hands it. The
guard metric converts its batch to polars for the guard rules (``guards.as_polars``).

* ``ExpectTableColumnsToNotContain``: the table has none of the named columns (or patterns).
* ``ExpectNoRowsToMatchQuery``: the pandas counterpart of GX's SQL-only
  ``UnexpectedRowsExpectation``: a ``DataFrame.query`` expression selects the bad rows.
* ``ExpectGroupRowCountsToEqual``: rows per group equal a mapping (e.g. C(n_c, 2) pairs per
  category, passed as a suite parameter) or one value (215 predictions per model).
* ``ExpectTableColumnKindsToMatch``: column kinds (integer, float, text, boolean, timestamp), the
  Croissant field types of the raw contracts.
* ``ExpectTableToPassDeidentificationGuards``: the rules of ``warehouse.quality.guards`` on the
  batch (one metric computes them all); the gated facts are registered in-process under
  ``context_key`` (expectation kwargs must be JSON).

Importing this module registers the expectations and metrics with GX.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import pandas as pd
from great_expectations.compatibility import pydantic
from great_expectations.core.metric_domain_types import MetricDomainTypes
from great_expectations.core.suite_parameters import SuiteParameterDict
from great_expectations.execution_engine import PandasExecutionEngine
from great_expectations.expectations.expectation import BatchExpectation
from great_expectations.expectations.metrics.metric_provider import metric_value
from great_expectations.expectations.metrics.table_metric_provider import TableMetricProvider

EXAMPLE_ROWS = 5

# GatedContext objects for the guard expectation, keyed by a string (expectation kwargs must be
# JSON; the context holds frames). The runner registers one per run and removes it afterwards.
GUARD_CONTEXTS: dict[str, Any] = {}


def _frame(execution_engine, metric_domain_kwargs) -> pd.DataFrame:
    df, _, _ = execution_engine.get_compute_domain(
        domain_kwargs=metric_domain_kwargs, domain_type=MetricDomainTypes.TABLE
    )
    return df


def _records(frame: pd.DataFrame) -> list[dict]:
    head = frame.head(EXAMPLE_ROWS).astype(object).where(frame.head(EXAMPLE_ROWS).notna(), None)
    return [{str(k): _plain(v) for k, v in row.items()} for row in head.to_dict("records")]


def _plain(v):
    if hasattr(v, "item"):
        try:
            return v.item()
        except (ValueError, AttributeError):
            return str(v)
    if isinstance(v, int | float | str | bool) or v is None:
        return v
    return str(v)


def _outcome(
    observed_value: str,
    unexpected_count: int,
    examples: list,
    *,
    element_count: int | None = None,
    details: dict | None = None,
) -> dict:
    """An expectation's ``_validate`` answer: success when nothing is unexpected; the result keys
    in GX's order (``element_count`` and ``details`` only when given)."""
    result: dict[str, Any] = {"observed_value": observed_value}
    if element_count is not None:
        result["element_count"] = element_count
    result["unexpected_count"] = unexpected_count
    result["partial_unexpected_list"] = examples
    if details is not None:
        result["details"] = details
    return {"success": unexpected_count == 0, "result": result}


# --- metrics ----------------------------------------------------------------------------------
class _PandasTableMetric(TableMetricProvider):
    """A table metric computed on the batch's pandas frame: a subclass names the metric (GX
    registers it then) and defines ``compute(df, value_kwargs)``."""

    @metric_value(engine=PandasExecutionEngine)
    def _pandas(
        cls,
        execution_engine,
        metric_domain_kwargs,
        metric_value_kwargs,
        metrics,
        runtime_configuration,
    ):
        return cls.compute(_frame(execution_engine, metric_domain_kwargs), metric_value_kwargs)


class PandasQueryUnexpectedRows(_PandasTableMetric):
    metric_name = "pandas_query.unexpected_rows"
    value_keys = ("unexpected_rows_query",)

    @staticmethod
    def compute(df: pd.DataFrame, value_kwargs: dict) -> dict:
        bad = df.query(value_kwargs["unexpected_rows_query"], engine="python")
        return {"count": len(bad), "examples": _records(bad), "element_count": len(df)}


class TableGroupRowCounts(_PandasTableMetric):
    metric_name = "table.group_row_counts"
    value_keys = ("group_by",)

    @staticmethod
    def compute(df: pd.DataFrame, value_kwargs: dict) -> dict[str, int]:
        return group_row_counts(df, list(value_kwargs["group_by"]))


def group_row_counts(df: pd.DataFrame, cols: list[str]) -> dict[str, int]:
    """Rows per group of ``cols`` (nulls are a group), keyed by :func:`_group_key`; additive over
    row batches (``warehouse.quality.batched`` sums it)."""
    counts = df.groupby(cols, dropna=False).size()
    return {_group_key(k): int(v) for k, v in counts.items()}


def _group_key(k) -> str:
    return ":".join(str(x) for x in k) if isinstance(k, tuple) else str(k)


def column_kind(s: pd.Series) -> str:
    """integer | float | text | boolean | timestamp | other, for a pandas column."""
    t = pd.api.types
    if t.is_bool_dtype(s):
        return "boolean"
    if t.is_integer_dtype(s):
        return "integer"
    if t.is_float_dtype(s):
        return "float"
    if t.is_datetime64_any_dtype(s):
        return "timestamp"
    if isinstance(s.dtype, pd.StringDtype):
        return "text"
    if s.dtype == object and pd.api.types.infer_dtype(s, skipna=True) in ("string", "empty"):
        return "text"
    return "other"


class TableColumnKinds(_PandasTableMetric):
    metric_name = "table.column_kinds"

    @staticmethod
    def compute(df: pd.DataFrame, value_kwargs: dict) -> dict[str, str]:
        return {str(c): column_kind(df[c]) for c in df.columns}


class DeidentificationGuards(_PandasTableMetric):
    metric_name = "deidentification.guards"
    value_keys = ("rules", "table_name", "context_key")

    @staticmethod
    def compute(df: pd.DataFrame, value_kwargs: dict) -> dict[str, list[dict]]:
        from warehouse.quality import guards

        frame = guards.as_polars(df)  # once, not per rule
        ctx = GUARD_CONTEXTS[value_kwargs["context_key"]]
        table = value_kwargs["table_name"]
        out = {}
        for rule in value_kwargs["rules"] or list(guards.TABLE_RULES):
            found = guards.TABLE_RULES[rule](table, frame, ctx)
            out[rule] = [
                {
                    "column": v.column,
                    "message": v.message,
                    "rows": list(v.rows),
                    "examples": list(v.examples),  # fingerprints, never gated values
                }
                for v in found
            ]
        return out


# --- expectations -----------------------------------------------------------------------------
class ExpectTableColumnsToNotContain(BatchExpectation):
    """The table has none of ``column_list`` (case-insensitive) and no column matching any of
    ``column_regex_list`` (Python regular expressions, case-insensitive, searched)."""

    column_list: list[str] | SuiteParameterDict = pydantic.Field(default_factory=list)
    column_regex_list: list[str] = pydantic.Field(default_factory=list)
    metric_dependencies: ClassVar[tuple[str, ...]] = ("table.columns",)
    success_keys: ClassVar[tuple[str, ...]] = ("column_list", "column_regex_list")
    args_keys: ClassVar[tuple[str, ...]] = ("column_list",)

    def _validate(self, metrics, runtime_configuration=None, execution_engine=None):
        kw = self._get_success_kwargs()
        banned = {c.lower() for c in kw.get("column_list") or []}
        patterns = [re.compile(p, re.I) for p in kw.get("column_regex_list") or []]
        present = [
            c
            for c in metrics["table.columns"]
            if str(c).lower() in banned or any(p.search(str(c)) for p in patterns)
        ]
        return {
            "success": not present,
            "result": {"observed_value": present, "unexpected_count": len(present)},
        }


class ExpectNoRowsToMatchQuery(BatchExpectation):
    """No row satisfies ``unexpected_rows_query`` (a pandas ``DataFrame.query`` expression,
    python engine); the pandas counterpart of GX's SQL-only UnexpectedRowsExpectation."""

    unexpected_rows_query: str
    metric_dependencies: ClassVar[tuple[str, ...]] = ("pandas_query.unexpected_rows",)
    success_keys: ClassVar[tuple[str, ...]] = ("unexpected_rows_query",)
    args_keys: ClassVar[tuple[str, ...]] = ("unexpected_rows_query",)

    def _validate(self, metrics, runtime_configuration=None, execution_engine=None):
        m = metrics["pandas_query.unexpected_rows"]
        return _outcome(
            f"{m['count']} unexpected row(s)",
            m["count"],
            m["examples"],
            element_count=m["element_count"],
        )


class ExpectGroupRowCountsToEqual(BatchExpectation):
    """Rows per ``group_by`` group equal ``expected_counts`` (group key -> count; keys joined by
    ':' for several columns; every expected group must exist, no other group may) or, when
    ``value`` is given, equal ``value`` for every group."""

    group_by: list[str]
    expected_counts: dict[str, int] | SuiteParameterDict | None = None
    value: int | SuiteParameterDict | None = None
    metric_dependencies: ClassVar[tuple[str, ...]] = ("table.group_row_counts",)
    success_keys: ClassVar[tuple[str, ...]] = ("group_by", "expected_counts", "value")
    args_keys: ClassVar[tuple[str, ...]] = ("group_by",)

    def _validate(self, metrics, runtime_configuration=None, execution_engine=None):
        return group_counts_outcome(metrics["table.group_row_counts"], self._get_success_kwargs())


def group_counts_outcome(observed: dict[str, int], kwargs: dict) -> dict:
    """Success and result of :class:`ExpectGroupRowCountsToEqual` for the observed rows per group
    (``kwargs``: its resolved ``expected_counts`` / ``value``)."""
    if kwargs.get("value") is not None:
        expected = {k: int(kwargs["value"]) for k in observed} or {
            "(any group)": int(kwargs["value"])
        }
    else:
        expected = {str(k): int(v) for k, v in (kwargs.get("expected_counts") or {}).items()}
    keys = sorted(set(expected) | set(observed))
    bad = [
        {"group": k, "expected": expected.get(k, 0), "observed": observed.get(k, 0)}
        for k in keys
        if expected.get(k, 0) != observed.get(k, 0)
    ]
    observed_value = f"{len(observed)} group(s), {len(bad)} with another row count"
    return _outcome(observed_value, len(bad), bad[:EXAMPLE_ROWS])


class ExpectTableColumnKindsToMatch(BatchExpectation):
    """Each listed column exists and has the given kind (integer, float, text, boolean,
    timestamp); an all-null column passes for any kind."""

    column_kinds: dict[str, str]
    metric_dependencies: ClassVar[tuple[str, ...]] = ("table.column_kinds",)
    success_keys: ClassVar[tuple[str, ...]] = ("column_kinds",)
    args_keys: ClassVar[tuple[str, ...]] = ("column_kinds",)

    def _validate(self, metrics, runtime_configuration=None, execution_engine=None):
        observed: dict[str, str] = metrics["table.column_kinds"]
        expected: dict[str, str] = self._get_success_kwargs()["column_kinds"]
        bad = [
            {"column": c, "expected": k, "observed": observed.get(c, "missing")}
            for c, k in expected.items()
            if observed.get(c) != k and not (observed.get(c) == "text" and k == "text")
        ]
        observed_value = f"{len(expected) - len(bad)} of {len(expected)} columns match"
        return _outcome(observed_value, len(bad), bad[:EXAMPLE_ROWS])


class ExpectTableToPassDeidentificationGuards(BatchExpectation):
    """De-identification rules (``warehouse.quality.guards.TABLE_RULES``; empty ``rules`` = all)
    on the batch, with the gated facts registered under ``context_key`` in ``GUARD_CONTEXTS``.
    ``result.details.violations`` maps each rule to its violations (column, message, examples)."""

    rules: list[str] = pydantic.Field(default_factory=list)
    table_name: str
    context_key: str
    metric_dependencies: ClassVar[tuple[str, ...]] = ("deidentification.guards",)
    success_keys: ClassVar[tuple[str, ...]] = ("rules", "table_name", "context_key")
    args_keys: ClassVar[tuple[str, ...]] = ("table_name", "rules")

    def _validate(self, metrics, runtime_configuration=None, execution_engine=None):
        by_rule: dict[str, list[dict]] = metrics["deidentification.guards"]
        found = [v for vs in by_rule.values() for v in vs]
        return _outcome(
            "; ".join(v["message"] for v in found) or "no violation",
            len(found),
            found[:EXAMPLE_ROWS],
            details={"violations": by_rule},
        )


__all__ = [
    "ExpectGroupRowCountsToEqual",
    "ExpectNoRowsToMatchQuery",
    "ExpectTableColumnKindsToMatch",
    "ExpectTableColumnsToNotContain",
    "ExpectTableToPassDeidentificationGuards",
    "GUARD_CONTEXTS",
    "column_kind",
    "group_counts_outcome",
    "group_row_counts",
]
