"""FeatureBlock contract, blocks S and N, k-NN imputation and coverage on hand-made frames."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from warehouse.features import (
    FeatureBlock,
    FeatureError,
    coverage_table,
    impute_same_category,
    nutrition_block,
    subset_block,
)
from warehouse.features.nutrition import IMPUTED_FLAGS, NUTRIENT_COLUMNS

CATEGORIES = pl.DataFrame(
    {
        "category": ["Milk", "Bacon", "Yogurt", "Mozzarella"],
        "subset": ["nonsweet_dairy", "meat", "sweet_dairy", "cheese"],
        "subset_order": [2, 1, 4, 3],
    }
)


def _products(pairs: list[tuple[str, int]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "category": [c for c, _ in pairs],
            "product_code": [p for _, p in pairs],
            "data_origin": ["test"] * len(pairs),
        }
    )


def _block(name: str, cats: list[str], codes: list[int], matrix, has=None, imputed=None):
    n = len(codes)
    matrix = np.asarray(matrix, dtype=np.float64).reshape(n, -1)
    return FeatureBlock(
        name=name,
        keys=pl.DataFrame(
            {"category": cats, "product_code": codes},
            schema={"category": pl.String, "product_code": pl.Int32},
        ),
        matrix=matrix,
        feature_names=tuple(f"f{j}" for j in range(matrix.shape[1])),
        encoder="e",
        encoder_version="1",
        has_block=np.ones(n, bool) if has is None else np.asarray(has, bool),
        is_imputed=np.zeros(n, bool) if imputed is None else np.asarray(imputed, bool),
        data_origin=("test",) * n,
    )


def test_subset_one_hot_follows_subset_order_not_row_order() -> None:
    blk = subset_block(_products([("Yogurt", 1), ("Bacon", 2), ("Mozzarella", 1)]), CATEGORIES)
    assert blk.feature_names == (
        "subset_meat", "subset_nonsweet_dairy", "subset_cheese", "subset_sweet_dairy",
    )  # fmt: skip
    assert blk.keys.rows() == [("Bacon", 2), ("Mozzarella", 1), ("Yogurt", 1)]
    np.testing.assert_array_equal(blk.matrix, [[1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]])
    frame = blk.to_frame()
    assert frame["product_key"].to_list() == ["Bacon:2", "Mozzarella:1", "Yogurt:1"]
    assert frame["vector"].to_list()[1] == [0.0, 0.0, 1.0, 0.0]


def test_subset_errors_name_the_seed_and_the_fix() -> None:
    with pytest.raises(FeatureError, match=r"'Tofu'.*add it to seeds/categories.csv"):
        subset_block(_products([("Tofu", 1)]), CATEGORIES)
    clash = CATEGORIES.with_columns(pl.lit(1).alias("subset_order"))
    with pytest.raises(FeatureError, match="share a subset_order"):
        subset_block(_products([("Milk", 1)]), clash)
    with pytest.raises(FeatureError, match=r"\(Milk, 1\) appears 2 times"):
        subset_block(_products([("Milk", 1), ("Milk", 1)]), CATEGORIES)


def test_nutrition_block_keeps_flags_and_zero_fill() -> None:
    nut = pl.DataFrame(
        {
            "category": ["Milk"],
            "product_code": [3],
            **{c: [float(i + 1)] for i, c in enumerate(NUTRIENT_COLUMNS)},
            **{f: [f == "is_imputed_sodium_g"] for f in IMPUTED_FLAGS},
            "subset_distance_vector": [[1.0, 2.0]],
        }
    )
    blk = nutrition_block(_products([("Milk", 3), ("Milk", 4)]), nut)
    np.testing.assert_array_equal(blk.matrix[0], [1, 2, 3, 4, 5, 6])
    assert blk.has_block.tolist() == [True, False]  # no label row: absent, zero, not invented
    assert not blk.matrix[1].any()
    assert blk.is_imputed.tolist() == [True, False]
    assert blk.extra["is_imputed_sodium_g"].to_list() == [True, False]
    with pytest.raises(FeatureError, match="fct_nutrition_per_100g.*null nutrient"):
        nutrition_block(
            _products([("Milk", 3)]), nut.with_columns(pl.lit(None).alias(NUTRIENT_COLUMNS[0]))
        )


def test_block_contract_errors() -> None:
    with pytest.raises(FeatureError, match="not one of"):
        _block("X", ["A"], [1], [[1.0]])
    with pytest.raises(FeatureError, match="without the block is not all zeros"):
        _block("I", ["A"], [1], [[1.0]], has=[False])
    with pytest.raises(FeatureError, match="not sorted"):
        _block("I", ["B", "A"], [1, 1], [[1.0], [2.0]])
    with pytest.raises(FeatureError, match="NaN"):
        _block("I", ["A"], [1], [[np.nan]])
    with pytest.raises(FeatureError, match="imputed but has no block"):
        _block("I", ["A"], [1], [[0.0]], has=[False], imputed=[True])


def test_to_frame_from_frame_round_trip_is_exact() -> None:
    blk = _block("T", ["A", "A"], [1, 2], [[0.1, 1 / 3], [0.0, 0.0]], has=[True, False])
    back = FeatureBlock.from_frame(blk.to_frame())
    assert back.matrix.tobytes() == blk.matrix.tobytes()
    assert back.keys.equals(blk.keys) and back.has_block.tolist() == [True, False]
    with pytest.raises(FeatureError, match="missing column"):
        FeatureBlock.from_frame(blk.to_frame().drop("vector"))


# Category A: donors D1..D5 have an image, Q (code 6) has none. The other block's columns have
# mean 0 and the same spread (x and y are the same multiset), so z-scoring keeps the angles:
# cos(Q, D1) = cos(Q, D2) = 0.949, D3 and D4 -0.949, D5 -1.
OTHER = [[2, 1], [1, 2], [-2, -1], [-1, -2], [-1.5, -1.5], [1.5, 1.5], [5, 5]]
CATS = ["A"] * 6 + ["B"]
CODES = [1, 2, 3, 4, 5, 6, 1]


def test_imputation_mean_of_k_nearest_same_category() -> None:
    image = _block("I", CATS, CODES, [[10], [20], [30], [40], [50], [0], [0]],
                   has=[1, 1, 1, 1, 1, 0, 0])  # fmt: skip
    other = _block("N", CATS, CODES, OTHER)
    two = impute_same_category(image, [other], k=2)
    assert two.matrix[5, 0] == pytest.approx((10 + 20) / 2)
    assert sorted(two.extra["imputation_neighbour_codes"][5].to_list()) == [1, 2]
    five = impute_same_category(image, [other])  # k = 5: every donor of the category
    assert five.matrix[5, 0] == pytest.approx((10 + 20 + 30 + 40 + 50) / 5)
    assert five.is_imputed.tolist() == [False] * 5 + [True, False]
    # category B has no donor: the row stays missing, never filled from another category
    assert not five.has_block[6] and five.matrix[6, 0] == 0.0
    assert five.extra["n_imputation_neighbours"].to_list() == [0, 0, 0, 0, 0, 5, 0]


def test_imputation_ignores_labels_and_absent_blocks() -> None:
    image = _block("I", ["A", "A"], [1, 2], [[0.0], [0.0]], has=[0, 0])
    other = _block("N", ["A", "A"], [1, 2], [[1.0], [2.0]])
    out = impute_same_category(image, [other])
    assert out.is_absent and not out.is_imputed.any()  # absent for everyone: nothing to copy
    with pytest.raises(FeatureError, match="different products or order"):
        impute_same_category(image, [_block("N", ["A"], [1], [[1.0]])])


def test_coverage_table_counts_by_hand() -> None:
    image = _block("I", CATS, CODES, [[10], [20], [30], [40], [50], [0], [0]],
                   has=[1, 1, 1, 1, 1, 0, 0])  # fmt: skip
    blk = impute_same_category(image, [_block("N", CATS, CODES, OTHER)])
    analog = np.array([1, 1, 1, 1, 0, 1, 1], bool)
    row = coverage_table([blk], analog).row(0, named=True)
    assert (row["n_with_block"], row["n_native"], row["n_imputed"]) == (6, 5, 1)
    assert row["share_with_block"] == pytest.approx(6 / 7)
    assert row["share_analogs_with_block"] == pytest.approx(5 / 6)
    assert row["share_analogs_native"] == pytest.approx(4 / 6)
    assert row["compounds_used_mean"] is None  # C-only statistics
