"""Feature block S: category-subset one-hot per product (seeds/categories.csv order)."""

from warehouse.features import marts


def model(dbt, session):
    dbt.config(materialized="table")
    return marts.subset_features(dbt.ref("dim_products").pl(), dbt.ref("categories").pl())
