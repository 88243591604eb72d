"""Human baseline (docs/benchmark.md section 5): hand examples, loop references, determinism."""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from warehouse.human import (
    assign_blocks,
    block_matrices,
    block_reliability,
    compute_human_baseline,
    group_size_curve,
    human_baseline_summary,
    k_star,
    panelist_block_accuracy,
    split_half_credit,
    split_half_reliability,
    split_half_result,
)
from warehouse.human.baseline import RELIABILITY_COLUMNS
from warehouse.human.testing import ratings_from_block_structure


def _frame_from_matrix(mat, category="Bacon", codes=None, ref_codes=()):
    mat = np.asarray(mat, dtype=float)
    codes = list(range(1, mat.shape[1] + 1)) if codes is None else list(codes)
    rows = [
        {
            "category": category,
            "respondent_id": r,
            "product_code": codes[p],
            "is_reference": codes[p] in ref_codes,
            "similarity": mat[r, p],
        }
        for r in range(mat.shape[0])
        for p in range(mat.shape[1])
    ]
    return pl.DataFrame(rows)


def _loo(mat, **kw):
    df = _frame_from_matrix(mat, **kw)
    bp, br = assign_blocks(df, min_respondents=1)
    # respondents are 0..n-1: row i is respondent i
    return panelist_block_accuracy(df, bp, br).sort("respondent_id")


# ------------------------------------------------------------------------ LOO hand examples


def test_loo_hand_example_prediction_ties():
    # LOO means: r0 -> (5.5, 4, 2.5); r1 -> (6.5, 3.5, 2); r2 -> (6, 4.5, 1.5)
    out = _loo([[7, 4, 1], [5, 5, 2], [6, 3, 3]])
    np.testing.assert_allclose(out["pairwise_accuracy"], [1.0, 2.5 / 3, 2.5 / 3])
    assert (out["n_analogs"] == 3).all() and (out["n_pairs"] == 3).all()
    np.testing.assert_allclose(out["recall_at_1"], [1.0, 0.5, 1.0])
    np.testing.assert_allclose(out["recall_at_3"], [1.0, 1.0, 1.0])
    assert out["spearman"][0] == pytest.approx(1.0)
    want = scipy.stats.spearmanr([6.5, 3.5, 2], [5, 5, 2]).statistic
    assert out["spearman"][1] == pytest.approx(want)


def test_loo_hand_example_gold_ties():
    # LOO means: r0 -> (4, 4, 1.5) gold tie on (1, 2); r1 -> (4.5, 2.5, 4); r2 -> (3.5, 3.5, 3.5)
    out = _loo([[4, 2, 6], [3, 5, 1], [5, 3, 2]])
    np.testing.assert_allclose(out["pairwise_accuracy"], [0.5 / 3, 1 / 3, 0.5])
    np.testing.assert_allclose(out["recall_at_1"], [0.0, 0.0, 1.0])
    np.testing.assert_allclose(out["recall_at_3"], [1.0, 1.0, 1.0])
    assert out["spearman"][2] is None  # constant gold: missing


def test_respondent_id_keeps_the_bundle_type_with_or_without_rows():
    """Integer respondent ids (the fixture bundle) stay integers, also when no panelist keeps
    enough analogs: the de-identification join must not meet text against integers."""
    from warehouse.human.panelists import deidentify_panelist_rows

    mat = [[1, 2, 3], [2, 3, 4], [1, 3, 5]]
    df = _frame_from_matrix(mat)
    bp, br = assign_blocks(df, min_respondents=1)
    assert br["respondent_id"].dtype == pl.Int64
    for min_analogs, n_rows in ((2, 3), (99, 0)):
        acc = panelist_block_accuracy(df, bp, br, min_analogs=min_analogs)
        assert acc.height == n_rows and acc["respondent_id"].dtype == pl.Int64
        out = deidentify_panelist_rows(acc, br)
        assert out.height == n_rows and "respondent_id" not in out.columns
    text = df.with_columns(pl.col("respondent_id").cast(pl.String))
    bp, br = assign_blocks(text, min_respondents=1)
    assert panelist_block_accuracy(text, bp, br, min_analogs=99)["respondent_id"].dtype == pl.String


def test_loo_references_not_scored():
    # product 9 is a reference: it defines the block but is not an analog
    out = _loo([[7, 4, 1, 1], [5, 5, 2, 7], [6, 3, 3, 7]], codes=[1, 2, 3, 9], ref_codes={9})
    np.testing.assert_allclose(out["pairwise_accuracy"], [1.0, 2.5 / 3, 2.5 / 3])


