"""Per-fold preprocessing equals scikit-learn's StandardScaler + PCA(0.95) (both eigen paths)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

from warehouse.ranking.preprocess import fit_block, fit_fold, n_components_for, weights_from_raw


def _lowrank(rng, m, p, decay=0.7, shift=3.0):
    spectrum = np.arange(1, p + 1) ** (-decay)
    q = np.linalg.qr(rng.standard_normal((p, p)))[0]
    return shift + (rng.standard_normal((m, p)) * spectrum) @ q


@pytest.mark.parametrize("p", [384, 64, 50, 12])  # Gram path (p > m) and covariance path
def test_block_transform_matches_sklearn(p):
    rng = np.random.default_rng(p)
    x = _lowrank(rng, 120 if p == 384 else 215, p)
    train, test = x[1:], x[:1]
    sc = StandardScaler().fit(train)
    pca = PCA(n_components=0.95).fit(sc.transform(train))
    t, z = fit_block(train, return_train=True)
    assert np.abs(t.mean - sc.mean_).max() < 1e-13
    assert np.abs(t.scale - sc.scale_).max() < 1e-13
    assert t.components.shape == pca.components_.shape  # same k by sklearn's rule
    assert np.abs(t.components - pca.components_).max() < 1e-9  # signs too (svd_flip)
    assert np.abs(z - pca.transform(sc.transform(train))).max() < 1e-9
    assert np.abs(t.transform(test) - pca.transform(sc.transform(test))).max() < 1e-9


def test_small_blocks_are_only_scaled_and_constant_columns_get_scale_one():
    x = np.column_stack([np.arange(6.0), np.full(6, 2.5), np.r_[0, 0, 0, 1, 1, 1.0]])
    t = fit_block(x)
    sc = StandardScaler().fit(x)
    assert t.components is None
    assert t.scale.tolist() == sc.scale_.tolist() and t.scale[1] == 1.0
    assert np.allclose(t.transform(x), sc.transform(x), atol=1e-15)


def test_n_components_rule_is_sklearns():
    """Eigenvalues 16, 8, 6, 2 (total 32): ratios .5, .25, .1875, .0625, cumulative .5, .75,
    .9375, 1 -> the first cumulative ratio above .95 is the 4th: k = 4. Eigenvalues 16, 8, 7, 1:
    cumulative .5, .75, .96875 -> k = 3. (All binary-exact.) Negative round-off counts as 0."""
    assert n_components_for(np.array([16.0, 8.0, 6.0, 2.0])) == 4
    assert n_components_for(np.array([16.0, 8.0, 7.0, 1.0])) == 3
    assert n_components_for(np.array([1.0, 0.0, -1e-18])) == 1


def test_fold_uses_training_rows_only_and_raw_weights_round_trip():
    rng = np.random.default_rng(0)
    blocks = {"N": rng.standard_normal((30, 6)), "T": _lowrank(rng, 30, 40)}
    train, test = np.arange(1, 30), np.array([0])
    fb = fit_fold(blocks, train, test, ["N", "T"])
    assert fb.transforms["N"].n_train == 29
    assert np.allclose(fb.transforms["T"].mean, blocks["T"][train].mean(axis=0))
    w = rng.standard_normal(6 + fb.transforms["T"].n_out)
    raw = fb.raw_weights(["N", "T"], w)
    u = np.concatenate([raw["N"], raw["T"]])
    # transform(x) . w == x . u + constant, and from_raw inverts raw_weights on the subspace
    ztr, _ = fb.matrices(["N", "T"])
    xtr = np.hstack([blocks["N"][train], blocks["T"][train]])
    diff = ztr @ w - xtr @ u
    assert np.ptp(diff) < 1e-10
    assert np.allclose(weights_from_raw(fb, ["N", "T"], u), w, atol=1e-10)


def test_a_column_of_rounding_residue_is_constant():
    """A column of values ~1e-33 (the default build's T has two) is not standardized to unit
    variance: scale 1, so it contributes ~1e-33, and the transform equals the one without it."""
    rng = np.random.default_rng(3)
    x = _lowrank(rng, 60, 30)
    noisy = x.copy()
    noisy[:, 7] = 1e-33 * rng.standard_normal(60)
    clean = x.copy()
    clean[:, 7] = 0.0
    t_noisy, z_noisy = fit_block(noisy, return_train=True)
    t_clean, z_clean = fit_block(clean, return_train=True)
    assert t_noisy.scale[7] == 1.0
    assert t_noisy.n_out == t_clean.n_out
    assert np.abs(z_noisy - z_clean).max() < 1e-12
