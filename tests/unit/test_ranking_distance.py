"""MMRF distance baselines: a hand-worked Euclidean case, cosine against scipy, per-subset N."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cosine

from warehouse.ranking.design import Design, DesignError
from warehouse.ranking.distance import mmrf_scores
from warehouse.ranking.synthetic import SMALL_CATEGORIES, SMALL_DIMS, synthetic_design


def _one_category(analog_x, ref_x):
    n = len(analog_x)
    keys = pl.DataFrame(
        {
            "category": ["A"] * n,
            "product_code": list(range(1, n + 1)),
            "subset": ["meat"] * n,
            "hbt_group": ["meat"] * n,
        }
    )
    refs = pl.DataFrame(
        {
            "category": ["A"] * len(ref_x),
            "product_code": list(range(n + 1, n + 1 + len(ref_x))),
            "subset": ["meat"] * len(ref_x),
        }
    )
    return Design(
        keys,
        np.arange(n, dtype=float),
        {"C": np.array(analog_x)},
        reference_keys=refs,
        reference_blocks={"C": np.array(ref_x)},
    )


def test_euclidean_by_hand():
    """Analogs a = 0, b = 2, reference r = 4 (1-d). Scaler over all three: mean 2, sd
    sqrt(8/3); standardized distances to the centroid (= r) are 4/sd, 2/sd, 0. Rank
    normalization over the category's three products: r -> 1/4, b -> 2/4, a -> 3/4.
    Scores = -(3/4, 2/4)."""
    d = _one_category([[0.0], [2.0]], [[4.0]])
    scores, info = mmrf_scores(d, ["C"], "euclidean")
    assert scores == pytest.approx([-0.75, -0.5])
    assert info["n_modalities"].tolist() == [1, 1]


def test_cosine_matches_scipy_on_standardized_rows():
    x = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]])
    r = np.array([[2.0, 2.0], [1.0, 3.0]])
    d = _one_category(x.tolist(), r.tolist())
    allx = np.vstack([x, r])
    z = (allx - allx.mean(0)) / allx.std(0)
    centroid = z[3:].mean(0)
    dist = np.array([cosine(z[k], centroid) for k in range(5)])
    expected = -np.array([(dist <= dist[k]).sum() / 6 for k in range(3)])
    scores, _ = mmrf_scores(d, ["C"], "cosine")
    assert scores == pytest.approx(expected)


def test_nutrition_uses_each_subsets_columns_only():
    d = synthetic_design(dims=SMALL_DIMS, layout=SMALL_CATEGORIES)
    base, info = mmrf_scores(d, ["N", "C"], "euclidean")
    assert info["modalities"] == ["N/meat", "N/nonsweet_dairy", "N/cheese", "N/sweet_dairy", "C"]
    sugar = d.nutrition_columns.index("total_sugars_g_per_100g")
    n = d.block("N").copy()
    n[:, sugar] += np.arange(d.n) * 7.0  # meat, cheese and nonsweet_dairy ignore sugars
    moved, _ = mmrf_scores(d.with_block("N", n), ["N", "C"], "euclidean")
    sweet = np.array(d.keys["subset"].to_list()) == "sweet_dairy"
    assert np.array_equal(base[~sweet], moved[~sweet])
    assert not np.array_equal(base[sweet], moved[sweet])


def test_missing_modalities_are_skipped_and_no_modality_is_an_error():
    d = _one_category([[0.0], [2.0]], [[np.nan]])
    with pytest.raises(DesignError, match="no modality"):
        mmrf_scores(d, ["C"], "euclidean")


def _with_absent_c(d: Design, rows: list[int], fill: float) -> Design:
    c = d.block("C").copy()
    c[rows] = fill
    mask = np.zeros(d.n, bool)
    mask[rows] = True
    return d.with_block("C", c, absent_rows=mask)


@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_an_absent_modality_is_skipped_not_zero_filled(metric):
    """An analog the design zero-filled for C (``Design.absent``) is scored on its other
    modalities only, and its placeholder row never touches anyone's score (scaler, centroid,
    ranks): any fill value gives the same scores."""
    d = synthetic_design(dims=SMALL_DIMS, layout=SMALL_CATEGORIES)
    rows = [0, 1, 7]
    zero, info = mmrf_scores(_with_absent_c(d, rows, 0.0), ["N", "C"], metric)
    other, _ = mmrf_scores(_with_absent_c(d, rows, 123.0), ["N", "C"], metric)
    assert np.array_equal(zero, other)
    n_only, _ = mmrf_scores(d, ["N"], metric)
    assert np.array_equal(zero[rows], n_only[rows])
    assert info["n_modalities"][rows].tolist() == [1, 1, 1]
    assert (np.delete(info["n_modalities"], rows) == 2).all()


def test_design_from_frames_marks_zero_filled_rows_absent():
    from warehouse.ranking.design import design_from_frames

    products = pl.DataFrame(
        {
            "category": ["A"] * 4,
            "product_code": [1, 2, 3, 4],
            "is_analog": [True, True, True, False],
            "subset": ["meat"] * 4,
            "hbt_group": ["meat"] * 4,
        }
    )
    means = pl.DataFrame(
        {"category": ["A"] * 3, "product_code": [1, 2, 3], "panel_mean": [1.0, 2, 3]}
    )
    frame = pl.DataFrame(
        {
            "category": ["A"] * 3,
            "product_code": [1, 3, 4],
            "vector": [[1.0, 2.0], [2.0, 1.0], [1.0, 1.0]],
        }
    )
    d = design_from_frames(products, means, {"C": frame}, missing="zero")
    assert d.absent["C"].tolist() == [False, True, False]
    assert d.block("C")[1].tolist() == [0.0, 0.0]  # the supervised models' row
    assert np.isnan(d.analog_rows_for_distance("C")[1]).all()
    scores, info = mmrf_scores(d, ["C", "S"], "euclidean")
    assert info["n_modalities"].tolist() == [2, 1, 2]
    bare = Design(d.keys, d.target, d.blocks, d.reference_keys, d.reference_blocks)
    assert bare.fingerprint(["C"], references=True) != d.fingerprint(["C"], references=True)
    assert bare.fingerprint(["C"]) == d.fingerprint(["C"])  # supervised fits: same rows


def test_rank_counts_distances_within_the_tie_tolerance_as_equal():
    from warehouse.ranking.distance import _rank_normalize

    cat = np.array(["A"] * 4)
    d = np.array([1.0, 1.0 + 4e-11, 1.0 - 2e-16, 2.0])
    assert _rank_normalize(d, cat).tolist() == [0.6, 0.6, 0.6, 0.8]
    assert _rank_normalize(np.array([1.0, 1.0 + 2e-10, 3.0, 3.0]), cat).tolist() == [
        0.2,
        0.4,
        0.8,
        0.8,
    ]


@settings(max_examples=15, deadline=None, derandomize=True)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from(["cosine", "euclidean"]),
    st.integers(1, 5),
)
def test_bit_identical_vectors_get_identical_scores(seed, metric, copies):
    """Copying one analog's vectors (every block) onto ``copies`` other analogs of its category,
    wherever their rows sit, gives all of them bit-identical scores."""
    d = synthetic_design(seed=seed % 1000, dims=SMALL_DIMS, layout=SMALL_CATEGORIES)
    rng = np.random.default_rng(seed)
    rows = np.flatnonzero(d.categories == "Milk")
    src, dst = rows[0], rng.choice(rows[1:], size=copies, replace=False)
    for b in ("N", "C", "T", "I"):
        m = d.block(b).copy()
        m[dst] = m[src]
        d = d.with_block(b, m)
    scores, _ = mmrf_scores(d, ["N", "C", "T", "I"], metric)
    assert len(set(scores[np.r_[src, dst]].tolist())) == 1
