"""Checks against the public de-identified human-baseline aggregates.

A synthetic ratings frame with exactly the public block structure (per category and block:
respondents = rows of ``individual_loo_accuracy.csv``, ``n_analogs`` analogs) must come back as
the same 49 blocks and 4,664 panelist-block rows. The public verification files also pin down the
conventions: alpha is computed without references, and split-half pools pairs over blocks.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from warehouse.human import (
    alpha_from_coincidence,
    assign_blocks,
    block_matrices,
    block_reliability,
    panelist_block_accuracy,
    split_half_result,
)
from warehouse.human.testing import public_block_structure, ratings_from_block_structure


@pytest.fixture(scope="module")
def hb_dir(public_dir: Path) -> Path:
    return public_dir / "human_baseline" / "results"


@pytest.fixture(scope="module")
def public_loo(hb_dir: Path) -> pl.DataFrame:
    return pl.read_csv(hb_dir / "individual_loo_accuracy.csv")


@pytest.fixture(scope="module")
def structure(hb_dir: Path) -> pl.DataFrame:
    return public_block_structure(hb_dir / "individual_loo_accuracy.csv")


@pytest.fixture(scope="module")
def synthetic(structure: pl.DataFrame):
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
    extra_df = pl.DataFrame(extra, schema=ratings.schema, orient="row")
    ratings = pl.concat([ratings, extra_df], how="vertical")
    bp, br = assign_blocks(ratings)
    return ratings, bp, br, block_matrices(ratings, bp, br)


def test_public_structure_has_49_blocks(structure: pl.DataFrame, public_loo: pl.DataFrame):
    assert structure.height == 49
    assert structure["n_respondents"].sum() == public_loo.height == 4664
    # numbering by descending respondent count holds in the public file
    steps = structure.sort("category", "block_id").select(
        pl.col("n_respondents").diff().over("category")
    )
    assert (steps.to_series().drop_nulls() <= 0).all()


def test_assign_blocks_recovers_public_structure(structure: pl.DataFrame, synthetic):
    _, bp, br, _ = synthetic
    key = ["category", "block_id"]
    analogs = bp.filter(~pl.col("is_reference")).group_by(key).agg(n_analogs=pl.len())
    got = br.group_by(key).agg(n_respondents=pl.len()).join(analogs, on=key, how="left").sort(key)
    assert_frame_equal(
        got, structure.select(*key, "n_respondents", "n_analogs"), check_dtypes=False
    )


def test_panelist_rows_match_public_file(synthetic, public_loo: pl.DataFrame):
    ratings, bp, br, _ = synthetic
    acc = panelist_block_accuracy(ratings, bp, br)
    assert acc.height == 4664
    key = ["category", "block_id", "n_analogs", "n_pairs"]
    got = acc.group_by(key).agg(rows=pl.len()).sort(key)
    want = public_loo.group_by(key).agg(rows=pl.len()).sort(key)
    assert_frame_equal(got, want, check_dtypes=False)
    assert acc["pairwise_accuracy"].is_between(0, 1).all()
    recalls = pl.concat([acc["recall_at_1"], acc["recall_at_3"]])
    assert recalls.null_count() == 0 and recalls.is_between(0, 1).all()


def _public_coincidence(hb_dir: Path):
    co = pl.read_csv(hb_dir / "verification" / "alpha_coincidence.csv")
    for (cat, bid), d in sorted(co.partition_by("category", "block_id", as_dict=True).items()):
        a, b = d["value_a"].to_numpy(), d["value_b"].to_numpy()
        values = np.union1d(a, b)
        o = np.zeros((values.size, values.size))
        o[np.searchsorted(values, a), np.searchsorted(values, b)] = d["coincidence"].to_numpy()
        yield cat, bid, values, o


def test_public_alpha_excludes_references(hb_dir: Path, synthetic):
    # pairable values per block (= coincidence total) equal respondents x analogs
    ratings, bp, br, mats = synthetic
    rel = {
        (r["category"], r["block_id"]): r
        for r in block_reliability(ratings, bp, br).iter_rows(named=True)
    }
    totals = {(c, b): o.sum() for c, b, _, o in _public_coincidence(hb_dir)}
    assert len(totals) == 49
    for key, total in totals.items():
        n_r, n_a = rel[key]["n_respondents"], rel[key]["n_analogs"]
        assert total == pytest.approx(n_r * n_a, abs=1e-6), key
        m = next(m for m in mats if (m.category, m.block_id) == key)
        assert m.ratings.shape[1] == n_a + 1  # the block does hold a reference


def test_public_coincidence_matrices_give_published_mean_alpha(hb_dir: Path):
    alphas = [alpha_from_coincidence(v, o, "ordinal") for _, _, v, o in _public_coincidence(hb_dir)]
    assert np.mean(alphas) == pytest.approx(0.077, abs=5e-4)


def test_public_split_half_pools_pairs_over_blocks(hb_dir: Path, synthetic):
    public = pl.read_csv(hb_dir / "verification" / "split_half_iterations.csv")
    vals = public["split_half_pairwise_agreement"].to_numpy()
    assert len(vals) == 1000
    assert np.median(vals) == pytest.approx(0.825, abs=5e-4)
    # every published value is a multiple of 0.5 / 394 (394 = within-block pairs of 49 blocks)
    np.testing.assert_allclose(vals * 788, np.round(vals * 788), atol=2e-5)
    ratings, bp, br, _ = synthetic
    ours = split_half_result(ratings, bp, br, n_iter=50)
    assert ours.n_pairs == 394 and ours.n_blocks == 49
    x = ours.table["split_half_pairwise_agreement"].to_numpy() * 788
    np.testing.assert_allclose(x, np.round(x), atol=1e-8)


def test_summary_conventions_reproduce_published_panelist_figures(public_loo: pl.DataFrame):
    # median .650, IQR .50-.75 from the public rows with the summary's quantile convention
    acc = public_loo["pairwise_accuracy"].cast(pl.Float64).to_numpy()
    assert np.nanmedian(acc) == pytest.approx(0.650)
    assert np.nanquantile(acc, 0.25) == pytest.approx(0.50)
    assert np.nanquantile(acc, 0.75) == pytest.approx(0.75)
