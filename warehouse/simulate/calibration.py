"""Calibration figures of a (simulated) bundle against the published human baseline.

``calibration_summary(bundle_dir)`` recovers the blocks from the ratings (BENCHMARK section 2)
and computes the three published reliability figures (section 5): mean per-block ordinal
Krippendorff alpha (.077), the LOO panelist pairwise accuracy distribution (median .650, IQR
.50-.75) and the split-half pairwise agreement (median .825). It uses ``warehouse.human`` when that
package provides the kernels, otherwise the small implementation below (same definitions).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import pandas as pd

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


def recover_blocks(ratings: pd.DataFrame, is_reference: pd.DataFrame) -> list[RecoveredBlock]:
    """Blocks per BENCHMARK section 2: respondents of a category with exactly the same product set
    (references included); keep >= 20 respondents and >= 2 analogs; ids by descending size.

    ``ratings``: ``category, respondent, product_code, similarity`` (non-null rows count);
    ``is_reference``: ``category, product_code, is_reference``.
    """
    r = ratings.dropna(subset=["similarity"])
    refs = {
        (c, int(p))
        for c, p, f in zip(
            is_reference["category"],
            is_reference["product_code"],
            is_reference["is_reference"],
            strict=True,
        )
        if bool(f)
    }
    out: list[RecoveredBlock] = []
    for cat, g in r.groupby("category", sort=True):
        sets = g.groupby("respondent")["product_code"].apply(lambda s: tuple(sorted(map(int, s))))
        groups: dict[tuple[int, ...], list[int]] = {}
        for resp, codes in sets.items():
            groups.setdefault(codes, []).append(int(resp))
        kept = []
        for codes, resps in groups.items():
            analogs = tuple(c for c in codes if (cat, c) not in refs)
            if len(resps) >= BLOCK_MIN_RESPONDENTS and len(analogs) >= BLOCK_MIN_ANALOGS:
                kept.append((codes, analogs, sorted(resps)))
        kept.sort(key=lambda x: (-len(x[2]), x[0]))
        pivot = g.pivot_table(
            index="respondent", columns="product_code", values="similarity", aggfunc="first"
        )
        for bid, (codes, analogs, resps) in enumerate(kept):
            mat = pivot.loc[resps, list(analogs)].to_numpy(dtype=float)
            out.append(RecoveredBlock(str(cat), bid, np.array(resps), codes, analogs, mat))
    return out


def _pair_credit(gold: np.ndarray, pred: np.ndarray) -> tuple[np.ndarray, int]:
    """Summed pairwise credit over the last axis (BENCHMARK section 4 rules) and pair count."""
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


def _summarize_own(ratings: pd.DataFrame, is_reference: pd.DataFrame) -> CalibrationSummary:
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


def _summarize_human(ratings: pd.DataFrame, is_reference: pd.DataFrame) -> CalibrationSummary:
    from warehouse.human import (
        assign_blocks,
        block_matrices,
        block_reliability,
        panelist_block_accuracy,
        split_half_reliability,
    )

    frame = ratings.merge(is_reference, on=["category", "product_code"], how="left")
    frame = frame.rename(columns={"respondent": "respondent_id"})
    frame["is_reference"] = frame["is_reference"].fillna(False).astype(bool)
    bp, br = assign_blocks(
        frame, min_respondents=BLOCK_MIN_RESPONDENTS, min_analogs=BLOCK_MIN_ANALOGS
    )
    mats = block_matrices(frame, bp, br)
    acc = panelist_block_accuracy(frame, bp, br)
    rel = block_reliability(frame, bp, br)
    sh = split_half_reliability(frame, bp, br, n_iter=1000, seed=42)
    return _summary(
        rel["krippendorff_alpha_ordinal"].to_numpy(dtype=float),
        acc["pairwise_accuracy"].to_numpy(dtype=float),
        sh["split_half_pairwise_agreement"].to_numpy(dtype=float),
        [m.analogs for m in mats],
        int(br["respondent_id"].nunique()),
        "warehouse.human",
    )


def summarize(
    ratings: pd.DataFrame, is_reference: pd.DataFrame, backend: str = "auto"
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
    ratings = pd.DataFrame(
        {
            "category": np.asarray(category, dtype=object),
            "respondent": np.asarray(respondent),
            "product_code": np.asarray(product_code),
            "similarity": np.asarray(similarity, dtype=float),
        }
    )
    flags = pd.DataFrame(
        {
            "category": ratings["category"],
            "product_code": ratings["product_code"],
            "is_reference": np.asarray(is_reference, dtype=bool),
        }
    ).drop_duplicates(["category", "product_code"])
    return summarize(ratings, flags, backend=backend)


def read_bundle_ratings(bundle_dir: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rating rows (``category, respondent, product_code, similarity``; 2025/2026 only) and
    the reference flags of a raw bundle."""
    bundle_dir = Path(bundle_dir)
    r = pd.read_csv(
        bundle_dir / RATINGS_FILE,
        usecols=["product_category", "year", "respondent", "product_code", "similarity"],
    )
    r = r[r["year"].isin([2025, 2026])].rename(columns={"product_category": "category"})
    labels = pd.read_csv(
        bundle_dir / LABELS_FILE, usecols=["category", "product_code", "is_reference"]
    )
    labels["is_reference"] = labels["is_reference"].astype(str).str.lower().eq("true")
    return r, labels


def calibration_summary(bundle_dir: Path, backend: str = "auto") -> CalibrationSummary:
    """Published reliability figures recomputed on a raw bundle (see module docstring)."""
    ratings, labels = read_bundle_ratings(bundle_dir)
    return summarize(ratings, labels, backend=backend)
