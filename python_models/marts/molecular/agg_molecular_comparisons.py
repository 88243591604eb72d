"""McNemar test between every pair of molecular models (Holm-corrected)."""

from warehouse.molecular import marts


def model(dbt, session):
    dbt.config(materialized="table")
    predictions = dbt.ref("fct_molecular_predictions").pl()
    return marts.agg_molecular_comparisons(predictions)
