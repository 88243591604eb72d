"""Coverage of every feature block: share of products with it; C mapping counts."""

from warehouse.features import marts


def model(dbt, session):
    dbt.config(materialized="table")
    frames = [
        dbt.ref("fct_features_subset").pl(),
        dbt.ref("fct_features_nutrition").pl(),
        dbt.ref("fct_features_compound").pl(),
        dbt.ref("fct_features_text").pl(),
        dbt.ref("fct_features_image").pl(),
    ]
    return marts.feature_coverage(dbt.ref("dim_products").pl(), frames)
