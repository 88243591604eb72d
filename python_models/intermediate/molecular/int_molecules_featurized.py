"""Every molecule reachable from FartDB and FoodAtlas, featurized once with RDKit."""

from warehouse.molecular import marts


def model(dbt, session):
    dbt.config(materialized="table")
    molecules = dbt.ref("stg_fartdb__molecules").pl()
    pubchem = dbt.ref("stg_foodatlas__pubchem_compounds").pl()
    return marts.int_molecules_featurized(molecules, pubchem)
