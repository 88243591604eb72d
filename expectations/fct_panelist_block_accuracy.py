"""LOO panelist accuracy (public): one row per panelist and block, scores in range, no key that
identifies a person."""

import great_expectations as gx

from warehouse.quality.contracts import no_gated_columns
from warehouse.quality.expectations import ExpectGroupRowCountsToEqual, ExpectNoRowsToMatchQuery

MODEL = "marts.fct_panelist_block_accuracy"


def parameters(con) -> dict:
    rows = con.sql("select category, block_id, n_respondents from marts.dim_blocks").fetchall()
    return {"respondents_per_block": {f"{c}:{b}": int(n) for c, b, n in rows}}


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_gated_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="panelist_block_key"))
    suite.add_expectation(
        ExpectGroupRowCountsToEqual(
            group_by=["category", "block_id"],
            expected_counts={"$PARAMETER": "respondents_per_block"},
        )
    )
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
