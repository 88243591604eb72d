"""Split-half reliability (public): 1,000 iterations, agreement in [0, 1]."""

import great_expectations as gx

from warehouse.quality.contracts import BENCHMARK_SCALE, no_gated_columns

MODEL = "marts.agg_split_half_reliability"


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_gated_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="iteration"))
    suite.add_expectation(E.ExpectTableRowCountToEqual(value=1000, meta=BENCHMARK_SCALE))
    suite.add_expectation(
        E.ExpectColumnValuesToBeBetween(
            column="split_half_pairwise_agreement", min_value=0, max_value=1
        )
    )
    return suite
