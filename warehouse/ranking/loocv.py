"""LOOCV runs: every supervised model x feature set on one design, fits read from the cache.

Protocol (BENCHMARK.md §3): rows are the analogs sorted by (category, product_code); fold ``r``
holds out row ``r`` and trains on the other rows. Per fold, every block is scaled (and PCA'd when
over 10 dims) on the training rows only (:func:`.preprocess.fit_fold`), the guards of
:mod:`.guards` run, and each requested (model, feature set) is fitted on the concatenated blocks.

Speed without changing a number: a fold's block transforms are computed once and shared by every
model and feature set of the run (PCA is per block, so a feature set is a concatenation); folds
are independent and run in chunks on ``n_jobs`` loky workers with BLAS pinned to one thread in
every fold, so results do not depend on the worker count. A (model, feature set) whose
``fit_id`` is in the cache is read, never refitted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from warehouse.ranking import models as mdl
from warehouse.ranking.bt import PairIndex
from warehouse.ranking.cache import FitCache, config_hash, fit_id, fit_record, library_versions
from warehouse.ranking.design import Design, FeatureSet
from warehouse.ranking.guards import block_stats, check_fold
from warehouse.ranking.preprocess import PCA_MIN_DIMS, PCA_VARIANCE, fit_fold

PREPROCESS = {"scaler": "standard", "pca_variance": PCA_VARIANCE, "pca_min_dims": PCA_MIN_DIMS}


@dataclass(frozen=True)
class Job:
    """One model on one feature set (``settings`` = overrides of :data:`.models.DEFAULTS`)."""

    model: str
    feature_set: FeatureSet
    settings: Mapping[str, object] = field(default_factory=dict)

    @classmethod
    def of(cls, model: str, feature_set: str | FeatureSet, **settings: object) -> Job:
        return cls(model, FeatureSet.parse(feature_set), dict(settings))

    @property
    def is_distance(self) -> bool:
        return self.model in mdl.DISTANCE

    def config(self) -> dict[str, object]:
        cfg: dict[str, object] = {
            "model": self.model,
            "feature_set": self.feature_set.name,
            "blocks": list(self.feature_set.block_names),
            "protocol": "transductive" if self.is_distance else "loocv",
            "settings": mdl.model_config(self.model, self.settings),
            "seed": mdl.SEED,
        }
        if not self.is_distance:
            cfg["preprocess"] = dict(PREPROCESS)
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

    @property
    def model_key(self) -> str:
        """``<model>_<feature set>``, the public files' stem convention."""
        return f"{self.model}_{self.feature_set}"

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
    return FitResult(
        job.model,
        job.feature_set.name,
        str(cfg["protocol"]),
        cfg,
        ch,
        fid,
        arrays["predictions"],
        arrays,
        meta,
        True,
    )


# --------------------------------------------------------------------------- fold worker


