"""MMRF distance baselines: a hand-worked Euclidean case, cosine against scipy, per-subset N."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
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
