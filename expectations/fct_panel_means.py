"""The target (gated): one panel mean per benchmark product, on the 1-7 scale, n >= 20."""

import great_expectations as gx

from warehouse.quality.contracts import (
    BENCHMARK_SCALE,
    benchmark_product_keys,
    no_respondent_columns,
    one_row_per_benchmark_product,
    suite_of,
)

MODEL = "marts.fct_panel_means"
MIN_RATINGS = 20
parameters = benchmark_product_keys


def build_suite() -> gx.ExpectationSuite:
    E = gx.expectations
    return suite_of(
        MODEL,
        no_respondent_columns(),
        *one_row_per_benchmark_product(),
        E.ExpectColumnValuesToNotBeNull(column="panel_mean"),
        E.ExpectColumnValuesToBeBetween(column="panel_mean", min_value=1, max_value=7),
        E.ExpectColumnValuesToBeBetween(column="panel_sd", min_value=0),
        E.ExpectColumnValuesToBeBetween(
            column="n_ratings", min_value=MIN_RATINGS, meta=BENCHMARK_SCALE
        ),
    )
