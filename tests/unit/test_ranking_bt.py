"""Bradley-Terry: pairs, the Newton solver against scikit-learn, the tournament score and the
hierarchical shrinkage, with hand-worked examples."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from warehouse.ranking import bt


def _toy(seed: int = 3, n_per: int = 8, d: int = 12):
    rng = np.random.default_rng(seed)
    cat = np.repeat(np.arange(3), n_per)
    z = rng.standard_normal((len(cat), d))
    y = z[:, 0] + 0.5 * rng.standard_normal(len(cat))
    return cat, z, y


def test_pairs_skip_ties_and_order_by_category_then_row():
    """Category 0 rows 0,1,2 with targets 1, 1, 2: pair (0,1) is tied (dropped); (0,2) and (1,2)
    have row 2 winning. Category 1 rows 3,4 with targets 5, 4: row 3 wins."""
    cat = np.array([0, 0, 0, 1, 1])
    y = np.array([1.0, 1.0 + 1e-12, 2.0, 5.0, 4.0])
    p = bt.PairIndex.build(cat, y)
    assert p.a.tolist() == [0, 1, 3] and p.b.tolist() == [2, 2, 4]
    assert p.win.tolist() == [2, 2, 3] and p.lose.tolist() == [0, 1, 4]
    win, lose = p.for_training(np.array([0, 1, 3, 4]), 5)  # hold out row 2
    assert win.tolist() == [2] and lose.tolist() == [3]  # positions into the training rows


def test_newton_matches_sklearn_tight_and_is_the_optimum():
    cat, z, y = _toy()
    p = bt.PairIndex.build(cat, y)
    fit = bt.fit_bt(z, p.win, p.lose)
    x, lab = bt.pair_rows(z, p.win, p.lose)
    ref = LogisticRegression(
        C=1.0, fit_intercept=False, solver="newton-cholesky", tol=1e-12, max_iter=1000
    ).fit(x, lab)
    assert np.abs(fit.w - ref.coef_.ravel()).max() < 1e-8
    lbfgs = bt.fit_bt_sklearn(z, p.win, p.lose, tol=1e-12, max_iter=100000)
    assert np.abs(fit.w - lbfgs).max() < 1e-6  # lbfgs stops on ftol before 1e-8
    assert fit.grad_norm <= bt.BT_TOL
    # the published default tolerance is close but not at the optimum
    default = bt.fit_bt_sklearn(z, p.win, p.lose)
    assert np.abs(fit.w - default).max() < 1e-2


def test_warm_start_converges_to_the_same_weights():
    cat, z, y = _toy(seed=5)
    p = bt.PairIndex.build(cat, y)
    cold = bt.fit_bt(z, p.win, p.lose)
    far = bt.fit_bt(z, p.win, p.lose, w0=cold.w + 5.0)
    near = bt.fit_bt(z, p.win, p.lose, w0=cold.w + 1e-3)
    assert np.abs(far.w - cold.w).max() < 1e-9
    assert np.abs(near.w - cold.w).max() < 1e-9


def test_no_pairs_gives_zero_weights():
    fit = bt.fit_bt(np.ones((3, 2)), np.zeros(0, np.int64), np.zeros(0, np.int64))
    assert fit.w.tolist() == [0.0, 0.0]


def test_tournament_score_by_hand():
    """w = (1,). Test product t (category A) has z = ln 3. Same-category training products:
    j1 at 0 (margin ln 3 -> sigmoid = 3/4), j2 at 2 ln 3 (margin -ln 3 -> 1/4), j3 at ln 3
    (margin 0 -> 1/2). Product k in category B (z = 100) is not an opponent. Score = 3/4 + 1/4 +
    1/2 = 1.5. A second test product u in B at z = 100 + ln 3 meets only k: 3/4."""
    ln3 = np.log(3.0)
    z_train = np.array([[0.0], [2 * ln3], [ln3], [100.0]])
    cat_train = np.array(["A", "A", "A", "B"], dtype=object)
    z_test = np.array([[ln3], [100.0 + ln3]])
    cat_test = np.array(["A", "B"], dtype=object)
    s = bt.tournament_scores(z_test, cat_test, z_train, cat_train, np.array([1.0]))
    assert s == pytest.approx([1.5, 0.75], abs=1e-15)
    # per-test weights (hierarchical BT): doubling w for u gives sigmoid(2 ln 3) = 9/10
    s2 = bt.tournament_scores(
        z_test, cat_test, z_train, cat_train, [np.array([1.0]), np.array([2.0])]
    )
    assert s2 == pytest.approx([1.5, 0.9], abs=1e-15)


def test_hierarchical_shrinkage_by_hand():
    """Groups (meat, nonsweet_dairy, other_dairy) with 12, 6, 2 pair rows and weights (1, 0),
    (0, 1), (2, 2).
    w_global = (12 (1,0) + 6 (0,1) + 2 (2,2)) / 20 = (16, 10) / 20 = (0.8, 0.5).
    alpha = median(12, 6, 2) = 6; lambda = 6/18 = 1/3, 6/12 = 1/2, 6/8 = 3/4.
    w~_meat = 2/3 (1,0) + 1/3 (0.8,0.5) = (2.8/3, 0.5/3);
    w~_nsd  = 1/2 (0,1) + 1/2 (0.8,0.5) = (0.4, 0.75);
    w~_od   = 1/4 (2,2) + 3/4 (0.8,0.5) = (1.1, 0.875)."""
    s = bt.shrink_group_weights(
        ["meat", "nonsweet_dairy", "other_dairy"],
        np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0]]),
        np.array([12, 6, 2]),
    )
    assert s.w_global == pytest.approx([0.8, 0.5])
    assert s.alpha == 6.0
    assert s.lam == pytest.approx([1 / 3, 1 / 2, 3 / 4])
    assert s.w_shrunk[0] == pytest.approx([2.8 / 3, 0.5 / 3])
    assert s.w_shrunk[1] == pytest.approx([0.4, 0.75])
    assert s.w_shrunk[2] == pytest.approx([1.1, 0.875])


def test_shrinkage_group_without_pairs_takes_the_global_weights():
    s = bt.shrink_group_weights(
        ["a", "b", "c"], np.array([[1.0], [3.0], [0.0]]), np.array([4, 4, 0])
    )
    # w_global = (4 + 12) / 8 = 2; alpha = 4; lambda_c = 4 / 4 = 1 -> w~_c = 2
    assert s.w_shrunk[2] == pytest.approx([2.0])
    assert s.lam[0] == pytest.approx(0.5)


def test_fit_hierarchical_bt_equals_group_fits_then_shrinkage():
    cat, z, y = _toy(seed=7)
    groups = np.array(["g1", "g1", "g2"])[cat]
    p = bt.PairIndex.build(cat, y)
    pg = groups[p.win]
    h = bt.fit_hierarchical_bt(z, p.win, p.lose, pg, ("g1", "g2"))
    w1 = bt.fit_bt(z, p.win[pg == "g1"], p.lose[pg == "g1"]).w
    w2 = bt.fit_bt(z, p.win[pg == "g2"], p.lose[pg == "g2"]).w
    n = np.array([2 * (pg == "g1").sum(), 2 * (pg == "g2").sum()])
    manual = bt.shrink_group_weights(["g1", "g2"], np.array([w1, w2]), n)
    assert np.allclose(h.w_shrunk, manual.w_shrunk, atol=1e-12)
