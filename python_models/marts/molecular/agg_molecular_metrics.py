"""Accuracy, macro precision/recall/F1 and OvR AUROC with BCa 95% CIs (10,000 resamples)."""

from warehouse.molecular import marts


def model(dbt, session):
    dbt.config(materialized="table", n_boot=10000)
    predictions = dbt.ref("fct_molecular_predictions").pl()
    return marts.agg_molecular_metrics(predictions, n_boot=int(dbt.config.get("n_boot")))
