"""Nested-LOOCV ensembles of a supervised model with an external model (docs/benchmark.md §3).

Base features (``n`` analogs):

* ``outer[i]``: the model's LOOCV score of ``i`` (trained without ``i``; the same fit as the
  model's own out-of-fold file, read from the cache);
* ``inner[i, j]`` (``i != j``): the score of ``j`` from the model trained without both ``i`` and
  ``j``, preprocessing included. One fit per unordered pair gives ``inner[i, j]`` and
  ``inner[j, i]``: ``n (n - 1) / 2`` fits (23,005 for 215 analogs).

Meta-learners, for each held-out ``i``:

* **NNLS**: rows ``j != i`` with features ``(inner[i, j], ext[j])`` and target the raw panel mean
  ``y[j]``; ``scipy.optimize.nnls``, no intercept; prediction ``(outer[i], ext[i]) . w_i``. No
  row of the meta-fit for ``i`` comes from a model that saw ``i``;
* **rank average**: mean of the within-category percentile ranks (average ties, rank / n_c) of
  ``outer`` and ``ext``; **plain mean**: ``(outer + ext) / 2`` (no training).

**Grouped K-fold** (a job with ``cv``, the build's protocol above ``food_models_max_analogs``
analogs; :mod:`.folds`): ``outer[i]`` is the model's K-fold score of ``i``; for each outer fold
``f`` an inner grouped K-fold (same K, seed and stratification) over ``f``'s training products
gives ``inner[f, j]`` for every ``j`` outside ``f``: the score of ``j`` from the model trained on
``f``'s training products minus ``j``'s inner fold (K x K fits instead of n (n - 1) / 2). The NNLS
of fold ``f`` is fitted on the rows ``j`` outside ``f`` (features ``(inner[f, j], ext[j])``,
target ``y[j]``) and predicts ``f``'s products from ``(outer[i], ext[i])``: no model behind a
meta-row was trained on ``f``'s test products or on the row's own product (every inner fold runs
:func:`.guards.check_fold` with ``f``'s test products as held rows).

Speed: the pair fits run in fixed chunks on ``n_jobs`` loky workers (BLAS pinned to one thread;
results do not depend on the worker count). For Bradley-Terry each pair fit starts Newton from
the outer fit of ``min(i, j)`` mapped onto the pair fold's own scaler/PCA coordinates
(:meth:`.preprocess.BlockTransform.from_raw`); the objective is strictly convex with Hessian
>= I, so the converged weights are within ``||gradient|| <= 1e-9`` of the unique optimum of the
pair fold's own training rows whatever the start (the start only saves Newton steps: on the
default build's design 10.4 instead of 12.7 per fit, counting the steps that reuse a Hessian
factor). ``tests/unit/test_ranking_nested.py`` checks warm == cold to 1e-9.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl
from scipy.optimize import nnls
from scipy.stats import rankdata

from warehouse.ranking import models as mdl
from warehouse.ranking.cache import FitCache, config_hash, fit_id, fit_record, library_versions
from warehouse.ranking.design import Design, DesignError, FeatureSet
from warehouse.ranking.folds import GroupedKFold
from warehouse.ranking.guards import block_stats, check_fold
from warehouse.ranking.loocv import (
    FitResult,
    Job,
    design_payload,
    fit_key,
    make_fold,
    parallel_map,
    result_from_cache,
    run_folds,
    run_loocv,
)
from warehouse.ranking.preprocess import fit_fold, weights_from_raw

PAIR_CHUNK = 400
GEMINI_STEM = "llm_gemini_3_1_pro_preview_ingredients_image"
"""``model_file_stem`` of the published out-of-fold file the default ensembles combine with."""


# --------------------------------------------------------------------------- meta-learners


def nnls_oof(outer: np.ndarray, inner: np.ndarray, ext: np.ndarray, y: np.ndarray):
    """Nested NNLS predictions and the weights ``(w_model, w_external)`` of every fold."""
    n = len(outer)
    pred = np.empty(n)
    weights = np.empty((n, 2))
    for i in range(n):
        mask = np.arange(n) != i
        a = np.column_stack([inner[i, mask], ext[mask]])
        w, _ = nnls(a, y[mask])
        weights[i] = w
        pred[i] = outer[i] * w[0] + ext[i] * w[1]
    return pred, weights


def nnls_kfold(
    outer: np.ndarray, inner: np.ndarray, ext: np.ndarray, y: np.ndarray, fold_of: np.ndarray
):
    """Nested grouped K-fold NNLS: predictions and the weights ``(w_model, w_external)`` of
    every outer fold (``inner``: (k, n), NaN on the fold's own products; ``fold_of``: the outer
    fold of every row)."""
    k = inner.shape[0]
    pred = np.empty(len(outer))
    weights = np.empty((k, 2))
    for f in range(k):
        test = fold_of == f
        rows = ~test
        a = np.column_stack([inner[f, rows], ext[rows]])
        if not np.isfinite(a).all():
            raise DesignError(f"nested K-fold: outer fold {f} lacks an inner score")
        w, _ = nnls(a, y[rows])
        weights[f] = w
        pred[test] = outer[test] * w[0] + ext[test] * w[1]
    return pred, weights


def category_percentile_ranks(category: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Within-category average rank / n_c (pandas ``rank(pct=True)``)."""
    out = np.empty(len(values))
    cat = np.asarray(category).astype(str)
    for c in np.unique(cat):
        rows = np.flatnonzero(cat == c)
        out[rows] = rankdata(values[rows], method="average") / len(rows)
    return out


