"""Group-size curve (public): k = 1..75 once each, accuracies in [0, 1]."""

import great_expectations as gx

from warehouse.quality.contracts import BENCHMARK_SCALE, no_gated_columns

MODEL = "marts.agg_group_size_curve"


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_gated_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="k"))
    suite.add_expectation(
        E.ExpectColumnDistinctValuesToEqualSet(
            column="k", value_set=list(range(1, 76)), meta=BENCHMARK_SCALE
        )
    )
    for col in ("median_accuracy", "q025", "q975", "mean_accuracy"):
        suite.add_expectation(E.ExpectColumnValuesToBeBetween(column=col, min_value=0, max_value=1))
    return suite
