"""Checks against the public de-identified human-baseline aggregates.

A synthetic ratings frame with exactly the public block structure (per category and block:
respondents = rows of ``individual_loo_accuracy.csv``, ``n_analogs`` analogs) must come back as
the same 49 blocks and 4,664 panelist-block rows. The public verification files also pin down the
conventions: alpha is computed without references, and split-half pools pairs over blocks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from warehouse.human import (
    alpha_from_coincidence,
    assign_blocks,
    block_matrices,
    block_reliability,
    panelist_block_accuracy,
    split_half_reliability,
)
from warehouse.human.testing import public_block_structure, ratings_from_block_structure


@pytest.fixture(scope="module")
def hb_dir(public_dir: Path) -> Path:
    return public_dir / "human_baseline" / "results"


@pytest.fixture(scope="module")
def public_loo(hb_dir: Path) -> pd.DataFrame:
    return pd.read_csv(hb_dir / "individual_loo_accuracy.csv")


@pytest.fixture(scope="module")
def structure(hb_dir: Path) -> pd.DataFrame:
    return public_block_structure(hb_dir / "individual_loo_accuracy.csv")


@pytest.fixture(scope="module")
def synthetic(structure: pd.DataFrame):
    ratings = ratings_from_block_structure(structure, n_references=1, seed=7)
    # distractors that must not form blocks: 19 respondents with their own product set, and 30
    # respondents who rated the reference plus a single analog
    extra = []
    for rid in range(10_000, 10_019):
        for code, ref in ((1, False), (2, False), (3, False), (4, False)):
            extra.append(("Milk", rid, code, ref, 4.0))
    for rid in range(20_000, 20_030):
        for code, ref in ((1, False), (99, True)):
            extra.append(("Bacon", rid, code, ref, 5.0))
    extra_df = pd.DataFrame(extra, columns=list(ratings.columns))
    ratings = pd.concat([ratings, extra_df], ignore_index=True)
    bp, br = assign_blocks(ratings)
    return ratings, bp, br, block_matrices(ratings, bp, br)


def test_public_structure_has_49_blocks(structure: pd.DataFrame, public_loo: pd.DataFrame):
    assert len(structure) == 49
    assert structure["n_respondents"].sum() == len(public_loo) == 4664
    # numbering by descending respondent count holds in the public file
    assert (structure.groupby("category")["n_respondents"].diff().dropna() <= 0).all()


def test_assign_blocks_recovers_public_structure(structure: pd.DataFrame, synthetic):
    _, bp, br, _ = synthetic
    got = (
        br.groupby(["category", "block_id"])
        .size()
        .rename("n_respondents")
        .to_frame()
        .join(bp[~bp["is_reference"]].groupby(["category", "block_id"]).size().rename("n_analogs"))
        .reset_index()
    )
    pd.testing.assert_frame_equal(
        got, structure[["category", "block_id", "n_respondents", "n_analogs"]], check_dtype=False
    )


def test_panelist_rows_match_public_file(synthetic, public_loo: pd.DataFrame):
    ratings, bp, br, _ = synthetic
    acc = panelist_block_accuracy(ratings, bp, br)
    assert len(acc) == 4664
    key = ["category", "block_id", "n_analogs", "n_pairs"]
    got = acc.groupby(key).size().rename("rows")
    want = public_loo.groupby(key).size().rename("rows")
    pd.testing.assert_series_equal(got, want)
    assert acc["pairwise_accuracy"].between(0, 1).all()
    assert acc[["recall_at_1", "recall_at_3"]].stack().between(0, 1).all()


def _public_coincidence(hb_dir: Path):
    co = pd.read_csv(hb_dir / "verification" / "alpha_coincidence.csv")
    for (cat, bid), d in co.groupby(["category", "block_id"]):
        values = np.union1d(d["value_a"].unique(), d["value_b"].unique())
        o = np.zeros((values.size, values.size))
        o[np.searchsorted(values, d["value_a"]), np.searchsorted(values, d["value_b"])] = d[
            "coincidence"
        ]
        yield cat, bid, values, o


def test_public_alpha_excludes_references(hb_dir: Path, synthetic):
    # pairable values per block (= coincidence total) equal respondents x analogs
    ratings, bp, br, mats = synthetic
    rel = block_reliability(ratings, bp, br).set_index(["category", "block_id"])
    totals = {(c, b): o.sum() for c, b, _, o in _public_coincidence(hb_dir)}
    assert len(totals) == 49
    for key, total in totals.items():
        n_r, n_a = rel.loc[key, ["n_respondents", "n_analogs"]]
        assert total == pytest.approx(n_r * n_a, abs=1e-6), key
        m = next(m for m in mats if (m.category, m.block_id) == key)
        assert m.ratings.shape[1] == n_a + 1  # the block does hold a reference


def test_public_coincidence_matrices_give_published_mean_alpha(hb_dir: Path):
    alphas = [alpha_from_coincidence(v, o, "ordinal") for _, _, v, o in _public_coincidence(hb_dir)]
    assert np.mean(alphas) == pytest.approx(0.077, abs=5e-4)


def test_public_split_half_pools_pairs_over_blocks(hb_dir: Path, synthetic):
    public = pd.read_csv(hb_dir / "verification" / "split_half_iterations.csv")
    vals = public["split_half_pairwise_agreement"].to_numpy()
    assert len(vals) == 1000
    assert np.median(vals) == pytest.approx(0.825, abs=5e-4)
    # every published value is a multiple of 0.5 / 394 (394 = within-block pairs of 49 blocks)
    np.testing.assert_allclose(vals * 788, np.round(vals * 788), atol=2e-5)
    ratings, bp, br, _ = synthetic
    ours = split_half_reliability(ratings, bp, br, n_iter=50)
    assert ours.attrs["n_pairs"] == 394 and ours.attrs["n_blocks"] == 49
    x = ours["split_half_pairwise_agreement"].to_numpy() * 788
    np.testing.assert_allclose(x, np.round(x), atol=1e-8)


def test_summary_conventions_reproduce_published_panelist_figures(public_loo: pd.DataFrame):
    # median .650, IQR .50-.75 from the public rows with the summary's quantile convention
    acc = public_loo["pairwise_accuracy"]
    assert acc.median() == pytest.approx(0.650)
    assert acc.quantile(0.25) == pytest.approx(0.50)
    assert acc.quantile(0.75) == pytest.approx(0.75)
