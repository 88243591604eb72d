"""FartDB molecules with RDKit-canonical SMILES (a Python model: RDKit is not available in SQL)."""

from warehouse.staging import stage_fartdb_molecules


def model(dbt, session):
    dbt.config(materialized="table")
    raw = dbt.source("fartdb", "fartdb_molecules").df()
    return stage_fartdb_molecules(raw)
