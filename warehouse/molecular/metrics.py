"""Classification metrics for the five-class taste task, with vectorized BCa bootstrap CIs.

Conventions (all documented here, used identically for the point estimate, every bootstrap
replicate and every jackknife value, so the vectorized path equals a per-replicate loop):

* ``y_true``/``y_pred`` are class names or integer codes in :data:`TASTE_CLASSES` order;
  ``proba`` is ``n x 5`` in the same order (or ``None``: AUROC is then left out).
* Per class: precision = TP / predicted (0 when the class is never predicted, sklearn's
  ``zero_division=0``), recall = TP / support, F1 = 2TP / (2TP + FP + FN), one-vs-rest AUROC =
  Mann-Whitney U / (P N) with ties counted 1/2 (identical to ``sklearn.metrics.roc_auc_score``).
* A class with zero support in a sample (a bootstrap replicate that drew none of the six test
  umami molecules, say) has every per-class statistic NaN, and the macro means (unweighted over
  the five classes) are NaN for that sample: the five-class macro is undefined there. Such
  replicates are excluded by the NaN-aware BCa (``numpy.nanpercentile``, z0 share over the
  finite replicates, acceleration over the finite jackknife values); the count of finite
  replicates is reported next to every interval.
* BCa as in docs/benchmark.md section 4: one ``numpy.random.default_rng(seed)`` drawing
  ``integers(0, n, (n_boot, n))`` at once (molecules resampled), leave-one-molecule-out
  jackknife, z0 = Phi^-1(share of replicates strictly below the estimate) with the share clipped
  to [1e-10, 1 - 1e-10], a = sum(d^3) / (6 (sum d^2)^1.5) with d = mean(jack) - jack (0 when the
  denominator is 0), levels Phi(z0 + (z0+z)/(1 - a(z0+z))) (0.5 when the denominator is 0),
  clipped to [0, 1], bounds by linear-interpolation percentiles.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy import stats

from warehouse.molecular.labels import CLASS_INDEX, TASTE_CLASSES

K = len(TASTE_CLASSES)
MACRO_METRICS = ("accuracy", "macro_precision", "macro_recall", "macro_f1", "macro_auroc")
PER_CLASS_METRICS = ("precision", "recall", "f1", "auroc")
_CHUNK = 500  # replicates per vectorized block (bounds memory at a few (500 x n) float arrays)


def as_codes(y, name: str = "labels") -> np.ndarray:
    """Class names or integer codes -> int64 codes in TASTE_CLASSES order (validated)."""
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    arr = np.asarray(y)
    if arr.dtype.kind in "iu":
        if arr.size and (arr.min() < 0 or arr.max() >= K):
            bad = int(np.flatnonzero((arr < 0) | (arr >= K))[0])
            raise ValueError(f"{name}: code {arr[bad]} at row {bad} is not in 0..{K - 1}")
        return arr.astype(np.int64)
    out = np.empty(arr.shape[0], dtype=np.int64)
    for i, v in enumerate(arr):
        code = CLASS_INDEX.get(v) if isinstance(v, str) else None
        if code is None:
            raise ValueError(f"{name}: unknown taste label {v!r} at row {i}")
        out[i] = code
    return out


def _check(y_true, y_pred, proba):
    yt, yp = as_codes(y_true, "y_true"), as_codes(y_pred, "y_pred")
    if yt.shape != yp.shape:
        raise ValueError(f"y_true has {yt.shape[0]} rows, y_pred {yp.shape[0]}")
    if proba is not None:
        proba = np.asarray(proba, dtype=np.float64)
        if proba.shape != (yt.shape[0], K):
            raise ValueError(f"proba must be {(yt.shape[0], K)}, got {proba.shape}")
    return yt, yp, proba


# ---------------------------------------------------------------------------- core statistics


def _stats_from_confusion(conf: np.ndarray) -> dict[str, np.ndarray]:
    """conf: (m, K, K) counts [true, pred] -> per-sample statistics (NaN rules in module doc)."""
    conf = conf.astype(np.float64)
    tp = np.diagonal(conf, axis1=1, axis2=2)
    support = conf.sum(axis=2)
    predicted = conf.sum(axis=1)
    total = support.sum(axis=1)
    absent = support == 0
    with np.errstate(invalid="ignore", divide="ignore"):
        precision = np.where(predicted > 0, tp / np.where(predicted > 0, predicted, 1.0), 0.0)
        recall = tp / support
        f1 = 2 * tp / (2 * tp + (predicted - tp) + (support - tp))
        accuracy = tp.sum(axis=1) / total
    precision = np.where(absent, np.nan, precision)
    f1 = np.where(absent, np.nan, f1)
    return {
        "accuracy": accuracy,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "support": support,
    }


@dataclass(frozen=True)
class _AurocPlan:
    """Per class k: ``gid[k][i]`` = rank of molecule i's score among the distinct scores."""

    gid: list[np.ndarray]
    n_groups: list[int]

    @classmethod
    def build(cls, proba: np.ndarray) -> _AurocPlan:
        gid, n_groups = [], []
        for k in range(K):
            uniq, inverse = np.unique(proba[:, k], return_inverse=True)
            gid.append(inverse.astype(np.int64).ravel())
            n_groups.append(int(uniq.size))
        return cls(gid, n_groups)


