"""Per-class precision, recall, F1, AUROC with BCa 95% CIs (umami: 6 test molecules)."""

from warehouse.molecular import marts


def model(dbt, session):
    dbt.config(materialized="table", n_boot=10000)
    predictions = dbt.ref("fct_molecular_predictions").pl()
    return marts.agg_molecular_metrics_per_class(predictions, n_boot=int(dbt.config.get("n_boot")))
