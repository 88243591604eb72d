"""Competition construction, audits and scoring (warehouse.release.competition) on tiny frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest

from warehouse.errors import DataValidationError
from warehouse.release.competition import (
    CompetitionState,
    audit_pairs,
    build_solution,
    ingredient_tokens,
    jaccard,
    round2,
    score_submission,
    select_decoys,
    within_category_pairs,
)


def test_ingredient_tokens_and_jaccard() -> None:
    assert ingredient_tokens(" Water, SOY Protein ,, salt ") == {"water", "soy protein", "salt"}
    assert ingredient_tokens(None) == frozenset()
    a, b = ingredient_tokens("a, b, c, d"), ingredient_tokens("a, b, c, e")
    assert jaccard(a, b) == 3 / 5
    assert jaccard(frozenset(), frozenset()) == 1.0
    assert jaccard(a, frozenset()) == 0.0


def test_decoys_have_jaccard_below_threshold_with_every_rated_product() -> None:
    rated = pd.DataFrame(
        {"category": ["A", "A", "B"], "ingredient_list": ["w, x, y, z", "p, q", "m, n"]}
    )
    cand = pd.DataFrame(
        {
            "category": ["A", "A", "A", "B", "C"],
            "code": [1, 2, 3, 4, 5],
            # 1: identical to a rated list; 2: J = 4/5 = 0.8 (not < 0.8); 3: J = 3/5
            "ingredient_list": ["Z, y, x, w", "w, x, y, z, v", "w, x, y, u, v", "a, b", "m, n"],
        }
    )
    out = select_decoys(rated, cand)
    assert out["code"].to_list() == [3, 4]  # C has no rated products
    assert out["max_jaccard"].to_list() == [0.5, 0.0]
    assert (out["max_jaccard"] < 0.8).all()


def test_within_category_pairs() -> None:
    p = pd.DataFrame({"category": ["A", "A", "A", "B", "B"], "public_code": [9, 2, 5, 1, 7]})
    out = within_category_pairs(p)
    assert out.rows() == [("A", 2, 5), ("A", 2, 9), ("A", 5, 9), ("B", 1, 7)]


def solution(winners_first: list[bool], lower_wins: list[bool]) -> pd.DataFrame:
    rows = []
    for i, (first, lower) in enumerate(zip(winners_first, lower_wins, strict=True)):
        lo, hi = 2 * i + 1, 2 * i + 2
        winner = lo if lower else hi
        c1 = winner if first else (hi if winner == lo else lo)
        c2 = hi if c1 == lo else lo
        rows.append((i + 1, "A", c1, c2, winner, "Public"))
    rows.append((len(rows) + 1, "A", 100, 101, None, "Ignored"))
    cols = ["pair_id", "category", "public_code_1", "public_code_2", "public_code_winner", "usage"]
    return pd.DataFrame(rows, columns=cols)


def test_audits_at_chance_and_artifacts() -> None:
    n = 200
    alt = [i % 2 == 0 for i in range(n)]
    fair = audit_pairs(solution(alt, alt[::-1]))
    assert fair["n_scored_pairs"] == n and fair["at_chance"]
    assert fair["slot1_wins"]["point"] == 0.5 and fair["lower_code_wins"]["point"] == 0.5
    slot = audit_pairs(solution([True] * n, alt))
    assert not slot["slot1_wins"]["includes_chance"] and not slot["at_chance"]
    code = audit_pairs(solution(alt, [True] * 150 + [False] * 50))
    assert code["lower_code_wins"]["ci_lo"] > 0.5 and not code["at_chance"]


def test_build_solution_scores_only_rated_untied_pairs() -> None:
    cmap = pd.DataFrame(
        {
            "public_code": [4, 1, 3, 2],
            "category": ["A"] * 4,
            "kind": ["rated", "rated", "rated", "decoy"],
            "product_code": [10.0, 11.0, 12.0, np.nan],
            "competition_product_code": [np.nan, np.nan, np.nan, 77.0],
        }
    )
    pairs = within_category_pairs(cmap)
    sides = pairs.with_columns(lo_in_slot_1=pl.Series([True, False, True, False, True, True]))
    state = CompetitionState(cmap, sides, pd.DataFrame({"category": ["A"], "usage": ["Public"]}))
    gold = pd.DataFrame(
        {
            "category": ["A"] * 3,
            "product_code_a": [10, 10, 11],
            "product_code_b": [11, 12, 12],
            "is_tie": [False, False, True],
            "winner_product_code": [11, 10, None],
        }
    )
    ranking, sol = build_solution(state, gold)
    assert "public_code_winner" not in ranking.columns
    got = {
        (
            min(r["public_code_1"], r["public_code_2"]),
            max(r["public_code_1"], r["public_code_2"]),
        ): (
            r["public_code_winner"],
            r["usage"],
        )
        for r in sol.iter_rows(named=True)
    }
    assert got[(1, 4)] == (1, "Public")  # raw 10 vs 11: 11 (public 1) wins
    assert got[(3, 4)] == (4, "Public")  # raw 10 vs 12: 10 (public 4) wins
    assert got[(1, 3)][1] == "Ignored"  # tie
    assert all(got[k][1] == "Ignored" for k in got if 2 in k)  # decoy
    assert sol["pair_id"].to_list() == list(range(1, 7))


def test_round2_half_up() -> None:
    assert round2(1, 8) == 0.13  # 0.125
    assert round2(2, 3) == 0.67 and round2(0, 5) == 0.0 and round2(1, 0) is None


@pytest.fixture()
def sol() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "pair_id": [1, 2, 3, 4],
            "category": ["A", "A", "B", "B"],
            "public_code_1": [1, 3, 5, 7],
            "public_code_2": [2, 4, 6, 8],
            "public_code_winner": pd.array([1, 4, 6, None], dtype="Int64"),
            "usage": ["Public", "Public", "Private", "Ignored"],
        }
    )


def test_score_submission(tmp_path: Path, sol: pd.DataFrame) -> None:
    sub = tmp_path / "s.csv"
    sub.write_text("pair_id,public_code_winner\n1,1\n2,3\n3,6\n4,7\n")
    assert score_submission(sub, sol) == {
        "public_score": 0.5,
        "n_public_pairs": 2,
        "private_score": 1.0,
        "n_private_pairs": 1,
    }


@pytest.mark.parametrize(
    ("body", "match", "line", "column"),
    [
        ("pair_id,winner\n1,1\n", "missing column", None, "public_code_winner"),
        ("pair_id,public_code_winner\n1,1\n2,x\n", "not an integer", 3, "public_code_winner"),
        ("pair_id,public_code_winner\n1,1\n1,2\n", "appears twice", 3, "pair_id"),
        ("pair_id,public_code_winner\n1,1\n9,2\n", "unknown pair_id 9", 3, "pair_id"),
        ("pair_id,public_code_winner\n1,1\n2,3\n3,5\n", "missing", None, None),
        ("pair_id,public_code_winner\n1,1\n2,3\n3,5\n4,1\n", "not one of", 5, None),
    ],
)
def test_bad_submissions_name_line_and_column(tmp_path, sol, body, match, line, column) -> None:
    sub = tmp_path / "s.csv"
    sub.write_text(body)
    with pytest.raises(DataValidationError, match=match) as exc:
        score_submission(sub, sol)
    assert exc.value.row == line
    if column:
        assert exc.value.column == column
