"""The per-sample statistics of one category's resamples that :func:`.bootstrap.sample_stats`
assembles: pair credit, Kendall tau-b, Spearman with copies as ties and Recall@k, each in array
form over the ``(S, n_c)`` multiplicity matrix ``counts`` of the samples (docs/benchmark.md §4;
the copy-free Spearman is :func:`.copyfree.spearman_distinct`).
"""

from __future__ import annotations

import numpy as np

from .copyfree import quad
from .core import TIE_EPS


def empty_stats(out: dict[str, np.ndarray], s: int, want: set[str]) -> dict:
    """Statistics of empty samples: no pairs, undefined correlations and Recall."""
    out.update(
        credit=np.zeros(s), npairs=np.zeros(s), rho=np.full(s, np.nan), tau=np.full(s, np.nan)
    )
    for name in want:
        if name.startswith("recall_at_"):
            out[f"recall_{name.rsplit('_', 1)[1]}"] = np.full(s, np.nan)
    return out


def credit_stats(
    counts: np.ndarray, dg: np.ndarray, dp: np.ndarray, m: int, tot: float, copies: str
) -> tuple[np.ndarray, np.ndarray]:
    """Pair credit and pair count per sample."""
    s = counts.shape[0]
    tied = (np.abs(dg) < TIE_EPS) | (np.abs(dp) < TIE_EPS)
    credit_mat = np.where(tied, 0.5, ((dg > 0) == (dp > 0)).astype(np.float64))
    if copies == "tie":
        return (quad(counts, credit_mat) - 0.5 * m) / 2, np.full(s, tot, dtype=np.float64)
    # F_ii = 0.5 on the diagonal of credit_mat: drop the c_i^2 copy terms
    sq = (counts * counts).sum(axis=1)
    return (quad(counts, credit_mat) - 0.5 * sq) / 2, (m * m - sq) / 2


def kendall_stats(
    counts: np.ndarray,
    dg: np.ndarray,
    dp: np.ndarray,
    ce_g: np.ndarray,
    ce_p: np.ndarray,
    m: int,
    tot: float,
) -> np.ndarray:
    """Kendall tau-b per sample, NaN where undefined."""
    cmd = quad(counts, np.sign(dg) * np.sign(dp)) / 2
    xtie = ((ce_g * counts).sum(axis=1) - m) / 2
    ytie = ((ce_p * counts).sum(axis=1) - m) / 2
    undefined = (xtie == tot) | (ytie == tot)
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = cmd / np.sqrt(tot - xtie) / np.sqrt(tot - ytie)
    return np.where(undefined, np.nan, np.clip(tau, -1.0, 1.0))


def spearman_tie_stats(
    counts: np.ndarray, dg: np.ndarray, dp: np.ndarray, ce_g: np.ndarray, ce_p: np.ndarray, m: int
) -> np.ndarray:
    """Spearman per sample with copies as ties, NaN where undefined."""
    mid = (m + 1) / 2
    # average rank of a copy of product i: #drawn below + (#drawn equal + 1) / 2;
    # dg[j, i] < 0  <=>  g_j < g_i
    xm = counts @ (dg < 0).astype(np.float64) + (ce_g + 1) / 2 - mid
    ym = counts @ (dp < 0).astype(np.float64) + (ce_p + 1) / 2 - mid
    fact = 1.0 / (m - 1) if m > 1 else np.nan
    sxy = (counts * xm * ym).sum(axis=1) * fact
    sxx = (counts * xm * xm).sum(axis=1) * fact
    syy = (counts * ym * ym).sum(axis=1) * fact
    undefined = (sxx == 0) | (syy == 0) | (m < 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        # scipy returns corrcoef(...)[1, 0] = cov / sd_y / sd_x (in this order)
        rho = np.clip(sxy / np.sqrt(syy) / np.sqrt(sxx), -1.0, 1.0)
    return np.where(undefined, np.nan, rho)


def recall_stats(
    g: np.ndarray, p: np.ndarray, idx: np.ndarray, counts: np.ndarray, ks: list[int], copies: str
) -> dict[str, np.ndarray]:
    """``recall_<k>`` per sample for each ``k`` of ``ks``."""
    s = idx.shape[0]
    gs = g[idx]
    ps = p[idx]
    best = np.argmax(gs, axis=1)  # first row (drawn order) with the maximum gold
    pb = ps[np.arange(s), best][:, None]
    above = (ps > pb + TIE_EPS).sum(axis=1)
    n_tied = (np.abs(ps - pb) < TIE_EPS).sum(axis=1)
    if copies == "distinct":  # copies of the best product are not competitors
        rows = np.arange(s)
        n_tied = n_tied - (counts[rows, idx[rows, best]].astype(np.int64) - 1)
    return {
        f"recall_{k}": np.where(above >= k, 0.0, np.minimum(k - above, n_tied) / n_tied) for k in ks
    }
