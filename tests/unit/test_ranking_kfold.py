"""Grouped K-fold above the LOOCV cap: folds partition the products by category, every product is
predicted once by a model that never saw it (nor any pair with it), preprocessing is fitted inside
the fold, the protocol is in the configuration, and the nested K-fold NNLS of an outer fold never
sees a model trained on that fold's products."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl
import pytest

from warehouse.ranking import loocv, marts, nested
from warehouse.ranking.ablation import default_model_fits, unfittable_reason
from warehouse.ranking.bt import PairIndex
from warehouse.ranking.design import DesignError
from warehouse.ranking.folds import GroupedKFold, fold_scheme
from warehouse.ranking.guards import LeakageError
from warehouse.ranking.loocv import Job, run_loocv
from warehouse.ranking.nested import nested_base, nnls_kfold, run_ensembles
from warehouse.ranking.preprocess import fit_fold
from warehouse.ranking.reference import reference_scores
from warehouse.ranking.synthetic import SMALL_CATEGORIES, SMALL_DIMS, synthetic_design

CV = GroupedKFold(k=3)
# SMALL_CATEGORIES plus one category of 10 (the default k = 10 needs a category of >= 10)
LAYOUT = (*SMALL_CATEGORIES, ("Burgers", "meat", "meat", 10, 1))


@pytest.fixture(scope="module")
def small():
    return synthetic_design(seed=7, plant="nutrition", dims=SMALL_DIMS, layout=SMALL_CATEGORIES)


@pytest.fixture(scope="module")
def base(small):
    return nested_base(small, Job.of("bradley_terry", "SNC").with_cv(CV), n_jobs=1)


def test_folds_partition_the_products_stratified_by_category(small):
    cat = small.category_index
    folds = CV.folds(cat)
    tested = np.concatenate([test for _, test in folds])
    assert np.array_equal(np.sort(tested), np.arange(small.n))  # every product tested once
    for train, test in folds:
        assert np.intersect1d(train, test).size == 0 and len(train) + len(test) == small.n
    for c in np.unique(cat):  # each category spread evenly over the folds
        per_fold = [int((cat[test] == c).sum()) for _, test in folds]
        assert max(per_fold) - min(per_fold) <= 1
    assert np.array_equal(CV.assign(cat), GroupedKFold(k=3).assign(cat))  # deterministic
    assert not np.array_equal(CV.assign(cat), GroupedKFold(k=3, seed=1).assign(cat))
    sizes = np.bincount(GroupedKFold(k=10).assign(cat), minlength=10)  # k over every category
    assert sizes.min() >= 2 and sizes.max() - sizes.min() <= 1
    with pytest.raises(DesignError, match="k = 30 needs"):
        GroupedKFold(k=30).assign(cat)


def test_the_cap_switches_the_protocol():
    assert fold_scheme(400, 400) is None
    assert fold_scheme(401, 400) == GroupedKFold(k=10, seed=42)


@pytest.mark.parametrize("model", ["bradley_terry", "hierarchical_bt", "ridge", "lightgbm_reg"])
def test_kfold_equals_a_direct_fit_on_each_fold(small, model):
    """Each fold's scores equal the sklearn reference trained on that fold's training rows only
    (scaler and PCA included): the held-out products are outside the fit."""
    (fit,) = run_loocv(small, [Job.of(model, "SNCT").with_cv(CV)], n_jobs=1)
    assert np.isfinite(fit.predictions).all()
    for train, test in CV.folds(small.category_index):
        ref = reference_scores(small, model, "SNCT", train, test, bt_solver="newton-cholesky")
        assert np.abs(fit.predictions[test] - ref).max() < 1e-8


def test_protocol_recorded_and_ids_distinct(small):
    loo = Job.of("bradley_terry", "SN")
    kf = loo.with_cv(CV)
    assert "cv" not in loo.config() and loo.config()["protocol"] == "loocv"
    cfg = kf.config()
    assert cfg["protocol"] == "grouped_kfold"
    assert cfg["cv"] == {
        "k": 3,
        "grouping": "product, stratified by category",
        "assignment": GroupedKFold().config()["assignment"],
        "seed": 42,
    }
    (_, kch, kfid), (_, lch, lfid) = loocv.fit_key(small, kf), loocv.fit_key(small, loo)
    assert kch != lch and kfid != lfid
    k4 = kf.with_cv(GroupedKFold(k=4))
    assert loocv.fit_key(small, k4)[2] != loocv.fit_key(small, kf)[2]
    (fit,) = run_loocv(small, [kf], n_jobs=1)
    assert fit.protocol == "grouped_kfold" and fit.meta["n_folds"] == 3
    assert fit.arrays["dims__S"].shape == (3,) and fit.arrays["raw_weights"].shape[0] == 3


def test_worker_count_does_not_change_a_bit(small):
    jobs = [Job.of(m, "SNCTI").with_cv(CV) for m in ("bradley_terry", "kernel_ranksvm", "ridge")]
    one = run_loocv(small, jobs, n_jobs=1)
    two = run_loocv(small, jobs, n_jobs=2)
    for a, b in zip(one, two, strict=True):
        assert a.predictions.tobytes() == b.predictions.tobytes() and a.fit_id == b.fit_id


def test_a_fold_never_sees_its_products_targets(small):
    """Move the targets of fold 0's products far away: fold 0's scores do not move (no training
    pair or row touched them), the other folds' do."""
    job = Job.of("bradley_terry", "SNC").with_cv(CV)
    (before,) = run_loocv(small, [job], n_jobs=1)
    _, test0 = CV.folds(small.category_index)[0]
    y = small.target.copy()
    y[test0] += np.where(np.arange(len(test0)) % 2, 50.0, -50.0)
    (after,) = run_loocv(small.with_target(y), [job], n_jobs=1)
    others = np.setdiff1d(np.arange(small.n), test0)
    assert np.abs(after.predictions[test0] - before.predictions[test0]).max() < 1e-9
    assert np.abs(after.predictions[others] - before.predictions[others]).max() > 1e-6


