"""Block assignment (docs/benchmark.md section 2, "Blocks")."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from warehouse.human import assign_blocks, block_matrices, clean_ratings


def _rows(category, respondents, products, refs=(), value=4.0):
    return [
        {
            "category": category,
            "respondent_id": r,
            "product_code": p,
            "is_reference": p in refs,
            "similarity": value,
        }
        for r in respondents
        for p in products
    ]


def _frame(rows):
    return pl.DataFrame(rows).with_columns(pl.col("similarity").cast(pl.Float64))


def _sizes(br: pl.DataFrame, by=("category", "block_id")) -> dict:
    return {r[:-1]: r[-1] for r in br.group_by(*by).len().iter_rows()}


def _counts(br: pl.DataFrame) -> list[int]:
    """Respondents per block, in block_id order."""
    return br.group_by("block_id").len().sort("block_id")["len"].to_list()


def test_identical_sets_grouped_small_dropped_numbered_by_size():
    rows = (
        _rows("Bacon", range(25), [1, 2, 3, 9], refs={9})  # 25 respondents
        + _rows("Bacon", range(100, 130), [4, 5, 9], refs={9})  # 30 respondents -> block 0
        + _rows("Bacon", range(200, 219), [1, 2, 3, 4, 9], refs={9})  # 19 -> dropped
        + _rows("Bacon", range(300, 340), [6, 9], refs={9})  # 40 but 1 analog -> dropped
        + _rows("Milk", range(20), [1, 2], refs=())  # exactly 20 -> kept
    )
    bp, br = assign_blocks(_frame(rows))
    sizes = _sizes(br)
    assert sizes == {("Bacon", 0): 30, ("Bacon", 1): 25, ("Milk", 0): 20}
    bacon0 = br.filter((pl.col("category") == "Bacon") & (pl.col("block_id") == 0))
    assert set(bacon0["respondent_id"]) == set(range(100, 130))
    prods = {
        (c, b): tuple(p)
        for c, b, p in bp.group_by("category", "block_id", maintain_order=True)
        .agg("product_code")
        .iter_rows()
    }
    assert prods == {("Bacon", 0): (4, 5, 9), ("Bacon", 1): (1, 2, 3, 9), ("Milk", 0): (1, 2)}
    assert bp.filter(pl.col("product_code") == 9)["is_reference"].all()
    assert not bp.filter(pl.col("product_code") != 9)["is_reference"].any()
    assert list(bp.columns) == ["category", "block_id", "product_code", "is_reference"]
    assert list(br.columns) == ["category", "block_id", "respondent_id"]


def test_references_are_part_of_the_product_set():
    # same analogs, different reference -> two different blocks
    rows = _rows("Burgers", range(20), [1, 2, 8], refs={8, 9}) + _rows(
        "Burgers", range(20, 41), [1, 2, 9], refs={8, 9}
    )
    _bp, br = assign_blocks(_frame(rows))
    assert _counts(br) == [21, 20]


def test_tie_break_by_sorted_product_tuple_and_row_order_independence():
    rows = _rows("Steak", range(20), [3, 4]) + _rows("Steak", range(20, 40), [1, 2])
    df = _frame(rows)
    bp, br = assign_blocks(df)
    assert bp.filter(pl.col("block_id") == 0)["product_code"].to_list() == [1, 2]
    shuffled = df.sample(fraction=1.0, shuffle=True, seed=3)
    assert not shuffled.equals(df)
    bp2, br2 = assign_blocks(shuffled)
    assert_frame_equal(bp, bp2)
    assert_frame_equal(br, br2)


def test_min_sizes_are_parameters():
    rows = _rows("Nuggets", range(5), [1, 2]) + _rows("Nuggets", range(5, 8), [1, 2, 3])
    _bp, br = assign_blocks(_frame(rows), min_respondents=3, min_analogs=3)
    assert _counts(br) == [3]


def test_null_similarity_is_not_a_rating_by_default():
    rows = _rows("Yogurt", range(20), [1, 2, 3])
    df = _frame(rows)
    hole = (pl.col("respondent_id") == 0) & (pl.col("product_code") == 3)
    df = df.with_columns(similarity=pl.when(hole).then(None).otherwise(pl.col("similarity")))
    bp, br = assign_blocks(df, min_respondents=1)
    assert _counts(br) == [19, 1]
    bp, br = assign_blocks(df, min_respondents=1, count_null_as_rated=True)
    assert _counts(br) == [20]
    mats = block_matrices(df, bp, br)
    assert np.isnan(mats[0].ratings).sum() == 1


def test_duplicates_averaged_and_inconsistent_flags_rejected():
    df = _frame(_rows("Milk", [1], [1, 2]) + _rows("Milk", [1], [1], value=6.0))
    clean = clean_ratings(df)
    assert clean.filter(pl.col("product_code") == 1)["similarity"].item() == 5.0
    first = pl.int_range(pl.len()) == 0
    bad = df.with_columns(is_reference=pl.when(first).then(True).otherwise("is_reference"))
    with pytest.raises(ValueError, match="is_reference"):
        clean_ratings(bad)


def test_block_matrix_layout():
    rng = np.random.default_rng(0)
    rows = _rows("Butter", [5, 3, 4], [2, 1, 7], refs={7})
    df = _frame(rows).with_columns(similarity=rng.integers(1, 8, len(rows)).astype(float))
    bp, br = assign_blocks(df, min_respondents=1)
    (m,) = block_matrices(df, bp, br)
    assert m.respondent_ids.tolist() == [3, 4, 5]
    assert m.product_codes.tolist() == [1, 2, 7]
    assert m.analog_codes.tolist() == [1, 2]
    want = df.pivot(on="product_code", index="respondent_id", values="similarity")
    want = want.sort("respondent_id").select(["1", "2", "7"])
    np.testing.assert_array_equal(m.ratings, want.to_numpy())


def test_string_respondent_ids_and_categories():
    rows = _rows("Deli_Ham", [f"r{i:02d}" for i in range(22)], [1, 2, 3])
    df = _frame(rows).with_columns(similarity=(np.arange(len(rows)) % 7 + 1).astype(float))
    bp, br = assign_blocks(df)
    assert br["respondent_id"].to_list() == sorted(f"r{i:02d}" for i in range(22))
    (m,) = block_matrices(df, bp, br)
    assert m.category == "Deli_Ham" and m.ratings.shape == (22, 3)
    assert not np.isnan(m.ratings).any()
