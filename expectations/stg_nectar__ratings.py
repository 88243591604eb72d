"""Staging ratings (gated): typed keys, the target on the 1-7 scale, one rating per key."""

import great_expectations as gx

from warehouse.quality.expectations import ExpectTableColumnKindsToMatch

MODEL = "staging.stg_nectar__ratings"


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="rating_key"))
    for col in ("rating_key", "product_key", "category", "rating_year", "respondent_id"):
        suite.add_expectation(E.ExpectColumnValuesToNotBeNull(column=col))
    suite.add_expectation(
        ExpectTableColumnKindsToMatch(
            column_kinds={
                "rating_year": "integer",
                "respondent_id": "integer",
                "product_code": "integer",
                "similarity": "float",
                "is_benchmark_category": "boolean",
                "is_benchmark_year": "boolean",
            }
        )
    )
    suite.add_expectation(
        E.ExpectColumnValuesToBeInSet(
            column="similarity", value_set=[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]
        )
    )
    suite.add_expectation(
        E.ExpectCompoundColumnsToBeUnique(
            column_list=["rating_year", "category", "respondent_id", "product_code"]
        )
    )
    suite.add_expectation(
        E.ExpectColumnValuesToBeInSet(
            column="data_origin", value_set=["nectar", "simulation", "test_fixture"]
        )
    )
    return suite
