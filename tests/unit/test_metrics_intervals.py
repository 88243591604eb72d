"""Interval methods (docs/statistics.md): the published convention unchanged, copy-free
resampling, unbiased U-statistic variances, degenerate cases and paired comparisons."""

from __future__ import annotations

import itertools
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

from warehouse.metrics import (
    arrays_from_frame,
    bca_ci,
    bca_ci_per_category,
    bootstrap_replicates,
    compare_models,
    compute_all,
    pairwise_credits,
)
from warehouse.metrics.bootstrap import bca_interval, bca_macro_interval, sample_stats
from warehouse.metrics.core import canonical_order
from warehouse.metrics.intervals import (
    CI_METHODS,
    DEFAULT_CI_METHODS,
    INTERVAL_METRICS,
    RECALL_METRICS,
    _Data,
    interval_table,
    metric_intervals,
    per_category_intervals,
    resolve_methods,
    satterthwaite_df,
)
from warehouse.metrics.paired import distinct_bootstrap_differences, pair_structure
from warehouse.metrics.randomized import auxiliary_stream, data_digest
from warehouse.metrics.ustat import (
    category_variance,
    leave_out_lambdas,
    leave_out_subsets,
    ustat_variance_closed_form,
)

OOF = "food_similarity/results/oof_predictions"
NNLS = "nested_bt_gemini_nnls.csv"


