"""Out-of-fold runs: every supervised model x feature set on one design, fits read from the cache.

Protocol (docs/benchmark.md §3): rows are the analogs sorted by (category, product_code); LOOCV fold
``r`` holds out row ``r`` and trains on the other rows. A job with ``cv`` set (a
:class:`.folds.GroupedKFold`, the build's protocol above ``food_models_max_analogs`` analogs)
runs grouped K-fold instead: fold ``f`` holds out its products and trains on the others. Either
way one worker (:func:`_fold_chunk`) takes (training rows, test rows) per fold: every block is
scaled (and PCA'd when over 10 dims) on the training rows only (:func:`.preprocess.fit_fold`),
the guards of :mod:`.guards` run, and each requested (model, feature set) is fitted on the
concatenated blocks and scores the test rows.

Speed without changing a number: a fold's block transforms are computed once and shared by every
model and feature set of the run (PCA is per block, so a feature set is a concatenation); folds
are independent and run in chunks on ``n_jobs`` loky workers with BLAS pinned to one thread in
every fold, so results do not depend on the worker count. A (model, feature set) whose
``fit_id`` is in the cache is read, never refitted.

The distance baselines have no folds: :func:`run_distance` scores them once
(:func:`.distance.mmrf_scores`) through the same cache, and :func:`run_fits` takes both kinds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import polars as pl

from warehouse.ranking import models as mdl
from warehouse.ranking.bt import PairIndex
from warehouse.ranking.cache import FitCache, config_hash, fit_id, fit_record, library_versions
from warehouse.ranking.design import Design, FeatureSet
from warehouse.ranking.distance import mmrf_scores
from warehouse.ranking.folds import GroupedKFold
from warehouse.ranking.guards import block_stats, check_fold
from warehouse.ranking.preprocess import (
    NEGLIGIBLE_SD,
    PCA_MIN_DIMS,
    PCA_VARIANCE,
    SNAP_RTOL,
    fit_fold,
    snap_rows,
)

PREPROCESS = {
    "scaler": "standard",
    "pca_variance": PCA_VARIANCE,
    "pca_min_dims": PCA_MIN_DIMS,
    "transform": "rowwise-vecdot",  # equal rows -> equal outputs (preprocess.rowwise_project)
    "negligible_sd": NEGLIGIBLE_SD,  # sd <= 1e-10 x the block's largest: constant column
    "snap_rtol": SNAP_RTOL,  # rows equal to 1e-10 (relative) are one row (preprocess.snap_rows)
}


@dataclass(frozen=True)
class Job:
    """One model on one feature set (``settings`` = overrides of :data:`.models.DEFAULTS`);
    ``cv``: None = LOOCV, else the grouped K-fold it runs (ignored by the distance baselines)."""

    model: str
    feature_set: FeatureSet
    settings: Mapping[str, object] = field(default_factory=dict)
    cv: GroupedKFold | None = None

    @classmethod
    def of(cls, model: str, feature_set: str | FeatureSet, **settings: object) -> Job:
        return cls(model, FeatureSet.parse(feature_set), dict(settings))

    def with_cv(self, cv: GroupedKFold | None) -> Job:
        return replace(self, cv=cv)

    @property
    def is_distance(self) -> bool:
        return self.model in mdl.DISTANCE

    @property
    def protocol(self) -> str:
        if self.is_distance:
            return "transductive"
        return "loocv" if self.cv is None else "grouped_kfold"

    def config(self) -> dict[str, object]:
        cfg: dict[str, object] = {
            "model": self.model,
            "feature_set": self.feature_set.name,
            "blocks": list(self.feature_set.block_names),
            "protocol": self.protocol,
            "settings": mdl.model_config(self.model, self.settings),
            "seed": mdl.SEED,
        }
        if not self.is_distance:
            cfg["preprocess"] = dict(PREPROCESS)
            if self.cv is not None:  # LOOCV configurations (and fit ids) stay as they were
                cfg["cv"] = self.cv.config()
        return cfg


@dataclass
class FitResult:
    """Out-of-fold scores of one fit (aligned with the design rows) and its provenance."""

    model: str
    feature_set: str
    protocol: str
    config: dict[str, object]
    config_hash: str
    fit_id: str
    predictions: np.ndarray
    arrays: dict[str, np.ndarray]
    meta: dict[str, object]
    from_cache: bool

    @classmethod
    def of(cls, job: Job, cfg, ch: str, fid: str, predictions, arrays, meta, from_cache: bool):
        """The result of ``job`` under its configuration ``cfg`` (protocol read from it)."""
        return cls(
            job.model, job.feature_set.name, str(cfg["protocol"]), cfg, ch, fid, predictions,
            arrays, meta, from_cache,
        )  # fmt: skip

    @property
    def model_key(self) -> str:
        """``<model>_<feature set>``, the public files' stem convention."""
        return f"{self.model}_{self.feature_set}"

    def pairwise_accuracy_ci(
        self, design: Design, n_boot: int, seed: int
    ) -> tuple[float, float, float]:
        """``(point, lo, hi)``: pairwise accuracy of the predictions on ``design`` with its
        main-table BCa 95% interval (:func:`warehouse.metrics.bca_ci`)."""
        from warehouse.metrics import bca_ci

        return bca_ci(
            design.categories,
            design.target,
            self.predictions,
            metrics=("pairwise_accuracy",),
            n_boot=n_boot,
            seed=seed,
        )["pairwise_accuracy"]

    def frame(self, design: Design) -> pl.DataFrame:
        """``category, product_code, predicted_score, model, feature_set, config_hash, fit_id``."""
        return design.keys.select("category", "product_code").with_columns(
            pl.Series("predicted_score", self.predictions, dtype=pl.Float64),
            pl.lit(self.model).alias("model"),
            pl.lit(self.feature_set).alias("feature_set"),
            pl.lit(self.config_hash).alias("config_hash"),
            pl.lit(self.fit_id).alias("fit_id"),
        )


