"""Accuracy, macro precision/recall/F1 and OvR AUROC with BCa 95% CIs (10,000 resamples)."""

from warehouse import molecular_marts


def model(dbt, session):
    dbt.config(materialized="table", n_boot=10000)
    preds = dbt.ref("fct_molecular_predictions").df()
    return molecular_marts.metrics_table(preds, n_boot=int(dbt.config.get("n_boot")))
