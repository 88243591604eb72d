"""Raw contract: product_labels_manually_cleaned.csv (Croissant record set, one row per product)."""

import great_expectations as gx

from warehouse.quality.contracts import product_labels_suite

MODEL = "raw.product_labels_manually_cleaned"


def build_suite() -> gx.ExpectationSuite:
    return product_labels_suite("product_labels_manually_cleaned.csv", MODEL)