def _auroc_from_group_counts(gp: np.ndarray, gn: np.ndarray) -> np.ndarray:
    """AUROC per row from positive/negative counts per score group, both (m, G), ascending.

    Rank-based Mann-Whitney: U = sum_g P_g (N_{<g} + N_g / 2), AUROC = U / (P N). Counts are
    integers, so U, P and N are exact in float64 and the vectorized result is bitwise equal to
    the one computed on the expanded (resampled) sample.
    """
    gp = gp.astype(np.float64)
    gn = gn.astype(np.float64)
    below = np.cumsum(gn, axis=1) - gn
    u = (gp * (below + 0.5 * gn)).sum(axis=1)
    p, n = gp.sum(axis=1), gn.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where((p > 0) & (n > 0), u / (p * n), np.nan)


def _flatten(per: dict[str, np.ndarray], auroc: np.ndarray | None) -> dict[str, np.ndarray]:
    """Named statistic vectors: macro metrics and '<metric>/<class>' per-class columns."""
    out = {"accuracy": per["accuracy"]}
    blocks = {"precision": per["precision"], "recall": per["recall"], "f1": per["f1"]}
    if auroc is not None:
        blocks["auroc"] = auroc
    for name, block in blocks.items():
        out[f"macro_{name}"] = block.mean(axis=1)
        for k, cls in enumerate(TASTE_CLASSES):
            out[f"{name}/{cls}"] = block[:, k]
    return out


def _stats_for_indices(yt, yp, plan, idx: np.ndarray) -> dict[str, np.ndarray]:
    """Statistics for each row of a bootstrap index matrix idx (m, n), vectorized over rows.

    Confusion matrices: one ``np.bincount`` over (replicate, true, pred) codes. AUROC: per
    class one ``np.bincount`` over (replicate, score group, is-positive) codes.
    """
    m = idx.shape[0]
    rep = np.arange(m, dtype=np.int64)[:, None]
    t = yt[idx]
    codes = (rep * K + t) * K + yp[idx]
    conf = np.bincount(codes.ravel(), minlength=m * K * K).reshape(m, K, K)
    auroc = None
    if plan is not None:
        auroc = np.empty((m, K))
        for k in range(K):
            G = plan.n_groups[k]
            gcodes = (rep * G + plan.gid[k][idx]) * 2 + (t == k)
            cnt = np.bincount(gcodes.ravel(), minlength=m * G * 2).reshape(m, G, 2)
            auroc[:, k] = _auroc_from_group_counts(cnt[..., 1], cnt[..., 0])
    return _flatten(_stats_from_confusion(conf), auroc)


def _stats_jackknife(yt, yp, plan, rows: np.ndarray) -> dict[str, np.ndarray]:
    """Statistics with molecule ``rows[j]`` left out, for each j."""
    r = np.arange(len(rows))
    full = np.bincount(yt * K + yp, minlength=K * K).reshape(K, K)
    conf = np.repeat(full[None], len(rows), axis=0)
    conf[r, yt[rows], yp[rows]] -= 1
    auroc = None
    if plan is not None:
        auroc = np.empty((len(rows), K))
        for k in range(K):
            G, g = plan.n_groups[k], plan.gid[k]
            pos = yt == k
            gp = np.repeat(np.bincount(g[pos], minlength=G)[None], len(rows), axis=0)
            gn = np.repeat(np.bincount(g[~pos], minlength=G)[None], len(rows), axis=0)
            drop_pos = pos[rows]
            gp[r[drop_pos], g[rows[drop_pos]]] -= 1
            gn[r[~drop_pos], g[rows[~drop_pos]]] -= 1
            auroc[:, k] = _auroc_from_group_counts(gp, gn)
    return _flatten(_stats_from_confusion(conf), auroc)


