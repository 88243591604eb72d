"""Within-category pairs (gated): C(n_c, 2) per category, a < b, ties flagged (|delta| < 1e-10),
winner = the side with the higher panel mean, null exactly for ties."""

import great_expectations as gx

from warehouse.quality.contracts import no_respondent_columns, pair_outcome_consistent, suite_of
from warehouse.quality.expectations import ExpectGroupRowCountsToEqual, ExpectNoRowsToMatchQuery

MODEL = "marts.fct_within_category_pairs"


def parameters(con) -> dict:
    rows = con.sql(
        "select category, n_within_category_pairs from marts.dim_categories order by 1"
    ).fetchall()
    return {"pairs_per_category": {c: int(n) for c, n in rows if n}}


def build_suite() -> gx.ExpectationSuite:
    E = gx.expectations
    return suite_of(
        MODEL,
        no_respondent_columns(),
        E.ExpectColumnValuesToBeUnique(column="pair_key"),
        ExpectGroupRowCountsToEqual(
            group_by=["category"], expected_counts={"$PARAMETER": "pairs_per_category"}
        ),
        E.ExpectColumnPairValuesAToBeGreaterThanB(
            column_A="product_code_b", column_B="product_code_a"
        ),
        E.ExpectColumnValuesToNotBeNull(column="is_tie"),
        *pair_outcome_consistent(),
        ExpectNoRowsToMatchQuery(
            unexpected_rows_query="not is_tie and ((winner_product_code == product_code_a) "
            "!= (panel_mean_a > panel_mean_b))"
        ),
        ExpectNoRowsToMatchQuery(
            unexpected_rows_query="abs(panel_mean_difference - (panel_mean_a - panel_mean_b)) "
            "> 1e-12"
        ),
    )
