"""Batched GX validation (warehouse.quality.batched): on a table with planted defects spread over
several batches, every expectation's row (status, counts, observed value, examples) equals the
whole-table validation's row; an expectation without a combination rule is refused."""

from __future__ import annotations

from dataclasses import asdict
from types import SimpleNamespace

import duckdb
import pytest

gx = pytest.importorskip("great_expectations")

from warehouse.quality import QualityError  # noqa: E402
from warehouse.quality.batched import COMBINE, validate_in_batches  # noqa: E402
from warehouse.quality.expectations import (  # noqa: E402
    ExpectGroupRowCountsToEqual,
    ExpectNoRowsToMatchQuery,
    ExpectTableColumnKindsToMatch,
    ExpectTableColumnsToNotContain,
)
from warehouse.quality.runner import _GX, load_suite_modules, run_suite_module  # noqa: E402

N = 60


@pytest.fixture(scope="module")
def gxr() -> _GX:
    return _GX()


@pytest.fixture()
def con():
    c = duckdb.connect()
    # key: unique except rows 3 and 47 (different batches) and 20, 21, 58; a null at row 10
    # pair (a, b): duplicated across batches at rows 5 / 50, and an all-null pair twice
    # score: out of [0, 1] at rows 8, 33, 59 (mostly 0.9 still passes); n: null at 2 rows
    c.execute(
        f"""
        create table t as
        select i,
               case when i = 47 then 3 when i in (21, 58) then 20 when i = 10 then null
                    else i end as key,
               case when i in (5, 50) then 'x' when i in (12, 40) then null
                    else 'a' || i end as a,
               case when i in (5, 50) then 1 when i in (12, 40) then null else i end as b,
               case when i in (8, 33, 59) then 1.5 else i / {N} end as score,
               case when i in (15, 44) then null else i % 3 end::integer as n,
               'g' || (i % 4) as grp
        from range({N}) r(i)
        """
    )
    yield c
    c.close()


def _suite():
    E = gx.expectations
    suite = gx.ExpectationSuite(name="main.t")
    for e in (
        ExpectTableColumnsToNotContain(column_list=["brand"]),
        ExpectTableColumnKindsToMatch(column_kinds={"n": "integer", "a": "text", "key": "float"}),
        E.ExpectColumnValuesToBeUnique(column="key"),
        E.ExpectCompoundColumnsToBeUnique(column_list=["a", "b"]),
        E.ExpectColumnValuesToNotBeNull(column="n"),
        E.ExpectColumnValuesToBeBetween(column="score", min_value=0, max_value=1),
        E.ExpectColumnValuesToBeBetween(column="score", min_value=0, max_value=1, mostly=0.9),
        E.ExpectColumnValuesToBeInSet(column="n", value_set=[0, 1]),
        ExpectNoRowsToMatchQuery(unexpected_rows_query="score > 1 or i == 7"),
        ExpectGroupRowCountsToEqual(group_by=["grp"], expected_counts={"$PARAMETER": "per_grp"}),
        ExpectGroupRowCountsToEqual(group_by=["grp"], value=15),
    ):
        suite.add_expectation(e)
    return suite


def _module(suite):
    return SimpleNamespace(
        MODEL="main.t",
        build_suite=lambda: suite,
        parameters=lambda con: {"per_grp": {"g0": 15, "g1": 15, "g2": 14, "g5": 1}},
    )


@pytest.mark.parametrize("batch_rows", [7, 25])
def test_batched_equals_whole_table(gxr, con, batch_rows) -> None:
    whole = run_suite_module(gxr, con, _module(_suite()), "simulation", batch_rows=0)
    batched = run_suite_module(gxr, con, _module(_suite()), "simulation", batch_rows=batch_rows)
    assert whole.error is None and batched.error is None
    assert whole.batches == 0 and batched.batches == -(-N // batch_rows)
    a, b = [asdict(r) for r in whole.rows], [asdict(r) for r in batched.rows]
    assert a == b
    failed = sorted(r["expectation_type"] for r in b if r["status"] == "failed")
    assert failed == [  # every planted defect is found (value=15 and mostly=0.9 hold)
        "expect_column_values_to_be_between",
        "expect_column_values_to_be_in_set",
        "expect_column_values_to_be_unique",
        "expect_column_values_to_not_be_null",
        "expect_compound_columns_to_be_unique",
        "expect_group_row_counts_to_equal",
        "expect_no_rows_to_match_query",
        "expect_table_column_kinds_to_match",
    ]
    unique = next(r for r in b if r["expectation_type"] == "expect_column_values_to_be_unique")
    assert unique["unexpected_count"] == 5 and '"row": 4' in unique["example"]  # rows 3, 47, ...


def test_unknown_expectation_is_refused(gxr, con) -> None:
    suite = gx.ExpectationSuite(name="main.t")
    suite.add_expectation(gx.expectations.ExpectColumnMeanToBeBetween(column="score", min_value=0))
    with pytest.raises(QualityError, match="no batched combination rule"):
        validate_in_batches(gxr, con, suite, "select * from t", {}, 10)


def test_every_suite_expectation_has_a_rule(data_mirror) -> None:
    """A suite whose table outgrows the batch size must not fail for want of a rule: every
    expectation of the suites of tables that grow with the bundle has one."""
    growing = {
        "raw.nectar_consolidated_sensory_rating",
        "staging.stg_nectar__ratings",
        "marts.fct_block_respondents",
        "marts.fct_panelist_block_accuracy",
        "marts.fct_within_block_pairs",
        "marts.fct_within_category_pairs",
    }
    from warehouse.config import load_settings
    from warehouse.quality.contracts import use_settings

    mods = [m for m in load_suite_modules() if m.MODEL in growing]
    assert len(mods) == len(growing)
    with use_settings(load_settings(mirror=data_mirror)):
        for mod in mods:
            for e in mod.build_suite().expectations:
                assert e.expectation_type in COMBINE, (mod.MODEL, e.expectation_type)
