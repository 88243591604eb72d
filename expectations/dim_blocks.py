"""Blocks (public): >= 20 respondents and >= 2 analogs, C(n_analogs, 2) pairs, unique keys."""

import great_expectations as gx

from warehouse.quality.contracts import no_gated_columns
from warehouse.quality.expectations import ExpectNoRowsToMatchQuery

MODEL = "marts.dim_blocks"


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_gated_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="block_key"))
    suite.add_expectation(E.ExpectCompoundColumnsToBeUnique(column_list=["category", "block_id"]))
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="n_respondents", min_value=20))
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="n_analogs", min_value=2))
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="block_id", min_value=0))
    suite.add_expectation(
        ExpectNoRowsToMatchQuery(
            unexpected_rows_query="n_analog_pairs != n_analogs * (n_analogs - 1) / 2"
        )
    )
    return suite
