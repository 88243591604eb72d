"""Human baseline (docs/benchmark.md section 5): panelist accuracy, reliability, group-size curve.

All public functions take the ratings frame (``category, respondent_id, product_code,
is_reference, similarity``; already restricted to the benchmark years) plus the two block frames
of :func:`warehouse.human.blocks.assign_blocks`, and return polars DataFrames (a missing value
is null, never NaN). Every metric is
computed on the block's **analogs only**; references define block membership but are never scored.

Documented choices (the spec leaves them open):

* **Krippendorff's alpha excludes references.** The public ``alpha_coincidence.csv`` has, for
  every one of the 49 blocks, a coincidence-matrix total (= number of pairable values) equal to
  ``n_respondents x n_analogs`` from ``individual_loo_accuracy.csv``; with references it would be
  larger. Recomputing ordinal alpha from those public matrices gives a mean of .0774, the
  published .077 (see ``alpha_from_coincidence`` and the tests).
* **Kendall's W** uses average ranks per respondent and the tie correction
  ``W = 12 S / (m^2 (n^3 - n) - m sum_j T_j)`` (see :func:`metrics.kendall_w`), over the block's
  respondents with a complete row of analog ratings.
* **Random draws.** One ``numpy.random.default_rng(seed)`` per function call. Blocks are visited in
  ``(category, block_id)`` order; for each block one ``(n_iter, n_respondents)`` matrix of uniform
  keys is drawn, and iteration ``t`` orders the block's respondents (sorted by id) by row ``t``'s
  keys. The same seed therefore gives identical outputs.
* **Split-half.** For each iteration and each block with at least 4 respondents, the first
  ``floor(n / 2)`` respondents in key order form half A, the remaining ``ceil(n / 2)`` half B;
  per-product half means (non-missing ratings only) are compared over all analog pairs of the
  block with the section 4 rules (either half tied -> 0.5; the rule is symmetric). Credits and
  pairs are pooled over blocks: agreement = total credit / total pairs (394 pairs on the real
  design, which matches the public iteration values, all multiples of 0.5/394).
* **Group-size curve.** Iteration ``t``'s panel of size ``k`` is the first ``k`` respondents in key
  order, so panels are nested across ``k`` within an iteration (each panel is still a uniform
  random k-subset). ``reference='full'`` (default, the published definition) scores the panel
  mean against the mean of *all* block respondents (the panel included); ``reference='complement'``
  scores it against the mean of the block's respondents *outside* the panel (no overlap).
  When ``k`` exceeds a block's size the panel is capped at the whole block: with ``'full'`` such a
  block then agrees with its own gold (credit 1, gold ties 0.5); with ``'complement'`` nobody is
  left out, so the block contributes no pairs for that ``k``. ``n_blocks_capped`` reports how many
  blocks are capped at each ``k``. Per iteration, credits and pairs are pooled over blocks; the
  curve reports the median and the 2.5/97.5 percentiles (numpy linear) over iterations.
* ``pooling='cross_block'`` reproduces the published curve, which also paired products across the
  blocks of a category: per category and iteration, each analog's panel mean pools the sampled
  panels of every block that holds it, the gold pools all respondents of those blocks, and all
  pairs of the category's block analogs are scored.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import krippendorff
import numpy as np
import polars as pl

from warehouse.human.blocks import BlockMatrix, assign_blocks, block_matrices
from warehouse.human.metrics import (
    kendall_w,
    pairwise_accuracy_rows,
    pairwise_credit_sums,
    recall_at_k_rows,
    spearman_rows,
)

ACCURACY_COLUMNS = [
    "category",
    "block_id",
    "respondent_id",
    "n_analogs",
    "n_pairs",
    "pairwise_accuracy",
    "spearman",
    "recall_at_1",
    "recall_at_3",
]
RELIABILITY_COLUMNS = [
    "category",
    "block_id",
    "n_respondents",
    "n_analogs",
    "krippendorff_alpha_ordinal",
    "kendall_w",
]
CURVE_COLUMNS = [
    "k",
    "median_accuracy",
    "q025",
    "q975",
    "mean_accuracy",
    "mean_n_pairs",
    "n_blocks_capped",
]


def _analog_matrix(block: BlockMatrix) -> tuple[np.ndarray, np.ndarray]:
    """Analog ratings with NaN replaced by 0, and the presence mask (both float)."""
    x = block.analogs
    present = ~np.isnan(x)
    return np.where(present, x, 0.0), present.astype(float)


def _safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


# --------------------------------------------------------------------------- LOO panelist accuracy


def _panelist_accuracy(mats: list[BlockMatrix], min_analogs: int = 2) -> pl.DataFrame:
    frames = []
    for b in mats:
        xz, present = _analog_matrix(b)
        if xz.shape[0] == 0:
            continue
        loo = _safe_divide(xz.sum(axis=0) - xz, present.sum(axis=0) - present)
        valid = (present > 0) & ~np.isnan(loo)
        gold = np.where(valid, loo, np.nan)
        pred = np.where(valid, b.analogs, np.nan)
        acc, n_pairs = pairwise_accuracy_rows(gold, pred)
        n_an = valid.sum(axis=1)
        keep = n_an >= min_analogs
        n_keep = int(keep.sum())
        frames.append(
            _frame(
                {
                    "category": pl.Series([b.category] * n_keep, dtype=pl.String),
                    "block_id": pl.Series([b.block_id] * n_keep, dtype=pl.Int64),
                    "respondent_id": pl.Series(b.respondent_ids[keep]),
                    "n_analogs": n_an[keep].astype(np.int64),
                    "n_pairs": n_pairs[keep].astype(np.int64),
                    "pairwise_accuracy": acc[keep],
                    "spearman": spearman_rows(gold, pred)[keep],
                    "recall_at_1": recall_at_k_rows(gold, pred, 1)[keep],
                    "recall_at_3": recall_at_k_rows(gold, pred, 3)[keep],
                }
            )
        )
    if not frames:
        return pl.DataFrame(schema=_ACCURACY_SCHEMA)
    return pl.concat(frames, how="vertical").select(ACCURACY_COLUMNS)


_ACCURACY_SCHEMA = {"category": pl.String, "block_id": pl.Int64, "respondent_id": pl.String}
_ACCURACY_SCHEMA |= {"n_analogs": pl.Int64, "n_pairs": pl.Int64}
_ACCURACY_SCHEMA |= {c: pl.Float64 for c in ACCURACY_COLUMNS if c not in _ACCURACY_SCHEMA}


def _frame(columns: dict) -> pl.DataFrame:
    """A polars frame from numpy/Series columns, float NaN turned into null (missing)."""
    return _frame_nan_to_null(pl.DataFrame(columns))


def _frame_nan_to_null(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.col(pl.Float64).fill_nan(None))


def panelist_block_accuracy(
    ratings: pl.DataFrame,
    block_products: pl.DataFrame,
    block_respondents: pl.DataFrame,
    min_analogs: int = 2,
) -> pl.DataFrame:
    """Leave-one-out accuracy of every panelist in every block.

    One row per ``(category, block_id, respondent_id)``: the respondent's own analog ratings
    (prediction) against the mean of the block's *other* respondents (gold) over the analogs both
    exist for (rows with fewer than ``min_analogs`` such analogs are dropped). ``pairwise_accuracy``
    uses the section 4 tie rules; ``spearman`` equals ``scipy.stats.spearmanr`` (NaN when either
    side is constant); ``recall_at_1/3`` follow the section 4 Recall@k rules with analogs in
    product-code order (the "first row" of a gold tie is the lowest code). ``respondent_id`` keeps
    the bundle's type (text or integer), with rows or without (a tiny bundle).
    """
    mats = block_matrices(ratings, block_products, block_respondents)
    out = _panelist_accuracy(mats, min_analogs=min_analogs)
    return out.with_columns(pl.col("respondent_id").cast(block_respondents["respondent_id"].dtype))


# ------------------------------------------------------------------------------ block reliability


def _ordinal_alpha(x: np.ndarray) -> float:
    present = ~np.isnan(x)
    if (present.sum(axis=0) >= 2).sum() == 0 or np.unique(x[present]).size < 2:
        return float("nan")
    try:
        return float(krippendorff.alpha(reliability_data=x, level_of_measurement="ordinal"))
    except (ValueError, ZeroDivisionError):
        return float("nan")


def _block_reliability(mats: list[BlockMatrix]) -> pl.DataFrame:
    rows = []
    for b in mats:
        x = b.analogs
        complete = x[~np.isnan(x).any(axis=1)]
        alpha, w = _ordinal_alpha(x), kendall_w(complete)
        rows.append((b.category, b.block_id, int(x.shape[0]), int(x.shape[1]), alpha, w))
    # typed even when there is no block (a fixture bundle), so the mart's columns keep their types
    schema = {"category": pl.String, "block_id": pl.Int64, "n_respondents": pl.Int64}
    schema |= {"n_analogs": pl.Int64, "krippendorff_alpha_ordinal": pl.Float64}
    schema |= {"kendall_w": pl.Float64}
    return _frame_nan_to_null(pl.DataFrame(rows, schema=schema, orient="row"))


def block_reliability(
    ratings: pl.DataFrame, block_products: pl.DataFrame, block_respondents: pl.DataFrame
) -> pl.DataFrame:
    """Ordinal Krippendorff's alpha and tie-corrected Kendall's W per block (analogs only).

    alpha: ``krippendorff.alpha(reliability_data, level_of_measurement='ordinal')`` with the block's
    respondents as coders and its analogs as units (missing cells allowed; NaN when the block has a
    single distinct value). W: see :func:`warehouse.human.metrics.kendall_w`, over respondents with
    a complete analog row.
    """
    return _block_reliability(block_matrices(ratings, block_products, block_respondents))


# ----------------------------------------------------------------------------- split-half


def _first_by_key(keys: np.ndarray, size: int) -> np.ndarray:
    """Column indices of the ``size`` smallest keys per row, in ascending key order."""
    n = keys.shape[1]
    if size >= n:
        return np.argsort(keys, axis=1)
    top = np.argpartition(keys, size - 1, axis=1)[:, :size]
    order = np.argsort(np.take_along_axis(keys, top, axis=1), axis=1)
    return np.take_along_axis(top, order, axis=1)


def split_half_credit(ratings: np.ndarray, in_half_a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pairwise agreement of half means for given splits of one block.

    ``ratings`` is respondents x products (NaN = missing); ``in_half_a`` is a boolean
    ``(n_splits, n_respondents)`` mask (the rest form half B). Returns per split the summed pair
    credit and the number of scored pairs (section 4 rules, half A as gold, half B as prediction;
    the rules are symmetric in the two halves).
    """
    x = np.asarray(ratings, dtype=float)
    present = ~np.isnan(x)
    xz = np.where(present, x, 0.0)
    pm = present.astype(float)
    a = np.atleast_2d(np.asarray(in_half_a, dtype=bool)).astype(float)
    s_a, c_a = a @ xz, a @ pm
    s_b, c_b = xz.sum(axis=0) - s_a, pm.sum(axis=0) - c_a
    return pairwise_credit_sums(_safe_divide(s_a, c_a), _safe_divide(s_b, c_b))


