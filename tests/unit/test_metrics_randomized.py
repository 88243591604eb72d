"""``category_randomized`` (warehouse/metrics/randomized.py): Stevens' randomized Clopper-Pearson
interval of the Recall@k hit count, its exactness under a binomial count, and the derivation of
its auxiliary uniform from the data (reproducible, and independent across data sets)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from warehouse.metrics.intervals import RECALL_METRICS, _Data, metric_intervals
from warehouse.metrics.randomized import (
    auxiliary_stream,
    average_ranks,
    data_digest,
    fuzzy_bounds,
    fuzzy_cover_probability,
    randomized_interval,
)

K = 24


def _benchmark(seed: int, r: float = 0.8) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Categories of 5-18 products, gold ~ N(0, 1), a prediction correlated r with it."""
    sizes = 5 + np.arange(K) % 14
    rng = np.random.default_rng(seed)
    cat = np.repeat([f"c{i:02d}" for i in range(K)], sizes).astype(object)
    gold = rng.normal(size=sizes.sum())
    pred = r * gold + np.sqrt(1 - r * r) * rng.normal(size=sizes.sum())
    return cat, gold, pred


@pytest.mark.parametrize("k", [5, 24])
@pytest.mark.parametrize("q", [0.03, 0.3, 0.5, 0.77, 0.97])
def test_exact_coverage_under_a_binomial_count(k: int, q: float) -> None:
    """sum_x P(X = x) P_V(q in CI(x, V)) = 95% for X ~ binomial(k, q): the point of
    randomizing (a function of X alone jumps with the atoms of X)."""
    x = np.arange(k + 1)
    coverage = stats.binom.pmf(x, k, q) @ fuzzy_cover_probability(x, k, q)
    assert coverage == pytest.approx(0.95, abs=1e-12)
    jeffreys = stats.beta.ppf([[0.025], [0.975]], x + 0.5, k - x + 0.5)
    jeffreys[0, 0], jeffreys[1, -1] = 0.0, 1.0
    inside = (jeffreys[0] <= q) & (q <= jeffreys[1])
    # for contrast: Jeffreys' coverage at these points is not 95%
    assert abs(stats.binom.pmf(x, k, q) @ inside - 0.95) > 1e-3


@pytest.mark.parametrize("x", [0, 1, 7, 12, 23, 24])
def test_bounds_solve_their_equations_and_match_the_cover_probability(x: int) -> None:
    v_grid = (np.arange(200) + 0.5) / 200
    bounds = np.array([fuzzy_bounds(x, K, v) for v in v_grid])
    assert (bounds[:, 0] <= x / K).all() and (x / K <= bounds[:, 1]).all()
    # the interval of X + V: both bounds move up with V
    assert (np.diff(bounds, axis=0) >= -1e-12).all()
    for v, (lo, hi) in zip(v_grid, bounds, strict=True):
        if 0 < lo < 1:
            tail = (1 - v) * stats.binom.sf(x - 1, K, lo) + v * stats.binom.sf(x, K, lo)
            assert tail == pytest.approx(0.025, abs=1e-10)
        if 0 < hi < 1:
            tail = (1 - v) * stats.binom.cdf(x - 1, K, hi) + v * stats.binom.cdf(x, K, hi)
            assert tail == pytest.approx(0.025, abs=1e-10)
    for q in (0.2, 0.5, 0.93, 0.999):
        share = np.mean((bounds[:, 0] <= q) & (q <= bounds[:, 1]))
        exact = fuzzy_cover_probability(np.array([x]), K, q)[0]
        assert abs(share - exact) <= 1 / 200 + 1e-12, (q, share, exact)


def test_same_input_same_interval_row_order_irrelevant() -> None:
    cat, gold, pred = _benchmark(3)
    a = metric_intervals(cat, gold, pred, "category_randomized")
    b = metric_intervals(cat, gold, pred, "category_randomized")
    perm = np.random.default_rng(0).permutation(len(cat))
    c = metric_intervals(cat[perm], gold[perm], pred[perm], "category_randomized")
    assert [i.metric for i in a] == list(RECALL_METRICS)
    assert a == b == c  # dataclass equality: every float bit for bit


def test_auxiliary_uniform_depends_on_predictions_seed_and_metric() -> None:
    cat, gold, pred = _benchmark(3)
    data = _Data(cat, gold, pred)
    digest = data_digest("recall_at_1", data.grouped.names, data.cats)
    v = auxiliary_stream(42, digest).random()
    # swap the predictions of the two lowest-predicted products of the first category: the
    # order below its top changes, the top (so the hit count) does not
    nudged = pred.copy()
    rows = np.flatnonzero(cat == sorted(set(cat))[0])
    low = rows[np.argsort(pred[rows])[:2]]
    nudged[low] = nudged[low[::-1]]
    data2 = _Data(cat, gold, nudged)
    digest2 = data_digest("recall_at_1", data2.grouped.names, data2.cats)
    assert digest2 != digest and auxiliary_stream(42, digest2).random() != v
    assert data_digest("recall_at_2", data.grouped.names, data.cats) != digest
    assert auxiliary_stream(43, digest).random() != v
    # the intervals of the two prediction files: same hit count, different V, different bounds
    ia = metric_intervals(cat, gold, pred, "category_randomized", ["recall_at_1"])[0]
    ib = metric_intervals(cat, gold, nudged, "category_randomized", ["recall_at_1"])[0]
    assert ia.point == ib.point and (ia.lo, ia.hi) != (ib.lo, ib.hi)


