"""Raw contract: NECTAR ingredients and nutrition file (Croissant record set, one row per
product-year, non-negative label values)."""

import great_expectations as gx

from warehouse.quality.contracts import raw_contract, suite_of

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
    E = gx.expectations
    key = ["Year", "Category", "Product_Code"]
    return suite_of(
        MODEL,
        *raw_contract("nectar_consolidated_ingredients_nutrition.csv"),
        *(E.ExpectColumnValuesToNotBeNull(column=col) for col in key),
        E.ExpectCompoundColumnsToBeUnique(column_list=key),
        *(
            E.ExpectColumnValuesToBeBetween(column=col, min_value=0)
            for col in ("Serving Size (g)", *NUTRIENTS)
        ),
    )
