"""Feature block T: packaged MiniLM embedding of the cleaned ingredient list (cached)."""

from warehouse.features import marts


def model(dbt, session):
    dbt.config(materialized="table")
    return marts.text_features(dbt.ref("dim_products").pl(), marts.feature_cache_dir())
