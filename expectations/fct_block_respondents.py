"""Block memberships of panelists (gated: n_categories_rated is a quasi-identifier): no
respondent id, per-block panelist numbers 1..n, as many rows per block as respondents."""

import great_expectations as gx

from warehouse.quality.contracts import (
    no_respondent_columns,
    one_row_per_panelist_and_block,
    respondents_per_block,
    suite_of,
)

MODEL = "marts.fct_block_respondents"
parameters = respondents_per_block


def build_suite() -> gx.ExpectationSuite:
    E = gx.expectations
    return suite_of(
        MODEL,
        no_respondent_columns(),
        *one_row_per_panelist_and_block(),
        E.ExpectColumnValuesToBeBetween(column="panelist_number", min_value=1),
        E.ExpectColumnValuesToBeBetween(column="n_categories_rated", min_value=1),
    )
