"""Planted signal: with panel means that follow one block, BT and Ridge on that block rank well
above chance (main-table BCa CI above .5); permuting the block inside each category removes the
signal. Synthetic designs on the public 215-analog category layout (never a result).

"Chance" under LOOCV is .5 for Bradley-Terry but *below* .5 for a pointwise regressor: its
intercept and subset weights are refitted without the held-out product, so a product with a
high panel mean is always predicted from a slightly lower training mean than its category mates
(:func:`test_loocv_intercept_bias_of_pointwise_models` shows the extreme). The permuted Ridge is
therefore checked against the planted Ridge (signal gone, not above chance), BT against .5.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import polars as pl
import pytest

from tests.conftest import built_once
from warehouse.metrics import bca_ci, pairwise_accuracy
from warehouse.ranking.loocv import Job, run_loocv
from warehouse.ranking.planted import (
    permutation_summary,
    planted_signal_check,
    summary_markdown,
)
from warehouse.ranking.synthetic import synthetic_design

CASES = [("nutrition", "N", "SN"), ("text", "T", "ST")]


def _ci(design, fit):
    return bca_ci(
        design.categories,
        design.target,
        fit.predictions,
        metrics=("pairwise_accuracy",),
        n_boot=10000,
        seed=42,
    )["pairwise_accuracy"]


def _planted_table(plant: str, block: str, feature_set: str, root: Path) -> pl.DataFrame:
    design = synthetic_design(seed=42, plant=plant)
    return planted_signal_check(design, block, feature_set, n_jobs=1, n_permutations=4)


@pytest.mark.parametrize(("plant", "block", "feature_set"), CASES)
def test_planted_block_is_recovered_and_permutation_removes_it(
    plant, block, feature_set, tmp_path_factory
):
    """The check's table is computed once and kept between runs while nothing it depends on
    changed (``built_once``)."""
    make = partial(_planted_table, plant, block, feature_set)
    table = built_once(tmp_path_factory, f"planted_check_{plant}", make)
    got = {
        (r["model"], r["variant"]): r
        for r in table.filter(pl.col("draw") == 0).iter_rows(named=True)
    }
    for model in ("bradley_terry", "ridge"):
        row = got[(model, "planted")]
        assert row["pairwise_accuracy"] > 0.6 and row["ci_lo"] > 0.5, row
    summary = {r["model"]: r for r in permutation_summary(table).iter_rows(named=True)}
    for model in ("bradley_terry", "ridge"):  # the plant beats every permuted draw
        assert summary[model]["planted_rank"] == 1 and summary[model]["p_value"] == 1 / 5
        assert summary[model]["permuted_max"] < got[(model, "planted")]["pairwise_accuracy"]
    assert "| bradley_terry | " + feature_set in summary_markdown(permutation_summary(table), block)
    bt = got[("bradley_terry", "permuted")]
    assert abs(bt["pairwise_accuracy"] - 0.5) < 0.06, bt
    ridge = got[("ridge", "permuted")]
    assert ridge["pairwise_accuracy"] < got[("ridge", "planted")]["ci_lo"], ridge
    assert ridge["pairwise_accuracy"] < 0.5 + 0.03, ridge


def test_permutation_summary_rank_and_p_value_by_hand():
    """Planted .70; permuted .60, .70 + 5e-11 (a tie at 1e-10: counts against the plant), .75,
    .50: 2 draws at least as high -> rank 3 of 5, p = 3 / 5."""
    rows = [("planted", 0, 0.70)] + [
        ("permuted", k, a) for k, a in enumerate([0.60, 0.70 + 5e-11, 0.75, 0.50])
    ]
    table = pl.DataFrame(
        {
            "model": ["bradley_terry"] * 5,
            "feature_set": ["SN"] * 5,
            "variant": [r[0] for r in rows],
            "draw": [r[1] for r in rows],
            "pairwise_accuracy": [r[2] for r in rows],
            "ci_lo": [0.6, None, None, None, None],
            "ci_hi": [0.8, None, None, None, None],
            "data_origin": ["synthetic"] * 5,
        }
    )
    (row,) = permutation_summary(table).iter_rows(named=True)
    assert row["planted_rank"] == 3 and row["p_value"] == pytest.approx(3 / 5)
    assert row["n_permutations"] == 4 and row["permuted_max"] == 0.75


def test_without_a_plant_bradley_terry_sits_at_chance():
    design = synthetic_design(seed=42, plant=None)
    (fit,) = run_loocv(design, [Job.of("bradley_terry", "SNCTI")], n_jobs=1)
    point, lo, hi = _ci(design, fit)
    assert lo < 0.5 < hi, (point, lo, hi)


def test_loocv_intercept_bias_of_pointwise_models():
    """Ridge on S alone predicts, for held-out i in subset s, the ridge-shrunk training mean of
    s: a + b * (T_s - y_i) / (n_s - 1) with b > 0, strictly decreasing in y_i. Within every
    category the LOOCV order is exactly reversed: pairwise accuracy 0 (ties aside)."""
    design = synthetic_design(seed=42, plant=None)
    (fit,) = run_loocv(design, [Job.of("ridge", "S")], n_jobs=1)
    assert pairwise_accuracy(design.categories, design.target, fit.predictions) == 0.0


def test_signal_check_report_writes_the_section_and_the_draws(tmp_path):
    from warehouse.errors import WarehouseError
    from warehouse.ranking.planted import signal_check_report
    from warehouse.ranking.synthetic import SMALL_CATEGORIES, SMALL_DIMS

    design = synthetic_design(seed=3, plant="nutrition", dims=SMALL_DIMS, layout=SMALL_CATEGORIES)
    text = signal_check_report(design, "N", n_jobs=1, n_permutations=3, out_dir=tmp_path)
    assert "| bradley_terry | SN |" in text and "of 4 |" in text
    assert (tmp_path / "signal_check_N.md").read_text().startswith("## Planted-signal check: N")
    draws = pl.read_csv(tmp_path / "signal_check_N_draws.csv")
    assert draws.height == 2 * (1 + 3)
    assert sorted(draws["permutation_seed"].drop_nulls().unique().to_list()) == [42, 43, 44]
    with pytest.raises(WarehouseError, match="--check-signal 'S'"):
        signal_check_report(design, "S")
