"""LOO panelist accuracy (public): one row per panelist and block, scores in range, no key that
identifies a person."""

import great_expectations as gx

from warehouse.quality.contracts import (
    no_gated_columns,
    one_row_per_panelist_and_block,
    respondents_per_block,
    suite_of,
)
from warehouse.quality.expectations import ExpectNoRowsToMatchQuery

MODEL = "marts.fct_panelist_block_accuracy"
parameters = respondents_per_block


def build_suite() -> gx.ExpectationSuite:
    E = gx.expectations
    return suite_of(
        MODEL,
        no_gated_columns(),
        *one_row_per_panelist_and_block(),
        E.ExpectColumnValuesToNotBeNull(column="pairwise_accuracy"),
        *(
            E.ExpectColumnValuesToBeBetween(column=col, min_value=0, max_value=1)
            for col in ("pairwise_accuracy", "recall_at_1", "recall_at_3")
        ),
        E.ExpectColumnValuesToBeBetween(column="spearman", min_value=-1, max_value=1),
        ExpectNoRowsToMatchQuery(
            unexpected_rows_query="n_pairs != n_analogs * (n_analogs - 1) / 2"
        ),
    )