@pytest.fixture(scope="module")
def nnls(public_dir: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return arrays_from_frame(pl.read_csv(public_dir / OOF / NNLS))


def _credit_matrix(g: np.ndarray, p: np.ndarray) -> np.ndarray:
    dg, dp = g[:, None] - g[None, :], p[:, None] - p[None, :]
    tied = (np.abs(dg) < 1e-10) | (np.abs(dp) < 1e-10)
    return np.where(tied, 0.5, ((dg > 0) == (dp > 0)).astype(float))


# --------------------------------------------------------------------------- published_bca


def test_published_bca_is_bca_ci_bit_for_bit(public_dir: Path) -> None:
    for path in sorted((public_dir / OOF).glob("*.csv"))[:3] + [public_dir / OOF / NNLS]:
        cat, gold, pred = arrays_from_frame(pl.read_csv(path))
        ref = bca_ci(cat, gold, pred, n_boot=2000, seed=42)
        got = metric_intervals(cat, gold, pred, "published_bca", n_boot=2000, seed=42)
        table2 = {i.metric: (i.point, i.lo, i.hi) for i in got if i.metric in ref}
        assert table2 == ref, path.name


def test_published_bca_macro_is_the_documented_variant(nnls) -> None:
    """Macro under published_bca is bca_macro_interval; the replicate engine's macro support
    (used by the copy-free methods) reproduces it with copies scored as ties."""
    cat, gold, pred = nnls
    got = metric_intervals(cat, gold, pred, "published_bca", ["pairwise_accuracy_macro"])[0]
    ref = bca_macro_interval(cat.astype(object), gold, pred, 10000, 42, 0.05)
    assert (got.lo, got.hi) == ref
    r = bootstrap_replicates(cat, gold, pred, 10000, 42, ["pairwise_accuracy_macro"])
    rep = r["pairwise_accuracy_macro"]
    assert bca_interval(rep["theta"], rep["boot"], rep["jack"], 0.05, "strict") == ref
    assert got.point == rep["theta"] == compute_all(cat, gold, pred)["pairwise_accuracy_macro"]


def test_published_per_category_unchanged(nnls) -> None:
    cat, gold, pred = nnls
    ref = bca_ci_per_category(cat, gold, pred, n_boot=2000)
    got = per_category_intervals(cat, gold, pred, "published_bca", n_boot=2000)
    assert got["category"].to_list() == ref["category"].to_list()
    for col in ("n_products", "pairwise_accuracy", "ci_lo", "ci_hi"):
        np.testing.assert_array_equal(got[col].to_numpy(), ref[col].to_numpy())
    assert set(got["ci_method"]) == {"published_bca"}


def test_midrank_bca_with_every_replicate_below_does_not_crash() -> None:
    """A category ranked perfectly draws copies in nearly every replicate (published: credit
    1/2), so all replicates can fall below the point: z0 = +inf, bounds = the top replicate."""
    boot = np.linspace(0.8, 0.99, 500)
    assert bca_interval(1.0, boot, np.full(10, 1.0), z0_rule="midrank") == (0.99, 0.99)
    assert bca_interval(0.0, boot, np.zeros(10), z0_rule="midrank") == (0.8, 0.8)


# --------------------------------------------------------------------------- copy-free engine


def test_distinct_scoring_by_enumeration() -> None:
    """copies="distinct": pair credit over pairs of distinct products weighted c_i c_j, and
    Spearman's pair/triple parts, equal brute-force sums; Kendall is the published tau-b."""
    rng = np.random.default_rng(5)
    for trial in range(30):
        n = int(rng.integers(3, 8))
        g = rng.integers(0, 4, n).astype(float) if trial % 2 else rng.normal(size=n)
        p = rng.integers(0, 3, n).astype(float) if trial % 2 else rng.normal(size=n)
        idx = rng.integers(0, n, (8, n))
        out = sample_stats(g, p, idx, copies="distinct")
        tie = sample_stats(g, p, idx, copies="tie")
        np.testing.assert_array_equal(out["tau"], tie["tau"])
        f = _credit_matrix(g, p)
        s, t = np.sign(g[:, None] - g[None, :]), np.sign(p[:, None] - p[None, :])
        for r in range(len(idx)):
            c = np.bincount(idx[r], minlength=n).astype(float)
            pairs = list(itertools.combinations(range(n), 2))
            assert out["npairs"][r] == sum(c[i] * c[j] for i, j in pairs)
            assert out["credit"][r] == pytest.approx(sum(c[i] * c[j] * f[i, j] for i, j in pairs))
            w2 = sum(c[i] * c[j] for i, j in itertools.permutations(range(n), 2))
            t2 = sum(
                c[i] * c[j] * s[i, j] * t[i, j] for i, j in itertools.permutations(range(n), 2)
            )
            trip = list(itertools.permutations(range(n), 3))
            w3 = sum(c[i] * c[j] * c[k] for i, j, k in trip)
            t3 = sum(c[i] * c[j] * c[k] * s[i, j] * t[i, k] for i, j, k in trip)
            with np.errstate(invalid="ignore", divide="ignore"):
                want2 = t2 / w2  # NaN when one product was drawn n times
            assert out["rho_parts"][r, 0, 0] == pytest.approx(want2, nan_ok=True)
            if w3 > 0:
                assert out["rho_parts"][r, 0, 1] == pytest.approx(t3 / w3)
            else:
                assert np.isnan(out["rho_parts"][r, 0, 1])


def test_distinct_equals_published_without_copies() -> None:
    rng = np.random.default_rng(11)
    g, p = rng.normal(size=9), rng.normal(size=9)
    perms = np.array([rng.permutation(9) for _ in range(20)])
    a = sample_stats(g, p, perms, copies="distinct")
    b = sample_stats(g, p, perms, copies="tie")
    for key in ("credit", "npairs", "tau", "recall_1", "recall_2", "recall_3"):
        np.testing.assert_array_equal(a[key], b[key])
    np.testing.assert_allclose(a["rho"], b["rho"], atol=1e-12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert a["rho"][0] == pytest.approx(stats.spearmanr(g, p).statistic, abs=1e-12)


def test_recall_copies_of_the_best_are_not_competitors() -> None:
    g = np.array([0.0, 1.0, 2.0])
    p = np.array([0.0, 1.0, 2.0])
    idx = np.array([[2, 2, 0]])  # the best product drawn twice, predicted on top
    assert sample_stats(g, p, idx, copies="tie")["recall_1"][0] == 0.5
    assert sample_stats(g, p, idx, copies="distinct")["recall_1"][0] == 1.0


# --------------------------------------------------------------------------- U-statistics


def test_lambdas_and_subsets() -> None:
    np.testing.assert_allclose(leave_out_lambdas(10, 2), [72.0, -28.0])
    np.testing.assert_allclose(leave_out_lambdas(5, 2), [12.0, -3.0])
    sub = leave_out_subsets(5, 2)
    assert sub.shape == (10, 3) and len({tuple(r) for r in sub}) == 10
    with pytest.raises(ValueError):
        leave_out_lambdas(5, 3)


def test_subset_variance_equals_closed_form() -> None:
    """The leave-one/two-out combination is U^2 - Q (the unbiased estimator) exactly."""
    rng = np.random.default_rng(2)
    for n in (4, 5, 7, 11):
        g = rng.normal(size=n)
        p = g + rng.normal(size=n)
        kernel = _credit_matrix(g, p)
        got = category_variance(g, p, "pairwise_accuracy").unbiased
        assert got == pytest.approx(ustat_variance_closed_form(kernel), rel=1e-10, abs=1e-14)
        sign = np.sign(g[:, None] - g[None, :]) * np.sign(p[:, None] - p[None, :])
        got = category_variance(g, p, "kendall_tau").unbiased
        assert got == pytest.approx(ustat_variance_closed_form(sign), rel=1e-10, abs=1e-14)


def test_unbiased_variance_by_simulation() -> None:
    """Mean estimate vs the variance across 1,500 simulated categories (10 products, r = .9):
    within 4 Monte Carlo standard errors; the jackknife is visibly biased upward."""
    rng = np.random.default_rng(42)
    n, r, reps = 10, 0.9, 1500
    values = {m: [] for m in ("pairwise_accuracy", "kendall_tau", "spearman")}
    est = {m: [] for m in values}
    jack = {m: [] for m in values}
    for _ in range(reps):
        g = rng.normal(size=n)
        p = r * g + np.sqrt(1 - r * r) * rng.normal(size=n)
        point = compute_all(np.zeros(n).astype(str), g, p)
        for m in values:
            values[m].append(point[m])
            cv = category_variance(g, p, m)
            est[m].append(cv.unbiased)
            jack[m].append(cv.jackknife)
    for m in values:
        truth = np.var(values[m], ddof=1)
        se = np.std(est[m]) / np.sqrt(reps) + truth * np.sqrt(2 / (reps - 1))
        assert abs(np.mean(est[m]) - truth) < 4 * se, m
        assert np.mean(jack[m]) > 1.15 * truth, m


# --------------------------------------------------------------------------- degenerate cases


def _swap_one_pair(cat: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Prediction = gold with the two lowest products of the first category swapped."""
    pred = gold.astype(float).copy()
    rows = np.flatnonzero(cat == sorted(set(cat))[0])
    lo2 = rows[np.argsort(gold[rows], kind="stable")[:2]]
    pred[lo2] = pred[lo2[::-1]]
    return pred


@pytest.mark.parametrize("case", ["perfect", "near_perfect", "perfect_tied_gold"])
def test_default_contains_point_or_is_flagged(nnls, case: str) -> None:
    cat, gold, _ = nnls
    if case == "perfect_tied_gold":
        pred = 3.0 * gold + 1.0  # the public gold has ties: accuracy < 1, tau-b = 1
    else:
        # untie the gold (rank within category), keep its order
        gold = gold + 1e-6 * np.arange(len(gold))
        pred = 2.0 * gold if case == "perfect" else _swap_one_pair(cat, gold)
    intervals = metric_intervals(cat, gold, pred, "default", n_boot=2000)
    assert [i.metric for i in intervals] == list(INTERVAL_METRICS)
    for iv in intervals:
        assert iv.ci_method == DEFAULT_CI_METHODS[iv.metric]
        assert iv.lo <= iv.point <= iv.hi, iv
        if iv.is_degenerate:
            assert iv.lo == iv.hi == iv.point, iv
            reasons = ("no variability", "all replicates equal", "randomized interval of zero")
            assert any(r in iv.note for r in reasons), iv
    by_metric = {i.metric: i for i in intervals}
    if case == "perfect":
        for m in ("pairwise_accuracy", "spearman", "kendall_tau", "pairwise_accuracy_macro"):
            assert by_metric[m].is_degenerate and by_metric[m].point == 1.0
        # 24 of 24 categories hit: the randomized lower bound (alpha / (2 (1 - V)))^(1/24), V
        # the first draw of the data's stream (zero width at 1 when 1 - V <= alpha / 2)
        data = _Data(cat, gold, pred)
        for m in RECALL_METRICS:
            v = auxiliary_stream(42, data_digest(m, data.grouped.names, data.cats)).random()
            iv = by_metric[m]
            assert iv.point == iv.hi == 1.0
            if 1 - v > 0.025:
                assert iv.lo == pytest.approx((0.025 / (1 - v)) ** (1 / 24), abs=1e-12)
                assert not iv.is_degenerate
            else:
                assert iv.lo == 1.0 and iv.is_degenerate
    if case == "near_perfect":
        assert not by_metric["pairwise_accuracy"].is_degenerate
        assert by_metric["pairwise_accuracy"].hi < 1.0
    table = interval_table(intervals)
    assert table.columns == [
        "metric",
        "ci_method",
        "point",
        "ci_lo",
        "ci_hi",
        "is_degenerate",
        "ci_note",
    ]


def test_per_category_default_degenerate_category_is_flagged(nnls) -> None:
    cat, gold, _ = nnls
    gold = gold + 1e-6 * np.arange(len(gold))
    table = per_category_intervals(cat, gold, _swap_one_pair(cat, gold))
    first = table.row(0, named=True)
    assert first["pairwise_accuracy"] < 1 and first["ci_lo"] < first["pairwise_accuracy"]
    rest = table[1:]
    assert rest["is_degenerate"].all() and (rest["ci_lo"] == rest["ci_hi"]).all()
    assert (rest["pairwise_accuracy"] == 1.0).all()


# --------------------------------------------------------------------------- the case


def test_default_centres_on_a_strong_predictor(nnls) -> None:
    """A predictor ranking ~89% of pairs right (issue #14): the published convention's
    replicates sit below the estimate and its BCa interval excludes it; copy-free replicates
    centre on it and the default interval contains it near its middle."""
    cat, gold, _ = nnls
    pred = gold + np.random.default_rng(14).normal(0.0, 1.5, len(gold))
    point = compute_all(cat, gold, pred)["pairwise_accuracy"]
    assert 0.87 < point < 0.91
    tie = bootstrap_replicates(cat, gold, pred, 2000, 42, ["pairwise_accuracy"])
    free = bootstrap_replicates(cat, gold, pred, 2000, 42, ["pairwise_accuracy"], copies="distinct")
    assert np.mean(tie["pairwise_accuracy"]["boot"] < point) > 0.95
    assert abs(np.mean(free["pairwise_accuracy"]["boot"]) - point) < 0.003
    assert 0.4 < np.mean(free["pairwise_accuracy"]["boot"] < point) < 0.6
    published, default = metric_intervals(
        cat, gold, pred, ["published_bca", "default"], ["pairwise_accuracy"], n_boot=2000
    )
    assert not published.lo <= point <= published.hi
    assert default.ci_method == "ustat_t" and default.lo < point < default.hi
    half = (default.hi - default.lo) / 2
    assert abs((default.lo + default.hi) / 2 - point) < 0.15 * half


# --------------------------------------------------------------------------- paired comparisons


def _two_models(nnls, noise: float = 1.0):
    cat, gold, pred = nnls
    other = gold + np.random.default_rng(3).normal(0.0, noise, len(gold))
    codes = np.arange(len(gold)).astype(str)
    return {
        "nnls": pairwise_credits(cat, gold, pred, product_code=codes),
        "noisy": pairwise_credits(cat, gold, other, product_code=codes),
    }


def test_ustat_comparison_matches_closed_form_and_is_consistent(nnls) -> None:
    credits = _two_models(nnls)
    row = compare_models(credits, method="ustat_t").row(0, named=True)
    frame = credits["nnls"].with_columns(d=credits["nnls"]["credit"] - credits["noisy"]["credit"])
    var, k = 0.0, 0
    for _, sub in frame.group_by("category", maintain_order=True):
        prods = np.unique(np.r_[sub["code_i"].to_numpy(), sub["code_j"].to_numpy()])
        pos = {c: i for i, c in enumerate(prods)}
        kern = np.zeros((len(prods), len(prods)))
        for ci, cj, d in zip(sub["code_i"], sub["code_j"], sub["d"], strict=True):
            kern[pos[ci], pos[cj]] = kern[pos[cj], pos[ci]] = d
        var += (len(sub) / len(frame)) ** 2 * ustat_variance_closed_form(kern)
        k += 1
    half = stats.t.ppf(0.975, k - 1) * np.sqrt(var)
    assert row["diff"] == pytest.approx(frame["d"].mean())
    assert row["ci_lo"] == pytest.approx(row["diff"] - half)
    assert row["ci_hi"] == pytest.approx(row["diff"] + half)
    assert (row["p_value"] < 0.05) == (row["ci_lo"] > 0 or row["ci_hi"] < 0)
    assert row["ci_method"] == "ustat_t"
    # wider than the pair bootstrap, which treats pairs sharing a product as independent
    legacy = compare_models(credits, n_boot=2000, n_perm=2000).row(0, named=True)
    assert row["ci_hi"] - row["ci_lo"] > legacy["ci_hi"] - legacy["ci_lo"]


def test_product_level_comparison_of_identical_models(nnls) -> None:
    credits = _two_models(nnls)
    same = {"a": credits["nnls"], "b": credits["nnls"].clone()}
    for method in ("ustat_t", "distinct_percentile"):
        row = compare_models(same, n_boot=500, method=method).row(0, named=True)
        assert row["diff"] == 0 and row["p_value"] == 1.0 and not row["resolved"]
        assert row["ci_lo"] == row["ci_hi"] == 0


def test_distinct_comparison_never_pairs_copies(nnls) -> None:
    """With products coded in canonical order, the comparison's replicate accuracies (pair
    weights c_i c_j on the main-table draws) equal the copy-free engine's replicates."""
    cat, gold, pred = nnls
    order = canonical_order(cat, gold, pred)
    codes = np.empty(len(gold), dtype=object)
    codes[order] = [f"{r:04d}" for r in range(len(gold))]
    credits = pairwise_credits(cat, gold, pred, product_code=codes)
    mat = np.column_stack([credits["credit"].to_numpy(), np.zeros(len(credits))])
    structure = pair_structure(credits["category"], credits["code_i"], credits["code_j"])
    got = distinct_bootstrap_differences(mat, structure, [(0, 1)], 2000, 42, 0.05)[0]
    free = bootstrap_replicates(cat, gold, pred, 2000, 42, ["pairwise_accuracy"], copies="distinct")
    want = np.percentile(free["pairwise_accuracy"]["boot"], [2.5, 97.5])
    assert (got["ci_lo"], got["ci_hi"]) == tuple(want)
    row = compare_models(_two_models(nnls), n_boot=2000, method="distinct_percentile").row(
        0, named=True
    )
    assert row["ci_lo"] < row["diff"] < row["ci_hi"] and 0 <= row["p_value"] <= 1


def test_product_level_comparison_needs_complete_pairs(nnls) -> None:
    credits = _two_models(nnls)
    partial = {k: v[1:] for k, v in credits.items()}
    with pytest.raises(ValueError, match="exactly once"):
        compare_models(partial, method="ustat_t")
    with pytest.raises(ValueError, match="products"):
        compare_models({k: v["credit"].to_numpy() for k, v in credits.items()}, method="ustat_t")


# --------------------------------------------------------------------------- method names


def test_method_resolution() -> None:
    assert resolve_methods("default", ["pairwise_accuracy", "recall_at_1"]) == [
        ("pairwise_accuracy", "ustat_t"),
        ("recall_at_1", "category_randomized"),
    ]
    assert resolve_methods("category_wilson", INTERVAL_METRICS) == [
        (f"recall_at_{k}", "category_wilson") for k in (1, 2, 3)
    ]
    with pytest.raises(ValueError, match="unknown interval method"):
        resolve_methods("bca", ["pairwise_accuracy"])
    with pytest.raises(ValueError, match="covers none"):
        resolve_methods("category_wilson", ["spearman"])
    assert set(DEFAULT_CI_METHODS.values()) <= set(CI_METHODS)


def test_recall_binomial_intervals_by_hand(nnls) -> None:
    cat, gold, pred = nnls
    wilson, jeffreys = metric_intervals(
        cat, gold, pred, ["category_wilson", "category_jeffreys"], ["recall_at_2"]
    )
    p, k, z = 0.5, 24, 1.959963984540054  # NNLS: 12 of 24 categories
    centre = (p + z * z / (2 * k)) / (1 + z * z / k)
    half = z * np.sqrt(p * (1 - p) / k + z * z / (4 * k * k)) / (1 + z * z / k)
    assert wilson.point == jeffreys.point == 0.5
    assert (wilson.lo, wilson.hi) == pytest.approx((centre - half, centre + half))
    assert (jeffreys.lo, jeffreys.hi) == pytest.approx(stats.beta.ppf([0.025, 0.975], 12.5, 12.5))
    # no hit at all: Jeffreys starts at 0 and contains the point
    none = metric_intervals(cat, gold, -gold, "category_jeffreys", ["recall_at_1"])[0]
    assert none.point == 0.0 and none.lo == 0.0
    assert none.hi == pytest.approx(stats.beta.ppf(0.975, 0.5, 24.5))


# --------------------------------------------------------------------------- ustat_satt


def test_satterthwaite_df_known_cases() -> None:
    # equal contributions: no spread, the cap (K - 1)
    assert satterthwaite_df(np.full(24, 0.3), 23) == 23
    # one category carries the whole variance: mean a/K, sample variance a^2/K, df exactly 2
    one = np.r_[5.0, np.zeros(23)]
    assert satterthwaite_df(one, 23) == pytest.approx(2.0)
    # by the formula, and clipped to [1, cap]
    x = np.array([1.0, 2.0, 4.0, 0.5])
    assert satterthwaite_df(x, 100) == pytest.approx(2 * x.sum() ** 2 / (4 * np.var(x, ddof=1)))
    assert satterthwaite_df(x, 3) == 3
    assert satterthwaite_df(np.array([1.0, -1.0]), 5) == 1.0
    assert satterthwaite_df(np.array([2.0]), 0) == 0


def test_ustat_satt_is_ustat_t_with_satterthwaite_df(nnls) -> None:
    """Same point and variance as ustat_t; the t quantile implied by the Fisher-z half-width is
    the one of the Satterthwaite df of the categories' contributions, computed here by hand."""
    cat, gold, pred = nnls
    plain, satt = metric_intervals(cat, gold, pred, ["ustat_t", "ustat_satt"], ["spearman"])
    assert satt.ci_method == "ustat_satt" and satt.point == plain.point
    assert satt.lo <= plain.lo <= plain.point <= plain.hi <= satt.hi
    names, sizes, parts = [], [], []
    for c in sorted(set(cat)):
        rows = np.flatnonzero(cat == c)
        g, p = gold[rows], pred[rows]
        if np.isnan(stats.spearmanr(g, p)[0]):
            continue
        cv = category_variance(g, p, "spearman")
        names.append(c)
        sizes.append(len(rows))
        parts.append(cv.unbiased if np.isfinite(cv.unbiased) else cv.jackknife)
    w = np.array(sizes) / np.sum(sizes)
    contrib = w**2 * np.array(parts)
    var, k = contrib.sum(), len(names)
    z = np.arctanh(plain.point)
    half_plain = (np.arctanh(plain.hi) - np.arctanh(plain.lo)) / 2
    half_satt = (np.arctanh(satt.hi) - np.arctanh(satt.lo)) / 2
    se_z = np.sqrt(var) / (1 - plain.point**2)
    assert half_plain == pytest.approx(stats.t.ppf(0.975, k - 1) * se_z)
    df = satterthwaite_df(contrib, k - 1)
    assert half_satt == pytest.approx(stats.t.ppf(0.975, df) * se_z)
    assert (np.arctanh(satt.hi) + np.arctanh(satt.lo)) / 2 == pytest.approx(z)


@pytest.mark.parametrize("case", ["perfect", "near_perfect", "perfect_tied_gold", "strong"])
def test_ustat_satt_contains_point_or_is_flagged_and_is_deterministic(nnls, case: str) -> None:
    cat, gold, _ = nnls
    if case == "perfect_tied_gold":
        pred = 3.0 * gold + 1.0
    elif case == "strong":
        pred = gold + np.random.default_rng(14).normal(0.0, 1.5, len(gold))
    else:
        gold = gold + 1e-6 * np.arange(len(gold))
        pred = 2.0 * gold if case == "perfect" else _swap_one_pair(cat, gold)
    first = metric_intervals(cat, gold, pred, "ustat_satt")
    assert first == metric_intervals(cat, gold, pred, "ustat_satt")  # deterministic
    (iv,) = first
    assert iv.metric == "spearman" and iv.lo <= iv.point <= iv.hi, iv
    if case in ("perfect", "perfect_tied_gold"):  # rho = 1 (ties on both sides alike)
        assert iv.is_degenerate and iv.lo == iv.hi == iv.point == 1.0
        assert "no variability" in iv.note
    else:
        assert not iv.is_degenerate and iv.lo < iv.point < iv.hi, iv
    if case == "near_perfect":
        # one category with a discordance carries all the variance: df exactly 2, noted
        assert "t with 2.0 Satterthwaite df" in iv.note, iv
        plain = metric_intervals(cat, gold, pred, "ustat_t", ["spearman"])[0]
        assert iv.lo < plain.lo
