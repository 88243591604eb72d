"""Benchmark categories (public): one row each, pair counts = C(n_c, 2)."""

import great_expectations as gx

from warehouse.quality.contracts import no_gated_columns
from warehouse.quality.expectations import ExpectNoRowsToMatchQuery

MODEL = "marts.dim_categories"


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_gated_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="category"))
    suite.add_expectation(E.ExpectTableRowCountToBeBetween(min_value=1, max_value=24))
    suite.add_expectation(
        E.ExpectColumnValuesToBeInSet(
            column="subset", value_set=["meat", "nonsweet_dairy", "cheese", "sweet_dairy"]
        )
    )
    suite.add_expectation(
        E.ExpectColumnValuesToBeInSet(
            column="hbt_group", value_set=["meat", "nonsweet_dairy", "other_dairy"]
        )
    )
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="n_analogs", min_value=2))
    suite.add_expectation(
        ExpectNoRowsToMatchQuery(
            unexpected_rows_query="n_within_category_pairs != n_analogs * (n_analogs - 1) / 2"
        )
    )
    return suite
