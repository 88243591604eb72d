"""Raw contract: nectar_product_labels.csv (Croissant record set, one row per product)."""

import great_expectations as gx

from warehouse.quality.contracts import product_labels_suite

MODEL = "raw.nectar_product_labels"


def build_suite() -> gx.ExpectationSuite:
    return product_labels_suite("nectar_product_labels.csv", MODEL)
