"""Randomized (fuzzy) Clopper-Pearson interval of a hit count: ``category_randomized``.

Recall@k is the mean of K per-category values, each (for untied predictions) a hit, 1, or a
miss, 0; the hit count X of K categories is discrete, and no interval that is a function of X
alone can cover 93-97% at every accuracy level of the coverage study (docs/statistics.md,
"Recall@k: what an interval of the hit count can do"). The textbook answer to discreteness
(Stevens 1950; Geyer and Meeden 2005) adds an auxiliary uniform V to the count: X + V has a
continuous distribution, and the equal-tailed interval of a binomial(K, q) proportion built
on it has coverage exactly 1 - alpha for every q:

* lower bound L: the q with ``P_q(X > x) + (1 - V) P_q(X = x) = alpha / 2``;
* upper bound H: the q with ``P_q(X < x) + V P_q(X = x) = alpha / 2``

(both sides are monotone in q; brentq to 1e-14; closed forms at x = 0 and x = K). The
interval is then closed at the estimate: at x = 0 the lower bound is 0 and at x = K the upper
bound 1 (the exact bounds exclude the estimate with probability alpha / 2 there; closing them
only raises the coverage of a truth within 1 - 0.975^(1/K) of 0 or 1: 0.11% for K = 24).
At x = K with V >= 1 - alpha / 2 (probability alpha / 2) no q < 1 solves the lower equation:
the interval is [1, 1], flagged degenerate with that reason (the price of exactness near 1);
at x = 0 with V <= alpha / 2 likewise [0, 0].

**V is a deterministic function of the data** (:func:`auxiliary_stream`): a SHA-256 of the
metric name and of the scored rows (:func:`data_digest`: per sorted category its name, size,
and the within-category average ranks of gold and prediction as float64 in the canonical
order), with the seed, seeds ``numpy.random.default_rng``; its first ``random()`` is V. Same
input: same interval, byte for byte (row order, product codes, model name and source do not
enter, nor does any increasing transform of the gold or of the predictions: Recall@k depends on
the within-category orders only, so the release, which publishes a fit's gold as the
within-category rank instead of the panel mean, re-derives the same interval); a different
order: a different digest, so V is (pseudo-)independent of the data that produced it. The
known drawback: two prediction files with the same hit count get different intervals; the
interval is a valid 95% interval on average over V, not conditional on the count.

**Tied predictions.** A category whose best product is tied with others in the prediction
scores a fraction (``min(k - m, t) / t``, core.py): the chance that a uniformly random
tie-break puts the best product in the top k. The method draws that tie-break from the same
stream (``random(K) < value`` for the fractional categories, after V), so the count it uses is
an integer hit count whose expectation is the estimand; the interval is closed at the reported
(fractional) estimate if it does not contain it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

BRENTQ_XTOL = 1e-14


def average_ranks(a: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(a, method="average")`` of a 1-d float array, bit for bit (ranks of a
    run of equal values: the mean of its positions, an exact half-integer), without scipy's
    per-call overhead (~0.15 ms: :func:`data_digest` ranks every category of every file it
    hashes). An array with NaN goes to scipy (its NaN policy)."""
    from scipy.stats import rankdata

    a = np.asarray(a, dtype=np.float64)
    if a.ndim != 1 or np.isnan(a).any():
        return rankdata(a, method="average")
    order = np.argsort(a, kind="mergesort")
    s = a[order]
    bounds = np.flatnonzero(np.r_[True, s[1:] != s[:-1], True])  # run starts, then the end
    ranks = np.empty(len(a))
    ranks[order] = np.repeat(0.5 * (bounds[:-1] + bounds[1:] + 1), np.diff(bounds))
    return ranks


def data_digest(metric: str, names: Sequence[str], cats: Sequence[tuple[np.ndarray, ...]]) -> bytes:
    """SHA-256 of the metric name and the scored rows: per category (sorted), its name (UTF-8,
    NUL-terminated), its size (int64) and the within-category average ranks (exact ties) of its
    gold and of its predictions as little-endian float64, in the canonical row order
    (``cats[c] = (gold, pred)`` of category ``names[c]``). Ranks, not values: invariant to any
    increasing transform of either, as Recall@k is."""
    h = hashlib.sha256()
    h.update(metric.encode("utf-8") + b"\0")
    for name, arrays in zip(names, cats, strict=True):
        h.update(str(name).encode("utf-8") + b"\0")
        h.update(np.int64(len(arrays[0])).tobytes())
        for a in arrays:
            ranks = average_ranks(a)
            h.update(np.ascontiguousarray(ranks, dtype="<f8").tobytes())
    return h.digest()


