"""Designs: feature sets, building from polars frames with vector columns, validation."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from warehouse.ranking.design import (
    Design,
    DesignError,
    FeatureSet,
    ablation_feature_sets,
    design_from_frames,
    subset_columns_from_seed,
)
from warehouse.ranking.synthetic import SMALL_CATEGORIES, SMALL_DIMS, synthetic_design


def test_feature_sets_parse_canonically():
    assert FeatureSet.parse("ICNS").name == "SNCI"
    fs = FeatureSet.parse("SNCTI[C=max]")
    assert fs.block_names == ("S", "N", "C:max", "T", "I") and fs.name == "SNCTI[C=max]"
    for bad in ("SX", "SS", "SN[C=max]", "", "SNC[C=a b]"):
        with pytest.raises(DesignError):
            FeatureSet.parse(bad)
    sets = [f.name for f in ablation_feature_sets("S")]
    assert len(sets) == 15 and sets[0] == "SN" and sets[-1] == "SNCTI" and "SCT" in sets
    assert [f.name for f in ablation_feature_sets("")][:4] == ["N", "C", "T", "I"]


def _frames():
    products = pl.DataFrame(
        {
            "category": ["A", "A", "A", "B", "B", "A", "B"],
            "product_code": [3, 1, 2, 2, 1, 9, 9],
            "is_analog": [True, True, True, True, True, False, False],
            "subset": ["meat"] * 3 + ["cheese"] * 2 + ["meat", "cheese"],
            "data_origin": ["simulation"] * 7,
        }
    )
    categories = pl.DataFrame({"category": ["A", "B"], "hbt_group": ["meat", "other_dairy"]})
    means = pl.DataFrame(
        {
            "category": ["A"] * 3 + ["B"] * 2,
            "product_code": [1, 2, 3, 1, 2],
            "panel_mean": [4.0, 5.0, 3.0, 2.0, 6.0],
        }
    )
    vec = pl.DataFrame(
        {
            "category": ["B", "A", "A", "A", "B", "A", "B"],
            "product_code": [2, 1, 2, 3, 1, 9, 9],
            "vector": [
                [4.0, 0.0],
                [1.0, 1.0],
                [2.0, 2.0],
                [3.0, 3.0],
                [5.0, 5.0],
                [9.0, 9.0],
                None,
            ],
        }
    )
    return products, categories, means, vec


def test_design_from_frames_aligns_sorts_and_derives_s():
    products, categories, means, vec = _frames()
    seed = pl.DataFrame(
        {
            "subset": ["meat", "meat", "cheese"],
            "column_order": [2, 1, 1],
            "nutrient_column": ["b", "a", "a"],
        }
    )
    d = design_from_frames(products, means, {"C": vec}, categories=categories, subset_columns=seed)
    assert d.keys.rows() == [
        ("A", 1, "meat", "meat"),
        ("A", 2, "meat", "meat"),
        ("A", 3, "meat", "meat"),
        ("B", 1, "cheese", "other_dairy"),
        ("B", 2, "cheese", "other_dairy"),
    ]
    assert d.target.tolist() == [4.0, 5.0, 3.0, 2.0, 6.0]
    assert d.block("C")[:, 0].tolist() == [1.0, 2.0, 3.0, 5.0, 4.0]
    assert d.block("S").tolist()[0] == [1, 0, 0, 0] and d.block("S").tolist()[3] == [0, 0, 1, 0]
    assert np.isnan(d.reference_blocks["C"][1]).all()  # reference B:9 has no vector: absent
    assert d.subset_columns == {"cheese": ("a",), "meat": ("a", "b")}
    assert d.data_origin == "simulation"
    assert subset_columns_from_seed(seed)["meat"] == ("a", "b")


def test_missing_analog_vectors_are_an_error_unless_zero_filled():
    products, categories, means, vec = _frames()
    short = vec.filter(~((pl.col("category") == "A") & (pl.col("product_code") == 2)))
    with pytest.raises(DesignError, match="no vector for analog A:2"):
        design_from_frames(products, means, {"C": short}, categories=categories)
    d = design_from_frames(products, means, {"C": short}, categories=categories, missing="zero")
    assert d.block("C")[1].tolist() == [0.0, 0.0]


def test_design_validation_names_the_problem():
    d = synthetic_design(dims=SMALL_DIMS, layout=SMALL_CATEGORIES)
    with pytest.raises(DesignError, match="sorted"):
        Design(d.keys.reverse(), d.target, {})
    with pytest.raises(DesignError, match="finite"):
        d.with_target(np.r_[np.nan, d.target[1:]])
    with pytest.raises(DesignError, match="row 3"):
        bad = d.block("C").copy()
        bad[3, 0] = np.inf
        d.with_block("C", bad)
    with pytest.raises(DesignError, match="no block 'X:y'|block name"):
        d.block("X:y")


def test_permuting_a_block_keeps_each_category_multiset():
    d = synthetic_design(dims=SMALL_DIMS, layout=SMALL_CATEGORIES)
    p = d.permute_block_within_category("N", seed=1)
    assert not np.array_equal(p.block("N"), d.block("N"))
    for c in np.unique(d.category_index):
        rows = d.category_index == c
        a = np.sort(d.block("N")[rows], axis=0)
        b = np.sort(p.block("N")[rows], axis=0)
        assert np.array_equal(a, b)
    assert p.fingerprint(["N"]) != d.fingerprint(["N"])
    assert p.fingerprint(["C"]) == d.fingerprint(["C"])
