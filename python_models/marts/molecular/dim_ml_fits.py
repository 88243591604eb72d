"""Fitted molecular models: trains the fingerprint baselines (hashed artifacts) and lists the
registered D-MPNN fits of `tastebench train molecular`."""

from warehouse import molecular_marts


def model(dbt, session):
    dbt.config(materialized="table")
    return molecular_marts.train_and_register(
        dbt.ref("stg_fartdb__molecules").df(),
        dbt.ref("int_molecules_featurized").df()[["canonical_smiles", "morgan_on_bits"]],
    )
