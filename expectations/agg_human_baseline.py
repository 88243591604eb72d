"""Human-baseline headline figures (public): every metric once, next to its published value."""

import great_expectations as gx

from warehouse.quality.contracts import BENCHMARK_SCALE, no_gated_columns, suite_of

MODEL = "marts.agg_human_baseline"
METRICS = [
    "n_blocks",
    "n_panelist_blocks",
    "panelist_accuracy_median",
    "panelist_accuracy_q25",
    "panelist_accuracy_q75",
    "alpha_mean",
    "split_half_median",
    "kendall_w_median",
    "panel3_accuracy",
    "panel5_accuracy",
]


def build_suite() -> gx.ExpectationSuite:
    E = gx.expectations
    return suite_of(
        MODEL,
        no_gated_columns(),
        E.ExpectColumnValuesToBeUnique(column="metric"),
        E.ExpectColumnDistinctValuesToEqualSet(column="metric", value_set=METRICS),
        E.ExpectColumnValuesToNotBeNull(column="published_value"),
        E.ExpectColumnValuesToNotBeNull(column="warehouse_value", meta=BENCHMARK_SCALE),
    )
