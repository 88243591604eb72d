"""Block C's ingredient -> FoodAtlas food matches, one row per parsed ingredient."""

from warehouse.features import marts


def model(dbt, session):
    dbt.config(materialized="table")
    return marts.ingredient_matches(
        dbt.ref("dim_products").pl(),
        dbt.ref("stg_foodatlas__entities").pl(),
        dbt.ref("stg_foodatlas__edges").pl(),
        dbt.ref("foodatlas_food_synonyms").pl(),
    )
