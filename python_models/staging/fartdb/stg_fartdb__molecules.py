"""FartDB molecules with RDKit-canonical SMILES (a Python model: RDKit is not available in SQL)."""

from warehouse.molecular import marts


def model(dbt, session):
    dbt.config(materialized="table")
    raw = dbt.source("fartdb", "fartdb_molecules").pl()
    return marts.stg_fartdb__molecules(raw)
