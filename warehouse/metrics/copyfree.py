"""Copy-free statistics of with-replacement resamples (``sample_stats(..., copies="distinct")``).

A resample is given by its multiplicity matrix ``counts`` (S x n: how often each of the n
products was drawn in each of S samples). "Copy-free" means no statistic ever scores a pair
(or triple) made of two copies of one product; on a sample without repeats the values are the
ordinary ones.
"""

from __future__ import annotations

import numpy as np


def quad(counts: np.ndarray, mat: np.ndarray) -> np.ndarray:
    """Row-wise quadratic form ``c^T mat c`` (exact here: integer counts, half-integer entries)."""
    return ((counts @ mat) * counts).sum(axis=1)


def spearman_distinct(
    counts: np.ndarray, sg: np.ndarray, sp: np.ndarray, m: int
) -> tuple[np.ndarray, np.ndarray]:
    """Spearman rho of resamples that scores no pair or triple holding two copies of a product.

    With ``s_ij = sign(g_i - g_j)``, ``t_ij = sign(p_i - p_j)`` the mid-rank Spearman of m rows
    is ``N / sqrt(Dx Dy)``, ``N = sum_{a,b,c} s_ab t_ac = T2 + T3`` (T2: b = c, ordered pairs;
    T3: ordered triples of distinct rows), Dx and Dy likewise from ``s s`` and ``t t``. Copies
    only enter through T2-type terms masquerading as triples, which shifts weight from the
    triple part to the pair (Kendall) part and biases rho toward tau. For multiplicities ``c``
    each part is replaced by its mean over pairs (triples) of DISTINCT products, weighted by
    the product of multiplicities, times the count for m distinct rows:
    ``N* = m(m-1) [T2*/W2 + (m-2) T3*/W3]``. Without repeated products this is the mid-rank
    Spearman (to rounding). NaN where undefined (m >= 3 with fewer than three distinct products
    drawn, or a constant side). Also returns the parts, shape ``(S, 3, 2)``: for N, Dx, Dy
    (kernels ``s t``, ``s s``, ``t t``) the means over ordered pairs ``T2*/W2`` and over ordered
    triples ``T3*/W3`` (NaN without three distinct products), the U-statistics of :mod:`.ustat`.
    """
    sq = (counts * counts).sum(axis=1)
    w2 = m * m - sq
    w3 = float(m) ** 3 - 3.0 * m * sq + 2.0 * (counts**3).sum(axis=1)
    c2 = counts * counts
    with np.errstate(invalid="ignore", divide="ignore"):
        scale3 = np.where(w3 > 0, (m - 2) / w3, np.nan) if m > 2 else np.zeros_like(w3)
        parts, split = [], []
        for left, right in ((sg, sp), (sg, sg), (sp, sp)):
            lr = left * right
            a = counts @ left.T  # a[s, i] = sum_j c_j left_ij
            b = a if right is left else counts @ right.T
            pairs = quad(counts, lr)
            triples = (counts * a * b).sum(axis=1) - ((counts @ lr) * c2).sum(axis=1)
            parts.append(pairs / w2 + triples * scale3)
            split.append(np.stack([pairs / w2, np.where(w3 > 0, triples / w3, np.nan)], axis=1))
        num, dx, dy = parts
        rho = np.clip(num / np.sqrt(dx) / np.sqrt(dy), -1.0, 1.0)
    rho = np.where((dx > 0) & (dy > 0) & np.isfinite(num), rho, np.nan)
    return rho, np.stack(split, axis=1)
