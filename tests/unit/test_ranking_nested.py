"""Nested-LOOCV ensembles: hand-worked NNLS steps, inner fits equal to a direct leave-two-out fit,
warm starts that change nothing, and inner fits that never see their pair's targets."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from warehouse.ranking.design import DesignError
from warehouse.ranking.loocv import Job
from warehouse.ranking.nested import (
    align_external,
    category_percentile_ranks,
    nested_base,
    nnls_oof,
    plain_mean,
    rank_average,
    run_ensembles,
)
from warehouse.ranking.reference import reference_pair, reference_scores
from warehouse.ranking.synthetic import SMALL_CATEGORIES, SMALL_DIMS, synthetic_design

JOB = Job.of("bradley_terry", "SNCT")


@pytest.fixture(scope="module")
def small():
    return synthetic_design(seed=5, plant="nutrition", dims=SMALL_DIMS, layout=SMALL_CATEGORIES)


@pytest.fixture(scope="module")
def base(small):
    return nested_base(small, JOB, n_jobs=1)


def test_one_nnls_step_by_hand():
    """Fold i = 0 of 4 products. Meta rows j = 1, 2, 3: model column inner[0, j] = (1, 0, 1),
    external column (0, 1, 1), target y = (1, 2, 3).
    XᵀX = [[2, 1], [1, 2]], Xᵀy = (4, 5) -> w = (1/3)[[2, -1], [-1, 2]](4, 5) = (1, 2): both
    non-negative, so NNLS = least squares. Prediction = outer[0] * 1 + ext[0] * 2 = 0.5 + 0.5 = 1.

    Second case, y = (3, -1, 1): Xᵀy = (4, 0) -> least squares (8/3, -4/3) has a negative weight.
    NNLS drops the external column: w1 = a.y / a.a = (3 + 1) / 2 = 2, w2 = 0 (its gradient
    g.(y - 2a) = (0, 1, 1).(1, -1, -1) = -2 <= 0, so 0 is optimal). Prediction = 0.5 * 2 = 1."""
    inner = np.full((4, 4), np.nan)
    inner[0, 1:] = [1.0, 0.0, 1.0]
    inner[1:, :] = 0.0  # other folds: not checked here
    ext = np.array([0.25, 0.0, 1.0, 1.0])
    outer = np.array([0.5, 0.0, 0.0, 0.0])
    pred, w = nnls_oof(outer, inner, ext, np.array([9.0, 1.0, 2.0, 3.0]))
    assert w[0] == pytest.approx([1.0, 2.0], abs=1e-12)
    assert pred[0] == pytest.approx(1.0, abs=1e-12)
    pred, w = nnls_oof(outer, inner, ext, np.array([9.0, 3.0, -1.0, 1.0]))
    assert w[0] == pytest.approx([2.0, 0.0], abs=1e-12)
    assert pred[0] == pytest.approx(1.0, abs=1e-12)


def test_rank_average_and_mean_by_hand():
    """Category A with model scores (3, 1, 2) and external (1, 2, 2): percentile ranks (rank/n,
    average ties) (1, 1/3, 2/3) and (1/3, 5/6, 5/6); mean (2/3, 7/12, 3/4). Category B (one
    product) ranks 1 for both."""
    cat = np.array(["A", "A", "A", "B"])
    a = np.array([3.0, 1.0, 2.0, 7.0])
    b = np.array([1.0, 2.0, 2.0, 0.0])
    assert category_percentile_ranks(cat, b) == pytest.approx([1 / 3, 5 / 6, 5 / 6, 1.0])
    assert rank_average(cat, a, b) == pytest.approx([2 / 3, 7 / 12, 3 / 4, 1.0])
    assert plain_mean(a, b) == pytest.approx([2.0, 1.5, 2.0, 3.5])


def test_inner_fits_equal_a_direct_leave_two_out_fit(small, base):
    inner = base.arrays["inner"]
    assert np.isnan(np.diag(inner)).all() and np.isfinite(inner[~np.eye(small.n, dtype=bool)]).all()
    for i, j in [(0, 1), (0, 21), (6, 12), (15, 20)]:
        ref = reference_pair(small, "SNCT", i, j, bt_solver="newton-cholesky")
        assert inner[j, i] == pytest.approx(ref[0], abs=1e-8)  # score of i without {i, j}
        assert inner[i, j] == pytest.approx(ref[1], abs=1e-8)  # score of j


def test_warm_start_and_worker_count_change_nothing(small, base):
    cold = nested_base(small, JOB, n_jobs=1, warm_start=False)
    assert base.config["warm_start"] == "outer_fold_min_ij" and cold.config["warm_start"] == "none"
    off = ~np.eye(small.n, dtype=bool)
    assert np.abs(base.arrays["inner"][off] - cold.arrays["inner"][off]).max() < 1e-9
    two = nested_base(small, JOB, n_jobs=2)
    assert np.array_equal(two.arrays["inner"], base.arrays["inner"], equal_nan=True)


def test_inner_fit_never_sees_its_pair(small, base):
    """Change the targets of products 3 and 9 (far beyond their neighbours): every fit trained
    without both (the pair (3, 9)) must not move; fits that train on them must."""
    y = small.target.copy()
    y[3], y[9] = y[3] + 50.0, y[9] - 50.0
    moved = nested_base(small.with_target(y), JOB, n_jobs=1).arrays["inner"]
    before = base.arrays["inner"]
    assert moved[3, 9] == pytest.approx(before[3, 9], abs=1e-9)
    assert moved[9, 3] == pytest.approx(before[9, 3], abs=1e-9)
    assert abs(moved[0, 1] - before[0, 1]) > 1e-6  # trained with 3 and 9 inside


def test_ensembles_with_an_external_model(small, base):
    rng = np.random.default_rng(0)
    ext = small.target + rng.standard_normal(small.n)
    fits = run_ensembles(small, JOB, ext, "gemini", n_jobs=1)
    names = [f.model for f in fits]
    assert names == ["nested_bt_gemini_nnls", "nested_bt_gemini_rank", "nested_bt_gemini_mean"]
    pred, w = nnls_oof(base.arrays["outer"], base.arrays["inner"], ext, small.target)
    assert fits[0].predictions.tobytes() == pred.tobytes()
    assert (fits[0].arrays["nnls_weights"] >= 0).all()
    assert fits[2].predictions == pytest.approx(0.5 * (base.predictions + ext))
    assert len({f.fit_id for f in fits}) == 3


def test_external_predictions_must_cover_every_analog(small):
    keys = small.keys.select("category", "product_code")
    frame = keys.with_columns(pl.lit(0.5).alias("predicted_score"))
    assert align_external(small, frame, "x").shape == (small.n,)
    with pytest.raises(DesignError, match="no prediction for analog"):
        align_external(small, frame.slice(1), "x")


@pytest.mark.parametrize("model", ["ridge", "hierarchical_bt"])
def test_other_models_take_bts_place(small, model):
    """The nested base of another supervised model: cold starts, same leave-two-out rule."""
    job = Job.of(model, "SNC")
    got = nested_base(small, job, n_jobs=1)
    assert got.config["warm_start"] == "none"
    train = np.delete(np.arange(small.n), [2, 17])
    ref = reference_scores(small, model, "SNC", train, np.array([2, 17]), "newton-cholesky")
    assert got.arrays["inner"][17, 2] == pytest.approx(ref[0], abs=1e-8)
    assert got.arrays["inner"][2, 17] == pytest.approx(ref[1], abs=1e-8)
    fits = run_ensembles(small, job, small.target[::-1].copy(), "gemini", n_jobs=1)
    short = {"ridge": "ridge", "hierarchical_bt": "hbt"}[model]
    assert fits[0].model == f"nested_{short}_gemini_nnls"
