"""Within-category pairs (gated): C(n_c, 2) per category, a < b, ties flagged (|delta| < 1e-10),
winner = the side with the higher panel mean, null exactly for ties."""

import great_expectations as gx

from warehouse.config import project_var
from warehouse.quality.contracts import no_respondent_columns
from warehouse.quality.expectations import ExpectGroupRowCountsToEqual, ExpectNoRowsToMatchQuery

MODEL = "marts.fct_within_category_pairs"
TIE = project_var("tie_tolerance")  # dbt_project.yml, the one place it is set


def parameters(con) -> dict:
    rows = con.sql(
        "select category, n_within_category_pairs from marts.dim_categories order by 1"
    ).fetchall()
    return {"pairs_per_category": {c: int(n) for c, n in rows if n}}


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_respondent_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="pair_key"))
    suite.add_expectation(
        ExpectGroupRowCountsToEqual(
            group_by=["category"], expected_counts={"$PARAMETER": "pairs_per_category"}
        )
    )
    suite.add_expectation(
        E.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="product_code_b", column_B="product_code_a"
        )
    )
    suite.add_expectation(E.ExpectColumnValuesToNotBeNull(column="is_tie"))
    suite.add_expectation(
        ExpectNoRowsToMatchQuery(
            unexpected_rows_query=f"is_tie != (abs(panel_mean_difference) < {TIE})"
        )
    )
    suite.add_expectation(
        ExpectNoRowsToMatchQuery(unexpected_rows_query="winner_product_code.isna() != is_tie")
    )
    suite.add_expectation(
        ExpectNoRowsToMatchQuery(
            unexpected_rows_query="not is_tie and ((winner_product_code == product_code_a) "
            "!= (panel_mean_a > panel_mean_b))"
        )
    )
    suite.add_expectation(
        ExpectNoRowsToMatchQuery(
            unexpected_rows_query="abs(panel_mean_difference - (panel_mean_a - panel_mean_b)) "
            "> 1e-12"
        )
    )
    return suite
