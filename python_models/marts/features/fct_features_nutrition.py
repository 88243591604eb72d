"""Feature block N: six label nutrients per 100 g per product, with imputation flags."""

from warehouse.features import marts


def model(dbt, session):
    dbt.config(materialized="table")
    return marts.nutrition_features(
        dbt.ref("dim_products").pl(), dbt.ref("fct_nutrition_per_100g").pl()
    )
