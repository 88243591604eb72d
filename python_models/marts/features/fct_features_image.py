"""Feature block I: photo colour/texture descriptors, k=5 same-category imputation."""

from warehouse.features import marts


def model(dbt, session):
    dbt.config(materialized="table")
    others = [
        dbt.ref("fct_features_nutrition").pl(),
        dbt.ref("fct_features_compound").pl(),
        dbt.ref("fct_features_text").pl(),
    ]
    return marts.image_features(
        dbt.ref("dim_products").pl(),
        dbt.ref("stg_nectar__images").pl(),
        others,
        marts.feature_cache_dir(),
    )
