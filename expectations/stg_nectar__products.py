"""Staging products (gated: brand, UPC, ingredient lists that may name the brand)."""

import great_expectations as gx

MODEL = "staging.stg_nectar__products"


def build_suite() -> gx.ExpectationSuite:
    suite = gx.ExpectationSuite(name=MODEL)
    E = gx.expectations
    suite.add_expectation(E.ExpectColumnValuesToBeUnique(column="product_year_key"))
    for col in ("product_key", "category", "product_code", "product_year"):
        suite.add_expectation(E.ExpectColumnValuesToNotBeNull(column=col))
    # UPC-A/EAN-13 digits when present (the guards look these values up in public data)
    suite.add_expectation(
        E.ExpectColumnValuesToMatchRegex(column="upc", regex=r"^\d{8,14}$", mostly=0.95)
    )
    for col in ("serving_size_g", "total_fat_g", "sodium_mg", "protein_g", "total_sugars_g"):
        suite.add_expectation(E.ExpectColumnValuesToBeBetween(column=col, min_value=0))
    return suite
