"""The target (gated): one panel mean per benchmark product, on the 1-7 scale, n >= 20."""

import great_expectations as gx

from warehouse.quality.contracts import (
    BENCHMARK_SCALE,
    benchmark_product_keys,
    no_respondent_columns,
    one_row_per_benchmark_product,
)

MODEL = "marts.fct_panel_means"
MIN_RATINGS = 20
parameters = benchmark_product_keys


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_respondent_columns())
    for e in one_row_per_benchmark_product():
        suite.add_expectation(e)
    suite.add_expectation(E.ExpectColumnValuesToNotBeNull(column="panel_mean"))
    suite.add_expectation(
        E.ExpectColumnValuesToBeBetween(column="panel_mean", min_value=1, max_value=7)
    )
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="panel_sd", min_value=0))
    suite.add_expectation(
        E.ExpectColumnValuesToBeBetween(
            column="n_ratings", min_value=MIN_RATINGS, meta=BENCHMARK_SCALE
        )
    )
    return suite
