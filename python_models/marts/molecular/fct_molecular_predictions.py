"""Test-split predictions of every registered fit, plus the Original-Labels leakage audit."""

from warehouse import molecular_marts


def model(dbt, session):
    dbt.config(materialized="table")
    return molecular_marts.predictions(
        dbt.ref("stg_fartdb__molecules").df(), dbt.ref("dim_ml_fits").df(), split="test"
    )
