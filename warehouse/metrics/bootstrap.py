"""BCa bootstrap confidence intervals of the TasteBench metrics (docs/benchmark.md section 4).

Which variant this implements
-----------------------------
:func:`bca_ci` is the MAIN-TABLE procedure exactly as specified:

1. rows are put in canonical order: stable sort by (category, gold, prediction);
2. one ``numpy.random.default_rng(seed)`` (seed 42); draws go replicate by replicate and,
   inside a replicate, category by sorted category: ``idx = rng.integers(0, n_c, n_c)``
   (indices into that category's canonical rows); rows keep the drawn order inside a replicate
   (this decides Recall's "first row with the maximum gold"); duplicated products are gold ties;
3. jackknife: drop each product in turn from the whole set;
4. z0 = Phi^-1(share of replicates strictly below the observed value), the share clipped to
   [1e-10, 1 - 1e-10]; acceleration a = sum(d^3) / (6 (sum(d^2))^1.5) with d = mean(jack) - jack
   (a = 0 when the denominator is 0); levels Phi(z0 + (z0+z)/(1 - a(z0+z))) for
   z = Phi^-1(0.025), Phi^-1(0.975) (0.5 when 1 - a(z0+z) is ~0), clipped to [0, 1];
   bounds = ``numpy.percentile`` (linear interpolation) of the replicates.

With it the NNLS (BT + Gemini) pairwise-accuracy interval is [.653, .740] to three decimals, the
value docs/benchmark.md attributes to this procedure; the printed [.654, .740] came from a different
(unspecified) variant, and the .653 lower bound is within the issue's +/- .005 tolerance of it.

:func:`bca_ci_per_category` is the PER-CATEGORY variant: a fresh ``default_rng(seed)`` per
category drawing ``integers(0, n_c, (n_boot, n_c))`` at once, jackknife over that category's
products, z0 = Phi^-1(share below + 1/2 share equal) without clipping; otherwise as above.

Vectorization
-------------
The draws are produced in the specified order but without 240,000 small calls:
``Generator.integers(0, n, size)`` (int64, ``n <= 2**32``) maps each successive 32-bit output of
the bit generator through Lemire's bounded method (``m = u * n``; accept unless
``m mod 2**32 < 2**32 mod n``; value ``m >> 32``). :func:`draw_main_indices` pulls the same
32-bit stream in one call (``integers(0, 2**32, dtype=uint32)``) and applies Lemire's map with the
per-position bound, honouring rejections exactly (they shift the stream by one). A cheap
self-check against the literal loop guards the shortcut; ``method="loop"`` runs the literal loop.
All replicate metrics are then computed in array form (no Python loop over replicates), per
category from the ``(n_boot, n_c)`` multiplicity matrix of the draws (see :func:`sample_stats`):
pairwise credit, Kendall tau-b and average ranks (for Spearman) as exact quadratic forms /
matrix products, Recall@k from the drawn ``(n_boot, n_c)`` matrices with a row-wise argmax. Pairwise
accuracy, Recall@k and per-category Spearman/Kendall equal the per-replicate scipy values bit for
bit (tests check it); the n_c-weighted averages agree to ~1e-16.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Sequence

import numpy as np
import polars as pl

from .copyfree import spearman_distinct
from .core import (
    RECALL_KS,
    TABLE2_METRICS,
    Grouped,
    as_category_array,
    canonical_order,
    group_by_category,
)
from .samplestats import credit_stats, empty_stats, kendall_stats, recall_stats, spearman_tie_stats

BOOT_METRICS = TABLE2_METRICS
"""Metrics with a main-table BCa interval (the Table-2 columns)."""

RESAMPLE_METRICS = (*BOOT_METRICS, "pairwise_accuracy_macro")
"""Metrics the replicate engine can resample (macro: unweighted mean of category accuracies)."""

SHARE_CLIP = 1e-10
_MASK32 = np.uint64(0xFFFFFFFF)
_TWO32 = np.uint64(1 << 32)


# --------------------------------------------------------------------------- random draws


def lemire_draws(rng: np.random.Generator, bounds: np.ndarray) -> np.ndarray:
    """Values that successive ``rng.integers(0, bounds[i], 1)`` calls would return, in one go.

    ``bounds`` are positive integers below 2**32. Exact for numpy's ``Generator.integers``
    (Lemire's bounded method on the 32-bit stream, which is what numpy uses for these bounds);
    rejections, vanishingly rare for small bounds, are replayed exactly. A bound of 1 returns 0
    without consuming randomness, as numpy does.
    """
    b_all = np.asarray(bounds, dtype=np.uint64)
    if b_all.size and (b_all.min() < 1 or b_all.max() >= (1 << 32)):
        raise ValueError("bounds must lie in [1, 2**32)")
    out_all = np.zeros(b_all.size, dtype=np.int64)
    live = b_all > 1
    b = b_all[live]
    n = b.size
    out = np.empty(n, dtype=np.int64)
    u = rng.integers(0, 1 << 32, n + 64, dtype=np.uint32).astype(np.uint64)
    pos = upos = 0
    while pos < n:
        need = n - pos
        if len(u) - upos < need:
            more = rng.integers(0, 1 << 32, need + 64, dtype=np.uint32).astype(np.uint64)
            u = np.concatenate([u[upos:], more])
            upos = 0
        seg_b = b[pos:]
        m = u[upos : upos + need] * seg_b
        low = m & _MASK32
        cand = np.flatnonzero(low < seg_b)
        rejected = cand[low[cand] < (_TWO32 % seg_b[cand])]
        if rejected.size == 0:
            out[pos:] = (m >> np.uint64(32)).astype(np.int64)
            break
        r = int(rejected[0])
        out[pos : pos + r] = (m[:r] >> np.uint64(32)).astype(np.int64)
        pos += r
        upos += r + 1  # the rejected 32-bit value is skipped; draw `pos` is retried
    out_all[live] = out
    return out_all


def _draw_loop(sizes: Sequence[int], n_boot: int, seed: int) -> list[np.ndarray]:
    """The literal specification: per replicate, per sorted category, ``integers(0, n_c, n_c)``."""
    rng = np.random.default_rng(seed)
    out = [np.empty((n_boot, n), dtype=np.int64) for n in sizes]
    for b in range(n_boot):
        for c, n in enumerate(sizes):
            out[c][b] = rng.integers(0, n, n)
    return out


def _draw_fast(sizes: Sequence[int], n_boot: int, seed: int) -> list[np.ndarray]:
    sz = np.asarray(sizes, dtype=np.int64)
    per = int(sz.sum())
    bounds = np.tile(np.repeat(sz, sz), n_boot)
    vals = lemire_draws(np.random.default_rng(seed), bounds).reshape(n_boot, per)
    edges = np.concatenate([[0], np.cumsum(sz)])
    return [np.ascontiguousarray(vals[:, edges[c] : edges[c + 1]]) for c in range(len(sz))]


@functools.lru_cache(maxsize=4)
def _draw_cached(sizes: tuple[int, ...], n_boot: int, seed: int, method: str) -> tuple:
    if method == "loop":
        draws = _draw_loop(sizes, n_boot, seed)
    else:
        draws = _draw_fast(sizes, n_boot, seed)
        if method == "auto":
            check = min(n_boot, 16)
            ref = _draw_loop(sizes, check, seed)
            if not all(np.array_equal(d[:check], r) for d, r in zip(draws, ref, strict=True)):
                warnings.warn(
                    "numpy's integers() stream differs from the Lemire shortcut; "
                    "falling back to the literal draw loop",
                    RuntimeWarning,
                    stacklevel=3,
                )
                draws = _draw_loop(sizes, n_boot, seed)
    for d in draws:
        d.setflags(write=False)
    return tuple(draws)


def draw_main_indices(
    sizes: Sequence[int], n_boot: int = 10000, seed: int = 42, method: str = "auto"
) -> list[np.ndarray]:
    """Main-table bootstrap indices: one ``(n_boot, n_c)`` array per category (sorted order).

    Identical to ``for b in range(n_boot): for c: rng.integers(0, n_c, n_c)`` with one
    ``default_rng(seed)``. ``method``: ``"auto"`` (fast path, verified on the first replicates
    against the literal loop), ``"fast"`` or ``"loop"``. Results are cached and read-only.
    """
    if method not in ("auto", "fast", "loop"):
        raise ValueError(f"unknown method {method!r}")
    return list(_draw_cached(tuple(int(s) for s in sizes), int(n_boot), int(seed), method))


# --------------------------------------------------------------------------- replicate engine


@functools.lru_cache(maxsize=1)
def _blas_controller() -> object | None:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # optional: only a speed concern
        return None
    return ThreadpoolController()


def single_thread_blas() -> contextlib.AbstractContextManager:
    """Limit BLAS to one thread (when ``threadpoolctl`` is importable).

    The replicate engine multiplies many tiny ``(n_boot, n_c) @ (n_c, n_c)`` matrices; threaded
    BLAS only adds synchronisation overhead there (3-5x slower on a busy 2-core machine).
    """
    ctl = _blas_controller()
    return ctl.limit(limits=1, user_api="blas") if ctl is not None else contextlib.nullcontext()


def sample_stats(
    g: np.ndarray,
    p: np.ndarray,
    idx: np.ndarray,
    metrics: Sequence[str] = BOOT_METRICS,
    copies: str = "tie",
) -> dict[str, np.ndarray]:
    """Per-sample statistics of one category for samples ``idx`` (shape ``(S, m)``).

    ``idx`` indexes ``g``/``p``; each row is one sample in its row order. Returns arrays of
    length S: ``credit`` and ``npairs`` (pairwise), ``rho`` and ``tau`` (NaN where undefined),
    ``recall_<k>``, and ``n`` (the sample size m, the Spearman/Kendall weight).

    Order-free statistics work on the per-row multiplicity matrix ``C`` (S x n_c): a sum over
    the sample's pairs a < b of ``F[idx_a, idx_b]`` equals ``(C^T F C - sum_a F[idx_a, idx_a])/2``.
    Pair credit (diagonal 0.5: a duplicated product is a gold tie), concordance signs and tie
    indicators are such ``F``; average ranks are ``C @ [x_j < x_i] + (C @ [x_j == x_i] + 1)/2``.
    All sums are exact in floating point (multiples of 1/4 far below 2**53), so Spearman
    (``numpy.corrcoef`` arithmetic on average ranks) and Kendall tau-b (scipy's
    ``cmd / sqrt(tot - xtie) / sqrt(tot - ytie)``) equal scipy's per-sample values bit for bit.

    ``copies`` says how two rows drawn from the SAME product (a with-replacement resample) are
    scored. ``"tie"`` (the published convention, above): they form an ordinary pair with a gold
    tie. ``"distinct"``: no statistic scores a pair of copies: pair credit sums over pairs of
    distinct products only (``sum_{i<j} c_i c_j F_ij`` over ``sum_{i<j} c_i c_j`` pairs);
    Kendall tau-b is unchanged (copies are tied on both sides, so tau-b already leaves them out
    of its numerator and of both denominators); Spearman by
    :func:`.copyfree.spearman_distinct`; Recall counts no copy of the best product as a
    competitor tied with it. On a sample without
    repeated products both conventions give the same values.
    """
    if copies not in ("tie", "distinct"):
        raise ValueError(f"copies must be 'tie' or 'distinct', got {copies!r}")
    idx = np.asarray(idx, dtype=np.intp)
    s, m = idx.shape
    n = len(g)
    out: dict[str, np.ndarray] = {"n": np.full(s, m, dtype=np.float64)}
    want = set(metrics)
    if m == 0:
        return empty_stats(out, s, want)
    flat = (idx + n * np.arange(s)[:, None]).ravel()
    counts = np.bincount(flat, minlength=s * n).reshape(s, n).astype(np.float64)
    tot = m * (m - 1) / 2
    dg = g[:, None] - g[None, :]
    dp = p[:, None] - p[None, :]
    if "pairwise_accuracy" in want or "pairwise_accuracy_macro" in want:
        out["credit"], out["npairs"] = credit_stats(counts, dg, dp, m, tot, copies)
    if "kendall_tau" in want or "spearman" in want:
        ce_g = counts @ (dg == 0).astype(np.float64)  # copies drawn with the same gold
        ce_p = counts @ (dp == 0).astype(np.float64)
    if "kendall_tau" in want:
        out["tau"] = kendall_stats(counts, dg, dp, ce_g, ce_p, m, tot)
    if "spearman" in want and copies == "distinct":
        out["rho"], out["rho_parts"] = spearman_distinct(counts, np.sign(dg), np.sign(dp), m)
    elif "spearman" in want:
        out["rho"] = spearman_tie_stats(counts, dg, dp, ce_g, ce_p, m)
    ks = [int(name.rsplit("_", 1)[1]) for name in want if name.startswith("recall_at_")]
    if ks:
        out.update(recall_stats(g, p, idx, counts, ks, copies))
    return out


def combine(per_cat: Sequence[dict[str, np.ndarray]], metrics: Sequence[str]) -> dict:
    """Aggregate per-category sample statistics (each array of length S) into metric values."""
    out: dict[str, np.ndarray] = {}

    def stack(key: str) -> np.ndarray:
        return np.stack([d[key] for d in per_cat], axis=1)

    if "pairwise_accuracy" in metrics:
        with np.errstate(invalid="ignore", divide="ignore"):
            out["pairwise_accuracy"] = stack("credit").sum(axis=1) / stack("npairs").sum(axis=1)
    for name, key in (("spearman", "rho"), ("kendall_tau", "tau")):
        if name in metrics:
            vals = stack(key)
            w = np.where(np.isnan(vals), 0.0, stack("n"))
            num = (np.where(np.isnan(vals), 0.0, vals) * w).sum(axis=1)
            den = w.sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                out[name] = np.where(den > 0, num / den, np.nan)
    for k in RECALL_KS:
        if f"recall_at_{k}" in metrics:
            vals = stack(f"recall_{k}")
            mean = np.nanmean if np.isnan(vals).any() else np.mean
            out[f"recall_at_{k}"] = mean(vals, axis=1)
    if "pairwise_accuracy_macro" in metrics:
        npairs = stack("npairs")
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = np.where(npairs > 0, stack("credit") / npairs, np.nan)
        out["pairwise_accuracy_macro"] = np.nanmean(acc, axis=1)
    return out


# --------------------------------------------------------------------------- BCa


def bca_interval(
    theta_hat: float,
    boot: np.ndarray,
    jack: np.ndarray,
    alpha: float = 0.05,
    z0_rule: str = "strict",
) -> tuple[float, float]:
    """BCa bounds from replicates and jackknife values.

    ``z0_rule="strict"`` (main table): z0 = Phi^-1(share of replicates < theta_hat), share
    clipped to [1e-10, 1-1e-10]. ``"midrank"`` (per-category table): Phi^-1(share below +
    half the share equal), not clipped: when every replicate lies on one side of
    ``theta_hat`` z0 is infinite and both levels are its limit (1 above, 0 below), so both
    bounds are the extreme replicate. NaN replicates (undefined statistic) are ignored.
    """
    from scipy import special

    boot = np.asarray(boot, dtype=np.float64)
    boot = boot[~np.isnan(boot)]
    jack = np.asarray(jack, dtype=np.float64)
    jack = jack[~np.isnan(jack)]
    if boot.size == 0 or np.isnan(theta_hat):
        return float("nan"), float("nan")
    below = np.mean(boot < theta_hat)
    if z0_rule == "strict":
        z0 = special.ndtri(np.clip(below, SHARE_CLIP, 1.0 - SHARE_CLIP))
    elif z0_rule == "midrank":
        z0 = special.ndtri(below + 0.5 * np.mean(boot == theta_hat))
    else:
        raise ValueError(f"unknown z0_rule {z0_rule!r}")
    acc = 0.0
    if jack.size:
        d = jack.mean() - jack
        den = 6.0 * (d**2).sum() ** 1.5
        acc = (d**3).sum() / den if den > 0 else 0.0
    z = special.ndtri(np.array([alpha / 2, 1 - alpha / 2]))
    zz = z0 + z
    with np.errstate(invalid="ignore"):  # infinite z0 (midrank rule) is handled below
        denom = 1.0 - acc * zz
    with np.errstate(invalid="ignore", divide="ignore"):
        levels = special.ndtr(z0 + zz / denom)
    levels = np.where(np.isclose(denom, 0.0), 0.5, levels)
    if np.isinf(z0):  # midrank rule, every replicate on one side: the limit, Phi(+-inf)
        levels = np.full(2, 1.0 if z0 > 0 else 0.0)
    levels = np.clip(levels, 0.0, 1.0)
    lo, hi = np.percentile(boot, 100.0 * levels)
    return float(lo), float(hi)


def _check_metrics(metrics: Sequence[str] | None) -> tuple[str, ...]:
    if metrics is None:
        return BOOT_METRICS
    bad = [m for m in metrics if m not in RESAMPLE_METRICS]
    if bad:
        raise ValueError(f"no bootstrap for {bad}; choose from {RESAMPLE_METRICS}")
    return tuple(metrics)


def bootstrap_replicates(
    category: object,
    gold: object,
    pred: object,
    n_boot: int = 10000,
    seed: int = 42,
    metrics: Sequence[str] | None = None,
    draw_method: str = "auto",
    copies: str = "tie",
) -> dict[str, dict[str, np.ndarray | float]]:
    """Observed value, bootstrap replicates and jackknife values of the main-table procedure.

    Returns ``{metric: {"theta": float, "boot": (n_boot,), "jack": (N,)}}``; the jackknife
    values follow the canonical row order. ``copies`` is passed to :func:`sample_stats` for the
    replicates (``"tie"``: the published convention); observed and jackknife values hold no
    repeated product and do not depend on it.
    """
    metrics = _check_metrics(metrics)
    order = canonical_order(category, gold, pred)
    cat = as_category_array(category)[order]
    grouped = group_by_category(
        cat, np.asarray(gold, dtype=float)[order], np.asarray(pred, dtype=float)[order]
    )
    sizes = [len(r) for r in grouped.rows]
    gcat = [grouped.gold[r] for r in grouped.rows]
    pcat = [grouped.pred[r] for r in grouped.rows]

    cats = list(zip(gcat, pcat, strict=True))
    full = [sample_stats(g, p, np.arange(len(g))[None, :], metrics) for g, p in cats]
    theta = {k: float(v[0]) for k, v in combine(full, metrics).items()}

    draws = draw_main_indices(sizes, n_boot, seed, method=draw_method)
    boot_stats = [
        sample_stats(g, p, idx, metrics, copies) for (g, p), idx in zip(cats, draws, strict=True)
    ]
    boot = combine(boot_stats, metrics)

    # Jackknife: product r of category c -> category c uses its leave-one-out statistics,
    # all other categories their full-sample statistics.
    n_total = int(sum(sizes))
    jack_cat = []
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    for c, (g, p, n) in enumerate(zip(gcat, pcat, sizes, strict=True)):
        loo_idx = np.array([np.delete(np.arange(n), i) for i in range(n)]).reshape(n, n - 1)
        loo = sample_stats(g, p, loo_idx, metrics)
        cols = {}
        for key, val in full[c].items():
            col = np.repeat(val, n_total).astype(np.float64)
            col[offsets[c] : offsets[c + 1]] = loo[key]
            cols[key] = col
        jack_cat.append(cols)
    jack = combine(jack_cat, metrics)
    return {m: {"theta": theta[m], "boot": boot[m], "jack": jack[m]} for m in metrics}


def bca_ci(
    category: object,
    gold: object,
    pred: object,
    n_boot: int = 10000,
    seed: int = 42,
    metrics: Sequence[str] | None = None,
    alpha: float = 0.05,
    draw_method: str = "auto",
) -> dict[str, tuple[float, float, float]]:
    """Main-table BCa intervals: ``{metric: (point, lo, hi)}`` for the six Table-2 metrics.

    ``point`` is the metric on the canonical order (equal to :func:`compute_all`'s value unless a
    category's maximum gold is tied, where Recall's "first row" follows the canonical order).
    """
    with single_thread_blas():
        reps = bootstrap_replicates(category, gold, pred, n_boot, seed, metrics, draw_method)
    out = {}
    for name, r in reps.items():
        lo, hi = bca_interval(r["theta"], r["boot"], r["jack"], alpha, "strict")
        out[name] = (r["theta"], lo, hi)
    return out


PER_CATEGORY_SCHEMA: dict[str, pl.DataType] = {
    "category": pl.String,
    "n_products": pl.Int64,
    "pairwise_accuracy": pl.Float64,
    "ci_lo": pl.Float64,
    "ci_hi": pl.Float64,
}
"""Columns of a per-category interval table (the interval methods add their own)."""


def bca_ci_per_category(
    category: object,
    gold: object,
    pred: object,
    n_boot: int = 10000,
    seed: int = 42,
    alpha: float = 0.05,
) -> pl.DataFrame:
    """Per-category BCa intervals of pairwise accuracy (published per-category table variant).

    Per sorted category: fresh ``default_rng(seed)``, ``integers(0, n_c, (n_boot, n_c))`` on the
    canonical rows, jackknife over the category's products, mid-rank z0 (not clipped).
    Returns columns ``category, n_products, pairwise_accuracy, ci_lo, ci_hi``.
    """
    order = canonical_order(category, gold, pred)
    grouped = group_by_category(
        as_category_array(category)[order],
        np.asarray(gold, dtype=float)[order],
        np.asarray(pred, dtype=float)[order],
    )
    metrics = ("pairwise_accuracy",)
    with single_thread_blas():
        rows = _per_category_rows(grouped, n_boot, seed, alpha, metrics)
    return pl.DataFrame(rows, schema=PER_CATEGORY_SCHEMA, orient="row")


def bca_macro_interval(
    category: np.ndarray, gold: np.ndarray, pred: np.ndarray, n_boot: int, seed: int, alpha: float
) -> tuple[float, float]:
    """BCa interval of MACRO pairwise accuracy on the main-table draws (documented variant).

    Same canonical order, same cached ``draw_main_indices`` draws and same whole-set jackknife as
    :func:`warehouse.metrics.bca_ci`; each replicate's macro value is the unweighted mean of its
    per-category pairwise accuracies (categories without pairs left out, as in ``compute_all``).
    """
    order = canonical_order(category, gold, pred)
    grouped = group_by_category(category[order], gold[order], pred[order])
    sizes = [len(r) for r in grouped.rows]
    draws = draw_main_indices(sizes, n_boot, seed)
    metrics = ("pairwise_accuracy",)
    full, boot, loo = [], [], []
    for rows, idx in zip(grouped.rows, draws, strict=True):
        g, p, n = grouped.gold[rows], grouped.pred[rows], len(rows)
        if n < 2:
            full.append(np.nan)
            boot.append(np.full(n_boot, np.nan))
            loo.append(np.full(n, np.nan))
            continue
        fs = sample_stats(g, p, np.arange(n)[None, :], metrics)
        full.append(float(fs["credit"][0] / fs["npairs"][0]))
        bs = sample_stats(g, p, idx, metrics)
        boot.append(bs["credit"] / bs["npairs"])
        loo_idx = np.array([np.delete(np.arange(n), i) for i in range(n)]).reshape(n, n - 1)
        js = sample_stats(g, p, loo_idx, metrics)
        with np.errstate(invalid="ignore", divide="ignore"):
            loo.append(np.where(js["npairs"] > 0, js["credit"] / js["npairs"], np.nan))
    full_arr = np.array(full)
    theta = float(np.nanmean(full_arr))
    boot_macro = np.nanmean(np.column_stack(boot), axis=1)
    jack = []
    for c, vals in enumerate(loo):
        for v in vals:
            cats = full_arr.copy()
            cats[c] = v
            jack.append(np.nanmean(cats) if np.isfinite(cats).any() else np.nan)
    return bca_interval(theta, boot_macro, np.array(jack), alpha, "strict")


def _per_category_rows(
    grouped: Grouped, n_boot: int, seed: int, alpha: float, metrics: tuple[str, ...]
) -> list[tuple]:
    rows = []
    for name, r in zip(grouped.names, grouped.rows, strict=True):
        g, p, n = grouped.gold[r], grouped.pred[r], len(r)
        if n < 2:
            rows.append((name, n, np.nan, np.nan, np.nan))
            continue
        full = sample_stats(g, p, np.arange(n)[None, :], metrics)
        theta = float(full["credit"][0] / full["npairs"][0])
        idx = np.random.default_rng(seed).integers(0, n, (n_boot, n))
        bs = sample_stats(g, p, idx, metrics)
        boot = bs["credit"] / bs["npairs"]
        if n >= 3:
            loo_idx = np.array([np.delete(np.arange(n), i) for i in range(n)])
            js = sample_stats(g, p, loo_idx, metrics)
            jack = js["credit"] / js["npairs"]
        else:
            jack = np.zeros(0)
        lo, hi = bca_interval(theta, boot, jack, alpha, "midrank")
        rows.append((name, n, theta, lo, hi))
    return rows
