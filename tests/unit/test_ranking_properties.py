"""Properties of the ranking stage on small synthetic data (issue 22): equal inputs give equal
outputs (preprocessing row by row), rounding noise does not move any model, the input tables'
row order does not matter, and a block's units do not matter to the models that scale it."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warehouse.metrics.core import spearman_weighted
from warehouse.ranking.design import Design, design_from_frames
from warehouse.ranking.loocv import Job, run_fits
from warehouse.ranking.models import DISTANCE, SUPERVISED
from warehouse.ranking.preprocess import fit_block, snap_rows
from warehouse.ranking.synthetic import SMALL_CATEGORIES, SMALL_DIMS, synthetic_design

MODELS = (*SUPERVISED, *DISTANCE)  # the seven food models


def _feature_set(model: str) -> str:
    return "NCTI" if model.startswith("dist_") else "SNCTI"


def _predictions(design: Design, models=MODELS) -> dict[str, np.ndarray]:
    jobs = [Job.of(m, _feature_set(m)) for m in models]
    return {f.model: f.predictions for f in run_fits(design, jobs, n_jobs=1)}


def _realistic(seed: int = 11) -> Design:
    """The small design with what the real blocks have: zero-filled C rows (absent for MMRF),
    one T vector shared by two analogs, and C values far from 0 next to their spread (|x| / sd
    ~ 100, as on the default build) with two Milk analogs and the Milk reference sharing one C
    vector (the default build's Meatballs: Euclidean distance 0 to the centroid)."""
    d = synthetic_design(seed=seed, plant="nutrition", dims=SMALL_DIMS, layout=SMALL_CATEGORIES)
    c = d.block("C") + 100.0
    c_ref = d.reference_blocks["C"] + 100.0
    milk = np.flatnonzero(d.categories == "Milk")
    milk_ref = np.flatnonzero(np.array(d.reference_keys["category"].to_list()) == "Milk")
    c[milk[[1, 2]]] = c_ref[milk_ref[0]]
    absent = np.zeros(d.n, bool)
    absent[[1, 2, 8, 9, 14]] = True
    c[absent] = 0.0
    t = d.block("T").copy()
    t[5] = t[3]
    return d.with_block("C", c, c_ref, absent_rows=absent).with_block("T", t)


def _perturbed(d: Design, rel: float, seed: int) -> Design:
    """Every feature value times ``1 + rel * N(0, 1)`` (independently per value; S kept)."""
    rng = np.random.default_rng(seed)
    for b in sorted(d.blocks):
        if b != "S":
            m = d.block(b)
            ref = d.reference_blocks.get(b)
            d = d.with_block(
                b,
                m * (1 + rel * rng.standard_normal(m.shape)),
                None if ref is None else ref * (1 + rel * rng.standard_normal(ref.shape)),
            )
    return d


@pytest.fixture(scope="module")
def realistic():
    d = _realistic()
    return d, _predictions(d)


# --------------------------------------------------------------------------- preprocessing


@settings(max_examples=10, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1), st.sampled_from([8, 30, 80]))
def test_preprocessing_maps_equal_rows_to_equal_rows(seed, p):
    """Copies of one row, wherever they sit in the training rows, and a held-out copy come out
    bit-identical (scaler only for p < 11; covariance path p < m; Gram path p > m)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((40, p)) @ rng.standard_normal((p, p)) + 3.0
    dup = rng.choice(np.arange(1, 40), size=5, replace=False)
    x[dup] = x[0]
    x[rng.choice(40, size=4, replace=False)] = 0.0  # zero-filled rows
    t, z = fit_block(x, return_train=True)
    same = np.flatnonzero((x == x[0]).all(axis=1))
    assert len({z[r].tobytes() for r in same}) == 1
    zeros = np.flatnonzero((x == 0).all(axis=1))
    assert len({z[r].tobytes() for r in zeros}) == 1
    held = t.transform(np.vstack([rng.standard_normal(p), x[0], x[zeros[0]]]))
    assert held[1].tobytes() == z[0].tobytes()
    assert held[2].tobytes() == z[zeros[0]].tobytes()
    assert np.array_equal(t.transform(x), z)


# --------------------------------------------------------------------------- rounding noise


def test_snap_rows_makes_rows_equal_up_to_rounding_one_row():
    rng = np.random.default_rng(0)
    x = 100.0 + rng.standard_normal((6, 5))
    x[3] = x[1] * (1 + 1e-12 * rng.standard_normal(5))
    x[4] = 0.0
    x[5] = x[2] * (1 + 1e-8)  # a real difference stays
    y = snap_rows(np.vstack([x, np.full(5, np.nan)]))
    assert y[3].tobytes() == x[1].tobytes() and (y[4] == 0).all()
    assert np.array_equal(y[[0, 1, 2, 5]], x[[0, 1, 2, 5]]) and np.isnan(y[6]).all()


@pytest.mark.parametrize("model", MODELS)
def test_a_1e_12_perturbation_does_not_move_any_model(realistic, model):
    """Every feature value moved by 1e-12 (relative, independent per value): each model's
    out-of-fold within-category Spearman against the unperturbed run is >= .999."""
    d, base = realistic
    for seed in (1, 2):
        moved = _predictions(_perturbed(d, 1e-12, seed), (model,))[model]
        assert spearman_weighted(d.categories, base[model], moved) >= 0.999


# --------------------------------------------------------------------------- invariances


def _frames(d: Design) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, pl.DataFrame]]:
    """The warehouse frames a design is built from (products, panel means, block frames)."""
    refs = d.reference_keys
    products = pl.concat(
        [
            d.keys.select("category", "product_code", "subset", "hbt_group").with_columns(
                is_analog=pl.lit(True)
            ),
            refs.join(d.keys.select("category", "hbt_group").unique(), on="category").with_columns(
                is_analog=pl.lit(False)
            ),
        ],
        how="diagonal",
    )
    means = d.keys.select("category", "product_code").with_columns(panel_mean=pl.Series(d.target))
    blocks = {}
    for b in ("N", "C", "T", "I"):
        rows = np.vstack([d.block(b), d.reference_blocks[b]])
        absent = np.r_[d.absent.get(b, np.zeros(d.n, bool)), np.zeros(refs.height, bool)]
        keys = pl.concat([d.keys.select("category", "product_code"), refs.drop("subset")])
        blocks[b] = keys.with_columns(
            vector=pl.Series([list(r) for r in rows], dtype=pl.List(pl.Float64))
        ).filter(~pl.Series(absent))
    return products, means, blocks


def _design(products, means, blocks, subset_columns) -> Design:
    return design_from_frames(
        products, means, blocks, subset_columns=subset_columns, missing="zero"
    )


@settings(max_examples=3, deadline=None, derandomize=True)
@given(st.integers(0, 2**32 - 1))
def test_permuting_the_input_tables_leaves_every_prediction_unchanged(realistic, seed):
    d, _ = realistic
    products, means, blocks = _frames(d)
    base = _design(products, means, blocks, d.subset_columns)
    rng = np.random.default_rng(seed)

    def shuffle(f: pl.DataFrame) -> pl.DataFrame:
        return f[rng.permutation(f.height).tolist()]

    shuffled = _design(
        shuffle(products),
        shuffle(means),
        {b: shuffle(f) for b, f in blocks.items()},
        d.subset_columns,
    )
    a, b = _predictions(base), _predictions(shuffled)
    for m in MODELS:
        assert a[m].tobytes() == b[m].tobytes(), m


SCALED = ("bradley_terry", "hierarchical_bt", "ridge", "lightgbm_reg", "kernel_ranksvm")


@settings(max_examples=3, deadline=None, derandomize=True)
@given(st.sampled_from(["N", "C", "T"]), st.sampled_from([1e-3, 3.7, 250.0]))
def test_a_block_in_other_units_leaves_the_scaled_models_unchanged(realistic, block, factor):
    """Every model standardizes each block first (MMRF included), so multiplying a block by a
    constant moves predictions by rounding only: same within-category order."""
    d, base = realistic
    ref = d.reference_blocks[block] * factor
    scaled = _predictions(d.with_block(block, d.block(block) * factor, ref))
    for m in MODELS:
        rho = spearman_weighted(d.categories, base[m], scaled[m])
        assert rho >= 0.999, (m, rho)
        if m in SCALED[:4]:
            assert np.abs(base[m] - scaled[m]).max() < 1e-8, m
