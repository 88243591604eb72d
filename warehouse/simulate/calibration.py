"""Calibration figures of a (simulated) bundle against the published human baseline.

``calibration_summary(bundle_dir)`` recovers the blocks from the ratings (docs/benchmark.md §2)
and computes the three published reliability figures (section 5): mean per-block ordinal
Krippendorff alpha (.077), the LOO panelist pairwise accuracy distribution (median .650, IQR
.50-.75) and the split-half pairwise agreement (median .825). It uses ``warehouse.human`` when that
package provides the kernels, otherwise the small implementation below (same definitions).

Frames: ratings and flags move as polars, into the ``warehouse.human`` kernels too.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.simulate.schema import LABELS_FILE, RATINGS_FILE

PUBLISHED = {
    "alpha_mean": 0.077,
    "loo_median": 0.650,
    "loo_q25": 0.50,
    "loo_q75": 0.75,
    "split_half_median": 0.825,
    "n_blocks": 49,
    "n_panelist_blocks": 4664,
    "n_panelists": 627,
}
TOLERANCE = 0.03
BLOCK_MIN_RESPONDENTS = 20
BLOCK_MIN_ANALOGS = 2
TIE_EPS = 1e-10


@dataclass(frozen=True)
class CalibrationSummary:
    n_blocks: int
    n_panelist_blocks: int
    n_panelists: int
    alpha_mean: float
    alpha_median: float
    loo_mean: float
    loo_median: float
    loo_q25: float
    loo_q75: float
    split_half_median: float
    split_half_mean: float
    within_product_sd: float  # mean sd of a product's ratings within a block (published ~1.6)
    rating_shares: tuple[float, ...]  # shares of analog block ratings 1..7
    backend: str

    def as_dict(self) -> dict[str, object]:
        return asdict(self)

    def deviations(self) -> dict[str, float]:
        """Simulated minus published, for the figures with a tolerance."""
        return {
            "alpha_mean": self.alpha_mean - PUBLISHED["alpha_mean"],
            "loo_median": self.loo_median - PUBLISHED["loo_median"],
            "split_half_median": self.split_half_median - PUBLISHED["split_half_median"],
        }

    def within_tolerance(self, tol: float = TOLERANCE) -> bool:
        return all(abs(v) <= tol + 1e-12 for v in self.deviations().values())


@dataclass(frozen=True)
class RecoveredBlock:
    category: str
    block_id: int
    respondents: np.ndarray
    codes: tuple[int, ...]  # all products of the block (references included)
    analog_codes: tuple[int, ...]
    matrix: np.ndarray  # respondents x analogs, similarity


def recover_blocks(ratings: pl.DataFrame, is_reference: pl.DataFrame) -> list[RecoveredBlock]:
    """Blocks per docs/benchmark.md §2: respondents of a category with exactly the same product set
    (references included); keep >= 20 respondents and >= 2 analogs; ids by descending size.

    ``ratings``: ``category, respondent, product_code, similarity`` (non-null rows count);
    ``is_reference``: ``category, product_code, is_reference``. A duplicated
    ``(respondent, product_code)`` rating keeps its first row.
    """
    r = ratings.filter(pl.col("similarity").is_not_null() & ~pl.col("similarity").is_nan())
    refs = {
        (c, int(p))
        for c, p, f in is_reference.select("category", "product_code", "is_reference").iter_rows()
        if bool(f)
    }
    out: list[RecoveredBlock] = []
    for cat in sorted(r["category"].unique().to_list()):
        g = r.filter(pl.col("category") == cat)
        sets = (
            g.group_by("respondent")
            .agg(pl.col("product_code").sort())
            .sort("respondent")
            .iter_rows()
        )
        groups: dict[tuple[int, ...], list[int]] = {}
        for resp, codes in sets:
            groups.setdefault(tuple(int(c) for c in codes), []).append(int(resp))
        kept = []
        for codes, resps in groups.items():
            analogs = tuple(c for c in codes if (cat, c) not in refs)
            if len(resps) >= BLOCK_MIN_RESPONDENTS and len(analogs) >= BLOCK_MIN_ANALOGS:
                kept.append((codes, analogs, sorted(resps)))
        kept.sort(key=lambda x: (-len(x[2]), x[0]))
        first = g.unique(["respondent", "product_code"], keep="first", maintain_order=True)
        resp_all = first["respondent"].to_numpy()
        code_all = first["product_code"].to_numpy()
        sim_all = first["similarity"].to_numpy().astype(float)
        for bid, (codes, analogs, resps) in enumerate(kept):
            rid = np.array(resps)
            cid = np.array(analogs)
            keep = np.isin(resp_all, rid) & np.isin(code_all, cid)
            mat = np.full((rid.size, cid.size), np.nan)
            mat[np.searchsorted(rid, resp_all[keep]), np.searchsorted(cid, code_all[keep])] = (
                sim_all[keep]
            )
            out.append(RecoveredBlock(str(cat), bid, rid, codes, analogs, mat))
    return out


def _pair_credit(gold: np.ndarray, pred: np.ndarray) -> tuple[np.ndarray, int]:
    """Summed pairwise credit over the last axis (docs/benchmark.md §4 rules) and pair count."""
    i, j = np.triu_indices(gold.shape[-1], k=1)
    gd = gold[..., i] - gold[..., j]
    pd_ = pred[..., i] - pred[..., j]
    credit = np.where(np.sign(gd) == np.sign(pd_), 1.0, 0.0)
    credit = np.where(np.abs(pd_) < TIE_EPS, 0.5, credit)
    credit = np.where(np.abs(gd) < TIE_EPS, 0.5, credit)
    return credit.sum(axis=-1), i.size


def ordinal_alpha(matrix: np.ndarray) -> float:
    """Krippendorff's alpha, ordinal, of a raters x units matrix (complete data)."""
    import krippendorff

    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal"))


