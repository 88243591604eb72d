"""Every molecule reachable from FartDB and FoodAtlas, featurized once with RDKit."""

from warehouse import molecular_marts


def model(dbt, session):
    dbt.config(materialized="table")
    molecules = dbt.ref("stg_fartdb__molecules").df()
    sources = molecular_marts.molecule_sources(
        molecules, dbt.ref("stg_foodatlas__pubchem_compounds").df()
    )
    return molecular_marts.featurized_molecules(sources["canonical_smiles"].tolist(), sources)
