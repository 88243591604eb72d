"""The custom GX expectations (pandas) and the suites in expectations/ (they build, name their
model, and only use what GX and warehouse.quality.expectations provide)."""

from __future__ import annotations

import pandas as pd
import pytest

gx = pytest.importorskip("great_expectations")

from warehouse.quality import QualityError, guards  # noqa: E402
from warehouse.quality.expectations import (  # noqa: E402
    GUARD_CONTEXTS,
    ExpectGroupRowCountsToEqual,
    ExpectNoRowsToMatchQuery,
    ExpectTableColumnKindsToMatch,
    ExpectTableColumnsToNotContain,
    ExpectTableToPassDeidentificationGuards,
    column_kind,
)
from warehouse.quality.runner import _GX, load_suite_modules, suite_relations  # noqa: E402


@pytest.fixture(scope="module")
def gxr() -> _GX:
    return _GX()


def _validate(gxr: _GX, frame: pd.DataFrame, *expectations, parameters=None):
    suite = gx.ExpectationSuite(name="t")
    for e in expectations:
        suite.add_expectation(e)
    return gxr.validate(frame, suite, parameters).results


FRAME = pd.DataFrame(
    {
        "category": ["Bacon", "Bacon", "Bacon", "Milk"],
        "code": [1, 2, 3, 1],
        "brand": ["x", "y", "z", "w"],
        "score": [1.5, None, 2.0, 3.0],
    }
)


def test_table_columns_to_not_contain(gxr) -> None:
    bad, ok = _validate(
        gxr,
        FRAME,
        ExpectTableColumnsToNotContain(column_list=["BRAND"], column_regex_list=["respondent"]),
        ExpectTableColumnsToNotContain(column_list=["upc"], column_regex_list=["^(?!n_).*resp"]),
    )
    assert not bad.success and bad.result["observed_value"] == ["brand"]
    assert ok.success


def test_no_rows_to_match_query(gxr) -> None:
    (r,) = _validate(gxr, FRAME, ExpectNoRowsToMatchQuery(unexpected_rows_query="code > 2"))
    assert not r.success and r.result["unexpected_count"] == 1
    assert r.result["partial_unexpected_list"][0]["code"] == 3
    (r,) = _validate(
        gxr, FRAME, ExpectNoRowsToMatchQuery(unexpected_rows_query="score.isna() and code > 5")
    )
    assert r.success


def test_group_row_counts(gxr) -> None:
    exact, param, wrong, each = _validate(
        gxr,
        FRAME,
        ExpectGroupRowCountsToEqual(group_by=["category"], expected_counts={"Bacon": 3, "Milk": 1}),
        ExpectGroupRowCountsToEqual(group_by=["category"], expected_counts={"$PARAMETER": "n"}),
        ExpectGroupRowCountsToEqual(group_by=["category"], expected_counts={"Bacon": 3, "Oat": 2}),
        ExpectGroupRowCountsToEqual(group_by=["category"], value=3),
        parameters={"n": {"Bacon": 3, "Milk": 1}},
    )
    assert exact.success and param.success
    assert not wrong.success and wrong.result["unexpected_count"] == 2  # Oat missing, Milk extra
    assert not each.success


def test_column_kinds(gxr) -> None:
    (ok, bad) = _validate(
        gxr,
        FRAME,
        ExpectTableColumnKindsToMatch(column_kinds={"category": "text", "code": "integer"}),
        ExpectTableColumnKindsToMatch(column_kinds={"score": "integer", "missing": "text"}),
    )
    assert ok.success
    assert not bad.success and bad.result["unexpected_count"] == 2
    assert column_kind(pd.Series([True, None], dtype="boolean")) == "boolean"
    assert column_kind(pd.Series(pd.to_datetime(["2025-01-01"]))) == "timestamp"


def test_guard_expectation_reports_violations(gxr) -> None:
    ctx = guards.GatedContext(
        panel_means=pd.DataFrame(columns=["category", "product_code", "panel_mean", "is_analog"]),
        names=("Havtra",),
    )
    GUARD_CONTEXTS["k"] = ctx
    try:
        (r,) = _validate(
            gxr,
            FRAME.assign(text=["Havtra blend", "", "", ""]),
            ExpectTableToPassDeidentificationGuards(
                rules=["brand_in_text", "forbidden_column_name", "row_order_hidden_id"],
                table_name="t",
                context_key="k",
            ),
        )
    finally:
        GUARD_CONTEXTS.pop("k")
    assert not r.success
    by_rule = r.result["details"]["violations"]
    assert set(by_rule) == {"brand_in_text", "forbidden_column_name", "row_order_hidden_id"}
    assert "column text: rule brand_in_text" in by_rule["brand_in_text"][0]["message"]
    assert by_rule["forbidden_column_name"][0]["column"] == "brand"
    assert by_rule["row_order_hidden_id"] == []


def test_every_suite_file_builds(gxr, data_mirror) -> None:
    from warehouse.config import load_settings
    from warehouse.quality.contracts import use_settings

    modules = load_suite_modules()
    assert len(modules) >= 20
    with use_settings(load_settings(mirror=data_mirror)):
        for mod in modules:
            suite = mod.build_suite()
            schema, table = mod.MODEL.split(".")
            assert schema in {"raw", "staging", "marts"}
            assert mod.__file__.endswith(f"/{table}.py"), "one file per model, named like it"
            assert suite.name == mod.MODEL and suite.expectations
    assert suite_relations() == [mod.MODEL for mod in modules]  # what Dagster places checks on


def test_a_suite_file_without_a_literal_model_is_named(tmp_path) -> None:
    """The definitions read ``MODEL`` from the source: a suite that computes it is refused by
    name, not skipped (its check would silently vanish from the asset graph)."""
    suite = "\ndef build_suite():\n    pass\n"
    (tmp_path / "ok.py").write_text('MODEL = "marts.dim_blocks"\n' + suite)
    (tmp_path / "computed.py").write_text('MODEL = "marts." + "dim_products"\n' + suite)
    with pytest.raises(QualityError, match=r"computed\.py defines no MODEL"):
        suite_relations(tmp_path)
    (tmp_path / "computed.py").write_text('MODEL = "marts.dim_products"\n')  # no build_suite
    with pytest.raises(QualityError, match=r"computed\.py defines no MODEL/build_suite"):
        suite_relations(tmp_path)
    (tmp_path / "computed.py").unlink()
    assert suite_relations(tmp_path) == ["marts.dim_blocks"]
