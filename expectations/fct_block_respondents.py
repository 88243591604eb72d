"""Block memberships of panelists (gated: n_categories_rated is a quasi-identifier): no
respondent id, per-block panelist numbers 1..n, as many rows per block as respondents."""

import great_expectations as gx

from warehouse.quality.contracts import no_respondent_columns
from warehouse.quality.expectations import ExpectGroupRowCountsToEqual

MODEL = "marts.fct_block_respondents"


def parameters(con) -> dict:
    rows = con.sql("select category, block_id, n_respondents from marts.dim_blocks").fetchall()
    return {"respondents_per_block": {f"{c}:{b}": int(n) for c, b, n in rows}}


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_respondent_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="panelist_block_key"))
    suite.add_expectation(
        ExpectGroupRowCountsToEqual(
            group_by=["category", "block_id"],
            expected_counts={"$PARAMETER": "respondents_per_block"},
        )
    )
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="panelist_number", min_value=1))
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="n_categories_rated", min_value=1))
    return suite
