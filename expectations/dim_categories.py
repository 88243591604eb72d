"""Benchmark categories (public): one row each, pair counts = C(n_c, 2)."""

import great_expectations as gx

from warehouse.quality.contracts import no_gated_columns
from warehouse.quality.expectations import ExpectNoRowsToMatchQuery

MODEL = "marts.dim_categories"


def parameters(con) -> dict:
    """The benchmark categories of the seeds: 24, or 24 x K on a simulation scaled K times (the
    build adds the copies to the seed, macros/scaled_categories.sql)."""
    ((n,),) = con.sql("select count(*) from seeds.categories where is_benchmark").fetchall()
    return {"n_benchmark_categories": int(n)}


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(no_gated_columns())
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="category"))
    suite.add_expectation(
        E.ExpectTableRowCountToBeBetween(
            min_value=1, max_value={"$PARAMETER": "n_benchmark_categories"}
        )
    )
    suite.add_expectation(
        E.ExpectColumnValuesToBeInSet(
            column="subset", value_set=["meat", "nonsweet_dairy", "cheese", "sweet_dairy"]
        )
    )
    suite.add_expectation(
        E.ExpectColumnValuesToBeInSet(
            column="hbt_group", value_set=["meat", "nonsweet_dairy", "other_dairy"]
        )
    )
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="n_analogs", min_value=2))
    suite.add_expectation(
        ExpectNoRowsToMatchQuery(
            unexpected_rows_query="n_within_category_pairs != n_analogs * (n_analogs - 1) / 2"
        )
    )
    return suite
