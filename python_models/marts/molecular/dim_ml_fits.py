"""Fitted molecular models: trains the fingerprint baselines (hashed artifacts) and lists the
registered D-MPNN fits of `tastebench train molecular`."""

from warehouse.molecular import marts


def model(dbt, session):
    dbt.config(materialized="table")
    molecules = dbt.ref("stg_fartdb__molecules").pl()
    featurized = dbt.ref("int_molecules_featurized").pl()
    return marts.dim_ml_fits(molecules, featurized)