def fit_key(design: Design, job: Job) -> tuple[dict[str, object], str, str]:
    """(configuration, config_hash, fit_id) of a job on a design."""
    cfg = job.config()
    ch = config_hash(cfg)
    rows = design.fingerprint(job.feature_set.block_names, references=job.is_distance)
    return cfg, ch, fit_id(ch, rows)


def result_from_cache(job: Job, cfg, ch, fid, cache: FitCache) -> FitResult | None:
    got = cache.get(fid)
    if got is None:
        return None
    arrays, meta = got
    return FitResult.of(job, cfg, ch, fid, arrays["predictions"], arrays, meta, True)


# --------------------------------------------------------------------------- fold worker


def design_payload(design: Design, block_names: Iterable[str]) -> dict[str, object]:
    """The arrays a fold worker needs (pickled once per chunk)."""
    pairs = PairIndex.build(design.category_index, design.target)
    return {
        "blocks": {b: snap_rows(design.block(b)) for b in dict.fromkeys(block_names)},
        "y": design.target,
        "cat": design.categories,
        "grp": design.groups,
        "pairs": pairs,
        "n": design.n,
    }


def make_fold(payload: Mapping[str, object], fb, names: Sequence[str], win, lose) -> mdl.Fold:
    train, test = fb.train_idx, fb.test_idx
    cat, grp = payload["cat"], payload["grp"]
    z_train, z_test = fb.matrices(names)
    return mdl.Fold(
        z_train=z_train,
        z_test=z_test,
        y_train=payload["y"][train],
        cat_train=cat[train],
        cat_test=cat[test],
        grp_test=grp[test],
        win=win,
        lose=lose,
        pair_group=grp[train][win] if len(win) else np.zeros(0, dtype=object),
    )


#: one fold for :func:`_fold_chunk`: (order key, training rows, test rows, rows that must stay
#: out of training besides the test rows or None, where: the guards' label)
FoldSpec = tuple[int, np.ndarray, np.ndarray, "np.ndarray | None", str]


