"""Derivations shared by `tastebench release` and `tastebench verify` on tiny frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from warehouse.release import derive
from warehouse.release.export import orient_pairs, ranked_products


def test_ranks_average_ties_within_category() -> None:
    cat = ["A", "A", "A", "A", "B", "B"]
    vals = [2.0, 5.0, 2.0 + 1e-12, 3.0, 1.0, 0.5]
    assert derive.within_category_ranks(cat, vals).tolist() == [1.5, 4.0, 1.5, 3.0, 2.0, 1.0]
    # a difference of 1e-9 is not a tie
    assert derive.within_category_ranks(["A", "A"], [1.0, 1.0 + 1e-9]).tolist() == [1.0, 2.0]


def test_ranked_products_rank_analogs_only() -> None:
    products = pd.DataFrame(
        {
            "category": ["A"] * 4,
            "product_code": [1, 2, 3, 4],
            "is_analog": [True, True, True, False],
            "panel_mean": [3.0, 4.0, 3.0, 6.5],
        }
    )
    out = ranked_products(products)
    assert out["true_rank"].to_list() == [1.5, 3.0, 1.5, None]


def products() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "category": ["A", "A", "A", "B", "B", "B"],
            "public_code": [1, 2, 3, 1, 2, 3],
            "is_reference": [False, False, False, False, False, True],
            "true_rank": [3.0, 1.5, 1.5, 1.0, 2.0, np.nan],
        }
    )


def test_analog_pairs_winner_and_ties() -> None:
    pairs = derive.analog_pairs(products(), "public_code")
    assert pairs.select("category", "code_a", "code_b", "is_tie").rows() == [
        ("A", 1, 2, False),
        ("A", 1, 3, False),
        ("A", 2, 3, True),
        ("B", 1, 2, False),
    ]
    assert pairs["winner"].to_list() == [1, 1, None, 2]


def test_gold_pairs_rederived_from_ranks_and_published_sides() -> None:
    oriented = pd.DataFrame(
        {"category": ["B", "A", "A"], "public_code_1": [2, 1, 3], "public_code_2": [1, 2, 1]}
    )
    gold = derive.gold_pairs_from_products(products(), oriented)
    assert gold.rows() == [(1, "A", 1, 2, 1), (2, "A", 3, 1, 1), (3, "B", 2, 1, 2)]
    with pytest.raises(ValueError, match="missing"):
        derive.gold_pairs_from_products(products(), oriented.iloc[:2])
    tie = pd.concat([oriented, pd.DataFrame([["A", 2, 3]], columns=oriented.columns)])
    with pytest.raises(ValueError, match="not an untied analog pair"):
        derive.gold_pairs_from_products(products(), tie)


def test_orient_pairs_maps_raw_to_public_and_applies_sides() -> None:
    pairs = pd.DataFrame(
        {
            "category": ["A", "A", "A"],
            "product_code_a": [10, 10, 11],
            "product_code_b": [11, 12, 12],
            "is_tie": [False, False, True],
            "winner_product_code": [11, 10, None],
        }
    )
    sides = pairs[["category", "product_code_a", "product_code_b"]].assign(
        a_in_slot_1=[True, False, True]
    )
    cmap = pd.DataFrame(
        {"category": ["A"] * 3, "product_code": [10, 11, 12], "public_code": [3, 1, 2]}
    )
    out = orient_pairs(pairs, sides, cmap)
    assert out.rows() == [(1, "A", 2, 3, 3), (2, "A", 3, 1, 1)]


def test_category_counts() -> None:
    c = derive.category_counts(products())
    assert c.rows() == [("A", 3, 0, 3), ("B", 2, 1, 1)]


def test_draw_sides_is_a_fair_coin() -> None:
    sides = derive.draw_sides(20000)
    assert sides.dtype == bool and abs(sides.mean() - 0.5) < 0.02  # 5.7 sd
    assert derive.draw_sides(0).size == 0


def test_slot1_audit() -> None:
    r = derive.slot1_audit([1, 2, 3, 4], [1, 5, 3, 6])
    assert r["point"] == 0.5 and r["n_pairs"] == 4 and not r["differs_from_chance"]


def test_human_summary_from_released_tables() -> None:
    rows = pd.DataFrame(
        {
            "category": ["A"] * 4,
            "block_id": [0] * 4,
            "pairwise_accuracy": [0.5, 0.75, 1.0, 0.25],
            "spearman": [0.1, np.nan, 0.3, 0.2],
        }
    )
    rel = pd.DataFrame({"krippendorff_alpha_ordinal": [0.1, 0.3], "kendall_w": [0.2, 0.4]})
    split = pd.DataFrame({"split_half_pairwise_agreement": [0.8, 0.9, 0.7]})
    curve = pd.DataFrame(
        {"k": [3, 5], "median_accuracy": [0.6, 0.7], "q025": [0.5, 0.6], "q975": [0.7, 0.8]}
    )
    s = dict(derive.human_summary(rows, rel, split, curve).iter_rows())
    assert "n_panelists" not in s and "k_star" not in s
    assert s["n_blocks"] == 2 and s["n_panelist_blocks"] == 4
    assert s["panelist_accuracy_median"] == 0.625 and s["panelist_spearman_median"] == 0.2
    assert s["alpha_mean"] == pytest.approx(0.2) and s["kendall_w_median"] == pytest.approx(0.3)
    assert s["split_half_median"] == 0.8 and s["panel3_accuracy"] == 0.6
    assert s["panel5_q975"] == 0.8


def test_audits_at_chance_flags_an_artifact() -> None:
    audits = pd.DataFrame(
        {
            "policy": ["slot1_wins", "lower_code_wins"],
            "metric": ["pairwise_accuracy"] * 2,
            "point": [0.6, 0.5],
            "ci_lo": [0.55, 0.45],
            "ci_hi": [0.65, 0.55],
            "differs_from_chance": [True, False],
        }
    )
    (msg,) = derive.audits_at_chance(audits)
    assert msg.startswith("slot1_wins")