def leaky_fit_fold(blocks, train, test, names, *args, **kwargs):
    """Preprocessing fitted on training and held-out rows together (a planted leak)."""
    everything = np.union1d(train, test)
    fb = fit_fold(blocks, everything, test, names, *args, **kwargs)
    keep = np.isin(everything, train)
    train_rows = {b: z[keep] for b, z in fb.train.items()}
    return type(fb)(np.asarray(train), fb.test_idx, train_rows, fb.test, fb.transforms)


def test_planted_leaks_fail_the_kfold_guards(small, monkeypatch):
    job = Job.of("bradley_terry", "SN").with_cv(CV)
    with monkeypatch.context() as m:
        m.setattr(loocv, "fit_fold", leaky_fit_fold)
        with pytest.raises(LeakageError, match="grouped K-fold fold 0: block 'S' preprocessing"):
            run_loocv(small, [job], n_jobs=1)
    real_run_folds = nested.run_folds

    def outer_test_rows_in_training(payload, spec, folds, *args):
        leaky = [(k, np.union1d(tr, held), te, held, w) for k, tr, te, held, w in folds]
        return real_run_folds(payload, spec, leaky, *args)

    with monkeypatch.context() as m:
        m.setattr(nested, "run_folds", outer_test_rows_in_training)
        with pytest.raises(LeakageError, match="nested K-fold outer fold 0 inner fold 0: held"):
            nested_base(small, Job.of("ridge", "SN").with_cv(CV), n_jobs=1)
    with monkeypatch.context() as m:
        m.setattr(PairIndex, "for_training", lambda self, train, n: (self.win, self.lose))
        with pytest.raises(LeakageError, match="grouped K-fold fold 0: a training pair"):
            run_loocv(small, [job], n_jobs=1)


def test_nested_kfold_inner_scores_and_their_training_rows(small, base):
    """``inner[f, j]`` = the score of ``j`` from the model trained on fold ``f``'s training
    products minus ``j``'s inner fold; NaN on ``f``'s own products."""
    inner, fold_of = base.arrays["inner"], base.arrays["outer_fold"]
    assert inner.shape == (3, small.n) and base.protocol == "nested_grouped_kfold"
    assert np.array_equal(np.isnan(inner), fold_of[None, :] == np.arange(3)[:, None])
    cat = small.category_index
    train_o, _ = CV.folds(cat)[1]
    tr, te = CV.folds(cat[train_o])[2]
    ref = reference_scores(
        small, "bradley_terry", "SNC", train_o[tr], train_o[te], "newton-cholesky"
    )
    assert np.abs(inner[1, train_o[te]] - ref).max() < 1e-8
    assert base.config["inner_cv"]["over"] == "each outer fold's training products"


def test_nested_kfold_meta_fit_never_sees_the_outer_fold(small, base):
    """Move the targets of outer fold 0's products: every inner score of fold 0 and fold 0's
    NNLS weights stay (its meta rows and their models exclude fold 0), other folds move."""
    job = Job.of("bradley_terry", "SNC").with_cv(CV)
    fold_of = base.arrays["outer_fold"]
    y = small.target.copy()
    test0 = np.flatnonzero(fold_of == 0)
    y[test0] += np.where(np.arange(len(test0)) % 2, 50.0, -50.0)
    moved = nested_base(small.with_target(y), job, n_jobs=1)
    before, after = base.arrays["inner"], moved.arrays["inner"]
    rows0 = fold_of != 0
    assert np.abs(after[0, rows0] - before[0, rows0]).max() < 1e-9
    assert np.nanmax(np.abs(after[1:] - before[1:])) > 1e-6
    ext = np.random.default_rng(0).standard_normal(small.n)
    _, w_before = nnls_kfold(base.arrays["outer"], before, ext, small.target, fold_of)
    _, w_after = nnls_kfold(moved.arrays["outer"], after, ext, y, fold_of)
    assert w_after[0] == pytest.approx(w_before[0], abs=1e-9)


