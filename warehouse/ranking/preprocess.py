"""Per-fold preprocessing: StandardScaler per block, PCA to 95% variance for blocks over 10 dims.

Fitted on the fold's training rows only, applied to its held-out rows (docs/benchmark.md §3). The
arithmetic is scikit-learn's, computed faster:

* scaler: column mean and population standard deviation (``ddof=0``); a column whose variance is
  indistinguishable from 0 (sklearn's ``_is_constant_feature`` bound) gets scale 1, and so does a
  column whose standard deviation is negligible next to the block's largest
  (:data:`NEGLIGIBLE_SD`: ``sd <= 1e-10 * max sd``): rounding residue, not a feature (the default
  build's T block has two columns of values ~1e-33 that sklearn's bound, relative to the column's
  own mean, would blow up to unit variance; docs/ranking.md has the effect);
* PCA (``PCA(n_components=0.95)``, svd_solver "full"): centre the scaled rows, take the
  eigen-decomposition of the smaller of the Gram matrix ``A Aᵀ`` (m x m, when the block is wider
  than it is tall) and the covariance ``Aᵀ A`` (p x p); explained variance ratios from the
  eigenvalues (negative round-off clipped to 0); ``k`` = first index where the cumulative ratio
  exceeds 0.95 (``searchsorted(..., side="right") + 1``, sklearn's rule); component signs by
  sklearn's ``svd_flip(u_based_decision=False)`` (the largest-magnitude loading of each component
  is positive).

Identical input rows give identical output rows, wherever they sit and whichever set of rows is
transformed with them: the transform is computed cell by cell (:func:`rowwise_project`: one
vector dot product per output value, never a BLAS matrix product, whose rounding depends on a
row's position in the block), for the training rows as for the held-out ones. A BLAS product
would put bit-identical products (the 160 zero-filled C rows of the default build, a duplicated
T vector) one ULP apart, and LightGBM's binning treats such values as distinct split points.

``tests/unit/test_ranking_preprocess.py`` checks ``k``, the components and the transformed rows
against ``StandardScaler`` + ``PCA(0.95)`` (agreement to ~1e-9 on realistic blocks). The only
theoretical difference: a cumulative ratio within ~1e-13 of 0.95 could round to the other ``k``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

PCA_VARIANCE = 0.95
PCA_MIN_DIMS = 11  # PCA only for blocks with more than 10 columns
_EPS = np.finfo(np.float64).eps
SNAP_RTOL = 1e-10
"""Rows whose values all agree to this relative tolerance are one row (:func:`snap_rows`)."""
NEGLIGIBLE_SD = 1e-10
"""A column whose sd is at most this times the block's largest column sd is constant."""


@dataclass(frozen=True)
class BlockTransform:
    """A fitted scaler (+ PCA) for one block. ``components`` is (k, p) as in sklearn, or None."""

    mean: np.ndarray
    scale: np.ndarray
    pca_mean: np.ndarray | None
    components: np.ndarray | None
    n_train: int

    @property
    def n_out(self) -> int:
        return len(self.mean) if self.components is None else self.components.shape[0]

    def transform(self, x: np.ndarray) -> np.ndarray:
        """Scaled (+ projected) rows; row ``i`` depends on ``x[i]`` and the fit only."""
        a = (x - self.mean) / self.scale
        if self.components is None:
            return a
        return rowwise_project(a - self.pca_mean, self.components)

    def raw_weights(self, w: np.ndarray) -> np.ndarray:
        """Weights ``u`` on the raw block columns with ``transform(x) @ w == x @ u + const``."""
        v = w if self.components is None else self.components.T @ w
        return v / self.scale

    def from_raw(self, u: np.ndarray) -> np.ndarray:
        """Weights on this transform's outputs closest to raw-column weights ``u`` (least
        squares; exact when ``u`` lies in the retained PCA subspace): a warm start."""
        v = u * self.scale
        return v if self.components is None else self.components @ v


def snap_rows(x: np.ndarray, rtol: float = SNAP_RTOL) -> np.ndarray:
    """``x`` with rows equal up to rounding noise made bit-identical: row ``i`` takes the values
    of the first earlier kept row ``j`` with ``|x_i - x_j| <= rtol * max(|x_i|, |x_j|)`` in every
    column (a zero stays a zero; rows with NaN untouched). Equal rows stay equal under a 1e-12
    relative perturbation, which standardization (``|x| / sd`` ~ 100 on the C block) would
    otherwise blow up to distance and PCA-score differences of ~1e-9."""
    out = np.array(x, dtype=np.float64, copy=True)
    ok = ~np.isnan(out).any(axis=1)
    kept: list[int] = []
    for i in np.flatnonzero(ok):
        if kept:
            cand = out[kept]
            close = np.abs(cand - out[i]) <= rtol * np.maximum(np.abs(cand), np.abs(out[i]))
            hit = np.flatnonzero(close.all(axis=1))
            if len(hit):
                out[i] = cand[hit[0]]
                continue
        kept.append(int(i))
    return out