@dataclass(frozen=True)
class SplitHalf:
    """Split-half agreement per iteration (``table``) and what was pooled to get it."""

    table: pl.DataFrame
    median: float
    n_blocks: int
    n_pairs: int


def _split_half(mats: list[BlockMatrix], n_iter: int, seed: int, min_respondents: int) -> SplitHalf:
    rng = np.random.default_rng(seed)
    credit = np.zeros(n_iter)
    pairs = np.zeros(n_iter, dtype=np.int64)
    n_blocks = 0
    for b in mats:
        n = b.analogs.shape[0]
        if n < max(min_respondents, 2) or b.analogs.shape[1] < 2:
            continue
        keys = rng.random((n_iter, n))
        # half A = the floor(n/2) smallest keys of each row (keys are distinct almost surely)
        h = n // 2
        in_a = keys <= np.partition(keys, h - 1, axis=1)[:, h - 1 : h]
        c, p = split_half_credit(b.analogs, in_a)
        credit += c
        pairs += p
        n_blocks += 1
    agreement = _safe_divide(credit, pairs.astype(float))
    table = _frame(
        {
            "iteration": np.arange(n_iter, dtype=np.int64),
            "split_half_pairwise_agreement": agreement,
        }
    )
    return SplitHalf(
        table=table,
        median=float(np.median(agreement)),
        n_blocks=n_blocks,
        n_pairs=int(pairs.max()) if n_iter else 0,
    )


