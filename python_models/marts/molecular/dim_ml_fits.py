"""Fitted molecular models: trains the fingerprint baselines (hashed artifacts) and lists the
registered D-MPNN fits of `tastebench train molecular`."""

from warehouse import molecular_marts


def model(dbt, session):
    dbt.config(materialized="table")
    # one dbt.ref per statement: dbt finds refs by walking call arguments, not subscripts
    molecules = dbt.ref("stg_fartdb__molecules").df()
    featurized = dbt.ref("int_molecules_featurized").df()
    return molecular_marts.train_and_register(
        molecules, featurized[["canonical_smiles", "morgan_on_bits"]]
    )
