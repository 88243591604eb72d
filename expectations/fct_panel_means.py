"""The target (gated): one panel mean per benchmark product, on the 1-7 scale, n >= 20."""

import great_expectations as gx

from warehouse.quality.contracts import BENCHMARK_SCALE, no_respondent_columns

MODEL = "marts.fct_panel_means"
MIN_RATINGS = 20


def parameters(con) -> dict:
    keys = con.sql("select product_key from marts.dim_products").fetchall()
    return {"product_keys": [k for (k,) in keys]}


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_respondent_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="product_key"))
    suite.add_expectation(
        E.ExpectColumnDistinctValuesToEqualSet(
            column="product_key", value_set={"$PARAMETER": "product_keys"}
        )
    )
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
