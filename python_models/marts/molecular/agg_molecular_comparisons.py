"""McNemar test between every pair of molecular models (Holm-corrected)."""

from warehouse import molecular_marts


def model(dbt, session):
    dbt.config(materialized="table")
    return molecular_marts.comparisons_table(dbt.ref("fct_molecular_predictions").df())
