"""The library behind the dbt glue: the default model stage (ranking.ablation), its rows for
fct_oof_predictions and fits (ranking.oof), and the ablation grid read back from the cache."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from warehouse.ranking.ablation import (
    ablation_fit_rows,
    ablation_metrics_rows,
    default_jobs,
    default_model_fits,
    grid_jobs,
    run_grid,
)
from warehouse.ranking.cache import FitCache
from warehouse.ranking.loocv import Job
from warehouse.ranking.nested import GEMINI_STEM, external_predictions
from warehouse.ranking.oof import fit_rows, oof_prediction_rows
from warehouse.ranking.synthetic import SMALL_CATEGORIES, SMALL_DIMS, synthetic_design

# marts.fct_oof_predictions contract columns (models/marts/metrics/_metrics__models.yml), without
# the prediction_key the SQL derives
OOF_COLUMNS = [
    "model_id",
    "model_file_stem",
    "model_name",
    "feature_set",
    "is_bench_variant",
    "source",
    "fit_id",
    "category",
    "product_code",
    "product_key",
    "gold_column",
    "gold_value",
    "true_rank",
    "true_score",
    "predicted_score",
    "data_origin",
    "source_file",
]


@pytest.fixture(scope="module")
def small():
    d = synthetic_design(seed=4, plant="nutrition", dims=SMALL_DIMS, layout=SMALL_CATEGORIES)
    rng = np.random.default_rng(1)
    return d.with_block(
        "C:max",
        np.abs(d.block("C")) + rng.random(d.block("C").shape),
        d.reference_blocks["C"] * 2.0,
    )


@pytest.fixture(scope="module")
def public_oof(small):
    rng = np.random.default_rng(3)
    return small.keys.select("category", "product_code").with_columns(
        pl.lit(GEMINI_STEM).alias("model_file_stem"),
        pl.Series("predicted_score", rng.random(small.n)),
    )


def test_default_stage_rows_and_warm_rebuild(small, public_oof, tmp_path):
    fits = default_model_fits(small, public_oof, tmp_path, n_jobs=1)
    names = [f.model_key for f in fits]
    assert names == [
        "bradley_terry_SNCTI",
        "hierarchical_bt_SNCTI",
        "kernel_ranksvm_SNCTI",
        "ridge_SNCTI",
        "lightgbm_reg_SNCTI",
        "dist_pred_cosine_NCI",
        "dist_pred_l2_NCI",
        "nested_bt_gemini_nnls_SNCTI",
        "nested_bt_gemini_rank_SNCTI",
        "nested_bt_gemini_mean_SNCTI",
        *(
            f"nested_{m}_gemini_{k}_SNCTI"
            for m in ("hbt", "ksvm", "lgbm", "ridge")
            for k in ("rank", "mean")
        ),
    ]
    rows = oof_prediction_rows(small, fits)
    assert rows.columns == OOF_COLUMNS
    with_hash = oof_prediction_rows(small, fits, config_hash=True)
    assert with_hash.columns == OOF_COLUMNS + ["config_hash"]
    assert rows.height == 18 * small.n
    assert rows["source"].unique().to_list() == ["warehouse_fit"]
    assert rows.select(pl.struct("model_id", "category", "product_code").is_unique().all()).item()
    assert rows["gold_value"].to_numpy()[: small.n].tolist() == small.target.tolist()
    warm = default_model_fits(small, public_oof, tmp_path, n_jobs=1)
    assert [f.fit_id for f in warm] == [f.fit_id for f in fits]
    table = fit_rows(warm)
    assert table["is_from_cache"].all() and table["fit_id"].n_unique() == 18
    assert {"config_json", "library_versions_json", "config_hash"} <= set(table.columns)


def test_train_ensembles_adds_a_models_nnls_to_the_next_build(small, public_oof, tmp_path):
    """The build never runs another model's pair fits; once `train food --grid ensembles`
    (here: Ridge's nested base) has put them in the cache, the next build adds its NNLS ensemble,
    bit for bit the one fitted directly, and every other fit is unchanged."""
    from warehouse.ranking.cache import FitCache
    from warehouse.ranking.nested import cached_nested_base, fit_ensemble_bases, run_ensembles

    before = default_model_fits(small, public_oof, tmp_path, n_jobs=1)
    assert "nested_ridge_gemini_nnls" not in {f.model for f in before}
    ridge = Job.of("ridge", small.feature_set)
    assert cached_nested_base(small, ridge, FitCache(tmp_path)) is None
    (base,) = fit_ensemble_bases(small, tmp_path, n_jobs=1, models=["ridge"])
    assert base.arrays["inner"].shape == (small.n, small.n)
    after = default_model_fits(small, public_oof, tmp_path, n_jobs=1)
    new = [f for f in after if f.fit_id not in {g.fit_id for g in before}]
    assert [f.model for f in new] == ["nested_ridge_gemini_nnls"]
    assert [f.fit_id for f in after if f is not new[0]] == [f.fit_id for f in before]
    gemini = external_predictions(small, public_oof)
    direct = run_ensembles(small, ridge, gemini, "gemini", FitCache(None), 1, kinds=("nnls",))
    assert direct[0].predictions.tobytes() == new[0].predictions.tobytes()


def test_grid_covers_every_subset_and_variant(small):
    jobs, skipped = grid_jobs(small)
    sup = {j.feature_set.name for j in jobs if not j.is_distance}
    dist = {j.feature_set.name for j in jobs if j.is_distance}
    assert len(sup) == 16 and "SNCTI[C=max]" in sup and "SN" in sup
    assert len(dist) == 16 and "NCTI[C=max]" in dist
    assert len(jobs) == 5 * 16 + 2 * 16 and skipped == []
    assert [j.model for j in default_jobs(small)][-2:] == ["dist_pred_cosine", "dist_pred_l2"]


def test_build_reads_the_grid_the_cli_filled(small, tmp_path):
    assert ablation_metrics_rows(small, tmp_path).height == 0
    run_grid(small, FitCache(tmp_path), n_jobs=1, supervised=("ridge",), distance=("dist_pred_l2",))
    found, missing = ablation_fit_rows(small, tmp_path)
    assert len(found) == 32 and missing == 5 * 16 + 2 * 16 - 32
    table = ablation_metrics_rows(small, tmp_path, n_boot=200)
    assert table.height == 32
    assert set(table["model"].unique()) == {"ridge", "dist_pred_l2"}
    assert (table["pairwise_accuracy_lo"] <= table["pairwise_accuracy"]).all()
    assert table.filter(pl.col("variant") == "C=max").height == 2
