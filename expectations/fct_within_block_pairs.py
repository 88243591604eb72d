"""Within-block pairs (gated): C(n_analogs, 2) per block, ties flagged like the category pairs."""

import great_expectations as gx

from warehouse.quality.contracts import no_respondent_columns, pair_outcome_consistent, suite_of
from warehouse.quality.expectations import ExpectGroupRowCountsToEqual

MODEL = "marts.fct_within_block_pairs"


def parameters(con) -> dict:
    rows = con.sql("select block_key, n_analog_pairs from marts.dim_blocks order by 1").fetchall()
    return {"pairs_per_block": {k: int(n) for k, n in rows if n}}


def build_suite() -> gx.ExpectationSuite:
    return suite_of(
        MODEL,
        no_respondent_columns(),
        gx.expectations.ExpectColumnValuesToBeUnique(column="block_pair_key"),
        ExpectGroupRowCountsToEqual(
            group_by=["block_key"], expected_counts={"$PARAMETER": "pairs_per_block"}
        ),
        *pair_outcome_consistent(),
    )