def split_half_result(
    ratings: pl.DataFrame,
    block_products: pl.DataFrame,
    block_respondents: pl.DataFrame,
    n_iter: int = 1000,
    seed: int = 42,
    min_respondents: int = 4,
) -> SplitHalf:
    """Split-half agreement per iteration with its median and the blocks and pairs pooled."""
    mats = block_matrices(ratings, block_products, block_respondents)
    return _split_half(mats, n_iter=n_iter, seed=seed, min_respondents=min_respondents)


def split_half_reliability(
    ratings: pl.DataFrame,
    block_products: pl.DataFrame,
    block_respondents: pl.DataFrame,
    **options: Any,
) -> pl.DataFrame:
    """Split-half pairwise agreement per iteration, pooled over blocks: the ``table`` of
    :func:`split_half_result`, which takes the keyword ``options`` (``n_iter, seed,
    min_respondents``).

    Returns ``iteration, split_half_pairwise_agreement``; :func:`split_half_result` also gives the
    median over iterations (also :func:`split_half_median`) and the blocks and pairs pooled. See
    the module docstring for the draws.
    """
    return split_half_result(ratings, block_products, block_respondents, **options).table


def split_half_median(split_half: pl.DataFrame) -> float:
    """Median split-half agreement over iterations (null values skipped, as NaN by numpy)."""
    return float(np.nanmedian(_floats(split_half["split_half_pairwise_agreement"])))


