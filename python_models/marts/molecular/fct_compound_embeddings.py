"""Compound embeddings per canonical SMILES and encoder (fingerprint-derived; D-MPNN when fit)."""

from warehouse.molecular import marts


def model(dbt, session):
    dbt.config(materialized="table")
    featurized = dbt.ref("int_molecules_featurized").pl()
    molecules = dbt.ref("stg_fartdb__molecules").pl()
    return marts.fct_compound_embeddings(featurized, molecules)