def rowwise_project(a: np.ndarray, components: np.ndarray) -> np.ndarray:
    """``a @ components.T`` computed cell by cell: ``out[i, j] = vecdot(a[i], components[j])``
    (one BLAS dot product of two contiguous vectors per cell, never a matrix product), so that
    equal rows of ``a`` give bit-equal rows of the output whatever their position and whatever
    the other rows: numpy's dot loop (BLAS ``ddot`` on vectors this short: one thread) sums in an
    order fixed by the length, where a matrix product's blocking depends on the row's place in the
    block and on the thread count. ``test_ranking_properties.py`` checks it."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    c = np.ascontiguousarray(components, dtype=np.float64)
    return np.vecdot(a[:, None, :], c[None, :, :])


def scaler_stats(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, scale) of sklearn's StandardScaler on ``x`` (rows = samples), a column of
    negligible spread (:data:`NEGLIGIBLE_SD`) counted constant too."""
    n = x.shape[0]
    mean = x.mean(axis=0)
    var = ((x - mean) ** 2).mean(axis=0)
    constant = var <= n * _EPS * var + (n * mean * _EPS) ** 2
    scale = np.sqrt(var)
    if len(scale):
        constant |= scale <= NEGLIGIBLE_SD * scale.max()
    scale[constant] = 1.0
    return mean, scale


def n_components_for(eigenvalues: np.ndarray, variance: float = PCA_VARIANCE) -> int:
    """sklearn's rule for a float ``n_components``: eigenvalues in descending order."""
    ev = np.clip(eigenvalues, 0.0, None)
    total = ev.sum()
    if total <= 0:
        return 1
    ratio_cumsum = np.cumsum(ev / total)
    k = int(np.searchsorted(ratio_cumsum, variance, side="right") + 1)
    return min(k, len(ev))


def fit_block(
    x: np.ndarray,
    variance: float = PCA_VARIANCE,
    min_dims: int = PCA_MIN_DIMS,
    return_train: bool = False,
) -> BlockTransform | tuple[BlockTransform, np.ndarray]:
    """Fit scaler (+ PCA when ``x`` has ``>= min_dims`` columns) on training rows ``x``.

    With ``return_train`` also returns the transformed training rows (``transform(x)``: row by
    row, not the Gram path's ``U S``, which differs between equal rows by rounding).
    """
    m, p = x.shape
    mean, scale = scaler_stats(x)
    a = (x - mean) / scale
    if p < min_dims:
        t = BlockTransform(mean, scale, None, None, m)
        return (t, a) if return_train else t
    pca_mean = a.mean(axis=0)
    ac = a - pca_mean
    if p <= m:
        evals, evecs = np.linalg.eigh(ac.T @ ac)
        evals, evecs = evals[::-1], evecs[:, ::-1]
        k = n_components_for(evals, variance)
        v = evecs[:, :k]  # (p, k)
    else:
        evals, evecs = np.linalg.eigh(ac @ ac.T)
        evals, evecs = evals[::-1], evecs[:, ::-1]
        k = n_components_for(evals, variance)
        s = np.sqrt(np.clip(evals[:k], 0.0, None))
        u = evecs[:, :k]
        with np.errstate(divide="ignore", invalid="ignore"):
            v = (ac.T @ u) / np.where(s > 0, s, 1.0)
    comps = v.T  # (k, p)
    signs = np.sign(comps[np.arange(k), np.argmax(np.abs(comps), axis=1)])
    signs[signs == 0] = 1.0
    comps = np.ascontiguousarray(comps * signs[:, None])
    t = BlockTransform(mean, scale, pca_mean, comps, m)
    return (t, rowwise_project(ac, comps)) if return_train else t


@dataclass(frozen=True)
class FoldBlocks:
    """Transformed training and test rows of every block of one fold (+ the transforms)."""

    train_idx: np.ndarray
    test_idx: np.ndarray
    train: Mapping[str, np.ndarray]
    test: Mapping[str, np.ndarray]
    transforms: Mapping[str, BlockTransform]

    def matrices(self, block_names: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        names = list(block_names)
        return (
            np.hstack([self.train[b] for b in names]),
            np.hstack([self.test[b] for b in names]),
        )

    def raw_weights(self, block_names: Iterable[str], w: np.ndarray) -> dict[str, np.ndarray]:
        """Split concatenated weights ``w`` back onto each block's raw columns."""
        out, start = {}, 0
        for b in block_names:
            t = self.transforms[b]
            out[b] = t.raw_weights(w[start : start + t.n_out])
            start += t.n_out
        return out


def weights_from_raw(fb: FoldBlocks, block_names: Iterable[str], u: np.ndarray) -> np.ndarray:
    """Concatenated output weights of ``fb`` for raw weights ``u`` (blocks concatenated)."""
    out, start = [], 0
    for b in block_names:
        t = fb.transforms[b]
        p = len(t.mean)
        out.append(t.from_raw(u[start : start + p]))
        start += p
    return np.concatenate(out)


def fit_fold(
    blocks: Mapping[str, np.ndarray],
    train_idx: np.ndarray,
    test_idx: np.ndarray,
    names: Iterable[str],
    variance: float = PCA_VARIANCE,
    min_dims: int = PCA_MIN_DIMS,
) -> FoldBlocks:
    """Fit every named block on ``train_idx`` rows and transform train and test rows."""
    train, test, transforms = {}, {}, {}
    for b in dict.fromkeys(names):
        x = blocks[b]
        t, z = fit_block(x[train_idx], variance, min_dims, return_train=True)
        transforms[b] = t
        train[b] = z
        test[b] = t.transform(x[test_idx])
    return FoldBlocks(np.asarray(train_idx), np.asarray(test_idx), train, test, transforms)