def test_interval_depends_on_within_category_orders_only() -> None:
    """Increasing transforms of the gold and of the predictions, and the gold replaced by its
    within-category rank (what the release publishes for a warehouse fit), give the same
    interval bit for bit: the release re-derives the warehouse's Recall intervals."""
    from scipy.stats import rankdata

    cat, gold, pred = _benchmark(3)
    a = metric_intervals(cat, gold, pred, "category_randomized")
    b = metric_intervals(cat, np.exp(gold), 3.0 * pred + 1.0, "category_randomized")
    ranks = np.empty(len(gold))
    for c in set(cat):
        rows = np.flatnonzero(cat == c)
        ranks[rows] = rankdata(gold[rows], method="average")
    c_ = metric_intervals(cat, ranks, pred, "category_randomized")
    assert a == b == c_


@pytest.mark.parametrize("n", [0, 1, 2, 5, 12, 215])
def test_average_ranks_are_scipys_bit_for_bit(n) -> None:
    """The digest's ranks are scipy's ``rankdata(method="average")``, byte for byte: ties (runs of
    every length, -0.0 beside 0.0), distinct values, and NaN (scipy's own policy)."""
    rng = np.random.default_rng(n)
    for _ in range(200):
        tied = rng.integers(0, n // 3 + 1, n).astype(np.float64) * rng.choice([1.0, 0.1, -1e-300])
        if n:
            tied[rng.integers(0, n)] = -0.0
        for a in (tied, rng.normal(size=n), np.where(rng.random(n) < 0.2, np.nan, tied)):
            assert average_ranks(a).tobytes() == stats.rankdata(a, method="average").tobytes()


def test_auxiliary_uniforms_of_different_predictions_look_independent() -> None:
    """2,000 prediction files (the same gold): their V are uniform (Kolmogorov-Smirnov) and
    unrelated to the hit count they come with; 2,000 fixed files, so the test is deterministic."""
    cat, gold, _ = _benchmark(3)
    names = sorted(set(cat))
    rows = [np.flatnonzero(cat == c) for c in names]
    rng = np.random.default_rng(7)
    v, hits = np.empty(2000), np.empty(2000)
    for i in range(2000):
        pred = 0.5 * gold + rng.normal(size=len(gold))
        cats = [(gold[r], pred[r]) for r in rows]
        v[i] = auxiliary_stream(42, data_digest("recall_at_1", names, cats)).random()
        hits[i] = sum(int(np.argmax(g) == np.argmax(p)) for g, p in cats)
    assert stats.kstest(v, "uniform").pvalue > 0.01
    assert abs(stats.spearmanr(v, hits).statistic) < 0.1


def test_perfect_and_empty_counts_close_at_the_estimate() -> None:
    digest = b"\0" * 32
    v = auxiliary_stream(42, digest).random()
    lo, hi, degenerate, note = randomized_interval(np.ones(K), digest, 42)
    assert hi == 1.0 and lo == pytest.approx(min(1.0, (0.025 / (1 - v)) ** (1 / K)))
    assert degenerate == (lo == 1.0)
    lo, hi, degenerate, note = randomized_interval(np.zeros(K), digest, 42)
    assert lo == 0.0 and hi == (0.0 if v <= 0.025 else pytest.approx(1 - (0.025 / v) ** (1 / K)))
    # zero width, flagged with the reason: the count is K and V fell in the top alpha/2
    lo, hi, degenerate, note = randomized_interval(
        np.ones(K), _digest_with_v(lambda v: v > 0.975), 42
    )
    assert (lo, hi, degenerate) == (1.0, 1.0, True) and "zero width" in note


def _digest_with_v(want, seed: int = 42) -> bytes:
    """The first digest (of counters) whose stream's V satisfies ``want``."""
    for i in range(100_000):
        digest = i.to_bytes(32, "little")
        if want(auxiliary_stream(seed, digest).random()):
            return digest
    raise AssertionError("no such digest")


def test_tied_predictions_draw_a_tie_break_and_contain_the_point() -> None:
    """Constant predictions: every category scores k / n_c (a fraction); the interval uses an
    integer count of tie-broken hits, says so, and still contains the reported estimate."""
    cat, gold, _ = _benchmark(3)
    pred = np.zeros(len(gold))
    for iv in metric_intervals(cat, gold, pred, "category_randomized"):
        assert iv.lo <= iv.point <= iv.hi, iv
        assert "random tie-break" in iv.note
    values = np.r_[np.full(12, 0.5), np.ones(12)]
    lo, hi, _, note = randomized_interval(values, b"\1" * 32, 42)
    rng = auxiliary_stream(42, b"\1" * 32)
    v, ties = rng.random(), rng.random(K)
    x = 12 + int((ties[:12] < 0.5).sum())
    expect = fuzzy_bounds(x, K, v)
    assert f"({x} of 24 hits)" in note
    assert (lo, hi) == (min(expect[0], 0.75), max(expect[1], 0.75))


def test_counts_outside_range_raise() -> None:
    with pytest.raises(ValueError, match="outside"):
        fuzzy_bounds(25, 24, 0.5)
