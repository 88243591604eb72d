"""LOOCV runs equal a plain scikit-learn implementation, do not depend on the worker count, and
read their fits back from the cache."""

from __future__ import annotations

import numpy as np
import pytest

from warehouse.ranking import loocv
from warehouse.ranking import models as mdl
from warehouse.ranking.cache import FitCache
from warehouse.ranking.loocv import Job, run_fits, run_loocv
from warehouse.ranking.reference import reference_loocv
from warehouse.ranking.synthetic import SMALL_CATEGORIES, SMALL_DIMS, synthetic_design


@pytest.fixture(scope="module")
def small():
    return synthetic_design(seed=11, plant="nutrition", dims=SMALL_DIMS, layout=SMALL_CATEGORIES)


@pytest.mark.parametrize(
    ("model", "tol"),
    [
        ("bradley_terry", 1e-8),
        ("hierarchical_bt", 1e-8),
        ("ridge", 1e-9),
        ("lightgbm_reg", 1e-9),
        ("kernel_ranksvm", 1e-6),
    ],
)
def test_loocv_equals_sklearn_reference(small, model, tol):
    (fit,) = run_loocv(small, [Job.of(model, "SNCTI")], n_jobs=1)
    folds = [0, 7, 13, 21]
    ref = reference_loocv(small, model, "SNCTI", folds, bt_solver="newton-cholesky")
    assert np.abs(fit.predictions[folds] - ref).max() < tol


def test_published_lbfgs_solver_option(small):
    (fit,) = run_loocv(small, [Job.of("bradley_terry", "SN", solver="lbfgs")], n_jobs=1)
    ref = reference_loocv(small, "bradley_terry", "SN", [0, 5], bt_solver="lbfgs")
    assert np.abs(fit.predictions[[0, 5]] - ref).max() < 1e-12


def test_worker_count_does_not_change_a_bit(small):
    jobs = [Job.of(m, "SNCTI") for m in ("bradley_terry", "hierarchical_bt", "ridge")]
    one = run_loocv(small, jobs, n_jobs=1, chunk_size=5)
    two = run_loocv(small, jobs, n_jobs=2, chunk_size=5)
    for a, b in zip(one, two, strict=True):
        assert a.predictions.tobytes() == b.predictions.tobytes()
        assert a.fit_id == b.fit_id


def test_warm_cache_reads_instead_of_refitting(small, tmp_path, monkeypatch):
    jobs = [Job.of("bradley_terry", "SNC"), Job.of("dist_pred_l2", "NCI")]
    cache = FitCache(tmp_path)
    cold = run_fits(small, jobs, cache, n_jobs=1)
    assert cache.writes == 2 and not any(f.from_cache for f in cold)

    def refuse(*args, **kwargs):
        raise AssertionError("a cached fit was refitted")

    monkeypatch.setattr(mdl, "fit_predict", refuse)
    monkeypatch.setattr(loocv.mdl, "fit_predict", refuse)
    warm = run_fits(small, jobs, FitCache(tmp_path), n_jobs=1)
    assert all(f.from_cache for f in warm)
    for a, b in zip(cold, warm, strict=True):
        assert a.predictions.tobytes() == b.predictions.tobytes() and a.fit_id == b.fit_id


def test_fit_id_follows_data_configuration_and_versions(small):
    job = Job.of("bradley_terry", "SN")
    _, ch, fid = loocv.fit_key(small, job)
    assert loocv.fit_key(small, job)[2] == fid  # stable
    assert loocv.fit_key(small, Job.of("bradley_terry", "SN", C=0.5))[1] != ch
    assert loocv.fit_key(small, Job.of("bradley_terry", "SNC"))[2] != fid
    moved = small.with_target(small.target + np.r_[1e-9, np.zeros(small.n - 1)])
    assert loocv.fit_key(moved, job)[2] != fid
    # a block the job does not read does not change its id
    other = small.with_block("I", small.block("I") + 1.0)
    assert loocv.fit_key(other, job)[2] == fid


def test_fit_result_frame_and_model_key(small):
    (fit,) = run_loocv(small, [Job.of("ridge", "SN")], n_jobs=1)
    frame = fit.frame(small)
    assert frame.columns == [
        "category",
        "product_code",
        "predicted_score",
        "model",
        "feature_set",
        "config_hash",
        "fit_id",
    ]
    assert frame.height == small.n and fit.model_key == "ridge_SN"
    assert frame["predicted_score"].to_numpy().tobytes() == fit.predictions.tobytes()


def test_a_corrupted_fit_is_logged_and_refitted(small, tmp_path, caplog):
    from warehouse.files import recomputed_since

    jobs = [Job.of("bradley_terry", "SNC")]
    cold = run_fits(small, jobs, FitCache(tmp_path), n_jobs=1)
    (npz,) = tmp_path.rglob("*.npz")
    npz.write_bytes(npz.read_bytes().replace(b"\x00", b"\x01", 1))
    cache = FitCache(tmp_path)
    with caplog.at_level("WARNING", logger="warehouse.cache"):
        again = run_fits(small, jobs, cache, n_jobs=1)
    assert not again[0].from_cache and cache.writes == 1  # refitted, not stopped
    assert again[0].predictions.tobytes() == cold[0].predictions.tobytes()
    assert [r for r in caplog.records if str(npz) in r.getMessage()]
    assert [line["entry"] for line in recomputed_since({tmp_path: 0})] == [str(npz)]
    assert run_fits(small, jobs, FitCache(tmp_path), n_jobs=1)[0].from_cache  # whole again
