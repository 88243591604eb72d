"""LOO panelist accuracy (public): one row per panelist and block, scores in range, no key that
identifies a person."""

import great_expectations as gx

from warehouse.quality.contracts import (
    no_gated_columns,
    one_row_per_panelist_and_block,
    respondents_per_block,
)
from warehouse.quality.expectations import ExpectNoRowsToMatchQuery

MODEL = "marts.fct_panelist_block_accuracy"
parameters = respondents_per_block


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_gated_columns())
    for e in one_row_per_panelist_and_block():
        suite.add_expectation(e)
    suite.add_expectation(E.ExpectColumnValuesToNotBeNull(column="pairwise_accuracy"))
    for col in ("pairwise_accuracy", "recall_at_1", "recall_at_3"):
        suite.add_expectation(E.ExpectColumnValuesToBeBetween(column=col, min_value=0, max_value=1))
    suite.add_expectation(
        E.ExpectColumnValuesToBeBetween(column="spearman", min_value=-1, max_value=1)
    )
    suite.add_expectation(
        ExpectNoRowsToMatchQuery(unexpected_rows_query="n_pairs != n_analogs * (n_analogs - 1) / 2")
    )
    return suite
