"""MMRF distance baselines: distance to the category's reference centroid (docs/benchmark.md §3).

No training and no labels, so there are no folds: every analog's score is computed once from the
features of all products (transductive, as published). Per *modality* (each letter of the feature
set; ``N`` splits into one sub-modality per subset with that subset's nutrition columns from
``seeds/nutrition_subset_columns.csv``):

1. the rows of every product (analogs and references) that has the modality; for ``N``, only the
   products of that subset's categories; rows equal to 1e-10 (relative) made bit-identical
   (``preprocess.snap_rows``). A reference row that is all NaN, or an analog row the
   design zero-filled (``Design.absent``), = modality absent: the product is left out of this
   modality's scaler, centroid and ranking;
2. StandardScaler fitted on those rows (population sd; constant columns get scale 1);
3. per category, centroid = mean of the standardized reference rows;
4. distance of each product to its category's centroid: cosine (``1 - u.v / (|u||v|)``, NaN for a
   zero vector) or Euclidean, each computed row by row (elementwise products and numpy's
   per-row sum, no BLAS product): a product's distance depends on its own row and the centroid
   only, so bit-identical vectors get bit-identical distances wherever their rows sit;
5. within-category rank normalization over every product of the category with a distance
   (references included, as published): ``#{d' : d' < d + 1e-10} / (count + 1)``, the metrics'
   tie tolerance (:data:`TIE_EPS`): distances closer than 1e-10 count as equal;
6. score = ``-`` mean over the modalities available for the product (equal weights).

An analog with no available modality is an error (no silent fallback).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from warehouse.ranking.design import SUBSET_ORDER, Design, DesignError
from warehouse.ranking.preprocess import scaler_stats, snap_rows

TIE_EPS = 1e-10
"""Distances closer than this are ties in the within-category rank (the metrics' tolerance)."""


def _distances(x: np.ndarray, cat: np.ndarray, is_ref: np.ndarray, metric: str) -> np.ndarray:
    """Distance of each row to its category's reference centroid (NaN where undefined)."""
    present = ~np.isnan(x).any(axis=1)
    out = np.full(len(x), np.nan)
    if present.sum() == 0:
        return out
    mean, scale = scaler_stats(x[present])
    xs = (x - mean) / scale
    for c in np.unique(cat[present]):
        members = present & (cat == c)
        refs = members & is_ref
        if not refs.any():
            continue
        centroid = xs[refs].mean(axis=0)
        rows = np.flatnonzero(members)
        out[rows] = rowwise_distance(xs[rows], centroid, metric)
    return out


def rowwise_distance(v: np.ndarray, centroid: np.ndarray, metric: str) -> np.ndarray:
    """Distance of each row of ``v`` to ``centroid``; row ``i``'s value depends on ``v[i]`` and
    ``centroid`` only (elementwise products, per-row sums), never on the row's position."""
    if metric == "euclidean":
        return np.sqrt(((v - centroid) ** 2).sum(axis=1))
    dots = (v * centroid).sum(axis=1)
    norms = np.sqrt((v * v).sum(axis=1)) * np.sqrt((centroid * centroid).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norms > 0, 1.0 - dots / norms, np.nan)


def _rank_normalize(d: np.ndarray, cat: np.ndarray, tol: float = TIE_EPS) -> np.ndarray:
    """``#{d' in the category : d' < d + tol} / (count + 1)`` per finite ``d``."""
    out = np.full(len(d), np.nan)
    ok = np.isfinite(d)
    for c in np.unique(cat[ok]):
        rows = np.flatnonzero(ok & (cat == c))
        vals = np.sort(d[rows])
        out[rows] = np.searchsorted(vals, d[rows] + tol, side="left") / (len(vals) + 1)
    return out


def _modalities(design: Design, b: str, subset: np.ndarray):
    """``(name, rows)`` per modality of block ``b`` over analogs + references (NaN = absent):
    ``N`` splits into one sub-modality per subset with that subset's columns."""
    if b not in design.reference_blocks:
        raise DesignError(f"distance baseline: no reference rows for block {b!r}")
    x = snap_rows(np.vstack([design.analog_rows_for_distance(b), design.reference_blocks[b]]))
    if b.split(":")[0] != "N":
        yield b, x
        return
    if not design.subset_columns:
        raise DesignError(
            "distance baseline on N needs the per-subset nutrition columns "
            "(seeds/nutrition_subset_columns.csv)"
        )
    for s in SUBSET_ORDER:
        cols = design.subset_columns.get(s)
        if not cols:
            continue
        missing = [c for c in cols if c not in design.nutrition_columns]
        if missing:
            raise DesignError(f"subset {s}: nutrition columns {missing} are not in N")
        idx = [design.nutrition_columns.index(c) for c in cols]
        xs = np.full((len(x), len(idx)), np.nan)
        rows = subset == s
        xs[rows] = x[rows][:, idx]
        yield f"{b}/{s}", xs


def mmrf_scores(
    design: Design, block_names: Sequence[str], metric: str, tie_tol: float = TIE_EPS
) -> tuple[np.ndarray, dict]:
    """Scores of the analogs (design row order) and the modalities used per analog."""
    if metric not in ("cosine", "euclidean"):
        raise DesignError(f"distance metric must be 'cosine' or 'euclidean', got {metric!r}")
    if design.reference_keys is None or design.reference_keys.height == 0:
        raise DesignError("distance baselines need reference products (reference_keys/blocks)")
    n = design.n
    rk = design.reference_keys
    cat = np.concatenate([design.categories.astype(str), np.array(rk["category"].to_list(), str)])
    subset = np.concatenate(
        [np.array(design.keys["subset"].to_list(), str), np.array(rk["subset"].to_list(), str)]
    )
    is_ref = np.r_[np.zeros(n, bool), np.ones(rk.height, bool)]
    normalized, names = [], []
    for b in block_names:
        for name, x in _modalities(design, b, subset):
            d = _distances(x, cat, is_ref, metric)
            normalized.append(_rank_normalize(d, cat, tie_tol))
            names.append(name)
    mat = np.vstack(normalized)[:, :n]  # modalities x analogs
    avail = np.isfinite(mat)
    if not avail.any(axis=0).all():
        r = int(np.argmin(avail.any(axis=0)))
        key = design.keys.row(r, named=True)
        raise DesignError(
            f"distance baseline: analog {key['category']}:{key['product_code']} has no modality "
            f"among {names} (no vector, or no reference of its category with one)"
        )
    with np.errstate(invalid="ignore"):
        scores = -np.nanmean(mat, axis=0)
    return scores, {"modalities": names, "n_modalities": avail.sum(axis=0)}