def rank_average(category: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 0.5 * (category_percentile_ranks(category, a) + category_percentile_ranks(category, b))


def plain_mean(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return 0.5 * (a + b)


# --------------------------------------------------------------------------- pair fits


def _pair_chunk(payload, model: str, settings, names, pairs: np.ndarray, warm, audit: bool):
    from threadpoolctl import threadpool_limits

    n = payload["n"]
    blocks = payload["blocks"]
    stats = block_stats(blocks) if audit else None
    out = np.empty((len(pairs), 2))
    steps = 0
    with threadpool_limits(1):
        for k, (i, j) in enumerate(pairs):
            train = np.delete(np.arange(n), [i, j])
            test = np.array([i, j])
            fb = fit_fold(blocks, train, test, names)
            win, lose = payload["pairs"].for_training(train, n)
            if audit:
                check_fold(blocks, fb, win, lose, where=f"nested pair ({i}, {j})", stats=stats)
            fold = make_fold(payload, fb, names, win, lose)
            w0 = None
            if warm is not None:
                w0 = weights_from_raw(fb, names, warm[min(i, j)])
            o = mdl.fit_predict(model, settings, fold, w0)
            out[k] = o.scores
            steps += o.n_iter
    return pairs, out, steps


def all_pairs(n: int) -> np.ndarray:
    i, j = np.triu_indices(n, 1)
    return np.column_stack([i, j])


def _nested_key(
    design: Design, job: Job, outer_fit: FitResult, use_warm: bool
) -> tuple[dict[str, object], str, str]:
    cfg = {
        "outer_config_hash": outer_fit.config_hash,
        "protocol": "nested_pairs",
        "warm_start": "outer_fold_min_ij" if use_warm else "none",
    }
    ch = config_hash(cfg)
    return cfg, ch, fit_id(ch, design.fingerprint(job.feature_set.block_names))


def _nested_kfold_key(
    design: Design, job: Job, outer_fit: FitResult
) -> tuple[dict[str, object], str, str]:
    cv = job.cv
    cfg = {
        "outer_config_hash": outer_fit.config_hash,
        "protocol": "nested_grouped_kfold",
        "cv": cv.config(),
        "inner_cv": {**cv.config(), "over": "each outer fold's training products"},
        "warm_start": "none",
    }
    ch = config_hash(cfg)
    return cfg, ch, fit_id(ch, design.fingerprint(job.feature_set.block_names))


def _nested_from_cache(job: Job, cfg, ch: str, fid: str, cache: FitCache) -> FitResult | None:
    got = cache.get(fid)
    if got is None:
        return None
    arrays, meta = got
    return FitResult.of(job, cfg, ch, fid, arrays["outer"], arrays, meta, True)


def _stored(job: Job, cfg, ch: str, fid: str, outer, arrays, meta, cache: FitCache) -> FitResult:
    """Put a fitted nested base in the cache; the FitResult of it."""
    cache.put(fid, arrays, meta)
    return FitResult.of(job, cfg, ch, fid, outer, arrays, meta, False)


def cached_nested_base(design: Design, job: Job, cache: FitCache) -> FitResult | None:
    """The nested base of ``job`` when the cache holds it and its outer LOOCV fit (as
    :func:`nested_base` would write them, warm start included), else None; fits nothing. The
    build reads the nested bases that ``tastebench train food --grid ensembles`` fitted."""
    cfg, ch, fid = fit_key(design, job)
    outer_fit = result_from_cache(job, cfg, ch, fid, cache)
    if outer_fit is None:
        return None
    if job.cv is not None:
        return _nested_from_cache(job, *_nested_kfold_key(design, job, outer_fit), cache)
    use_warm = job.model == "bradley_terry" and "raw_weights" in outer_fit.arrays
    return _nested_from_cache(job, *_nested_key(design, job, outer_fit, use_warm), cache)


def nested_base(
    design: Design,
    job: Job,
    cache: FitCache | None = None,
    n_jobs: int = 2,
    audit: bool = True,
    warm_start: bool = True,
) -> FitResult:
    """``outer`` (n,) and ``inner`` (n, n; NaN diagonal) of ``job`` (a supervised model); for
    a grouped K-fold job :func:`nested_kfold_base` (``inner`` (k, n))."""
    cache = cache or FitCache(None)
    if job.cv is not None:
        return nested_kfold_base(design, job, cache, n_jobs, audit)
    (outer_fit,) = run_loocv(design, [job], cache, n_jobs, audit)
    use_warm = warm_start and job.model == "bradley_terry" and "raw_weights" in outer_fit.arrays
    cfg, ch, fid = _nested_key(design, job, outer_fit, use_warm)
    hit = _nested_from_cache(job, cfg, ch, fid, cache)
    if hit is not None:
        return hit
    names = job.feature_set.block_names
    payload = design_payload(design, names)
    warm = outer_fit.arrays["raw_weights"] if use_warm else None
    settings = job.config()["settings"]
    t0 = time.perf_counter()
    pairs = all_pairs(design.n)
    n_chunks = max(1, -(-len(pairs) // PAIR_CHUNK))  # fixed by n, never by n_jobs
    parts = parallel_map(
        _pair_chunk,
        [
            (payload, job.model, settings, names, c, warm, audit)
            for c in np.array_split(pairs, n_chunks)
        ],
        n_jobs,
    )
    wall = time.perf_counter() - t0
    inner = np.full((design.n, design.n), np.nan)
    steps = 0
    for pairs, scores, st in parts:
        inner[pairs[:, 1], pairs[:, 0]] = scores[:, 0]  # score of i, trained without {i, j}
        inner[pairs[:, 0], pairs[:, 1]] = scores[:, 1]  # score of j
        steps += st
    arrays = {"outer": outer_fit.predictions, "inner": inner}
    meta = fit_record(
        job.model,
        job.feature_set.name,
        "nested_pairs",
        cfg,
        ch,
        library_versions(),
        design.n,
        design.data_origin,
        n_pair_fits=int(design.n * (design.n - 1) // 2),
        run_wall_seconds=wall,
        newton_steps=steps,
        n_jobs=n_jobs,
    )
    return _stored(job, cfg, ch, fid, outer_fit.predictions, arrays, meta, cache)


def nested_kfold_base(
    design: Design, job: Job, cache: FitCache, n_jobs: int = 2, audit: bool = True
) -> FitResult:
    """``outer`` (n,), ``inner`` (k, n) and ``outer_fold`` (n,) of a grouped K-fold ``job``:
    an inner grouped K-fold over each outer fold's training products (module docstring)."""
    cv = job.cv
    (outer_fit,) = run_loocv(design, [job], cache, n_jobs, audit)
    cfg, ch, fid = _nested_kfold_key(design, job, outer_fit)
    hit = _nested_from_cache(job, cfg, ch, fid, cache)
    if hit is not None:
        return hit
    names = job.feature_set.block_names
    cat = design.category_index
    outer = cv.folds(cat)
    specs = []
    for f, (train_o, test_o) in enumerate(outer):
        for g, (tr, te) in enumerate(cv.folds(cat[train_o])):
            where = f"nested K-fold outer fold {f} inner fold {g}"
            specs.append((f * cv.k + g, train_o[tr], train_o[te], test_o, where))
    spec = [(job.model, job.config()["settings"], names)]
    t0 = time.perf_counter()
    folds = run_folds(design_payload(design, names), spec, specs, n_jobs, audit, cv.k)
    wall = time.perf_counter() - t0
    inner = np.full((cv.k, design.n), np.nan)
    for key, test, _, res in folds:
        inner[key // cv.k, test] = res[0][0]
    fold_of = np.empty(design.n, dtype=np.int64)
    for f, (_, test_o) in enumerate(outer):
        fold_of[test_o] = f
    arrays = {"outer": outer_fit.predictions, "inner": inner, "outer_fold": fold_of}
    meta = fit_record(
        job.model,
        job.feature_set.name,
        "nested_grouped_kfold",
        cfg,
        ch,
        library_versions(),
        design.n,
        design.data_origin,
        n_inner_fits=len(specs),
        run_wall_seconds=wall,
        newton_steps=int(sum(res[0][1] for *_, res in folds)),
        n_jobs=n_jobs,
    )
    return _stored(job, cfg, ch, fid, outer_fit.predictions, arrays, meta, cache)


# --------------------------------------------------------------------------- ensembles


def align_external(design: Design, frame: pl.DataFrame, name: str) -> np.ndarray:
    """An external model's ``predicted_score`` aligned with the design rows (every analog
    required; ``frame`` has ``category, product_code, predicted_score``)."""
    src = frame.select(
        pl.col("category").cast(pl.String),
        pl.col("product_code").cast(pl.Int64),
        pl.col("predicted_score").cast(pl.Float64),
    )
    joined = design.keys.select("category", "product_code").join(
        src, on=["category", "product_code"], how="left", maintain_order="left"
    )
    bad = joined["predicted_score"].is_null() | joined["predicted_score"].is_nan()
    if bad.any():
        row = joined.filter(bad).row(0, named=True)
        raise DesignError(
            f"external model {name!r} has no prediction for analog "
            f"{row['category']}:{row['product_code']} ({int(bad.sum())} missing); the ensemble "
            "needs one per analog in the design's code space (map public codes first)"
        )
    return joined["predicted_score"].to_numpy()


def external_predictions(design: Design, oof: pl.DataFrame, stem: str = GEMINI_STEM):
    """A published out-of-fold file's scores aligned with the design (``stg_tastebench__oof_
    predictions`` rows of ``model_file_stem = stem``). In a scaled simulation (``tastebench
    simulate --scale K``) a copy ``<Category>_s<k>`` repeats its base category's products, codes
    included, and the published file covers the base only: a copy's analog reads its base
    analog's score (the copies repeat the base's features the same way)."""
    rows = oof.filter(pl.col("model_file_stem") == stem)
    if design.data_origin == "simulation":
        copies = design.keys.select(
            pl.col("category").alias("copy"),
            pl.col("category").str.replace(r"_s\d+$", "").alias("category"),
        ).unique()
        copies = copies.filter(pl.col("copy") != pl.col("category"))
        if copies.height:
            rows = pl.concat(
                [
                    rows.select("category", "product_code", "predicted_score"),
                    rows.join(copies, on="category").select(
                        pl.col("copy").alias("category"), "product_code", "predicted_score"
                    ),
                ]
            )
    return align_external(design, rows, stem)


def run_ensembles(
    design: Design,
    job: Job,
    external: np.ndarray,
    external_name: str = "gemini",
    cache: FitCache | None = None,
    n_jobs: int = 2,
    audit: bool = True,
    kinds: Sequence[str] = ("nnls", "rank", "mean"),
    nnls_if_cached: bool = False,
) -> list[FitResult]:
    """NNLS / rank-average / mean ensembles of ``job`` with ``external`` (aligned scores).
    ``nnls_if_cached``: the NNLS only when the cache already holds the nested base
    (:func:`cached_nested_base`; the pair fits are never run), else it is left out."""
    external = np.asarray(external, dtype=np.float64)
    if external.shape != (design.n,) or not np.isfinite(external).all():
        raise DesignError(f"external model {external_name!r}: need {design.n} finite scores")
    base = None
    if "nnls" in kinds:
        if nnls_if_cached:
            base = cached_nested_base(design, job, cache or FitCache(None))
            kinds = [k for k in kinds if k != "nnls" or base is not None]
        else:
            base = nested_base(design, job, cache, n_jobs, audit)
    outer_fit = base if base is not None else run_loocv(design, [job], cache, n_jobs, audit)[0]
    ext_hash = hashlib.sha256(external.astype("<f8").tobytes()).hexdigest()
    short = mdl.SHORT_NAMES[job.model]
    out = []
    for kind in kinds:
        name = f"nested_{short}_{external_name}_{kind}"
        cfg = {
            "model": name,
            "base_model": job.model,
            "feature_set": job.feature_set.name,
            "external": external_name,
            "external_sha256": ext_hash,
            "meta_learner": kind,
            "base_config_hash": (base.config_hash if base is not None else None)
            if kind == "nnls"
            else None,
        }
        if job.cv is not None:  # LOOCV configurations (and fit ids) stay as they were
            cfg["cv"] = job.cv.config()
        arrays = _ensemble_arrays(design, job, kind, base, outer_fit.predictions, external, cfg)
        out.append(_ensemble_result(design, job, name, kind, cfg, arrays, outer_fit.from_cache))
    return out


def _ensemble_arrays(
    design: Design, job: Job, kind: str, base, outer: np.ndarray, external: np.ndarray, cfg: dict
) -> dict[str, np.ndarray]:
    """The arrays of one ensemble (``predictions``, and the NNLS weights); an NNLS also records
    its meta-learner in ``cfg['meta']``."""
    arrays: dict[str, np.ndarray] = {}
    if kind == "nnls" and job.cv is not None:
        fold_of = base.arrays["outer_fold"]
        pred, w = nnls_kfold(
            base.arrays["outer"], base.arrays["inner"], external, design.target, fold_of
        )
        arrays["nnls_weights"] = w[fold_of]  # one row per analog: its outer fold's weights
        cfg["meta"] = {
            "solver": "scipy.optimize.nnls",
            "intercept": False,
            "target": "panel_mean",
            "rows": "the outer fold's training products (inner K-fold scores)",
        }
    elif kind == "nnls":
        pred, w = nnls_oof(base.arrays["outer"], base.arrays["inner"], external, design.target)
        arrays["nnls_weights"] = w
        cfg["meta"] = {
            "solver": "scipy.optimize.nnls",
            "intercept": False,
            "target": "panel_mean",
        }
    elif kind == "rank":
        pred = rank_average(design.categories, outer, external)
    elif kind == "mean":
        pred = plain_mean(outer, external)
    else:
        raise ValueError(f"unknown ensemble kind {kind!r} (nnls, rank, mean)")
    arrays["predictions"] = pred
    return arrays


def _ensemble_result(
    design: Design, job: Job, name: str, kind: str, cfg: dict, arrays: dict, from_cache: bool
) -> FitResult:
    """The :class:`.loocv.FitResult` of one ensemble (content-addressed like every fit)."""
    ch = config_hash(cfg)
    fid = fit_id(ch, design.fingerprint(job.feature_set.block_names))
    meta: Mapping[str, object] = fit_record(
        name,
        job.feature_set.name,
        ("nested_" if kind == "nnls" else "") + job.protocol,
        cfg,
        ch,
        library_versions(),
        design.n,
        design.data_origin,
    )
    return FitResult(
        name,
        job.feature_set.name,
        str(meta["protocol"]),
        cfg,
        ch,
        fid,
        arrays["predictions"],
        arrays,
        dict(meta),
        from_cache,
    )


def fit_ensemble_bases(
    design: Design,
    cache_dir: Path | str,
    n_jobs: int = 2,
    models: Sequence[str] = mdl.SUPERVISED,
    cv: GroupedKFold | None = None,
) -> list[FitResult]:
    """``tastebench train food --grid ensembles``: the nested base (outer LOOCV + n(n-1)/2 pair
    fits; with ``cv`` the nested grouped K-fold) of every supervised model into the cache, so the
    next build adds each model's NNLS ensemble with Gemini (:func:`.ablation.default_model_fits`
    reads them through :func:`cached_nested_base`)."""
    fs = FeatureSet.parse(design.feature_set)
    return [nested_base(design, Job(m, fs, cv=cv), FitCache(cache_dir), n_jobs) for m in models]
