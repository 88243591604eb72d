"""Compound embeddings per canonical SMILES and encoder (fingerprint-derived; D-MPNN when fit)."""

from warehouse import molecular_marts


def model(dbt, session):
    dbt.config(materialized="table")
    return molecular_marts.compound_embeddings(
        dbt.ref("int_molecules_featurized").df(), dbt.ref("stg_fartdb__molecules").df()
    )
