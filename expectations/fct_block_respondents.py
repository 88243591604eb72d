"""Block memberships of panelists (gated: n_categories_rated is a quasi-identifier): no
respondent id, per-block panelist numbers 1..n, as many rows per block as respondents."""

import great_expectations as gx

from warehouse.quality.contracts import (
    no_respondent_columns,
    one_row_per_panelist_and_block,
    respondents_per_block,
)

MODEL = "marts.fct_block_respondents"
parameters = respondents_per_block


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_respondent_columns())
    for e in one_row_per_panelist_and_block():
        suite.add_expectation(e)
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="panelist_number", min_value=1))
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="n_categories_rated", min_value=1))
    return suite
