"""Feature block C for every compound encoder x aggregation rule (the C ablations)."""

from warehouse.features import marts


def model(dbt, session):
    dbt.config(materialized="table")
    return marts.compound_feature_variants(
        dbt.ref("dim_products").pl(),
        dbt.ref("stg_foodatlas__entities").pl(),
        dbt.ref("stg_foodatlas__edges").pl(),
        dbt.ref("stg_foodatlas__concentrations").pl(),
        dbt.ref("int_molecules_featurized").pl(),
        dbt.ref("fct_compound_embeddings").pl(),
        dbt.ref("foodatlas_food_synonyms").pl(),
    )