def _concat(chunks: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {key: np.concatenate([c[key] for c in chunks]) for key in chunks[0]}


def _point(yt, yp, proba) -> dict[str, float]:
    plan = _AurocPlan.build(proba) if proba is not None else None
    stats_ = _stats_for_indices(yt, yp, plan, np.arange(yt.shape[0])[None, :])
    return {k: float(v[0]) for k, v in stats_.items()}


def classification_metrics(y_true, y_pred, proba=None) -> dict[str, float]:
    """Accuracy, macro precision/recall/F1 and (with ``proba``) macro one-vs-rest AUROC."""
    yt, yp, proba = _check(y_true, y_pred, proba)
    point = _point(yt, yp, proba)
    return {k: point[k] for k in MACRO_METRICS if k in point}


# ---------------------------------------------------------------------------- BCa


def bca_interval(
    estimate: float, boot: np.ndarray, jack: np.ndarray, alpha: float = 0.05
) -> tuple[float, float]:
    """BCa bounds (NaN-aware) for one statistic; see the module docstring for the formula."""
    boot = np.asarray(boot, dtype=np.float64)
    jack = np.asarray(jack, dtype=np.float64)
    finite = boot[np.isfinite(boot)]
    if not np.isfinite(estimate) or finite.size == 0:
        return (np.nan, np.nan)
    share = np.clip(np.mean(finite < estimate), 1e-10, 1 - 1e-10)
    z0 = stats.norm.ppf(share)
    jf = jack[np.isfinite(jack)]
    d = jf.mean() - jf if jf.size else np.zeros(1)
    den = 6.0 * np.sum(d**2) ** 1.5
    a = float(np.sum(d**3) / den) if den > 0 else 0.0
    bounds = []
    for z in (stats.norm.ppf(alpha / 2), stats.norm.ppf(1 - alpha / 2)):
        denom = 1.0 - a * (z0 + z)
        level = 0.5 if abs(denom) < 1e-12 else stats.norm.cdf(z0 + (z0 + z) / denom)
        level = float(np.clip(level, 0.0, 1.0))
        bounds.append(float(np.nanpercentile(boot, 100.0 * level, method="linear")))
    return bounds[0], bounds[1]


@dataclass(frozen=True)
class BootstrapMetrics:
    """Point estimates, bootstrap replicates and jackknife values of every statistic."""

    estimate: dict[str, float]
    boot: dict[str, np.ndarray]
    jack: dict[str, np.ndarray]
    support: np.ndarray
    n_boot: int
    seed: int

    def interval(self, name: str) -> tuple[float, float, float, int]:
        lo, hi = bca_interval(self.estimate[name], self.boot[name], self.jack[name])
        return self.estimate[name], lo, hi, int(np.isfinite(self.boot[name]).sum())


_CACHE: dict[str, BootstrapMetrics] = {}


def _cache_key(yt, yp, proba, n_boot, seed) -> str:
    h = hashlib.sha256()
    for arr in (yt, yp) + ((proba,) if proba is not None else ()):
        h.update(np.ascontiguousarray(arr).tobytes())
    h.update(f"{n_boot}|{seed}|{proba is None}".encode())
    return h.hexdigest()


def bootstrap_metrics(
    y_true, y_pred, proba=None, n_boot: int = 10_000, seed: int = 42
) -> BootstrapMetrics:
    """All statistics on ``n_boot`` molecule-resampling replicates plus the jackknife.

    Vectorized over replicates: confusion matrices by ``np.bincount`` on (replicate, true, pred)
    codes, AUROC by the weighted Mann-Whitney formula on replicate count matrices; processed in
    blocks of 500 replicates. The result is memoized (4 entries) so ``bca_classification`` and
    ``per_class_metrics`` on the same predictions share one bootstrap.
    """
    yt, yp, proba = _check(y_true, y_pred, proba)
    key = _cache_key(yt, yp, proba, n_boot, seed)
    if key in _CACHE:
        return _CACHE[key]
    n = yt.shape[0]
    plan = _AurocPlan.build(proba) if proba is not None else None
    idx = np.random.default_rng(seed).integers(0, n, (n_boot, n))
    boot = _concat(
        [_stats_for_indices(yt, yp, plan, idx[s : s + _CHUNK]) for s in range(0, n_boot, _CHUNK)]
    )
    rows = np.arange(n)
    jack = _concat(
        [_stats_jackknife(yt, yp, plan, rows[s : s + _CHUNK]) for s in range(0, n, _CHUNK)]
    )
    result = BootstrapMetrics(
        estimate=_point(yt, yp, proba),
        boot=boot,
        jack=jack,
        support=np.bincount(yt, minlength=K),
        n_boot=n_boot,
        seed=seed,
    )
    if len(_CACHE) >= 4:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = result
    return result


def bca_classification(
    y_true, y_pred, proba=None, n_boot: int = 10_000, seed: int = 42
) -> pl.DataFrame:
    """BCa 95% CIs of accuracy and the macro metrics.

    Columns: metric, point, ci_lo, ci_hi, n_boot, n_boot_finite (replicates where the
    statistic is defined; the rest had a class missing, see the module docstring).
    """
    bm = bootstrap_metrics(y_true, y_pred, proba, n_boot=n_boot, seed=seed)
    rows = []
    for name in MACRO_METRICS:
        if name in bm.estimate:
            est, lo, hi, nf = bm.interval(name)
            rows.append((name, est, lo, hi, n_boot, nf))
    schema = {"metric": pl.String, "point": pl.Float64, "ci_lo": pl.Float64}
    schema |= {"ci_hi": pl.Float64, "n_boot": pl.Int64, "n_boot_finite": pl.Int64}
    return _nan_to_null(pl.DataFrame(rows, schema=schema, orient="row"))


def _nan_to_null(frame: pl.DataFrame) -> pl.DataFrame:
    """An undefined statistic (NaN) is a missing value (null)."""
    return frame.with_columns(pl.col(pl.Float64).fill_nan(None))


def per_class_metrics(
    y_true, y_pred, proba=None, n_boot: int = 10_000, seed: int = 42
) -> pl.DataFrame:
    """One row per taste class: support, precision, recall, F1, AUROC, each with BCa 95% CI.

    Columns ``<metric>``, ``<metric>_ci_lo``, ``<metric>_ci_hi`` and
    ``<metric>_n_boot_finite``. Rare classes (umami: 6 test molecules) get honest, wide CIs.
    """
    bm = bootstrap_metrics(y_true, y_pred, proba, n_boot=n_boot, seed=seed)
    records = []
    for k, cls in enumerate(TASTE_CLASSES):
        rec: dict[str, object] = {"class": cls, "support": int(bm.support[k])}
        for metric in PER_CLASS_METRICS:
            name = f"{metric}/{cls}"
            if name not in bm.estimate:
                continue
            est, lo, hi, nf = bm.interval(name)
            rec |= {
                metric: est,
                f"{metric}_ci_lo": lo,
                f"{metric}_ci_hi": hi,
                f"{metric}_n_boot_finite": nf,
            }
        records.append(rec)
    return _nan_to_null(pl.DataFrame(records, infer_schema_length=None))


# ---------------------------------------------------------------------------- McNemar


def mcnemar(y_true, pred_a, pred_b) -> dict[str, object]:
    """McNemar test between two classifiers on the same molecules.

    ``n_a_only`` = molecules only A gets right, ``n_b_only`` = only B. With fewer than 25
    discordant molecules: exact two-sided binomial test (``scipy.stats.binomtest``, p = 0.5);
    otherwise chi-square with continuity correction, (|b - c| - 1)^2 / (b + c), 1 df.
    No discordant molecule: p = 1.
    """
    yt = as_codes(y_true, "y_true")
    a_ok = as_codes(pred_a, "pred_a") == yt
    b_ok = as_codes(pred_b, "pred_b") == yt
    b = int(np.sum(a_ok & ~b_ok))
    c = int(np.sum(~a_ok & b_ok))
    n = b + c
    if n == 0:
        stat, p, method = 0.0, 1.0, "none (no discordant pairs)"
    elif n < 25:
        stat, p, method = float(min(b, c)), float(stats.binomtest(b, n, 0.5).pvalue), "exact"
    else:
        stat = (abs(b - c) - 1.0) ** 2 / n
        p, method = float(stats.chi2.sf(stat, 1)), "chi2_cc"
    return {"n_a_only": b, "n_b_only": c, "statistic": stat, "p_value": p, "method": method}


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values."""
    p = np.asarray(p_values, dtype=np.float64)
    order = np.argsort(p, kind="stable")
    m = p.size
    adj = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adj, 1.0)
    return out


def compare_all(models: Mapping[str, object], split: str = "test", y_true=None) -> pl.DataFrame:
    """McNemar for every pair of models (Holm-corrected across pairs).

    ``models`` maps a name to a :class:`~warehouse.molecular.baselines.FitResult` (its
    ``labels[split]`` and ``y_true[split]`` are used) or to an array of predicted labels
    (then ``y_true`` is required).
    """
    preds: dict[str, np.ndarray] = {}
    truth = None if y_true is None else as_codes(y_true, "y_true")
    for name, m in models.items():
        if hasattr(m, "labels"):
            preds[name] = as_codes(m.labels[split], name)
            t = as_codes(m.y_true[split], "y_true")
            if truth is None:
                truth = t
            elif not np.array_equal(truth, t):
                raise ValueError(f"model {name!r} was scored on different {split} labels")
        else:
            preds[name] = as_codes(m, name)
    if truth is None:
        raise ValueError("y_true is required when models are given as label arrays")
    rows = []
    for a, b in itertools.combinations(preds, 2):
        res = mcnemar(truth, preds[a], preds[b])
        rows.append(
            {
                "model_a": a,
                "model_b": b,
                "accuracy_a": float(np.mean(preds[a] == truth)),
                "accuracy_b": float(np.mean(preds[b] == truth)),
                **res,
            }
        )
    out = pl.DataFrame(rows, infer_schema_length=None)
    if out.height:
        out = out.with_columns(p_holm=pl.Series(holm(out["p_value"].to_numpy())))
    return out
