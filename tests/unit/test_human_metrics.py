"""Metric kernels of the human baseline: tie rules, Spearman, Recall@k, alpha, Kendall's W."""

from __future__ import annotations

import warnings

import krippendorff
import numpy as np
import pytest
import scipy.stats

from warehouse.human.metrics import (
    alpha_from_coincidence,
    coincidence_matrix,
    kendall_w,
    pairwise_accuracy_rows,
    pairwise_credit,
    pairwise_credit_sums,
    recall_at_k_rows,
    spearman_rows,
)

NA = np.nan
# Krippendorff (2011), "Computing Krippendorff's alpha-reliability", example C: 4 observers x 12
# units with missing values. Published: nominal .743, ordinal .815, interval .849.
KRIPP_EXAMPLE = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3],
        [NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA],
    ]
)


def test_tie_rules():
    # gold tie wins over everything; then prediction tie; then sign agreement
    gold = np.array([0.0, 5e-11, 1.0, 1.0, -2.0, 1.0])
    pred = np.array([3.0, -1.0, 0.0, 5e-11, -1.0, -1.0])
    np.testing.assert_array_equal(pairwise_credit(gold, pred), [0.5, 0.5, 0.5, 0.5, 1.0, 0.0])
    assert np.isnan(pairwise_credit(np.nan, 1.0))


def test_pairwise_sums_pool_and_skip_missing():
    gold = np.array([[3.0, 2.0, 1.0], [1.0, 1.0, NA]])
    pred = np.array([[7.0, 7.0, 1.0], [2.0, 1.0, 5.0]])
    credit, n = pairwise_credit_sums(gold, pred)
    np.testing.assert_array_equal(credit, [2.5, 0.5])
    np.testing.assert_array_equal(n, [3, 1])
    acc, _ = pairwise_accuracy_rows(gold, pred)
    np.testing.assert_allclose(acc, [2.5 / 3, 0.5])


def test_pairwise_sums_chunking_matches_direct(monkeypatch):
    import warehouse.human.metrics as m

    rng = np.random.default_rng(1)
    gold = rng.integers(1, 8, (50, 12)).astype(float)
    pred = rng.integers(1, 8, (50, 12)).astype(float)
    full = pairwise_credit_sums(gold, pred)
    monkeypatch.setattr(m, "_CHUNK_ELEMENTS", 7)
    chunked = pairwise_credit_sums(gold, pred)
    np.testing.assert_array_equal(full[0], chunked[0])
    np.testing.assert_array_equal(full[1], chunked[1])


def test_spearman_rows_equals_scipy():
    rng = np.random.default_rng(2)
    gold = rng.integers(1, 5, (200, 6)).astype(float) / 3.0
    pred = rng.integers(1, 8, (200, 6)).astype(float)
    gold[rng.random(gold.shape) < 0.1] = np.nan
    pred[5] = 4.0  # constant prediction -> NaN
    got = spearman_rows(gold, pred)
    for r in range(gold.shape[0]):
        ok = ~np.isnan(gold[r]) & ~np.isnan(pred[r])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = scipy.stats.spearmanr(gold[r, ok], pred[r, ok]).statistic if ok.sum() > 1 else NA
        if np.isnan(want):
            assert np.isnan(got[r]), r
        else:
            assert got[r] == pytest.approx(want, abs=1e-12), r
    assert np.isnan(got[5])


def _recall_literal(gold, pred, k):
    """docs/benchmark.md §4 Recall@k written out literally for one ranking."""
    best = None
    for i, g in enumerate(gold):
        if best is None or g > gold[best]:
            best = i
    pb = pred[best]
    m = sum(p > pb + 1e-10 for p in pred)
    if m >= k:
        return 0.0
    t = sum(abs(p - pb) < 1e-10 for p in pred)
    return min(k - m, t) / t


def test_recall_rows_match_literal_rules():
    rng = np.random.default_rng(3)
    gold = rng.integers(1, 4, (300, 5)).astype(float)
    pred = rng.integers(1, 4, (300, 5)).astype(float)
    for k in (1, 2, 3):
        got = recall_at_k_rows(gold, pred, k)
        want = [_recall_literal(g, p, k) for g, p in zip(gold, pred, strict=True)]
        np.testing.assert_allclose(got, want)


def test_recall_hand_cases():
    # best = first max gold (item 0); pred ties with item 1 -> R@1 = 1/2
    assert recall_at_k_rows([[3.0, 1.0, 2.0]], [[5.0, 5.0, 1.0]], 1)[0] == 0.5
    # one item predicted above the best -> R@1 = 0, R@3 = min(2, 1)/1 = 1
    assert recall_at_k_rows([[3.0, 1.0, 2.0]], [[4.0, 6.0, 1.0]], 1)[0] == 0.0
    assert recall_at_k_rows([[3.0, 1.0, 2.0]], [[4.0, 6.0, 1.0]], 3)[0] == 1.0
    # gold tie: the first row is the best
    assert recall_at_k_rows([[2.0, 2.0]], [[1.0, 2.0]], 1)[0] == 0.0


def test_alpha_classic_example():
    assert krippendorff.alpha(KRIPP_EXAMPLE, level_of_measurement="ordinal") == pytest.approx(
        0.815, abs=5e-4
    )
    values, o = coincidence_matrix(KRIPP_EXAMPLE)
    # 11 pairable units (unit 12 has a single value), 40 pairable values
    assert o.sum() == pytest.approx(40.0)
    np.testing.assert_allclose(o, o.T)
    assert alpha_from_coincidence(values, o, "ordinal") == pytest.approx(0.815, abs=5e-4)
    assert alpha_from_coincidence(values, o, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert alpha_from_coincidence(values, o, "interval") == pytest.approx(0.849, abs=5e-4)


def test_alpha_from_coincidence_matches_package_on_random_blocks():
    rng = np.random.default_rng(4)
    for _ in range(5):
        x = rng.integers(1, 8, (30, 5)).astype(float)
        x[rng.random(x.shape) < 0.05] = np.nan
        values, o = coincidence_matrix(x)
        want = krippendorff.alpha(x, level_of_measurement="ordinal")
        assert alpha_from_coincidence(values, o) == pytest.approx(want, abs=1e-10)


def test_kendall_w_hand_example_with_ties():
    # ranks: r1 (1,2,3); r2 (1.5,1.5,3) with T = 2^3 - 2 = 6; r3 (3,2,1)
    # rank sums 5.5, 5.5, 7; mean 6; S = 1.5; W = 12 * 1.5 / (9 * 24 - 3 * 6) = 18 / 198
    x = np.array([[1, 2, 3], [1, 1, 3], [3, 2, 1]], dtype=float)
    assert kendall_w(x) == pytest.approx(18 / 198, abs=1e-15)


def test_kendall_w_limits_and_mean_spearman_identity():
    assert kendall_w(np.tile([1.0, 2.0, 5.0, 3.0], (4, 1))) == pytest.approx(1.0)
    assert np.isnan(kendall_w(np.full((3, 4), 2.0)))
    assert np.isnan(kendall_w(np.array([[1.0, 2.0]])))
    # without ties: mean pairwise Spearman = (m W - 1) / (m - 1)
    rng = np.random.default_rng(5)
    x = np.argsort(rng.random((6, 7)), axis=1).astype(float)
    m = x.shape[0]
    rhos = [scipy.stats.spearmanr(x[a], x[b]).statistic for a in range(m) for b in range(a + 1, m)]
    assert np.mean(rhos) == pytest.approx((m * kendall_w(x) - 1) / (m - 1), abs=1e-12)
