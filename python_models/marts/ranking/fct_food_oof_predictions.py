"""Out-of-fold predictions of the warehouse's own food-ranking models (default stage: BT, HBT,
Kernel RankSVM, Ridge, LightGBM, both MMRF baselines, the nested BT + Gemini ensembles), with
each fit's configuration; fits are read from / written to <fits_dir>/ranking."""

from warehouse.ranking import marts


def model(dbt, session):
    dbt.config(materialized="table", ensemble_models="bradley_terry")
    features = {
        "S": dbt.ref("fct_features_subset").pl(),
        "N": dbt.ref("fct_features_nutrition").pl(),
        "C": dbt.ref("fct_features_compound").pl(),
        "T": dbt.ref("fct_features_text").pl(),
        "I": dbt.ref("fct_features_image").pl(),
    }
    design = marts.food_design(
        dbt.ref("dim_products").pl(),
        dbt.ref("fct_panel_means").pl(),
        dbt.ref("categories").pl(),
        dbt.ref("nutrition_subset_columns").pl(),
        features,
        dbt.ref("fct_features_compound_variants").pl(),
    )
    return marts.fct_food_oof_predictions(
        design,
        dbt.ref("stg_tastebench__oof_predictions").pl(),
        marts.feature_encoders_json(features),
        ensemble_models=str(dbt.config.get("ensemble_models")).split(","),
        max_analogs=int(dbt.config.get("max_analogs")),
    )
