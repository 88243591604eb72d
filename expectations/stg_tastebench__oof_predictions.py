"""Published out-of-fold predictions: every model file predicts all 215 analogs once."""

import great_expectations as gx

from warehouse.quality.expectations import ExpectGroupRowCountsToEqual

MODEL = "staging.stg_tastebench__oof_predictions"
N_ANALOGS_PUBLISHED = 215  # the public files (registry pins) always cover the 215 real analogs


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="prediction_key"))
    suite.add_expectation(
        ExpectGroupRowCountsToEqual(group_by=["model_file_stem"], value=N_ANALOGS_PUBLISHED)
    )
    suite.add_expectation(
        E.ExpectCompoundColumnsToBeUnique(column_list=["model_file_stem", "product_key"])
    )
    suite.add_expectation(
        E.ExpectColumnUniqueValueCountToBeBetween(column="model_file_stem", min_value=9)
    )
    for col in ("category", "product_code", "predicted_score"):
        suite.add_expectation(E.ExpectColumnValuesToNotBeNull(column=col))
    return suite
