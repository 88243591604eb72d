"""Raw contract: NECTAR ingredients and nutrition file (Croissant record set, one row per
product-year, non-negative label values)."""

import great_expectations as gx

from warehouse.quality.contracts import raw_contract

MODEL = "raw.nectar_consolidated_ingredients_nutrition"
NUTRIENTS = (
    "Calories",
    "Total Fat (g)",
    "Sodium (mg)",
    "Total Carbohydrate (g)",
    "Dietary Fiber (g)",
    "Total Sugars (g)",
    "Protein (g)",
)


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    for e in raw_contract("nectar_consolidated_ingredients_nutrition.csv"):
        suite.add_expectation(e)
    E = gx.expectations
    for col in ("Year", "Category", "Product_Code"):
        suite.add_expectation(E.ExpectColumnValuesToNotBeNull(column=col))
    suite.add_expectation(
        E.ExpectCompoundColumnsToBeUnique(column_list=["Year", "Category", "Product_Code"])
    )
    suite.add_expectation(E.ExpectColumnValuesToBeBetween(column="Serving Size (g)", min_value=0))
    for col in NUTRIENTS:
        suite.add_expectation(E.ExpectColumnValuesToBeBetween(column=col, min_value=0))
    return suite