def loo_accuracy(matrix: np.ndarray) -> np.ndarray:
    """Per respondent: pairwise accuracy of own ratings against the leave-one-out panel mean."""
    n = matrix.shape[0]
    loo = (matrix.sum(axis=0)[None, :] - matrix) / (n - 1)
    credit, n_pairs = _pair_credit(loo, matrix)
    return credit / n_pairs


def split_half(blocks: list[RecoveredBlock], iterations: int = 1000, seed: int = 42) -> np.ndarray:
    """Pooled split-half pairwise agreement per iteration (blocks with >= 4 respondents)."""
    rng = np.random.default_rng(seed)
    credit = np.zeros(iterations)
    pairs = 0
    for blk in blocks:
        m = blk.matrix
        n = m.shape[0]
        if n < 4 or m.shape[1] < 2:
            continue
        order = np.argsort(rng.random((iterations, n)), axis=1)
        in_a = np.zeros((iterations, n), dtype=bool)
        np.put_along_axis(in_a, order[:, : n // 2], True, axis=1)
        mean_a = (in_a.astype(float) @ m) / (n // 2)
        mean_b = ((~in_a).astype(float) @ m) / (n - n // 2)
        c, k = _pair_credit(mean_a, mean_b)
        credit += c
        pairs += k
    return credit / pairs


def _summary(
    alphas: np.ndarray,
    loo: np.ndarray,
    split: np.ndarray,
    analog_mats: list[np.ndarray],
    n_panelists: int,
    backend: str,
) -> CalibrationSummary:
    sds = np.concatenate([m.std(axis=0, ddof=1) for m in analog_mats])
    values = np.concatenate([m.ravel() for m in analog_mats])
    values = values[~np.isnan(values)]
    return CalibrationSummary(
        n_blocks=len(analog_mats),
        n_panelist_blocks=int(sum(m.shape[0] for m in analog_mats)),
        n_panelists=n_panelists,
        alpha_mean=float(np.nanmean(alphas)),
        alpha_median=float(np.nanmedian(alphas)),
        loo_mean=float(np.nanmean(loo)),
        loo_median=float(np.nanmedian(loo)),
        loo_q25=float(np.nanquantile(loo, 0.25)),
        loo_q75=float(np.nanquantile(loo, 0.75)),
        split_half_median=float(np.median(split)),
        split_half_mean=float(np.mean(split)),
        within_product_sd=float(np.nanmean(sds)),
        rating_shares=tuple(float(np.mean(values == v)) for v in range(1, 8)),
        backend=backend,
    )


def _summarize_own(ratings: pl.DataFrame, is_reference: pl.DataFrame) -> CalibrationSummary:
    blocks = recover_blocks(ratings, is_reference)
    alphas = np.array([ordinal_alpha(b.matrix) for b in blocks])
    loo = np.concatenate([loo_accuracy(b.matrix) for b in blocks])
    panelists = {int(r) for b in blocks for r in b.respondents}
    return _summary(
        alphas,
        loo,
        split_half(blocks),
        [b.matrix for b in blocks],
        len(panelists),
        "warehouse.simulate.calibration",
    )


def _summarize_human(ratings: pl.DataFrame, is_reference: pl.DataFrame) -> CalibrationSummary:
    from warehouse.human import (
        assign_blocks,
        block_matrices,
        block_reliability,
        panelist_block_accuracy,
        split_half_reliability,
    )

    frame = (
        ratings.join(
            is_reference, on=["category", "product_code"], how="left", maintain_order="left"
        )
        .rename({"respondent": "respondent_id"})
        .with_columns(pl.col("is_reference").fill_null(False).cast(pl.Boolean))
    )
    bp, br = assign_blocks(
        frame, min_respondents=BLOCK_MIN_RESPONDENTS, min_analogs=BLOCK_MIN_ANALOGS
    )
    mats = block_matrices(frame, bp, br)
    acc = panelist_block_accuracy(frame, bp, br)
    rel = block_reliability(frame, bp, br)
    sh = split_half_reliability(frame, bp, br, n_iter=1000, seed=42)
    return _summary(
        rel["krippendorff_alpha_ordinal"].cast(pl.Float64).to_numpy(),
        acc["pairwise_accuracy"].cast(pl.Float64).to_numpy(),
        sh["split_half_pairwise_agreement"].cast(pl.Float64).to_numpy(),
        [m.analogs for m in mats],
        br["respondent_id"].n_unique(),
        "warehouse.human",
    )


def summarize(
    ratings: pl.DataFrame, is_reference: pl.DataFrame, backend: str = "auto"
) -> CalibrationSummary:
    """Calibration figures of ``ratings`` (``category, respondent, product_code, similarity``).

    ``backend``: ``'human'`` (``warehouse.human`` kernels), ``'own'`` (this module) or ``'auto'``
    (``warehouse.human`` when it imports, else this module).
    """
    if backend not in ("auto", "human", "own"):
        raise ValueError(f"backend must be 'auto', 'human' or 'own', got {backend!r}")
    if backend in ("auto", "human"):
        try:
            return _summarize_human(ratings, is_reference)
        except ImportError:
            if backend == "human":
                raise
    return _summarize_own(ratings, is_reference)


def summarize_frame(
    category: np.ndarray,
    respondent: np.ndarray,
    product_code: np.ndarray,
    similarity: np.ndarray,
    is_reference: np.ndarray,
    backend: str = "auto",
) -> CalibrationSummary:
    """:func:`summarize` on long rating arrays (one element per rating)."""
    ratings = pl.DataFrame(
        {
            "category": pl.Series(np.asarray(category, dtype=object), dtype=pl.String),
            "respondent": np.asarray(respondent),
            "product_code": np.asarray(product_code),
            "similarity": np.asarray(similarity, dtype=float),
        }
    )
    flags = ratings.select(
        "category",
        "product_code",
        is_reference=pl.Series(np.asarray(is_reference, dtype=bool)),
    ).unique(["category", "product_code"], keep="first", maintain_order=True)
    return summarize(ratings, flags, backend=backend)


def read_bundle_ratings(bundle_dir: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The rating rows (``category, respondent, product_code, similarity``; 2025/2026 only) and
    the reference flags (``is_reference``: the text ``true``, any case) of a raw bundle."""
    bundle_dir = Path(bundle_dir)
    r = (
        pl.read_csv(
            bundle_dir / RATINGS_FILE,
            columns=["product_category", "year", "respondent", "product_code", "similarity"],
            infer_schema_length=None,
        )
        .filter(pl.col("year").is_in([2025, 2026]))
        .rename({"product_category": "category"})
    )
    labels = pl.read_csv(
        bundle_dir / LABELS_FILE,
        columns=["category", "product_code", "is_reference"],
        schema_overrides={"is_reference": pl.String},
        infer_schema_length=None,
    ).with_columns(
        is_reference=(pl.col("is_reference").str.to_lowercase() == "true").fill_null(False)
    )
    return r, labels


def calibration_summary(bundle_dir: Path, backend: str = "auto") -> CalibrationSummary:
    """Published reliability figures recomputed on a raw bundle (see module docstring)."""
    ratings, labels = read_bundle_ratings(bundle_dir)
    return summarize(ratings, labels, backend=backend)
