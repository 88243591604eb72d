"""Named confidence-interval methods for the TasteBench metrics (docs/statistics.md).

The estimand of every interval: the metric's expected value when the same categories are
filled with NEW products of the same sizes (for pairwise accuracy: the probability that the
predictor orders two new products of a category as the gold does, ties worth 1/2, averaged
over categories with weights C(n_c, 2); for Kendall, the concordance difference; for
Spearman, Recall@k and macro accuracy, the expected value of the statistic). Categories are
fixed; products are the sampling unit.

Methods
-------
``published_bca``
    The published convention, bit for bit: :func:`.bootstrap.bca_ci` (main table, six
    Table-2 metrics) and :func:`.bootstrap.bca_ci_per_category`; macro accuracy by the
    warehouse's documented variant (same draws and whole-set jackknife, replicate = mean of
    the replicate's category accuracies, strict z0). A resample that draws a
    product twice scores the copy pair as a gold tie (credit 1/2), which pulls replicates toward
    chance; with BCa's bias correction the interval can exclude its own estimate.
``ustat_t``
    Per category, the unbiased variance of the metric's U-statistic from leave-one-, -two-
    (and -three-) out subsets (:mod:`.ustat`); categories are independent, so the variances
    add with the squared category weights. Interval: estimate +/- t_{K-1, 1-alpha/2} x SE on
    the logit scale (accuracies) or the Fisher-z scale (correlations), K = categories that
    carry weight. When the unbiased total is <= 0 the (larger) jackknife variance is used and
    noted; when that is 0 too (e.g. a perfect predictor) the interval is the point itself and
    is flagged degenerate.
``ustat_satt``
    Spearman only: the ``ustat_t`` variance, interval and fallbacks, but the t quantile's degrees
    of freedom are Satterthwaite's ``2 (sum x_c)^2 / (K s_x^2)`` (at most K - 1, at least 1),
    ``x_c`` the K category contributions ``w_c^2 v_c`` to the variance and ``s_x^2`` their
    sample variance. Spearman's unbiased variance is partly degree 3 and very noisy at high
    accuracy (a few categories with a discordance carry it); the spread of the contributions
    measures that noise, so the interval widens exactly when the variance rests on few
    categories. Never narrower than ``ustat_t``'s.
``category_jeffreys`` / ``category_wilson``
    Recall@k only: the per-category values (independent, in [0, 1]; their mean has variance at
    most p(1-p)/K) and a binomial interval with n = K categories and x = K p successes:
    Jeffreys (equal-tailed Beta(x + 1/2, K - x + 1/2) quantiles, lower bound 0 at x = 0 and
    upper bound 1 at x = K) or Wilson's score interval. Both contain the estimate (a clamp
    undoes rounding at the ends).
``category_randomized``
    Recall@k only: Stevens' randomized (fuzzy) Clopper-Pearson interval of the hit count, exact
    95% under a binomial model, its auxiliary uniform a deterministic function of the seed and
    a SHA-256 of the metric and the scored rows (:mod:`.randomized`).
``distinct_percentile`` / ``distinct_bca``
    The main-table product bootstrap (same draws as ``published_bca``) scoring no pair of
    copies of one product (:func:`.bootstrap.sample_stats` with ``copies="distinct"``);
    percentile interval, or BCa with the mid-rank z0 and the product jackknife.
``category_percentile``
    Categories resampled with replacement (one ``default_rng(seed)``,
    ``integers(0, K, (n_boot, K))``), percentile interval: an interval for NEW categories,
    conservative for the fixed-category estimand.

``DEFAULT_CI_METHODS`` names the default per metric; ``benchmarks/ci_coverage.py`` measured
the choice (coverage table in docs/statistics.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from .bootstrap import (
    BOOT_METRICS,
    PER_CATEGORY_SCHEMA,
    RESAMPLE_METRICS,
    bca_ci,
    bca_ci_per_category,
    bca_interval,
    bca_macro_interval,
    bootstrap_replicates,
    combine,
    sample_stats,
    single_thread_blas,
)
from .core import RECALL_KS, Grouped, as_category_array, canonical_order, group_by_category
from .randomized import data_digest, randomized_interval
from .ustat import CategoryVariance, category_variance

RECALL_METRICS = tuple(f"recall_at_{k}" for k in RECALL_KS)
INTERVAL_METRICS = RESAMPLE_METRICS
"""Metrics with intervals: the six Table-2 metrics and macro pairwise accuracy."""

METHOD_METRICS: dict[str, tuple[str, ...]] = {
    "published_bca": RESAMPLE_METRICS,
    "ustat_t": ("pairwise_accuracy", "spearman", "kendall_tau", "pairwise_accuracy_macro"),
    "ustat_satt": ("spearman",),
    "category_jeffreys": RECALL_METRICS,
    "category_wilson": RECALL_METRICS,
    "category_randomized": RECALL_METRICS,
    "distinct_percentile": RESAMPLE_METRICS,
    "distinct_bca": RESAMPLE_METRICS,
    "category_percentile": RESAMPLE_METRICS,
}
"""Interval methods and the metrics each one covers."""

CI_METHODS = tuple(METHOD_METRICS)

DEFAULT_CI_METHODS: dict[str, str] = {
    "pairwise_accuracy": "ustat_t",
    "spearman": "ustat_satt",
    "kendall_tau": "ustat_t",
    "recall_at_1": "category_randomized",
    "recall_at_2": "category_randomized",
    "recall_at_3": "category_randomized",
    "pairwise_accuracy_macro": "ustat_t",
}
"""The default method per metric (chosen by the coverage study, docs/statistics.md)."""

DEFAULT_PER_CATEGORY_METHOD = "distinct_percentile"
"""Default method of per-category pairwise-accuracy intervals."""

_LOGIT = ("pairwise_accuracy", "pairwise_accuracy_macro")


@dataclass(frozen=True)
class Interval:
    """One interval: ``lo <= point <= hi`` unless the method says otherwise (percentile
    intervals need not contain the point). ``is_degenerate`` marks a zero-width interval that
    carries no sampling information; ``note`` says why, or what fallback was used."""

    metric: str
    ci_method: str
    point: float
    lo: float
    hi: float
    is_degenerate: bool = False
    note: str = ""


def resolve_methods(methods: str | Sequence[str], metrics: Sequence[str]) -> list[tuple[str, str]]:
    """``(metric, method)`` pairs; ``"default"`` maps each metric to its default method.

    A named method is applied to the metrics it covers (``METHOD_METRICS``); asking for a
    method that covers none of ``metrics`` raises.
    """
    methods = [methods] if isinstance(methods, str) else list(methods)
    out = []
    for method in methods:
        if method == "default":
            out.extend((m, DEFAULT_CI_METHODS[m]) for m in metrics)
            continue
        if method not in METHOD_METRICS:
            raise ValueError(f"unknown interval method {method!r}; choose from {CI_METHODS}")
        covered = [m for m in metrics if m in METHOD_METRICS[method]]
        if not covered:
            raise ValueError(f"method {method!r} covers none of {list(metrics)}")
        out.extend((m, method) for m in covered)
    return list(dict.fromkeys(out))


class _Data:
    """Canonically ordered inputs and lazily computed shared pieces."""

    def __init__(self, category: object, gold: object, pred: object) -> None:
        self.raw = (category, gold, pred)
        order = canonical_order(category, gold, pred)
        self.grouped: Grouped = group_by_category(
            as_category_array(category)[order],
            np.asarray(gold, dtype=float)[order],
            np.asarray(pred, dtype=float)[order],
        )
        self.cats = [(self.grouped.gold[r], self.grouped.pred[r]) for r in self.grouped.rows]
        self.sizes = np.array([len(g) for g, _ in self.cats], dtype=np.int64)
        self.full = [
            sample_stats(g, p, np.arange(len(g))[None, :], RESAMPLE_METRICS) for g, p in self.cats
        ]
        self.theta = {k: float(v[0]) for k, v in combine(self.full, RESAMPLE_METRICS).items()}
        self._variances: dict[tuple[str, int], CategoryVariance] = {}

    def category_variance(self, base: str, c: int) -> CategoryVariance:
        """:func:`.ustat.category_variance` of category ``c`` (computed once per metric)."""
        if (base, c) not in self._variances:
            self._variances[base, c] = category_variance(*self.cats[c], base)
        return self._variances[base, c]

    def per_category(self, key: str) -> np.ndarray:
        return np.array([d[key][0] for d in self.full], dtype=np.float64)


def _degenerate(metric: str, method: str, point: float, why: str) -> Interval:
    return Interval(metric, method, point, point, point, True, why)


def _scaled_interval(
    metric: str,
    point: float,
    var: float,
    df: float,
    alpha: float,
    notes: list[str],
    method: str = "ustat_t",
) -> Interval:
    """Estimate +/- t_df x SE on the logit (accuracy) or Fisher-z (correlation) scale."""
    from scipy import special
    from scipy import stats as sps

    q = float(sps.t.ppf(1 - alpha / 2, max(df, 1)))
    se = float(np.sqrt(var))
    lo_b, hi_b = (0.0, 1.0) if metric in _LOGIT else (-1.0, 1.0)
    if point <= lo_b or point >= hi_b:
        lo, hi = max(lo_b, point - q * se), min(hi_b, point + q * se)
        notes.append("estimate on the boundary: interval on the raw scale")
    elif metric in _LOGIT:
        centre, half = special.logit(point), q * se / (point * (1 - point))
        lo, hi = special.expit(centre - half), special.expit(centre + half)
    else:
        centre, half = np.arctanh(point), q * se / (1 - point * point)
        lo, hi = np.tanh(centre - half), np.tanh(centre + half)
    return Interval(metric, method, point, float(lo), float(hi), False, "; ".join(notes))


_NO_VARIABILITY = (
    "no variability: every leave-one-out subset scores the same (e.g. a perfect predictor)"
)


VAR_EPS = 1e-20
"""Variances at or below this (a standard error of 1e-10, rounding of values that are equal)
count as zero."""


def _choose_variance(unbiased: float, jackknife: float, notes: list[str]) -> float | None:
    """The unbiased variance; the jackknife one when that is <= 0; None when both are (both
    compared with :data:`VAR_EPS`)."""
    if unbiased > VAR_EPS:
        return unbiased
    if jackknife > VAR_EPS:
        notes.append(f"unbiased variance {unbiased:.3g} <= 0: jackknife variance used")
        return jackknife
    return None


def satterthwaite_df(contributions: np.ndarray, cap: float) -> float:
    """Satterthwaite degrees of freedom of a variance summed from K independent contributions.

    ``2 (sum x)^2 / Var(sum x)`` with ``Var(sum x)`` estimated by ``K s^2`` (``s^2``: the
    sample variance of the contributions, treated as exchangeable; differences in their means
    only inflate it, which lowers the df: conservative). Clipped to ``[1, cap]``; ``cap`` when
    there are fewer than two contributions or they are all equal.
    """
    x = np.asarray(contributions, dtype=np.float64)
    if x.size < 2:
        return float(cap)
    s2 = float(np.var(x, ddof=1))
    if s2 <= 0:
        return float(cap)
    return float(min(cap, max(1.0, 2.0 * x.sum() ** 2 / (x.size * s2))))


def _ustat(data: _Data, metric: str, alpha: float, method: str = "ustat_t") -> Interval:
    point = data.theta[metric]
    base = "pairwise_accuracy" if metric == "pairwise_accuracy_macro" else metric
    npairs = data.per_category("npairs")
    if metric == "pairwise_accuracy":
        w = npairs / npairs.sum()
    elif metric == "pairwise_accuracy_macro":
        w = np.where(npairs > 0, 1.0, 0.0) / (npairs > 0).sum()
    else:
        defined = ~np.isnan(data.per_category("rho" if metric == "spearman" else "tau"))
        w = np.where(defined, data.sizes, 0) / data.sizes[defined].sum()
    notes: list[str] = []
    parts_u, parts_j = [], []
    for c in range(len(data.cats)):
        if w[c] == 0:
            continue
        cv = data.category_variance(base, c)
        if cv.note:
            notes.append(f"{data.grouped.names[c]}: {cv.note}")
        jack = float(np.nan_to_num(cv.jackknife))
        parts_u.append(w[c] ** 2 * (cv.unbiased if np.isfinite(cv.unbiased) else jack))
        parts_j.append(w[c] ** 2 * jack)
    # summed in category order from 0.0, as ustat_t always has (its values stay bit for bit)
    unbiased, jackknife = float(sum(parts_u, 0.0)), float(sum(parts_j, 0.0))
    var = _choose_variance(unbiased, jackknife, notes)
    if var is None:
        return _degenerate(metric, method, point, _NO_VARIABILITY)
    df: float = int((w > 0).sum()) - 1
    if method == "ustat_satt":
        parts = parts_u if var == unbiased else parts_j
        df_eff = satterthwaite_df(np.array(parts), df)
        if df_eff < df:
            notes.append(f"t with {df_eff:.1f} Satterthwaite df")
        df = df_eff
    return _scaled_interval(metric, point, var, df, alpha, notes, method)


def _recall_binomial(data: _Data, metric: str, alpha: float, method: str) -> Interval:
    """Jeffreys or Wilson interval of the mean of the K per-category Recall values."""
    from scipy import special
    from scipy import stats as sps

    vals = data.per_category(f"recall_{metric.rsplit('_', 1)[1]}")
    k = len(vals)
    p = float(vals.mean())
    if method == "category_jeffreys":
        x = k * p
        a, b = x + 0.5, k - x + 0.5
        lo = 0.0 if x < 1e-9 else float(sps.beta.ppf(alpha / 2, a, b))
        hi = 1.0 if x > k - 1e-9 else float(sps.beta.ppf(1 - alpha / 2, a, b))
    else:
        z = float(special.ndtri(1 - alpha / 2))
        den = 1 + z * z / k
        centre = (p + z * z / (2 * k)) / den
        half = z * np.sqrt(p * (1 - p) / k + z * z / (4 * k * k)) / den
        lo, hi = max(0.0, centre - half), min(1.0, centre + half)
    # both intervals contain p; the clamps only undo rounding at p = 0 or 1
    return Interval(metric, method, data.theta[metric], float(min(p, lo)), float(max(p, hi)))


def _recall_randomized(data: _Data, metric: str, alpha: float, seed: int) -> Interval:
    """Randomized Clopper-Pearson interval of the mean of the K per-category Recall values."""
    vals = data.per_category(f"recall_{metric.rsplit('_', 1)[1]}")
    digest = data_digest(metric, data.grouped.names, data.cats)
    lo, hi, degenerate, note = randomized_interval(vals, digest, seed, alpha)
    method = "category_randomized"
    return Interval(metric, method, data.theta[metric], lo, hi, degenerate, note)


def _from_replicates(
    metric: str, method: str, point: float, boot: np.ndarray, interval: tuple[float, float]
) -> Interval:
    finite = boot[~np.isnan(boot)]
    notes = []
    if finite.size < boot.size:
        notes.append(f"{boot.size - finite.size} of {boot.size} replicates undefined, left out")
    lo, hi = interval
    if not lo <= point <= hi:
        notes.append("the estimate lies outside the interval")
    if finite.size and np.ptp(finite) == 0:
        return Interval(
            metric,
            method,
            point,
            *interval,
            True,
            "; ".join([*notes, "all replicates equal (e.g. a perfect predictor)"]),
        )
    return Interval(metric, method, point, *interval, False, "; ".join(notes))


def _category_replicates(data: _Data, metrics: Sequence[str], n_boot: int, seed: int) -> dict:
    """Metric replicates with categories resampled: weights = multiplicities of the draws."""
    k = len(data.cats)
    idx = np.random.default_rng(seed).integers(0, k, (n_boot, k))
    mult = np.bincount((idx + k * np.arange(n_boot)[:, None]).ravel(), minlength=n_boot * k)
    mult = mult.reshape(n_boot, k).astype(np.float64)
    out = {}
    credit, npairs = data.per_category("credit"), data.per_category("npairs")
    with np.errstate(invalid="ignore", divide="ignore"):
        for m in metrics:
            if m == "pairwise_accuracy":
                out[m] = (mult @ credit) / (mult @ npairs)
            elif m in ("spearman", "kendall_tau"):
                v = data.per_category("rho" if m == "spearman" else "tau")
                w = mult * np.where(np.isnan(v), 0.0, data.sizes)
                out[m] = (w @ np.nan_to_num(v)) / w.sum(axis=1)
            else:
                if m == "pairwise_accuracy_macro":
                    v = np.where(npairs > 0, credit / np.where(npairs > 0, npairs, 1), np.nan)
                else:
                    v = data.per_category(f"recall_{m.rsplit('_', 1)[1]}")
                w = mult * ~np.isnan(v)
                out[m] = (w @ np.nan_to_num(v)) / w.sum(axis=1)
    return out


def metric_intervals(
    category: object,
    gold: object,
    pred: object,
    methods: str | Sequence[str] = "default",
    metrics: Sequence[str] | None = None,
    n_boot: int = 10000,
    seed: int = 42,
    alpha: float = 0.05,
    draw_method: str = "auto",
) -> list[Interval]:
    """Intervals of ``metrics`` (default: all of :data:`INTERVAL_METRICS`) by ``methods``.

    ``methods``: ``"default"`` (:data:`DEFAULT_CI_METHODS`), a method name, or a list of both;
    a named method is applied to the metrics it covers. Replicate-based methods share draws:
    ``published_bca``, ``distinct_*`` use the main-table stream (``seed``), and
    ``category_percentile`` its own ``default_rng(seed)``. Points are computed on the canonical
    row order (as :func:`.bootstrap.bca_ci`). Returns one :class:`Interval` per pair, in the
    order of ``methods`` then ``metrics``.
    """
    metrics = tuple(INTERVAL_METRICS if metrics is None else metrics)
    bad = [m for m in metrics if m not in INTERVAL_METRICS]
    if bad:
        raise ValueError(f"no interval for {bad}; choose from {INTERVAL_METRICS}")
    pairs = resolve_methods(methods, metrics)
    data = _Data(category, gold, pred)
    wanted = {meth: [m for m, mm in pairs if mm == meth] for _, meth in pairs}
    done: dict[tuple[str, str], Interval] = {}
    with single_thread_blas():
        if "published_bca" in wanted:
            done.update(
                _published_intervals(
                    data, wanted["published_bca"], n_boot, seed, alpha, draw_method
                )
            )
        done.update(_distinct_intervals(data, wanted, n_boot, seed, alpha, draw_method))
        if "category_percentile" in wanted:
            reps = _category_replicates(data, wanted["category_percentile"], n_boot, seed)
            for m, boot in reps.items():
                lo, hi = np.nanpercentile(boot, [50 * alpha, 100 - 50 * alpha])
                done[m, "category_percentile"] = _from_replicates(
                    m, "category_percentile", data.theta[m], boot, (float(lo), float(hi))
                )
        for method in ("ustat_t", "ustat_satt"):
            for m in wanted.get(method, []):
                done[m, method] = _ustat(data, m, alpha, method)
        for method in ("category_jeffreys", "category_wilson"):
            for m in wanted.get(method, []):
                done[m, method] = _recall_binomial(data, m, alpha, method)
        for m in wanted.get("category_randomized", []):
            done[m, "category_randomized"] = _recall_randomized(data, m, alpha, seed)
    return [done[m, meth] for m, meth in pairs]


def _published_intervals(
    data: _Data, metrics: Sequence[str], n_boot: int, seed: int, alpha: float, draw_method: str
) -> dict[tuple[str, str], Interval]:
    """``published_bca`` intervals of :func:`metric_intervals`: main-table BCa for the Table-2
    metrics, the same draws for the macro accuracy."""
    done: dict[tuple[str, str], Interval] = {}
    table2 = [m for m in metrics if m in BOOT_METRICS]
    if table2:
        ci = bca_ci(*data.raw, n_boot, seed, table2, alpha, draw_method)
        for m, (pt, lo, hi) in ci.items():
            done[m, "published_bca"] = Interval(m, "published_bca", pt, lo, hi)
    if "pairwise_accuracy_macro" in metrics:
        m = "pairwise_accuracy_macro"
        cat, gold, pred = (np.asarray(x) for x in data.raw)
        lo, hi = bca_macro_interval(
            as_category_array(cat),
            gold.astype(float),
            pred.astype(float),
            n_boot,
            seed,
            alpha,
        )
        done[m, "published_bca"] = Interval(m, "published_bca", data.theta[m], lo, hi)
    return done


def _distinct_intervals(
    data: _Data,
    wanted: dict[str, list[str]],
    n_boot: int,
    seed: int,
    alpha: float,
    draw_method: str,
) -> dict[tuple[str, str], Interval]:
    """``distinct_percentile`` and ``distinct_bca`` intervals of :func:`metric_intervals` (one
    set of copy-free replicates on the main-table stream)."""
    done: dict[tuple[str, str], Interval] = {}
    distinct = [m for meth in ("distinct_percentile", "distinct_bca") for m in wanted.get(meth, [])]
    if not distinct:
        return done
    reps = bootstrap_replicates(
        *data.raw, n_boot, seed, list(dict.fromkeys(distinct)), draw_method, "distinct"
    )
    for m in wanted.get("distinct_percentile", []):
        r = reps[m]
        lo, hi = np.nanpercentile(r["boot"], [50 * alpha, 100 - 50 * alpha])
        done[m, "distinct_percentile"] = _from_replicates(
            m, "distinct_percentile", r["theta"], r["boot"], (float(lo), float(hi))
        )
    for m in wanted.get("distinct_bca", []):
        r = reps[m]
        bounds = bca_interval(r["theta"], r["boot"], r["jack"], alpha, "midrank")
        done[m, "distinct_bca"] = _from_replicates(m, "distinct_bca", r["theta"], r["boot"], bounds)
    return done


def interval_table(intervals: Sequence[Interval]) -> pl.DataFrame:
    """Intervals as a frame: ``metric, ci_method, point, ci_lo, ci_hi, is_degenerate, ci_note``."""
    rows = [asdict(i) for i in intervals]
    return pl.DataFrame(
        {
            "metric": [r["metric"] for r in rows],
            "ci_method": [r["ci_method"] for r in rows],
            "point": [r["point"] for r in rows],
            "ci_lo": [r["lo"] for r in rows],
            "ci_hi": [r["hi"] for r in rows],
            "is_degenerate": [r["is_degenerate"] for r in rows],
            "ci_note": [r["note"] for r in rows],
        },
        schema={
            "metric": pl.String,
            "ci_method": pl.String,
            "point": pl.Float64,
            "ci_lo": pl.Float64,
            "ci_hi": pl.Float64,
            "is_degenerate": pl.Boolean,
            "ci_note": pl.String,
        },
    )


PER_CATEGORY_METHODS = ("published_bca", "ustat_t", "distinct_percentile")
"""Methods of per-category pairwise-accuracy intervals."""


def per_category_intervals(
    category: object,
    gold: object,
    pred: object,
    method: str = "default",
    n_boot: int = 10000,
    seed: int = 42,
    alpha: float = 0.05,
) -> pl.DataFrame:
    """Per-category pairwise-accuracy intervals, one row per sorted category.

    Columns ``category, n_products, pairwise_accuracy, ci_lo, ci_hi, ci_method,
    is_degenerate, ci_note``. ``published_bca``: :func:`.bootstrap.bca_ci_per_category`'s
    values unchanged. ``ustat_t``: the category's unbiased variance, logit scale, t with
    n_c - 1 degrees of freedom. ``distinct_percentile``: per category a fresh
    ``default_rng(seed)`` draws ``integers(0, n_c, (n_boot, n_c))`` (the published per-category
    draws), scored without copy pairs; percentile interval.
    """
    method = DEFAULT_PER_CATEGORY_METHOD if method == "default" else method
    if method not in PER_CATEGORY_METHODS:
        raise ValueError(f"unknown per-category method {method!r}; choose {PER_CATEGORY_METHODS}")
    if method == "published_bca":
        with single_thread_blas():
            table = bca_ci_per_category(category, gold, pred, n_boot, seed, alpha)
        rows = [(*r, "published_bca", False, "") for r in table.iter_rows()]
    else:
        data = _Data(category, gold, pred)
        rows = []
        for name, (g, p) in zip(data.grouped.names, data.cats, strict=True):
            n = len(g)
            if n < 2:
                rows.append(
                    (name, n, np.nan, np.nan, np.nan, method, False, "fewer than 2 products")
                )
                continue
            full = sample_stats(g, p, np.arange(n)[None, :], ("pairwise_accuracy",))
            point = float(full["credit"][0] / full["npairs"][0])
            if method == "ustat_t":
                iv = _category_ustat(g, p, point, alpha)
            else:
                idx = np.random.default_rng(seed).integers(0, n, (n_boot, n))
                st = sample_stats(g, p, idx, ("pairwise_accuracy",), copies="distinct")
                with np.errstate(invalid="ignore", divide="ignore"):
                    boot = st["credit"] / st["npairs"]
                lo, hi = np.nanpercentile(boot, [50 * alpha, 100 - 50 * alpha])
                iv = _from_replicates(
                    "pairwise_accuracy", method, point, boot, (float(lo), float(hi))
                )
            rows.append((name, n, point, iv.lo, iv.hi, method, iv.is_degenerate, iv.note))
    return pl.DataFrame(
        rows,
        schema={
            **PER_CATEGORY_SCHEMA,
            "ci_method": pl.String,
            "is_degenerate": pl.Boolean,
            "ci_note": pl.String,
        },
        orient="row",
    )


def _category_ustat(g: np.ndarray, p: np.ndarray, point: float, alpha: float) -> Interval:
    cv = category_variance(g, p, "pairwise_accuracy")
    notes = [cv.note] if cv.note else []
    unbiased = cv.unbiased if np.isfinite(cv.unbiased) else float(np.nan_to_num(cv.jackknife))
    var = _choose_variance(unbiased, float(np.nan_to_num(cv.jackknife)), notes)
    if var is None:
        return _degenerate("pairwise_accuracy", "ustat_t", point, _NO_VARIABILITY)
    return _scaled_interval("pairwise_accuracy", point, var, len(g) - 1, alpha, notes)