def _fold_chunk(payload, jobs: list[tuple[str, dict, tuple[str, ...]]], folds, audit: bool):
    """Fit every job on each fold of ``folds`` (:data:`FoldSpec`) and score its test rows:
    ``[(key, test rows, block dims, [(scores, newton steps, warnings, cpu s, raw weights)])]``
    (raw weights: BT's, on the raw block columns, else None)."""
    from threadpoolctl import threadpool_limits

    n = payload["n"]
    blocks = payload["blocks"]
    names_all = list(blocks)
    stats = block_stats(blocks) if audit else None
    out = []
    with threadpool_limits(1):
        for key, train, test, held, where in folds:
            fb = fit_fold(blocks, train, test, names_all)
            win, lose = payload["pairs"].for_training(train, n)
            if audit:
                check_fold(blocks, fb, win, lose, where=where, stats=stats, held=held)
            dims = {b: fb.transforms[b].n_out for b in names_all}
            res = []
            for model, settings, names in jobs:
                fold = make_fold(payload, fb, names, win, lose)
                t0 = time.process_time()
                o = mdl.fit_predict(model, settings, fold)
                cpu = time.process_time() - t0
                raw = None
                if model == "bradley_terry" and o.weights is not None:
                    raw = np.concatenate(list(fb.raw_weights(names, o.weights).values()))
                res.append((np.asarray(o.scores, dtype=np.float64), o.n_iter, o.warnings, cpu, raw))
            out.append((key, test, dims, res))
    return out


def loocv_specs(n: int) -> list[FoldSpec]:
    """LOOCV: fold ``r`` tests row ``r`` and trains on the others."""
    rows = np.arange(n)
    return [(r, np.delete(rows, r), np.array([r]), None, f"LOOCV fold {r}") for r in range(n)]


def kfold_specs(design: Design, cv: GroupedKFold) -> list[FoldSpec]:
    """The grouped K-fold folds of ``design`` (:meth:`.folds.GroupedKFold.folds`)."""
    return [
        (f, train, test, None, f"grouped K-fold fold {f}")
        for f, (train, test) in enumerate(cv.folds(design.category_index))
    ]


def run_folds(payload, spec, folds: list[FoldSpec], n_jobs: int, audit: bool, chunk_size: int):
    """:func:`_fold_chunk` over ``folds`` in fixed chunks (never sized by ``n_jobs``), results
    sorted by fold key."""
    parts = parallel_map(
        _fold_chunk, [(payload, spec, c, audit) for c in chunks(folds, chunk_size)], n_jobs
    )
    return sorted((part for p in parts for part in p), key=lambda r: r[0])


def parallel_map(fn: Callable, tasks: list[tuple], n_jobs: int) -> list:
    """``[fn(*t) for t in tasks]``, on ``n_jobs`` loky workers when ``n_jobs > 1``."""
    if n_jobs <= 1 or len(tasks) <= 1:
        return [fn(*t) for t in tasks]
    from joblib import Parallel, delayed

    return Parallel(n_jobs=n_jobs, backend="loky")(delayed(fn)(*t) for t in tasks)


def chunks(items: Sequence, size: int) -> list[list]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


# --------------------------------------------------------------------------- runs


def run_loocv(
    design: Design,
    jobs: Sequence[Job],
    cache: FitCache | None = None,
    n_jobs: int = 2,
    audit: bool = True,
    chunk_size: int = 12,
) -> list[FitResult]:
    """Out-of-fold predictions of every supervised job (cached ones are read, not refitted):
    LOOCV, or each job's grouped K-fold (``Job.cv``). Jobs sharing a protocol share folds."""
    cache = cache or FitCache(None)
    results: dict[int, FitResult] = {}
    todo: dict[GroupedKFold | None, list[tuple[int, Job, dict, str, str]]] = {}
    for k, job in enumerate(jobs):
        if job.is_distance:
            raise ValueError(f"{job.model} is a distance baseline: use run_distance")
        cfg, ch, fid = fit_key(design, job)
        hit = result_from_cache(job, cfg, ch, fid, cache)
        if hit is not None:
            results[k] = hit
        else:
            todo.setdefault(job.cv, []).append((k, job, cfg, ch, fid))
    for cv, group in todo.items():
        results.update(_run_group(design, cv, group, cache, n_jobs, audit, chunk_size))
    return [results[k] for k in range(len(jobs))]