def auxiliary_stream(seed: int, digest: bytes) -> np.random.Generator:
    """``default_rng(SeedSequence([seed, d0, ..., d7]))``: d = the digest as 8 uint32 words."""
    words = np.frombuffer(digest, dtype="<u4").tolist()
    return np.random.default_rng(np.random.SeedSequence([int(seed), *words]))


def _root(f) -> float:
    """The root of ``f`` in [0, 1] (a bound's defining equation; it changes sign there)."""
    from scipy import optimize

    return optimize.brentq(f, 0.0, 1.0, xtol=BRENTQ_XTOL)


def fuzzy_bounds(x: int, k: int, v: float, alpha: float = 0.05) -> tuple[float, float]:
    """Stevens' randomized equal-tailed bounds of a binomial(k, q) proportion at count x and
    auxiliary v in [0, 1), closed at the estimate x / k (module docstring)."""
    from scipy import special

    if not 0 <= x <= k or k < 1:
        raise ValueError(f"hit count {x} outside 0..{k}")
    a2 = alpha / 2

    if x == 0:
        lo = 0.0
    elif x == k:
        lo = 1.0 if 1.0 - v <= a2 else float((a2 / (1.0 - v)) ** (1.0 / k))
    else:
        # P(X > x) + (1 - v) P(X = x) = (1 - v) P(X >= x) + v P(X > x)
        lo = _root(lambda q: (1 - v) * special.bdtrc(x - 1, k, q) + v * special.bdtrc(x, k, q) - a2)
    if x == k:
        hi = 1.0
    elif x == 0:
        hi = 0.0 if v <= a2 else float(1.0 - (a2 / v) ** (1.0 / k))
    else:
        # P(X < x) + v P(X = x) = (1 - v) P(X <= x - 1) + v P(X <= x)
        hi = _root(lambda q: (1 - v) * special.bdtr(x - 1, k, q) + v * special.bdtr(x, k, q) - a2)
    return float(lo), float(hi)


def fuzzy_cover_probability(x: np.ndarray, k: int, q: float, alpha: float = 0.05) -> np.ndarray:
    """P_V(q in the closed interval of count x), V ~ U(0, 1), for each count in ``x``.

    ``q >= L(x, V)`` exactly when ``V <= (P_q(X >= x) - alpha/2) / P_q(X = x)`` and
    ``q <= H(x, V)`` exactly when ``V >= (alpha/2 - P_q(X < x)) / P_q(X = x)`` (binomial(k, q)),
    so the probability is the length of that range of V within [0, 1]; the closing at x = 0
    and x = K drops the lower (upper) condition. Under X ~ binomial(k, q) the counts' mean of
    this is 1 - alpha (what :func:`fuzzy_bounds` is built for).
    """
    from scipy import stats as sps

    x = np.asarray(x, dtype=np.int64)
    px = sps.binom.pmf(x, k, q)
    with np.errstate(divide="ignore", invalid="ignore"):
        upper_v = np.where(px > 0, (sps.binom.sf(x - 1, k, q) - alpha / 2) / px, -np.inf)
        lower_v = np.where(px > 0, (alpha / 2 - sps.binom.cdf(x - 1, k, q)) / px, np.inf)
    upper_v = np.where(x == 0, np.inf, upper_v)
    lower_v = np.where(x == k, -np.inf, lower_v)
    return np.clip(np.minimum(upper_v, 1.0) - np.maximum(lower_v, 0.0), 0.0, 1.0)


def randomized_interval(
    values: np.ndarray, digest: bytes, seed: int, alpha: float = 0.05
) -> tuple[float, float, bool, str]:
    """``(lo, hi, is_degenerate, note)`` of the mean of per-category values in [0, 1].

    V and the tie-break of fractional values come from :func:`auxiliary_stream`.
    """
    vals = np.asarray(values, dtype=np.float64)
    k = vals.size
    point = float(vals.mean())
    rng = auxiliary_stream(seed, digest)
    v = float(rng.random())
    ties = rng.random(k)
    fractional = (vals > 0) & (vals < 1)
    hits = np.where(fractional, ties < vals, vals >= 1)
    x = int(hits.sum())
    lo, hi = fuzzy_bounds(x, k, v, alpha)
    notes = []
    if fractional.any():
        notes.append(
            f"{int(fractional.sum())} categories with tied predictions at the best product: "
            f"their hits drawn by a random tie-break ({x} of {k} hits)"
        )
    if not lo <= point <= hi:
        lo, hi = min(lo, point), max(hi, point)
        notes.append("interval closed at the estimate")
    degenerate = lo == hi
    if degenerate:
        side = "all categories hit" if x == k else "no category hits"
        notes.append(
            f"randomized interval of zero width: {side} and the auxiliary uniform fell in the "
            f"outer alpha/2 (V = {v:.4f}; probability alpha/2 at this count)"
        )
    return float(lo), float(hi), degenerate, "; ".join(notes)
