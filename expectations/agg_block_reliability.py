"""Per-block reliability (public): one row per block, alpha <= 1, Kendall's W in [0, 1]."""

import great_expectations as gx

from warehouse.quality.contracts import no_gated_columns

MODEL = "marts.agg_block_reliability"


def parameters(con) -> dict:
    keys = con.sql("select block_key from marts.dim_blocks order by 1").fetchall()
    return {"block_keys": [k for (k,) in keys]}


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_gated_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="block_key"))
    suite.add_expectation(
        E.ExpectColumnDistinctValuesToEqualSet(
            column="block_key", value_set={"$PARAMETER": "block_keys"}
        )
    )
    suite.add_expectation(
        E.ExpectColumnValuesToBeBetween(column="krippendorff_alpha_ordinal", max_value=1)
    )
    suite.add_expectation(
        E.ExpectColumnValuesToBeBetween(column="kendall_w", min_value=0, max_value=1)
    )
    return suite
