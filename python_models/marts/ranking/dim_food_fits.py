"""One row per fit of the default food-ranking stage (fit_id = content hash)."""

from warehouse.ranking import marts


def model(dbt, session):
    dbt.config(materialized="table")
    return marts.dim_food_fits(dbt.ref("fct_food_oof_predictions").pl())
