"""Planted signal: with panel means that follow one block, BT and Ridge on that block rank well
above chance (main-table BCa CI above .5); permuting the block inside each category removes the
signal. Synthetic designs on the public 215-analog category layout (never a result).

"Chance" under LOOCV is .5 for Bradley-Terry but *below* .5 for a pointwise regressor: its
intercept and subset weights are refitted without the held-out product, so a product with a
high panel mean is always predicted from a slightly lower training mean than its category mates
(:func:`test_loocv_intercept_bias_of_pointwise_models` shows the extreme). The permuted Ridge is
therefore checked against the planted Ridge (signal gone, not above chance), BT against .5.
"""

from __future__ import annotations

import pytest

from warehouse.metrics import bca_ci, pairwise_accuracy
from warehouse.ranking.loocv import Job, run_loocv
from warehouse.ranking.planted import planted_signal_check
from warehouse.ranking.synthetic import synthetic_design

CASES = [("nutrition", "N", "SN"), ("text", "T", "ST")]


def _ci(design, fit):
    return bca_ci(
        design.categories,
        design.target,
        fit.predictions,
        metrics=("pairwise_accuracy",),
        n_boot=10000,
        seed=42,
    )["pairwise_accuracy"]


@pytest.mark.parametrize(("plant", "block", "feature_set"), CASES)
def test_planted_block_is_recovered_and_permutation_removes_it(plant, block, feature_set):
    design = synthetic_design(seed=42, plant=plant)
    table = planted_signal_check(design, block, feature_set, n_jobs=1)
    got = {(r["model"], r["variant"]): r for r in table.iter_rows(named=True)}
    for model in ("bradley_terry", "ridge"):
        row = got[(model, "planted")]
        assert row["pairwise_accuracy"] > 0.6 and row["ci_lo"] > 0.5, row
    bt = got[("bradley_terry", "permuted")]
    assert not bt["ci_excludes_half"] and abs(bt["pairwise_accuracy"] - 0.5) < 0.06, bt
    ridge = got[("ridge", "permuted")]
    assert ridge["ci_hi"] < got[("ridge", "planted")]["ci_lo"], ridge
    assert ridge["pairwise_accuracy"] < 0.5 + 0.03, ridge


def test_without_a_plant_bradley_terry_sits_at_chance():
    design = synthetic_design(seed=42, plant=None)
    (fit,) = run_loocv(design, [Job.of("bradley_terry", "SNCTI")], n_jobs=1)
    point, lo, hi = _ci(design, fit)
    assert lo < 0.5 < hi, (point, lo, hi)


def test_loocv_intercept_bias_of_pointwise_models():
    """Ridge on S alone predicts, for held-out i in subset s, the ridge-shrunk training mean of
    s: a + b * (T_s - y_i) / (n_s - 1) with b > 0, strictly decreasing in y_i. Within every
    category the LOOCV order is exactly reversed: pairwise accuracy 0 (ties aside)."""
    design = synthetic_design(seed=42, plant=None)
    (fit,) = run_loocv(design, [Job.of("ridge", "S")], n_jobs=1)
    assert pairwise_accuracy(design.categories, design.target, fit.predictions) == 0.0
