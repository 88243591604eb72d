"""Within-block pairs (gated): C(n_analogs, 2) per block, ties flagged like the category pairs."""

import great_expectations as gx

from warehouse.config import project_var
from warehouse.quality.contracts import no_respondent_columns
from warehouse.quality.expectations import ExpectGroupRowCountsToEqual, ExpectNoRowsToMatchQuery

MODEL = "marts.fct_within_block_pairs"
TIE = project_var("tie_tolerance")  # dbt_project.yml, the one place it is set


def parameters(con) -> dict:
    rows = con.sql("select block_key, n_analog_pairs from marts.dim_blocks order by 1").fetchall()
    return {"pairs_per_block": {k: int(n) for k, n in rows if n}}


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_respondent_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="block_pair_key"))
    suite.add_expectation(
        ExpectGroupRowCountsToEqual(
            group_by=["block_key"], expected_counts={"$PARAMETER": "pairs_per_block"}
        )
    )
    suite.add_expectation(
        ExpectNoRowsToMatchQuery(
            unexpected_rows_query=f"is_tie != (abs(panel_mean_difference) < {TIE})"
        )
    )
    suite.add_expectation(
        ExpectNoRowsToMatchQuery(unexpected_rows_query="winner_product_code.isna() != is_tie")
    )
    return suite