def _run_group(design: Design, cv, todo, cache: FitCache, n_jobs, audit, chunk_size):
    names = [b for _, job, *_ in todo for b in job.feature_set.block_names]
    payload = design_payload(design, names)
    spec = [(job.model, cfg["settings"], job.feature_set.block_names) for _, job, cfg, *_ in todo]
    t0 = time.perf_counter()
    if cv is None:
        folds = run_folds(payload, spec, loocv_specs(design.n), n_jobs, audit, chunk_size)
    else:  # one task per fold: each fold is ~n/k test products on a full training set
        folds = run_folds(payload, spec, kfold_specs(design, cv), n_jobs, audit, 1)
    wall = time.perf_counter() - t0
    versions = library_versions()
    results = {}
    for j, (k, job, cfg, ch, fid) in enumerate(todo):
        pred = np.full(design.n, np.nan)
        for _, test, _, res in folds:
            pred[test] = res[j][0]
        arrays = {"predictions": pred}
        for b in job.feature_set.block_names:
            arrays[f"dims__{b.replace(':', '__')}"] = np.array([d[b] for _, _, d, _ in folds])
        raws = [res[j][4] for *_, res in folds]
        if all(r is not None for r in raws):
            arrays["raw_weights"] = np.vstack(raws)
        extra = {} if cv is None else {"n_folds": cv.k}
        results[k] = _store_fit(
            design,
            job,
            (cfg, ch, fid),
            arrays,
            cache,
            versions,
            fit_cpu_seconds=float(sum(res[j][3] for *_, res in folds)),
            run_wall_seconds=wall,
            newton_steps=int(sum(res[j][1] for *_, res in folds)),
            convergence_warnings=int(sum(res[j][2] for *_, res in folds)),
            **extra,
        )
    return results


def _store_fit(
    design: Design,
    job: Job,
    key: tuple[dict, str, str],
    arrays: dict[str, np.ndarray],
    cache: FitCache,
    versions: dict[str, str],
    **facts: object,
) -> FitResult:
    """Record a fresh fit of ``job`` (``key``: its :func:`fit_key`; ``arrays["predictions"]``
    its scores; ``facts``: its protocol's diagnostics), put it in ``cache`` and return it."""
    cfg, ch, fid = key
    meta = fit_record(
        job.model,
        job.feature_set.name,
        cfg["protocol"],
        cfg,
        ch,
        versions,
        design.n,
        design.data_origin,
        **facts,
    )
    cache.put(fid, arrays, meta)
    return FitResult.of(job, cfg, ch, fid, arrays["predictions"], arrays, meta, False)


def run_fits(
    design: Design,
    jobs: Sequence[Job],
    cache: FitCache | None = None,
    n_jobs: int = 2,
    audit: bool = True,
) -> list[FitResult]:
    """Supervised jobs through :func:`run_loocv`, distance jobs through :func:`run_distance`;
    results in job order."""
    sup = [k for k, j in enumerate(jobs) if not j.is_distance]
    dist = [k for k, j in enumerate(jobs) if j.is_distance]
    got: dict[int, FitResult] = {}
    got.update(
        zip(sup, run_loocv(design, [jobs[k] for k in sup], cache, n_jobs, audit), strict=True)
    )
    got.update(zip(dist, run_distance(design, [jobs[k] for k in dist], cache), strict=True))
    return [got[k] for k in range(len(jobs))]


def run_distance(
    design: Design, jobs: Sequence[Job], cache: FitCache | None = None
) -> list[FitResult]:
    """Transductive scores of every distance job (:func:`.distance.mmrf_scores`; cached ones are
    read, not recomputed)."""
    cache = cache or FitCache(None)
    out = []
    for job in jobs:
        cfg, ch, fid = fit_key(design, job)
        hit = result_from_cache(job, cfg, ch, fid, cache)
        if hit is None:
            settings = cfg["settings"]
            scores, info = mmrf_scores(
                design,
                job.feature_set.block_names,
                str(settings["metric"]),
                float(settings["tie_tolerance"]),
            )
            arrays = {"predictions": scores, "n_modalities": info["n_modalities"]}
            hit = _store_fit(
                design,
                job,
                (cfg, ch, fid),
                arrays,
                cache,
                library_versions(),
                modalities=info["modalities"],
            )
        out.append(hit)
    return out
