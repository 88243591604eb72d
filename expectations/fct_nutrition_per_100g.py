"""Nutrition block N (gated: raw codes): a row per benchmark product, non-negative values,
imputation flags consistent."""

import great_expectations as gx

from warehouse.quality.contracts import (
    benchmark_product_keys,
    no_respondent_columns,
    one_row_per_benchmark_product,
    suite_of,
)
from warehouse.quality.expectations import ExpectNoRowsToMatchQuery

MODEL = "marts.fct_nutrition_per_100g"
NUTRIENTS = (
    "total_fat_g",
    "sodium_g",
    "protein_g",
    "dietary_fiber_g",
    "total_carbohydrate_g",
    "total_sugars_g",
)
parameters = benchmark_product_keys


def build_suite() -> gx.ExpectationSuite:
    E = gx.expectations
    any_imputed = " or ".join(f"is_imputed_{n}" for n in NUTRIENTS)
    return suite_of(
        MODEL,
        no_respondent_columns(),
        *one_row_per_benchmark_product(),
        *(
            e
            for n in NUTRIENTS
            for e in (
                E.ExpectColumnValuesToNotBeNull(column=f"{n}_per_100g"),
                E.ExpectColumnValuesToBeBetween(column=f"{n}_per_100g", min_value=0),
            )
        ),
        ExpectNoRowsToMatchQuery(unexpected_rows_query=f"has_imputed_values != ({any_imputed})"),
    )
