"""Feature block C, main configuration: one row per product."""

from warehouse.features import marts


def model(dbt, session):
    dbt.config(materialized="table")
    return marts.main_compound_features(dbt.ref("fct_features_compound_variants").pl())
