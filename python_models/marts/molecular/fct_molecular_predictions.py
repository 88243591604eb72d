"""Test-split predictions of every registered fit, plus the Original-Labels leakage audit."""

from warehouse.molecular import marts


def model(dbt, session):
    dbt.config(materialized="table")
    molecules = dbt.ref("stg_fartdb__molecules").pl()
    fits = dbt.ref("dim_ml_fits").pl()
    return marts.fct_molecular_predictions(molecules, fits)
