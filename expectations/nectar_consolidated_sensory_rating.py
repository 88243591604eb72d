"""Raw contract: NECTAR ratings as loaded (Croissant record set, rating ranges, no duplicates)."""

import great_expectations as gx

from warehouse.quality.contracts import raw_contract

MODEL = "raw.nectar_consolidated_sensory_rating"
OTHER_LIKERT = ("appearance", "flavor", "liking", "nutrition_purchase_intent", "texture")


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    for e in raw_contract("nectar_consolidated_sensory_rating.csv"):
        suite.add_expectation(e)
    E = gx.expectations
    for col in ("product_category", "year", "respondent", "product_code"):
        suite.add_expectation(E.ExpectColumnValuesToNotBeNull(column=col))
    # the target is range-checked strictly (also at load time); other Likert items are stored as
    # given (docs/decisions.md), so they only have to be in range for 99% of rows
    suite.add_expectation(
        E.ExpectColumnValuesToBeBetween(column="similarity", min_value=1, max_value=7)
    )
    for col in OTHER_LIKERT:
        suite.add_expectation(
            E.ExpectColumnValuesToBeBetween(column=col, min_value=1, max_value=7, mostly=0.99)
        )
    suite.add_expectation(
        E.ExpectCompoundColumnsToBeUnique(
            column_list=["year", "product_category", "respondent", "product_code"]
        )
    )
    return suite
