"""The ablation grid as far as `tastebench train food --grid ablation` has filled the fit cache
(the build never fits it): one row per (model, feature set) with metrics, for pivoting."""

from warehouse.ranking import marts


def model(dbt, session):
    dbt.config(materialized="table", n_boot=10000, seed=42)
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
    return marts.agg_ablation_metrics(
        design,
        dbt.ref("fct_food_oof_predictions").pl(),
        n_boot=int(dbt.config.get("n_boot")),
        seed=int(dbt.config.get("seed")),
        max_analogs=int(dbt.config.get("max_analogs")),
    )
