"""The quality result model, history and the self-contained HTML report (no GX needed)."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from warehouse.quality import QualityError
from warehouse.quality.report import write_report
from warehouse.quality.runner import (
    CheckRow,
    QualityResult,
    SuiteResult,
    append_history,
    read_history,
)


def _result(failing: bool) -> QualityResult:
    ok = CheckRow("marts.dim_products", "marts.dim_products", "suite",
                  "expect_column_values_to_be_unique", "passed", column_name="product_key",
                  observed_value="0 of 247 values unexpected")  # fmt: skip
    skipped = CheckRow("marts.fct_panel_means", "marts.fct_panel_means", "suite",
                       "expect_column_values_to_be_between", "skipped",
                       column_name="n_ratings")  # fmt: skip
    bad = CheckRow(
        "deidentification.x", "x", "guard", "expect_table_to_pass_deidentification_guards",
        "failed" if failing else "passed", column_name="brand", rule="forbidden_column_name",
        observed_value="table x, column brand: rule forbidden_column_name: the name says a brand",
        unexpected_count=1,
        example=json.dumps([{"column": "brand", "message": "<script>alert(1)</script>"}]),
    )  # fmt: skip
    return QualityResult(
        run_id="abc",
        run_at=datetime(2026, 1, 2, tzinfo=UTC),
        db_path=Path("w.duckdb"),
        data_origin="simulation",
        trigger="test",
        suites=[
            SuiteResult("marts.dim_products", "marts.dim_products", "suite", [ok]),
            SuiteResult("marts.fct_panel_means", "marts.fct_panel_means", "suite", [skipped]),
            SuiteResult("deidentification.x", "x", "guard", [bad]),
        ],
        public_tables=("marts.dim_categories",),
    )


def test_result_model_success_failures_and_frame() -> None:
    good, bad = _result(False), _result(True)
    assert good.success and not good.failures
    assert not bad.success and [r.rule for r in bad.failures] == ["forbidden_column_name"]
    with pytest.raises(QualityError, match="deidentification.x.*column brand"):
        bad.raise_for_failures("gate")
    frame = bad.to_frame()
    assert frame["success"].to_list() == [True, None, False]
    assert {"run_id", "run_at", "suite", "column_name", "rule", "data_origin"} <= set(frame.columns)
    assert frame.columns.index("success") == frame.columns.index("status") + 1
    s = bad.summary()
    assert s["n_expectations"] == 2 and s["n_failed"] == 1 and s["n_skipped"] == 1
    assert s["suites"]["deidentification.x"] == [0, 1]


def test_history_and_offline_report(tmp_path: Path) -> None:
    hist = tmp_path / "quality" / "history.jsonl"
    for failing in (False, True, False):
        append_history(hist, _result(failing))
    hist.write_text(hist.read_text() + "not json\n")
    history = read_history(hist)
    assert len(history) == 3
    out = write_report(_result(True), history, tmp_path / "reports" / "quality.html")
    html = out.read_text()
    assert "FAILED" in html and "forbidden_column_name" in html
    assert "<script>alert" not in html  # escaped
    links = re.findall(r"""(?:src|href)\s*=\s*["']([^"']*)["']""", html)
    assert links and all(u.startswith(("#", "data:image/png;base64,")) for u in links)
    assert html.count("data:image/png;base64,") == 2  # trend and suite-by-run plots
    assert "simulated" in html