def test_kfold_ensembles(small, base):
    job = Job.of("bradley_terry", "SNC").with_cv(CV)
    ext = small.target + np.random.default_rng(0).standard_normal(small.n)
    fits = run_ensembles(small, job, ext, "gemini", n_jobs=1)
    loo = run_ensembles(small, Job.of("bradley_terry", "SNC"), ext, "gemini", n_jobs=1)
    assert [f.protocol for f in fits] == ["nested_grouped_kfold", "grouped_kfold", "grouped_kfold"]
    assert all(f.config["cv"] == CV.config() for f in fits)
    assert not {f.fit_id for f in fits} & {f.fit_id for f in loo}
    fold_of = base.arrays["outer_fold"]
    pred, w = nnls_kfold(base.arrays["outer"], base.arrays["inner"], ext, small.target, fold_of)
    assert fits[0].predictions.tobytes() == pred.tobytes()
    assert np.array_equal(fits[0].arrays["nnls_weights"], w[fold_of]) and (w >= 0).all()
    assert fits[2].predictions == pytest.approx(0.5 * (base.predictions + ext))


def test_marts_run_kfold_above_the_cap_and_loocv_below(tmp_path):
    d = synthetic_design(seed=3, plant="nutrition", dims=SMALL_DIMS, layout=LAYOUT)
    oof = d.keys.select("category", "product_code").with_columns(
        pl.lit(nested.GEMINI_STEM).alias("model_file_stem"),
        pl.Series("predicted_score", np.random.default_rng(3).random(d.n)),
    )
    assert unfittable_reason(d, d.n - 1) is None  # size is no reason
    assert "switched off" in unfittable_reason(d, 0)
    rows = marts.fct_food_oof_predictions(d, oof, "{}", tmp_path, n_jobs=1, max_analogs=d.n - 1)
    fits = marts.dim_food_fits(rows)
    assert fits.height == 18 and (fits["n_rows"] == d.n).all()
    protocols = dict(zip(fits["model_name"], fits["protocol"], strict=True))
    assert protocols["bradley_terry"] == "grouped_kfold"
    assert protocols["dist_pred_l2"] == "transductive"
    assert protocols["nested_bt_gemini_nnls"] == "nested_grouped_kfold"
    assert fits.filter(pl.col("is_supervised"))["config_json"].str.contains('"k":10').all()
    # the build fitted BT's nested K-fold base and reads it back; no other model's is there
    from warehouse.ranking.cache import FitCache
    from warehouse.ranking.design import FeatureSet

    fs, cv = FeatureSet.parse(d.feature_set), GroupedKFold()
    bt = nested.cached_nested_base(d, Job("bradley_terry", fs, cv=cv), FitCache(tmp_path))
    assert bt is not None and bt.protocol == "nested_grouped_kfold" and bt.from_cache
    assert bt.fit_id == nested_base(d, Job("bradley_terry", fs, cv=cv), FitCache(tmp_path)).fit_id
    assert nested.cached_nested_base(d, Job("ridge", fs, cv=cv), FitCache(tmp_path)) is None
    below = default_model_fits(d, oof, tmp_path, n_jobs=1, ensemble_models=())
    assert below[0].protocol == "loocv" and "cv" not in below[0].config
    ablation = marts.agg_ablation_metrics(d, rows, tmp_path, n_boot=0, max_analogs=d.n - 1)
    # the grid read back is the K-fold one (the LOOCV fits just cached are not in it): its 7
    # cells the default stage fitted (5 supervised, 2 distance)
    assert ablation.height == 7 and ablation["is_default_stage"].all()
    assert set(ablation["fit_id"]) <= set(rows["fit_id"])


def test_scaled_copies_read_their_base_categorys_external_score():
    """A scaled simulation's copy ``Bacon_s2`` repeats Bacon's products (codes included); the
    published file covers Bacon only, so a copy's analog reads its base analog's score. Outside
    a simulation a missing analog stays an error."""
    layout = (("Bacon", "meat", "meat", 5, 1), ("Bacon_s2", "meat", "meat", 5, 1))
    d = synthetic_design(seed=1, dims=SMALL_DIMS, layout=layout)
    base = d.keys.filter(pl.col("category") == "Bacon").select("category", "product_code")
    oof = base.with_columns(
        pl.lit(nested.GEMINI_STEM).alias("model_file_stem"),
        pl.Series("predicted_score", [0.1, 0.5, 0.2, 0.9, 0.4]),
    )
    got = nested.external_predictions(replace(d, data_origin="simulation"), oof)
    assert got.tolist() == [0.1, 0.5, 0.2, 0.9, 0.4] * 2
    with pytest.raises(DesignError, match="no prediction for analog Bacon_s2:1"):
        nested.external_predictions(d, oof)