def design_payload(design: Design, block_names: Iterable[str]) -> dict[str, object]:
    """The arrays a fold worker needs (pickled once per chunk)."""
    pairs = PairIndex.build(design.category_index, design.target)
    return {
        "blocks": {b: design.block(b) for b in dict.fromkeys(block_names)},
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


def _loocv_chunk(
    payload, jobs: list[tuple[str, dict, tuple[str, ...]]], folds: list[int], audit: bool
):
    from threadpoolctl import threadpool_limits

    n = payload["n"]
    blocks = payload["blocks"]
    names_all = list(blocks)
    stats = block_stats(blocks) if audit else None
    out = []
    with threadpool_limits(1):
        for r in folds:
            train = np.delete(np.arange(n), r)
            test = np.array([r])
            fb = fit_fold(blocks, train, test, names_all)
            win, lose = payload["pairs"].for_training(train, n)
            if audit:
                check_fold(blocks, fb, win, lose, where=f"LOOCV fold {r}", stats=stats)
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
                res.append((float(o.scores[0]), o.n_iter, o.warnings, cpu, raw))
            out.append((r, dims, res))
    return out


def parallel_map(fn: Callable, tasks: list[tuple], n_jobs: int) -> list:
    """``[fn(*t) for t in tasks]``, on ``n_jobs`` loky workers when ``n_jobs > 1``."""
    if n_jobs <= 1 or len(tasks) <= 1:
        return [fn(*t) for t in tasks]
    from joblib import Parallel, delayed

    return Parallel(n_jobs=n_jobs, backend="loky")(delayed(fn)(*t) for t in tasks)


def chunks(items: Sequence[int], size: int) -> list[list[int]]:
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
    """Out-of-fold predictions of every supervised job (cached ones are read, not refitted)."""
    cache = cache or FitCache(None)
    results: dict[int, FitResult] = {}
    todo: list[tuple[int, Job, dict, str, str]] = []
    for k, job in enumerate(jobs):
        if job.is_distance:
            raise ValueError(f"{job.model} is a distance baseline: use run_distance")
        cfg, ch, fid = fit_key(design, job)
        hit = result_from_cache(job, cfg, ch, fid, cache)
        if hit is not None:
            results[k] = hit
        else:
            todo.append((k, job, cfg, ch, fid))
    if todo:
        names = [b for _, job, *_ in todo for b in job.feature_set.block_names]
        payload = design_payload(design, names)
        spec = [
            (job.model, cfg["settings"], job.feature_set.block_names) for _, job, cfg, *_ in todo
        ]
        t0 = time.perf_counter()
        parts = parallel_map(
            _loocv_chunk,
            [(payload, spec, c, audit) for c in chunks(range(design.n), chunk_size)],
            n_jobs,
        )
        wall = time.perf_counter() - t0
        folds = sorted((r, dims, res) for part in parts for r, dims, res in part)
        versions = library_versions()
        for j, (k, job, cfg, ch, fid) in enumerate(todo):
            pred = np.array([res[j][0] for _, _, res in folds])
            arrays = {"predictions": pred}
            for b in job.feature_set.block_names:
                arrays[f"dims__{b.replace(':', '__')}"] = np.array([d[b] for _, d, _ in folds])
            raws = [res[j][4] for _, _, res in folds]
            if all(r is not None for r in raws):
                arrays["raw_weights"] = np.vstack(raws)
            meta = fit_record(
                job.model,
                job.feature_set.name,
                cfg["protocol"],
                cfg,
                ch,
                versions,
                design.n,
                design.data_origin,
                fit_cpu_seconds=float(sum(res[j][3] for _, _, res in folds)),
                run_wall_seconds=wall,
                newton_steps=int(sum(res[j][1] for _, _, res in folds)),
                convergence_warnings=int(sum(res[j][2] for _, _, res in folds)),
            )
            cache.put(fid, arrays, meta)
            results[k] = FitResult(
                job.model,
                job.feature_set.name,
                str(cfg["protocol"]),
                cfg,
                ch,
                fid,
                pred,
                arrays,
                meta,
                False,
            )
    return [results[k] for k in range(len(jobs))]


def run_fits(
    design: Design,
    jobs: Sequence[Job],
    cache: FitCache | None = None,
    n_jobs: int = 2,
    audit: bool = True,
) -> list[FitResult]:
    """Supervised jobs through :func:`run_loocv`, distance jobs through
    :func:`.distance.run_distance`; results in job order."""
    from warehouse.ranking.distance import run_distance

    sup = [k for k, j in enumerate(jobs) if not j.is_distance]
    dist = [k for k, j in enumerate(jobs) if j.is_distance]
    got: dict[int, FitResult] = {}
    got.update(
        zip(sup, run_loocv(design, [jobs[k] for k in sup], cache, n_jobs, audit), strict=True)
    )
    got.update(zip(dist, run_distance(design, [jobs[k] for k in dist], cache), strict=True))
    return [got[k] for k in range(len(jobs))]
