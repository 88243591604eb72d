"""Leakage guards: a planted leak makes them fail (and a clean run passes)."""

from __future__ import annotations

import numpy as np
import pytest

from warehouse.ranking import loocv, nested
from warehouse.ranking.bt import PairIndex
from warehouse.ranking.guards import LeakageError, assert_no_target_leak, audit_target_leak
from warehouse.ranking.loocv import Job, run_loocv
from warehouse.ranking.preprocess import fit_fold
from warehouse.ranking.synthetic import SMALL_CATEGORIES, SMALL_DIMS, synthetic_design


@pytest.fixture(scope="module")
def small():
    return synthetic_design(seed=2, plant="nutrition", dims=SMALL_DIMS, layout=SMALL_CATEGORIES)


def leaky_fit_fold(blocks, train, test, names, *args, **kwargs):
    """Preprocessing fitted on every row (training and held-out): the classic leak."""
    everything = np.union1d(train, test)
    fb = fit_fold(blocks, everything, test, names, *args, **kwargs)
    return type(fb)(
        np.asarray(train),
        fb.test_idx,
        {b: z[np.isin(everything, train)] for b, z in fb.train.items()},
        fb.test,
        fb.transforms,
    )


def test_clean_runs_pass_the_guards(small):
    run_loocv(small, [Job.of("bradley_terry", "SNCTI")], n_jobs=1)
    assert audit_target_leak(small).height == 0


def test_preprocessing_fitted_outside_the_fold_fails(small, monkeypatch):
    monkeypatch.setattr(loocv, "fit_fold", leaky_fit_fold)
    with pytest.raises(LeakageError, match="preprocessing was fitted on 22 rows"):
        run_loocv(small, [Job.of("ridge", "SN")], n_jobs=1)


def test_nested_pair_fold_leak_fails(small, monkeypatch):
    monkeypatch.setattr(nested, "fit_fold", leaky_fit_fold)
    with pytest.raises(LeakageError, match=r"nested pair \(0, 1\)"):
        nested.nested_base(small, Job.of("bradley_terry", "SN"), n_jobs=1)


def test_pairs_built_before_the_hold_out_fail(small, monkeypatch):
    def all_pairs(self, train_idx, n):
        return self.win, self.lose  # global indices, held-out product included

    monkeypatch.setattr(PairIndex, "for_training", all_pairs)
    with pytest.raises(LeakageError, match="pair"):
        run_loocv(small, [Job.of("bradley_terry", "SN")], n_jobs=1)


def test_target_copied_into_a_feature_is_flagged(small):
    n_block = small.block("N").copy()
    n_block[:, 2] = 3.0 * small.target - 1.0  # planted leak: the panel mean itself
    leaky = small.with_block("N", n_block)
    flagged = audit_target_leak(leaky)
    assert flagged.select("block", "column").rows() == [("N", 2)]
    assert flagged["r_overall"][0] == pytest.approx(1.0)
    with pytest.raises(LeakageError, match="block 'N' column 2"):
        assert_no_target_leak(leaky)


def test_within_category_copy_is_flagged(small):
    """A column equal to the target minus its category mean plus a per-category offset has a
    weak overall correlation but r = 1 within categories."""
    cat = small.category_index
    y = small.target
    means = np.bincount(cat, weights=y) / np.bincount(cat)
    col = (y - means[cat]) + 100.0 * np.sin(cat + 1.0)
    leaky = small.with_block("C:leak", np.column_stack([small.block("C"), col]))
    row = audit_target_leak(leaky).row(0, named=True)
    assert row["block"] == "C:leak" and abs(row["r_overall"]) < 0.99
    assert row["r_within"] == pytest.approx(1.0)
