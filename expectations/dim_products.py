"""Benchmark products (gated): analog/reference flags, counts per category, every analog in at
least one block."""

import great_expectations as gx

from warehouse.quality.contracts import BENCHMARK_SCALE, no_respondent_columns
from warehouse.quality.expectations import ExpectGroupRowCountsToEqual, ExpectNoRowsToMatchQuery

MODEL = "marts.dim_products"


def parameters(con) -> dict:
    cats = con.sql(
        "select category, n_analogs, n_references from marts.dim_categories order by 1"
    ).fetchall()
    counts = {f"{c}:True": int(a) for c, a, _ in cats}
    counts |= {f"{c}:False": int(r) for c, _, r in cats if r}
    blocked = con.sql(
        "select distinct category || ':' || product_code from marts.fct_block_products order by 1"
    ).fetchall()
    return {"products_per_category": counts, "blocked_product_keys": [k for (k,) in blocked]}


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_respondent_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="product_key"))
    suite.add_expectation(
        E.ExpectCompoundColumnsToBeUnique(column_list=["category", "product_code"])
    )
    for col in ("product_key", "category", "product_code", "is_analog", "data_origin"):
        suite.add_expectation(E.ExpectColumnValuesToNotBeNull(column=col))
    suite.add_expectation(
        ExpectNoRowsToMatchQuery(unexpected_rows_query="is_analog == is_reference")
    )
    suite.add_expectation(
        ExpectGroupRowCountsToEqual(
            group_by=["category", "is_analog"],
            expected_counts={"$PARAMETER": "products_per_category"},
        )
    )
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="n_ratings", min_value=1))
    suite.add_expectation(
        E.ExpectColumnValuesToBeInSet(
            column="product_key",
            value_set={"$PARAMETER": "blocked_product_keys"},
            row_condition="is_analog == True",
            condition_parser="pandas",
            meta=BENCHMARK_SCALE,
        )
    )
    return suite