def _floats(column: pl.Series) -> np.ndarray:
    """A float column as numpy, null as NaN."""
    return column.cast(pl.Float64).to_numpy()


# ---------------------------------------------------------------------------- group-size curve


def _panel_sums(
    b: BlockMatrix, rng: np.random.Generator, k_max: int, n_iter: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cumulative panel sums/counts for k = 1..k_max (capped at the block size).

    Returns ``(sums, counts, total_sum, total_count, capped)`` with sums/counts of shape
    ``(n_iter, k_max, n_analogs)`` and ``capped[k-1]`` true when ``k`` > block size.
    """
    xz, pm = _analog_matrix(b)
    n = xz.shape[0]
    keys = rng.random((n_iter, n))
    size = min(k_max, n)
    perm = _first_by_key(keys, size)
    sums = np.cumsum(xz[perm], axis=1)
    counts = np.cumsum(pm[perm], axis=1)
    capped = np.arange(1, k_max + 1) > n
    if size < k_max:  # k > block size: the panel is the whole block
        k_idx = np.minimum(np.arange(k_max), size - 1)
        sums, counts = sums[:, k_idx], counts[:, k_idx]
    return sums, counts, xz.sum(axis=0), pm.sum(axis=0), capped


def _gold(
    sums: np.ndarray, counts: np.ndarray, tot: np.ndarray, cnt: np.ndarray, reference: str
) -> np.ndarray:
    if reference == "full":
        return _safe_divide(tot, cnt)
    return _safe_divide(tot - sums, cnt - counts)


def _group_size_curve(
    mats: list[BlockMatrix],
    k_max: int,
    n_iter: int,
    seed: int,
    pooling: str,
    reference: str,
) -> pl.DataFrame:
    if pooling not in ("within_block", "cross_block"):
        raise ValueError("pooling must be 'within_block' or 'cross_block'")
    if reference not in ("full", "complement"):
        raise ValueError("reference must be 'full' or 'complement'")
    if k_max < 1:
        raise ValueError("k_max must be >= 1")
    rng = np.random.default_rng(seed)
    credit = np.zeros((n_iter, k_max))
    pairs = np.zeros((n_iter, k_max), dtype=np.int64)
    n_capped = np.zeros(k_max, dtype=np.int64)
    usable = [b for b in mats if b.analogs.shape[0] >= 1 and b.analogs.shape[1] >= 1]

    if pooling == "within_block":
        for b in usable:
            sums, counts, tot, cnt, capped = _panel_sums(b, rng, k_max, n_iter)
            n_capped += capped
            gold = _gold(sums, counts, tot, cnt, reference)
            c, p = pairwise_credit_sums(gold, _safe_divide(sums, counts))
            credit += c
            pairs += p
    else:
        by_cat: dict[str, list[BlockMatrix]] = {}
        for b in usable:
            by_cat.setdefault(b.category, []).append(b)
        for blocks in by_cat.values():
            codes = np.unique(np.concatenate([b.analog_codes for b in blocks]))
            q = codes.size
            s_cat = np.zeros((n_iter, k_max, q))
            c_cat = np.zeros((n_iter, k_max, q))
            t_cat = np.zeros(q)
            n_cat = np.zeros(q)
            for b in blocks:
                sums, counts, tot, cnt, capped = _panel_sums(b, rng, k_max, n_iter)
                n_capped += capped
                idx = np.searchsorted(codes, b.analog_codes)
                s_cat[..., idx] += sums
                c_cat[..., idx] += counts
                t_cat[idx] += tot
                n_cat[idx] += cnt
            if q < 2:
                continue
            gold = _gold(s_cat, c_cat, t_cat, n_cat, reference)
            c, p = pairwise_credit_sums(gold, _safe_divide(s_cat, c_cat))
            credit += c
            pairs += p

    acc = _safe_divide(credit, pairs.astype(float))
    with warnings.catch_warnings():
        # a k where no block contributes pairs gives an all-NaN column
        warnings.simplefilter("ignore", RuntimeWarning)
        med = np.nanmedian(acc, axis=0)
        q025 = np.nanpercentile(acc, 2.5, axis=0)
        q975 = np.nanpercentile(acc, 97.5, axis=0)
        mean = np.nanmean(acc, axis=0)
    return _frame(
        {
            "k": np.arange(1, k_max + 1, dtype=np.int64),
            "median_accuracy": med,
            "q025": q025,
            "q975": q975,
            "mean_accuracy": mean,
            "mean_n_pairs": pairs.mean(axis=0),
            "n_blocks_capped": n_capped,
        }
    ).select(CURVE_COLUMNS)


def group_size_curve(
    ratings: pl.DataFrame,
    block_products: pl.DataFrame,
    block_respondents: pl.DataFrame,
    k_max: int = 75,
    n_iter: int = 1000,
    seed: int = 42,
    pooling: str = "within_block",
    reference: str = "full",
) -> pl.DataFrame:
    """Accuracy of random k-respondent panels against the panel mean, for k = 1..k_max.

    Returns ``k, median_accuracy, q025, q975, mean_accuracy, mean_n_pairs, n_blocks_capped``.
    ``pooling``: ``'within_block'`` (ours, default) scores pairs inside each block;
    ``'cross_block'`` also pairs products across the blocks of a category (published behaviour).
    ``reference``: ``'full'`` (gold = mean of all block respondents, the published definition) or
    ``'complement'`` (gold = mean of the respondents outside the panel). Capping for ``k`` above the
    block size and the draw order are described in the module docstring.
    """
    mats = block_matrices(ratings, block_products, block_respondents)
    return _group_size_curve(mats, k_max, n_iter, seed, pooling, reference)


def k_star(curve: pl.DataFrame, model_accuracy: float) -> int | None:
    """Smallest ``k`` whose median panel accuracy is >= ``model_accuracy``; None if never."""
    return curve.filter(pl.col("median_accuracy") >= model_accuracy)["k"].min()


# --------------------------------------------------------------------------------- summary


@dataclass
class HumanBaseline:
    """Every human-baseline table for one ratings frame."""

    block_products: pl.DataFrame
    block_respondents: pl.DataFrame
    accuracy: pl.DataFrame
    reliability: pl.DataFrame
    split_half: pl.DataFrame
    curve: pl.DataFrame
    summary: pl.DataFrame = field(default_factory=pl.DataFrame)


def _curve_at(curve: pl.DataFrame, k: int, col: str) -> float:
    row = curve.filter(pl.col("k") == k)[col]
    return float("nan") if row.is_empty() or row[0] is None else float(row[0])


def summarize_human_baseline(
    block_respondents: pl.DataFrame,
    accuracy: pl.DataFrame,
    reliability: pl.DataFrame,
    split_half: pl.DataFrame,
    curve: pl.DataFrame,
    model_accuracy: float | None = None,
) -> pl.DataFrame:
    """One-row summary of precomputed human-baseline tables (see :func:`human_baseline_summary`).

    Missing values (null or NaN) are skipped by every statistic (numpy ``nan*`` functions;
    quantiles linear); a statistic over no value is NaN.
    """
    acc = _floats(accuracy["pairwise_accuracy"])
    ks = k_star(curve, model_accuracy) if model_accuracy is not None else None
    row = {
        "n_blocks": reliability.height,
        "n_panelists": block_respondents["respondent_id"].n_unique(),
        "n_panelist_blocks": accuracy.height,
        "panelist_accuracy_median": _nanstat(np.nanmedian, acc),
        "panelist_accuracy_q25": _nanstat(np.nanquantile, acc, 0.25),
        "panelist_accuracy_q75": _nanstat(np.nanquantile, acc, 0.75),
        "panelist_spearman_median": _nanstat(np.nanmedian, _floats(accuracy["spearman"])),
        "alpha_mean": _nanstat(np.nanmean, _floats(reliability["krippendorff_alpha_ordinal"])),
        "kendall_w_median": _nanstat(np.nanmedian, _floats(reliability["kendall_w"])),
        "split_half_median": split_half_median(split_half),
        "panel3_accuracy": _curve_at(curve, 3, "median_accuracy"),
        "panel3_q025": _curve_at(curve, 3, "q025"),
        "panel3_q975": _curve_at(curve, 3, "q975"),
        "panel5_accuracy": _curve_at(curve, 5, "median_accuracy"),
        "panel5_q025": _curve_at(curve, 5, "q025"),
        "panel5_q975": _curve_at(curve, 5, "q975"),
        "model_accuracy": float("nan") if model_accuracy is None else float(model_accuracy),
        "k_star": ks,
    }
    schema = {k: pl.Int64 if k.startswith("n_") or k == "k_star" else pl.Float64 for k in row}
    return _frame_nan_to_null(pl.DataFrame([row], schema=schema))


def _nanstat(fn, values: np.ndarray, *args) -> float:
    """``fn`` over the non-missing values; NaN (no warning) when there is none."""
    if np.isnan(values).all():
        return float("nan")
    return float(fn(values, *args))


def compute_human_baseline(
    ratings: pl.DataFrame,
    block_products: pl.DataFrame | None = None,
    block_respondents: pl.DataFrame | None = None,
    *,
    n_iter: int = 1000,
    seed: int = 42,
    k_max: int = 75,
    pooling: str = "within_block",
    reference: str = "full",
    model_accuracy: float | None = None,
    min_respondents: int = 20,
    min_analogs: int = 2,
) -> HumanBaseline:
    """Run every human-baseline computation once (blocks assigned when not given)."""
    if block_products is None or block_respondents is None:
        block_products, block_respondents = assign_blocks(
            ratings, min_respondents=min_respondents, min_analogs=min_analogs
        )
    mats = block_matrices(ratings, block_products, block_respondents)
    res = HumanBaseline(
        block_products=block_products,
        block_respondents=block_respondents,
        accuracy=_panelist_accuracy(mats),
        reliability=_block_reliability(mats),
        split_half=_split_half(mats, n_iter=n_iter, seed=seed, min_respondents=4).table,
        curve=_group_size_curve(mats, k_max, n_iter, seed, pooling, reference),
    )
    res.summary = summarize_human_baseline(
        block_respondents, res.accuracy, res.reliability, res.split_half, res.curve, model_accuracy
    )
    return res


def human_baseline_summary(
    ratings: pl.DataFrame,
    block_products: pl.DataFrame | None = None,
    block_respondents: pl.DataFrame | None = None,
    **options: Any,
) -> pl.DataFrame:
    """One row of headline metrics: the ``summary`` of :func:`compute_human_baseline`, which takes
    the keyword ``options`` (``n_iter, seed, k_max, pooling, reference, model_accuracy, ...``).

    Columns: ``n_blocks, n_panelists, n_panelist_blocks``; ``panelist_accuracy_median/_q25/_q75``
    (LOO pairwise accuracy, numpy linear quantiles) and ``panelist_spearman_median``;
    ``alpha_mean`` (mean ordinal alpha over blocks); ``kendall_w_median``; ``split_half_median``;
    ``panel3_accuracy, panel3_q025, panel3_q975`` and the same for ``panel5`` (median and 2.5/97.5
    percentiles over iterations of the group-size curve); ``model_accuracy`` and ``k_star``
    (Int64, null when never reached or no model accuracy is given). Both random parts use ``seed``.
    """
    return compute_human_baseline(ratings, block_products, block_respondents, **options).summary