def _loo_reference_loop(mat):
    """Literal per-respondent loop (missing cells skipped)."""
    rows = []
    for r in range(mat.shape[0]):
        others = np.delete(mat, r, axis=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gold = np.nanmean(others, axis=0)
        ok = ~np.isnan(gold) & ~np.isnan(mat[r])
        g, p = gold[ok], mat[r, ok]
        if ok.sum() < 2:
            continue
        credit = n = 0
        for i in range(len(g)):
            for j in range(i + 1, len(g)):
                n += 1
                if abs(g[i] - g[j]) < 1e-10 or abs(p[i] - p[j]) < 1e-10:
                    credit += 0.5
                elif np.sign(g[i] - g[j]) == np.sign(p[i] - p[j]):
                    credit += 1
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rho = scipy.stats.spearmanr(g, p).statistic
        rows.append((r, ok.sum(), n, credit / n, rho))
    schema = {"r": pl.Int64, "n_analogs": pl.Int64, "n_pairs": pl.Int64, "acc": pl.Float64}
    return pl.DataFrame(rows, schema=schema | {"rho": pl.Float64}, orient="row")


def test_loo_vectorised_equals_loop_with_missing_cells():
    rng = np.random.default_rng(7)
    mat = rng.integers(1, 8, (40, 6)).astype(float)
    mat[rng.random(mat.shape) < 0.15] = np.nan
    df = _frame_from_matrix(mat)
    bp, br = assign_blocks(df, min_respondents=1, count_null_as_rated=True)
    got = panelist_block_accuracy(df, bp, br)
    want = _loo_reference_loop(mat)
    assert got["respondent_id"].to_list() == want["r"].to_list()
    np.testing.assert_array_equal(got["n_analogs"], want["n_analogs"])
    np.testing.assert_array_equal(got["n_pairs"], want["n_pairs"])
    np.testing.assert_allclose(got["pairwise_accuracy"], want["acc"])
    np.testing.assert_allclose(got["spearman"].to_numpy(), want["rho"].to_numpy(), equal_nan=True)


# -------------------------------------------------------------------------------- split-half


def test_split_half_fixed_split_hand_example():
    # halves {0, 1} and {2, 3}: means A = (6, 3, 3), B = (5, 4, 1)
    # pairs: (1,2) A +3 / B +1 -> 1; (1,3) +3 / +4 -> 1; (2,3) A tie -> 0.5  => 2.5 / 3
    mat = np.array([[7, 2, 3], [5, 4, 3], [6, 4, 1], [4, 4, 1]], dtype=float)
    credit, n = split_half_credit(mat, np.array([[True, True, False, False]]))
    assert credit.tolist() == [2.5] and n.tolist() == [3]
    # halves {0, 2} and {1, 3}: A = (6.5, 3, 2), B = (4.5, 4, 2) -> all agree => 3 / 3
    credit, n = split_half_credit(mat, np.array([[True, False, True, False]]))
    assert credit.tolist() == [3.0] and n.tolist() == [3]


def test_split_half_reliability_follows_documented_draws():
    rng = np.random.default_rng(11)
    mats = [rng.integers(1, 8, (n, p)).astype(float) for n, p in [(9, 3), (6, 4), (3, 5)]]
    df = pl.concat(
        [_frame_from_matrix(m, category=c) for m, c in zip(mats, ["A", "B", "C"], strict=True)]
    )
    bp, br = assign_blocks(df, min_respondents=1)
    res = split_half_result(df, bp, br, n_iter=25, seed=3)
    out = res.table
    assert_frame_equal(out, split_half_reliability(df, bp, br, n_iter=25, seed=3))
    # reference: one rng, blocks in (category, block_id) order, (n_iter, n) uniform keys per block,
    # half A = the floor(n/2) respondents with the smallest keys; block C (3 < 4) is skipped
    draw = np.random.default_rng(3)
    credit = np.zeros(25)
    pairs = np.zeros(25)
    for m in mats[:2]:
        keys = draw.random((25, m.shape[0]))
        for t in range(25):
            a = np.argsort(keys[t])[: m.shape[0] // 2]
            mask = np.zeros(m.shape[0], bool)
            mask[a] = True
            c, p = split_half_credit(m, mask[None, :])
            credit[t] += c[0]
            pairs[t] += p[0]
    np.testing.assert_allclose(out["split_half_pairwise_agreement"], credit / pairs)
    assert res.n_blocks == 2 and res.n_pairs == 3 + 6
    assert res.median == pytest.approx(np.median(credit / pairs))


def test_split_half_perfect_agreement():
    mat = np.tile([[6.0, 3.0, 1.0, 4.0]], (10, 1))
    df = _frame_from_matrix(mat)
    bp, br = assign_blocks(df, min_respondents=1)
    out = split_half_reliability(df, bp, br, n_iter=20)
    assert (out["split_half_pairwise_agreement"] == 1.0).all()


# -------------------------------------------------------------------------- group-size curve


def _curve_reference_loop(mats, k_max, n_iter, seed, reference):
    """Loop over iterations, k and blocks with the documented draws (within_block pooling)."""
    rng = np.random.default_rng(seed)
    keys = [rng.random((n_iter, m.shape[0])) for m in mats]
    acc = np.zeros((n_iter, k_max))
    for t in range(n_iter):
        for k in range(1, k_max + 1):
            credit = n_pairs = 0.0
            for m, kb in zip(mats, keys, strict=True):
                order = np.argsort(kb[t])
                panel = order[: min(k, m.shape[0])]
                rest = order[min(k, m.shape[0]) :]
                if reference == "full":
                    gold = m.mean(axis=0)
                elif rest.size:
                    gold = m[rest].mean(axis=0)
                else:
                    continue
                pred = m[panel].mean(axis=0)
                for i in range(m.shape[1]):
                    for j in range(i + 1, m.shape[1]):
                        dg, dp = gold[i] - gold[j], pred[i] - pred[j]
                        n_pairs += 1
                        if abs(dg) < 1e-10 or abs(dp) < 1e-10:
                            credit += 0.5
                        else:
                            credit += float(np.sign(dg) == np.sign(dp))
            acc[t, k - 1] = credit / n_pairs if n_pairs else np.nan
    return acc


@pytest.mark.parametrize("reference", ["full", "complement"])
def test_group_size_curve_equals_loop(reference):
    rng = np.random.default_rng(12)
    mats = [rng.integers(1, 8, (n, p)).astype(float) for n, p in [(7, 3), (5, 4)]]
    df = pl.concat(
        [_frame_from_matrix(m, category=c) for m, c in zip(mats, ["A", "B"], strict=True)]
    )
    bp, br = assign_blocks(df, min_respondents=1)
    curve = group_size_curve(df, bp, br, k_max=9, n_iter=30, seed=5, reference=reference)
    acc = _curve_reference_loop(mats, 9, 30, 5, reference)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(curve["median_accuracy"], np.nanmedian(acc, axis=0))
        np.testing.assert_allclose(curve["q025"], np.nanpercentile(acc, 2.5, axis=0))
        np.testing.assert_allclose(curve["q975"], np.nanpercentile(acc, 97.5, axis=0))
    assert curve["n_blocks_capped"].to_list() == [0, 0, 0, 0, 0, 1, 1, 2, 2]
    if reference == "full":
        # panel = whole block for k >= 7: agreement with its own gold
        assert curve["median_accuracy"][-1] == pytest.approx(
            _curve_reference_loop(mats, 9, 1, 0, "full")[0, -1]
        )
    else:
        assert curve["median_accuracy"][-1] is None  # nobody left out anywhere: missing


def test_group_size_curve_cross_block_pairs_across_blocks():
    rng = np.random.default_rng(13)
    a = rng.integers(1, 8, (8, 3)).astype(float)
    b = rng.integers(1, 8, (6, 2)).astype(float)
    df = pl.concat(
        [_frame_from_matrix(a, codes=[1, 2, 3]), _frame_from_matrix(b, codes=[4, 5])]
    ).with_columns(pl.col("respondent_id") + 100 * (pl.col("product_code") > 3).cast(pl.Int64))
    bp, br = assign_blocks(df, min_respondents=1)
    within = group_size_curve(df, bp, br, k_max=4, n_iter=10)
    cross = group_size_curve(df, bp, br, k_max=4, n_iter=10, pooling="cross_block")
    assert within["mean_n_pairs"].to_list() == [4.0] * 4  # 3 + 1
    assert cross["mean_n_pairs"].to_list() == [10.0] * 4  # C(5, 2)
    # k = block size everywhere -> the pooled panel means equal the gold
    full = group_size_curve(df, bp, br, k_max=8, n_iter=3, pooling="cross_block")
    gold = np.concatenate([a.mean(axis=0), b.mean(axis=0)])
    ties = sum(abs(gold[i] - gold[j]) < 1e-10 for i in range(5) for j in range(i + 1, 5))
    assert full["median_accuracy"][-1] == pytest.approx(1.0 - 0.5 * ties / 10)


def test_group_size_curve_rejects_bad_options():
    df = _frame_from_matrix(np.ones((3, 2)))
    bp, br = assign_blocks(df, min_respondents=1)
    with pytest.raises(ValueError):
        group_size_curve(df, bp, br, pooling="nope")
    with pytest.raises(ValueError):
        group_size_curve(df, bp, br, reference="nope")


def test_k_star():
    curve = pl.DataFrame({"k": [1, 2, 3, 4], "median_accuracy": [0.6, 0.65, 0.7, 0.72]})
    assert k_star(curve, 0.65) == 2
    assert k_star(curve, 0.69) == 3
    assert k_star(curve, 0.5) == 1
    assert k_star(curve, 0.9) is None


# ----------------------------------------------------------------- reliability and summary


STRUCTURE = pl.DataFrame(
    {
        "category": ["Bacon", "Bacon", "Milk"],
        "block_id": [0, 1, 0],
        "n_respondents": [30, 24, 22],
        "n_analogs": [5, 3, 4],
    }
)


def test_block_reliability_columns_and_alpha_excludes_references():
    import krippendorff

    df = ratings_from_block_structure(STRUCTURE, n_references=2, seed=1)
    bp, br = assign_blocks(df)
    rel = block_reliability(df, bp, br)
    assert list(rel.columns) == RELIABILITY_COLUMNS
    assert rel["n_respondents"].to_list() == [30, 24, 22]
    assert rel["n_analogs"].to_list() == [5, 3, 4]
    m = block_matrices(df, bp, br)[0]
    assert m.ratings.shape[1] == 7  # 5 analogs + 2 references in the block ...
    want = krippendorff.alpha(m.analogs, level_of_measurement="ordinal")  # ... scored on 5
    assert rel["krippendorff_alpha_ordinal"][0] == pytest.approx(want)
    assert rel["kendall_w"].is_between(0, 1).all()


def test_same_seed_same_outputs_and_summary():
    df = ratings_from_block_structure(STRUCTURE, seed=2)
    one = compute_human_baseline(df, n_iter=1000, seed=42, model_accuracy=0.683)
    two = compute_human_baseline(df, n_iter=1000, seed=42, model_accuracy=0.683)
    for name in ("accuracy", "reliability", "split_half", "curve", "summary"):
        assert_frame_equal(getattr(one, name), getattr(two, name))
    other = compute_human_baseline(df, n_iter=1000, seed=43)
    assert not other.split_half.equals(one.split_half)
    s = one.summary.row(0, named=True)
    assert s["n_blocks"] == 3 and s["n_panelist_blocks"] == 76
    assert s["panelist_accuracy_median"] == pytest.approx(
        one.accuracy["pairwise_accuracy"].median()
    )
    assert s["split_half_median"] == pytest.approx(
        np.median(one.split_half["split_half_pairwise_agreement"].to_numpy())
    )
    assert s["panel3_accuracy"] == one.curve["median_accuracy"][2]
    assert s["panel5_q975"] == one.curve["q975"][4]
    ks = k_star(one.curve, 0.683)
    assert s["k_star"] is None if ks is None else s["k_star"] == ks
    summary = human_baseline_summary(df, n_iter=1000, seed=42, model_accuracy=0.683)
    assert_frame_equal(summary, one.summary)


@settings(max_examples=15, deadline=None)
@given(
    n=st.integers(3, 9),
    p=st.integers(2, 6),
    seed=st.integers(0, 2**31 - 1),
    missing=st.floats(0.0, 0.3),
)
def test_loo_property_equals_loop(n, p, seed, missing):
    rng = np.random.default_rng(seed)
    mat = rng.integers(1, 8, (n, p)).astype(float)
    mat[rng.random(mat.shape) < missing] = np.nan
    df = _frame_from_matrix(mat)
    bp, br = assign_blocks(df, min_respondents=1, min_analogs=1, count_null_as_rated=True)
    got = panelist_block_accuracy(df, bp, br)
    want = _loo_reference_loop(mat)
    assert got["respondent_id"].to_list() == want["r"].to_list()
    np.testing.assert_allclose(got["pairwise_accuracy"], want["acc"])
    np.testing.assert_allclose(got["spearman"].to_numpy(), want["rho"].to_numpy(), equal_nan=True)
