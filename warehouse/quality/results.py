"""What a quality run found: one :class:`CheckRow` per expectation (or guard rule and table), per
suite a :class:`SuiteResult`, the run a :class:`QualityResult` (the rows of
``reports.rpt_data_quality``, the history line, the failure message); and the conversion of GX
validation results into rows, where values of sensitive columns are replaced by fingerprints (the
report never quotes a gated value: docs/quality.md, "Messages")."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from warehouse.quality import QualityError

EXAMPLE_LIMIT = 3


@dataclass
class CheckRow:
    """One expectation (or guard rule) outcome: a row of reports.rpt_data_quality."""

    suite: str
    model: str
    kind: str  # suite | guard
    expectation_type: str
    status: str  # passed | failed | skipped | error
    column_name: str | None = None
    rule: str | None = None
    observed_value: str | None = None
    unexpected_count: int | None = None
    element_count: int | None = None
    example: str | None = None  # JSON: example rows / values / violations
    kwargs: str | None = None  # JSON of the expectation's arguments

    @property
    def success(self) -> bool | None:
        return None if self.status == "skipped" else self.status == "passed"

    def describe(self) -> str:
        what = self.expectation_type + (f"[{self.rule}]" if self.rule else "")
        col = f" on {self.column_name}" if self.column_name else ""
        return f"{self.suite}: {what}{col}: {self.observed_value}"


@dataclass
class SuiteResult:
    suite: str
    model: str
    kind: str
    rows: list[CheckRow] = field(default_factory=list)
    seconds: float = 0.0
    error: str | None = None
    batches: int = 0  # GX batches of a big table (warehouse.quality.batched); 0: the whole table

    @property
    def success(self) -> bool:
        return self.error is None and all(r.status in ("passed", "skipped") for r in self.rows)

    def count(self, status: str) -> int:
        return sum(r.status == status for r in self.rows)


@dataclass
class QualityResult:
    run_id: str
    run_at: datetime
    db_path: Path
    data_origin: str
    trigger: str
    suites: list[SuiteResult]
    seconds: float = 0.0
    report_path: Path | None = None
    history_path: Path | None = None
    table_written: bool = False
    public_tables: tuple[str, ...] = ()
    gated_tables: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def success(self) -> bool:
        return all(s.success for s in self.suites)

    @property
    def failures(self) -> list[CheckRow]:
        return [r for s in self.suites for r in s.rows if r.status in ("failed", "error")]

    @property
    def rows(self) -> list[CheckRow]:
        return [r for s in self.suites for r in s.rows]

    def summary(self) -> dict[str, Any]:
        """The history line of this run."""
        evaluated = [r for r in self.rows if r.status != "skipped"]
        passed = sum(r.status == "passed" for r in evaluated)
        return {
            "run_id": self.run_id,
            "run_at": self.run_at.isoformat(),
            "trigger": self.trigger,
            "db_path": str(self.db_path),
            "data_origin": self.data_origin,
            "success": self.success,
            "n_suites": len(self.suites),
            "n_failed_suites": sum(not s.success for s in self.suites),
            "n_expectations": len(evaluated),
            "n_failed": len(evaluated) - passed,
            "n_skipped": len(self.rows) - len(evaluated),
            "pass_rate": passed / len(evaluated) if evaluated else 1.0,
            "seconds": round(self.seconds, 2),
            "suites": {
                s.suite: [
                    s.count("passed"),
                    s.count("passed") + s.count("failed") + s.count("error"),
                ]
                for s in self.suites
            },
        }

    def failure_message(self, limit: int = 15) -> str:
        failed = [s for s in self.suites if not s.success]
        lines = [f"{len(failed)} quality suite(s) failed: {', '.join(s.suite for s in failed)}"]
        for s in failed:
            if s.error:
                lines.append(f"  - {s.suite}: {s.error}")
        for r in self.failures[:limit]:
            lines.append(f"  - {r.describe()}")
        if len(self.failures) > limit:
            lines.append(f"  ... and {len(self.failures) - limit} more")
        if self.report_path:
            lines.append(f"See {self.report_path}")
        return "\n".join(lines)

    def raise_for_failures(self, context: str = "") -> None:
        if not self.success:
            prefix = f"{context}: " if context else ""
            raise QualityError(prefix + self.failure_message())

    def to_frame(self) -> pl.DataFrame:
        """The rows of ``reports.rpt_data_quality`` (run_at in UTC, without a time zone)."""
        schema: dict[str, Any] = {
            "suite": pl.String,
            "model": pl.String,
            "kind": pl.String,
            "expectation_type": pl.String,
            "status": pl.String,
            "column_name": pl.String,
            "rule": pl.String,
            "observed_value": pl.String,
            "unexpected_count": pl.Int64,
            "element_count": pl.Int64,
            "example": pl.String,
            "kwargs": pl.String,
        }
        rows = pl.DataFrame([asdict(r) for r in self.rows], schema=schema, orient="row")
        run_at = self.run_at.replace(tzinfo=None)
        cols = list(schema)
        at = cols.index("status") + 1
        return rows.select(
            pl.lit(self.run_id).alias("run_id"),
            pl.lit(run_at, dtype=pl.Datetime("us")).alias("run_at"),
            *cols[:at],
            pl.Series("success", [r.success for r in self.rows], dtype=pl.Boolean),
            *cols[at:],
            pl.lit(self.data_origin).alias("data_origin"),
            pl.lit(self.trigger).alias("trigger"),
        )


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        try:
            return value.item()
        except (ValueError, AttributeError):
            pass
    if isinstance(value, float) and value != value:  # NaN
        return None
    if type(value).__name__ in ("NAType", "NaTType"):
        return None
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return str(value)


def to_json(value: Any, limit: int = 4000) -> str:
    text = json.dumps(_plain(value), default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _exception(result) -> str | None:
    info = getattr(result, "exception_info", None) or {}
    if info.get("raised_exception"):
        return str(info.get("exception_message"))
    for v in info.values():
        if isinstance(v, dict) and v.get("raised_exception"):
            return str(v.get("exception_message"))
    return None


def column_of(kwargs: dict) -> str | None:
    if "column" in kwargs:
        return str(kwargs["column"])
    if "column_A" in kwargs:
        return f"{kwargs['column_A']}, {kwargs['column_B']}"
    if "column_list" in kwargs and isinstance(kwargs["column_list"], list):
        return ", ".join(map(str, kwargs["column_list"]))
    if "group_by" in kwargs:
        return ", ".join(map(str, kwargs["group_by"]))
    return None


def _sensitive(column: str | None) -> bool:
    """A column whose values must not be quoted (brand, UPC, join key, respondent id, raw code,
    panel mean: the forbidden-name rule of the guards)."""
    from warehouse.quality.guards.names import forbidden_reason

    return column is not None and any(forbidden_reason(c) for c in str(column).split(", "))


def _masked(value: Any) -> Any:
    from warehouse.quality.identifiers import fingerprint

    return None if value is None else fingerprint(value)


def _observed(result: dict, column: str | None = None) -> str | None:
    if result.get("observed_value") is not None:
        obs = result["observed_value"]
        if _sensitive(column) and not isinstance(obs, int | float):
            obs = [_masked(v) for v in obs] if isinstance(obs, list) else _masked(obs)
        return obs if isinstance(obs, str) else to_json(obs, 500)
    if "unexpected_count" in result:
        n, total = result.get("unexpected_count"), result.get("element_count")
        return f"{n} of {total} values unexpected"
    return None


def _example(result: dict, frame, column: str | None = None) -> str | None:
    """Example rows (row number + values) or values of a failed expectation; values of sensitive
    columns are replaced by fingerprints, so the report never quotes a gated value."""
    idx = result.get("partial_unexpected_index_list")
    if frame is not None and idx:
        try:
            rows = frame.loc[list(idx)[:EXAMPLE_LIMIT]].astype(object)
            records = [
                {"row": int(i) + 1, **{k: _masked(v) if _sensitive(k) else v for k, v in r.items()}}
                for i, r in zip(rows.index, rows.to_dict("records"), strict=True)
            ]
            return to_json(records)
        except (KeyError, TypeError):
            pass
    values = result.get("partial_unexpected_list")
    if values:
        values = list(values)[:EXAMPLE_LIMIT]
        return to_json([_masked(v) for v in values] if _sensitive(column) else values)
    return None


def rows_from_validation(suite: str, model: str, kind: str, validation, frame) -> list[CheckRow]:
    """One row per expectation of a GX validation (a guard expectation: one per rule); ``frame``
    is the validated pandas batch (example rows are looked up in it)."""
    rows = []
    for r in validation.results:
        cfg = r.expectation_config
        kwargs = {k: v for k, v in dict(cfg.kwargs).items() if k != "batch_id"}
        result = dict(r.result or {})
        error = _exception(r)
        status = "error" if error else ("passed" if r.success else "failed")
        violations = (result.get("details") or {}).get("violations")
        if violations is not None and not error:
            rows += _guard_rows(suite, model, cfg.type, kwargs, violations)
            continue
        rows.append(
            CheckRow(
                suite=suite,
                model=model,
                kind=kind,
                expectation_type=cfg.type,
                status=status,
                column_name=column_of(kwargs),
                observed_value=error or _observed(result, column_of(kwargs)),
                unexpected_count=result.get("unexpected_count"),
                element_count=result.get("element_count"),
                example=None if r.success else _example(result, frame, column_of(kwargs)),
                kwargs=to_json({k: v for k, v in kwargs.items() if k != "context_key"}, 2000),
            )
        )
    return rows


def _guard_rows(
    suite: str, model: str, etype: str, kwargs: dict, violations: dict[str, list[dict]]
) -> list[CheckRow]:
    """One row per de-identification rule of a guard expectation."""
    out = []
    args = {k: v for k, v in kwargs.items() if k not in ("context_key", "rules")}
    for rule, found in violations.items():
        out.append(
            CheckRow(
                suite=suite,
                model=model,
                kind="guard",
                expectation_type=etype,
                status="failed" if found else "passed",
                column_name="; ".join(sorted({v["column"] for v in found})) or None,
                rule=rule,
                observed_value="; ".join(v["message"] for v in found) or "no violation",
                unexpected_count=len(found),
                example=to_json(found[:EXAMPLE_LIMIT]) if found else None,
                kwargs=to_json({**args, "rule": rule}),
            )
        )
    return out


__all__ = ["EXAMPLE_LIMIT", "CheckRow", "QualityResult", "SuiteResult", "rows_from_validation"]
