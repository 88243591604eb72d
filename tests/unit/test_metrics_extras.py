"""Metrics library: paired comparisons, trivial policies, difficulty slices, input validation."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from warehouse.metrics import (
    PredictionValidationError,
    accuracy_by_delta_quintile,
    accuracy_clear_vs_ambiguous,
    arrays_from_frame,
    compare_models,
    expected_calibration_error,
    holm,
    lower_code_wins,
    pairwise_accuracy,
    pairwise_credits,
    random_policy_expected,
    slot1_wins_accuracy,
    validate_predictions,
)
from warehouse.metrics.core import TABLE2_METRICS

OOF = "food_similarity/results/oof_predictions"


@pytest.fixture(scope="module")
def nnls(public_dir: Path) -> pl.DataFrame:
    return pl.read_csv(public_dir / OOF / "nested_bt_gemini_nnls.csv")


def _set(df: pl.DataFrame, row: int, column: str, value: object) -> pl.DataFrame:
    """``df`` with one cell replaced."""
    values = df[column].to_list()
    values[row] = value
    return df.with_columns(pl.Series(column, values, dtype=df[column].dtype))


# --------------------------------------------------------------------------- comparisons


def test_holm_by_hand() -> None:
    # sorted .01 .03 .04 .2 -> x4 x3 x2 x1 = .04 .09 .08 .2 -> monotone .04 .09 .09 .2
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.2]), [0.04, 0.09, 0.09, 0.2])
    np.testing.assert_allclose(holm([0.5, 0.6]), [1.0, 1.0])
    assert holm([]).size == 0


def test_signflip_p_value_matches_exact_enumeration() -> None:
    a = np.array([1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.5])
    b = np.array([0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.0, 0.5])
    d = a - b
    obs = abs(d.mean())
    flips = [abs((np.array(s) * d).mean()) for s in itertools.product([-1, 1], repeat=len(d))]
    exact = np.mean(np.array(flips) >= obs - 1e-12)
    res = compare_models({"a": a, "b": b}, n_boot=2000, n_perm=20000).row(0, named=True)
    assert res["diff"] == pytest.approx(d.mean())
    assert res["p_value"] == pytest.approx(exact, abs=0.01)
    assert res["ci_lo"] <= res["diff"] <= res["ci_hi"]
    assert res["model_a"] == "a" and res["model_b"] == "b"


def test_identical_models_are_not_resolved() -> None:
    c = np.array([1.0, 0.0, 0.5, 1.0])
    res = compare_models({"a": c, "b": c.copy()}, n_boot=500, n_perm=500).row(0, named=True)
    assert res["diff"] == 0 and res["p_value"] == 1.0 and res["ci_lo"] == res["ci_hi"] == 0


def test_compare_models_public(public_dir: Path) -> None:
    files = {p.stem: pl.read_csv(p) for p in sorted((public_dir / OOF).glob("*.csv"))[:4]}
    credits = {
        name: pairwise_credits(*arrays_from_frame(df), product_code=df["product_code"])
        for name, df in files.items()
    }
    table = compare_models(credits, n_boot=2000, n_perm=2000)
    assert len(table) == 6
    assert list(table.columns) == [
        "model_a",
        "model_b",
        "acc_a",
        "acc_b",
        "diff",
        "ci_lo",
        "ci_hi",
        "p_value",
        "p_holm",
        "resolved",
    ]
    for row in table.iter_rows(named=True):
        acc_a = pairwise_accuracy(*arrays_from_frame(files[row["model_a"]]))
        assert row["acc_a"] == pytest.approx(acc_a)
        assert row["diff"] == pytest.approx(row["acc_a"] - row["acc_b"])
        assert row["p_holm"] >= row["p_value"]
        excludes_zero = row["ci_lo"] > 0 or row["ci_hi"] < 0
        assert row["resolved"] == (row["p_holm"] < 0.05 and excludes_zero)
    # alignment on (category, code_i, code_j): shuffled pair tables give the same answer
    shuffled = {k: v.sample(fraction=1.0, shuffle=True, seed=1) for k, v in credits.items()}
    first = next(iter(shuffled))
    shuffled[first] = credits[first]  # the reference order is the first table's
    again = compare_models(shuffled, n_boot=2000, n_perm=2000)
    assert_frame_equal(table, again)


def test_compare_models_rejects_misaligned() -> None:
    with pytest.raises(ValueError):
        compare_models({"a": [1.0, 0.0], "b": [1.0, 0.0, 0.5]})


# --------------------------------------------------------------------------- trivial policies


def test_random_policy_expected(nnls: pl.DataFrame) -> None:
    exp = random_policy_expected(nnls["category"].to_numpy())
    assert exp["pairwise_accuracy"] == 0.5
    assert [round(exp[f"recall_at_{k}"], 3) for k in (1, 2, 3)] == [0.121, 0.242, 0.363]
    assert random_policy_expected({"a": 4, "b": 2})["recall_at_1"] == pytest.approx(0.375)


def test_slot1_wins(public_dir: Path) -> None:
    pairs = pl.read_csv(public_dir / "food_similarity/data/pairs.csv")
    res = slot1_wins_accuracy(pairs)
    assert res["n_pairs"] == 932 and res["n_wins"] == 432
    assert res["point"] == pytest.approx(432 / 932)
    assert res["lo"] < res["point"] < res["hi"]
    assert res["beats_chance"] == (res["lo"] > 0.5)
    assert res["differs_from_chance"] == (res["lo"] > 0.5 or res["hi"] < 0.5)


def test_lower_code_wins(nnls: pl.DataFrame) -> None:
    cat = nnls["category"].to_numpy()
    code = nnls["product_code"].to_numpy()
    gold = nnls["true_rank"].to_numpy()
    res = lower_code_wins(cat, code, gold, n_boot=1000)
    assert set(res) == set(TABLE2_METRICS)
    assert res["pairwise_accuracy"]["point"] == pytest.approx(
        pairwise_accuracy(cat, gold, -code.astype(float))
    )
    for r in res.values():
        assert r["lo"] <= r["hi"]
        assert r["beats_chance"] == (r["lo"] > r["chance"])


# --------------------------------------------------------------------------- slices


def test_delta_quintiles_by_hand() -> None:
    credit = np.array([0, 0, 1, 1, 1, 0.5, 1, 1, 1, 1], dtype=float)
    delta = np.array([1, 1, 2, 2, 3, 3, 4, 4, 5, 5], dtype=float)
    table = accuracy_by_delta_quintile(credit, delta)
    assert list(table["n_pairs"]) == [2, 2, 2, 2, 2]
    np.testing.assert_allclose(table["accuracy"], [0, 1, 0.75, 1, 1])
    # tied deltas never straddle bins
    table = accuracy_by_delta_quintile(np.ones(6), np.array([1, 1, 1, 1, 2, 3.0]))
    assert table["n_pairs"].sum() == 6
    deltas = table.filter(pl.col("delta_min").is_not_nan())["delta_min"]
    assert (deltas.diff().drop_nulls() > 0).all()


def test_delta_quintiles_public(nnls: pl.DataFrame) -> None:
    credits = pairwise_credits(*arrays_from_frame(nnls))
    table = accuracy_by_delta_quintile(credits["credit"], credits["abs_delta_gold"])
    assert table["n_pairs"].sum() == 935
    total = (table["n_pairs"] * table["accuracy"]).sum() / 935
    assert total == pytest.approx(credits["credit"].mean())


def test_clear_vs_ambiguous() -> None:
    table = accuracy_clear_vs_ambiguous([1.0, 0.0, 0.5, 1.0], [True, True, False, False])
    assert list(table["slice"]) == ["clear", "ambiguous"]
    assert list(table["n_pairs"]) == [2, 2]
    np.testing.assert_allclose(table["accuracy"], [0.5, 0.75])


def test_expected_calibration_error_by_hand() -> None:
    # bins 0, 1, 9, 9: .25*|0-.05| + .25*|1-.15| + .5*|.5-.95| = .0125 + .2125 + .225
    ece = expected_calibration_error([0.05, 0.15, 0.95, 0.95], [0, 1, 1, 0])
    assert ece == pytest.approx(0.45)
    assert expected_calibration_error([1.0, 0.0], [1, 0]) == pytest.approx(0.0)
    with pytest.raises(ValueError):
        expected_calibration_error([1.2], [1])


# --------------------------------------------------------------------------- validation


def test_validation_coverage_and_errors(nnls: pl.DataFrame) -> None:
    known = nnls.select("category", "product_code")
    cov = validate_predictions(nnls, known, source="nnls.csv", gold_column="true_rank")
    assert cov.coverage == 1.0 and cov.complete and cov.n_expected == 215

    partial = validate_predictions(pl.concat([nnls[:3], nnls[4:]]), known, source="nnls.csv")
    assert partial.n_present == 214 and partial.coverage == pytest.approx(214 / 215)
    assert partial.missing == (("Bacon", 4),)

    def err(df: pl.DataFrame) -> str:
        with pytest.raises(ValueError) as info:
            validate_predictions(df, known, source="model.csv")
        assert isinstance(info.value, PredictionValidationError)
        return str(info.value)

    msg = err(_set(nnls, 10, "category", "Tofu"))
    assert "model.csv" in msg and "line 12" in msg and "'category'" in msg and "Tofu" in msg

    msg = err(_set(nnls, 0, "product_code", 99))
    assert "line 2" in msg and "'product_code'" in msg and "99" in msg

    msg = err(pl.concat([nnls, nnls[5:6]]))
    assert "duplicate" in msg and "line 217" in msg and "line 7" in msg

    msg = err(_set(nnls, 20, "predicted_score", np.nan))
    assert "line 22" in msg and "'predicted_score'" in msg and "NaN" in msg

    as_text = nnls.with_columns(pl.col("predicted_score").cast(pl.String))
    assert "not a number" in err(_set(as_text, 1, "predicted_score", "high"))

    msg = err(nnls.drop("predicted_score"))
    assert "missing column 'predicted_score'" in msg


def test_validation_code_normalization() -> None:
    df = pl.DataFrame(
        [
            pl.Series("category", ["A", "A"]),
            pl.Series("product_code", ["1", 2.0], dtype=pl.Object),  # mixed: a text and a float
            pl.Series("predicted_score", [0.1, 0.2]),
        ]
    )
    cov = validate_predictions(df, [("A", 1), ("A", 2), ("A", 3)])
    assert cov.n_present == 2 and cov.missing == (("A", 3),)
