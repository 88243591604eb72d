"""Per-class precision, recall, F1, AUROC with BCa 95% CIs (umami: 6 test molecules)."""

from warehouse import molecular_marts


def model(dbt, session):
    dbt.config(materialized="table", n_boot=10000)
    preds = dbt.ref("fct_molecular_predictions").df()
    return molecular_marts.per_class_table(preds, n_boot=int(dbt.config.get("n_boot")))
