"""Raw contract: product_labels_manually_cleaned.csv (Croissant record set, one row per product)."""

import great_expectations as gx

from warehouse.quality.contracts import raw_contract

MODEL = "raw.product_labels_manually_cleaned"


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    for e in raw_contract("product_labels_manually_cleaned.csv"):
        suite.add_expectation(e)
    E = gx.expectations
    for col in ("category", "product_code"):
        suite.add_expectation(E.ExpectColumnValuesToNotBeNull(column=col))
    suite.add_expectation(
        E.ExpectCompoundColumnsToBeUnique(column_list=["category", "product_code"])
    )
    return suite
