"""Benchmark: the food-ranking model stage, the nested NNLS and the ablation grid, each against a
naive "refit everything" baseline measured in the same run.

Usage::

    python benchmarks/food_models.py [--n-jobs 2] [--no-grid] [--naive-folds 4]
                                     [--naive-pairs 150] [--db build/tastebench.duckdb]

Design: the real 215-analog category design of the default build (``marts.dim_products``,
``marts.fct_panel_means``, ``seeds.categories``, read-only) when ``--db`` exists, else the public
layout (:data:`warehouse.ranking.synthetic.PUBLIC_CATEGORIES`). Feature blocks are synthetic but
shaped like the real ones (S 4-d one-hot, N 6-d, C 64-d, T 384-d, I 50-d; PCA keeps a realistic
number of components), so the timings are those of a real build; the numbers the models produce
here mean nothing. The external model is the public Gemini out-of-fold file (mirror).

Stages (each cold = fresh fit cache, then warm = same cache):

1. **Default model stage** (what every build runs): nested BT + Gemini ensembles (NNLS, rank
   average, mean; 215 outer + 23,005 inner BT fits), then Ridge, HBT, Kernel RankSVM, LightGBM
   on SNCTI and the two MMRF baselines on NCI. The nested part is also printed on its own
   (target < 3 min cold on 2 cores).
2. **Full ablation grid** (``tastebench`` CLI, not the build): 5 supervised models x (S + 15
   subsets of NCTI, + SNCTI with each of 5 C variants: a 300-d encoder swap and 4 aggregation
   rules) + 2 distance models x (15 subsets + NCTI with each C variant): 140 fits (target < 20
   min cold on 2 cores).

Naive baseline (:mod:`warehouse.ranking.reference`): every fold refits sklearn StandardScaler +
PCA per block and the published estimator (LogisticRegression lbfgs, SVC with its own RBF,
Ridge, LGBMRegressor), pairs in plain Python, one process, no cache, nothing shared between
models. It would take hours, so it is MEASURED on ``--naive-folds`` folds of every (model,
feature set) and ``--naive-pairs`` nested pairs and EXTRAPOLATED LINEARLY to all 215 folds /
23,005 pairs (the per-fold cost does not depend on the fold). Distance baselines have no folds;
they cost the same in both and are timed once.

Times are wall seconds and CPU seconds of this process plus its (joined) loky workers. The
machine may be shared: the load average is printed before every stage.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from warehouse.ranking import models as mdl  # noqa: E402
from warehouse.ranking.ablation import default_jobs, grid_jobs  # noqa: E402
from warehouse.ranking.cache import FitCache  # noqa: E402
from warehouse.ranking.design import Design  # noqa: E402
from warehouse.ranking.loocv import Job, run_fits  # noqa: E402
from warehouse.ranking.nested import align_external, run_ensembles  # noqa: E402
from warehouse.ranking.reference import reference_loocv, reference_pair  # noqa: E402
from warehouse.ranking.synthetic import (  # noqa: E402
    SUBSET_COLUMNS,
    synthetic_blocks,
    synthetic_keys,
    synthetic_variants,
)

GEMINI = (
    "tastebench_public/food_similarity/results/oof_predictions/"
    "llm_gemini_3_1_pro_preview_ingredients_image.csv"
)


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _join_workers() -> None:
    """Shut the loky workers down so their CPU time is counted (RUSAGE_CHILDREN)."""
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)


class Timer:
    def __enter__(self) -> Timer:
        self.wall0, self.cpu0 = time.perf_counter(), _cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        _join_workers()
        self.wall = time.perf_counter() - self.wall0
        self.cpu = _cpu() - self.cpu0

    def __str__(self) -> str:
        return f"{self.wall:9.2f} s wall ({self.cpu:8.1f} s CPU)"


def _load() -> str:
    return "load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())


def load_design(db: Path) -> tuple[Design, str]:
    if db.exists():
        import duckdb

        with duckdb.connect(str(db), read_only=True) as con:  # closed on leaving
            prods = con.sql(
                "select p.category, p.product_code, p.is_analog, p.subset, c.hbt_group "
                "from marts.dim_products p join seeds.categories c using (category)"
            ).pl()
            means = con.sql(
                "select category, product_code, panel_mean from marts.fct_panel_means "
                "where is_analog"
            ).pl()
        keys = (
            prods.filter(pl.col("is_analog"))
            .join(means, on=["category", "product_code"])
            .sort("category", "product_code")
        )
        refs = prods.filter(~pl.col("is_analog")).sort("category", "product_code")
        key_frame = keys.select("category", "product_code", "subset", "hbt_group")
        target = keys["panel_mean"].to_numpy()
        ref_keys = refs.select("category", "product_code", "subset")
        origin = f"keys and panel means from {db} (read-only)"
    else:
        key_frame, ref_keys = synthetic_keys()
        target = np.random.default_rng(42).normal(4.0, 1.0, key_frame.height)
        origin = "public category layout (no warehouse found), synthetic panel means"
    blocks, refs_b = synthetic_blocks(key_frame, ref_keys, seed=42)
    extra, extra_refs = synthetic_variants(key_frame, ref_keys)
    blocks.update(extra)
    refs_b.update(extra_refs)
    design = Design(
        key_frame, target, blocks, ref_keys, refs_b, SUBSET_COLUMNS, data_origin="benchmark"
    )
    return design, origin


def naive_loocv_seconds(design: Design, jobs: list[Job], n_folds: int) -> tuple[float, float]:
    """(measured wall, extrapolated wall) of the naive baseline for the supervised jobs."""
    folds = np.linspace(0, design.n - 1, n_folds).round().astype(int).tolist()
    measured = extrapolated = 0.0
    for job in jobs:
        if job.is_distance:
            continue
        t0 = time.perf_counter()
        reference_loocv(design, job.model, job.feature_set, folds, bt_solver="lbfgs")
        dt = time.perf_counter() - t0
        measured += dt
        extrapolated += dt * design.n / n_folds
    return measured, extrapolated


def naive_nested_seconds(design: Design, n_pairs: int) -> tuple[float, float]:
    pairs = np.column_stack(np.triu_indices(design.n, 1))
    pick = pairs[np.linspace(0, len(pairs) - 1, n_pairs).round().astype(int)]
    t0 = time.perf_counter()
    for i, j in pick:
        reference_pair(design, "SNCTI", int(i), int(j), bt_solver="lbfgs")
    dt = time.perf_counter() - t0
    return dt, dt * len(pairs) / n_pairs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n-jobs", type=int, default=2)
    ap.add_argument("--db", type=Path, default=REPO_ROOT / "build" / "tastebench.duckdb")
    ap.add_argument(
        "--naive-folds",
        type=int,
        default=4,
        help="folds per (model, feature set) the naive baseline runs (default 4)",
    )
    ap.add_argument(
        "--naive-pairs",
        type=int,
        default=150,
        help="nested pairs the naive baseline runs (default 150)",
    )
    ap.add_argument("--no-grid", action="store_true", help="skip the ablation grid")
    ap.add_argument("--only-grid", action="store_true", help="skip the default model stage")
    args = ap.parse_args(argv)

    mirror = Path(os.environ.get("TASTEBENCH_DATA_MIRROR") or REPO_ROOT.parent / "shared" / "data")
    design, origin = load_design(args.db)
    gemini = align_external(design, pl.read_csv(mirror / GEMINI), "gemini")
    dims = {b: design.block(b).shape[1] for b in sorted(design.blocks)}
    print(f"design: {design.n} analogs, {design.reference_keys.height} references; {origin}")
    print(
        f"blocks (synthetic, realistic shapes): {dims}; cores {os.cpu_count()}, "
        f"n_jobs={args.n_jobs}"
    )

    if not args.only_grid:
        default_stage(design, gemini, args)
    if args.no_grid:
        return 0
    grid_stage(design, args)
    print(f"\nmodels: {', '.join(mdl.SUPERVISED + mdl.DISTANCE)}")
    return 0


def default_stage(design: Design, gemini: np.ndarray, args: argparse.Namespace) -> None:
    bt_job = Job.of("bradley_terry", "SNCTI")
    rest = [j for j in default_jobs(design) if j.model != "bradley_terry"]
    with tempfile.TemporaryDirectory() as tmp:
        cache = FitCache(tmp)
        print(f"\n[1] default model stage, cold fit cache ({_load()})")
        with Timer() as t_nested:
            ens = run_ensembles(design, bt_job, gemini, "gemini", cache, args.n_jobs)
        with Timer() as t_rest:
            fits = run_fits(design, rest, cache, args.n_jobs)
        cold_wall, cold_cpu = t_nested.wall + t_rest.wall, t_nested.cpu + t_rest.cpu
        print(
            f"  nested BT+Gemini (215 outer + 23,005 inner BT fits): {t_nested}   "
            f"target < 180 s wall"
        )
        print(f"  other models (HBT, RankSVM, Ridge, LightGBM, 2 MMRF): {t_rest}")
        print(f"  default stage cold total: {cold_wall:8.1f} s wall ({cold_cpu:8.1f} s CPU)")
        with Timer() as t_warm:
            warm = run_ensembles(design, bt_job, gemini, "gemini", FitCache(tmp), args.n_jobs)
            warm += run_fits(design, rest, FitCache(tmp), args.n_jobs)
        assert all(
            a.predictions.tobytes() == b.predictions.tobytes()
            for a, b in zip(ens + fits, warm, strict=True)
        )
        print(f"  default stage warm (every fit read from the cache): {t_warm}")
        steps = next(f for f in ens if f.model.endswith("nnls"))
        print(f"  NNLS weights (model, gemini), fold 0: {steps.arrays['nnls_weights'][0]}")

    print(f"\n[1b] naive baseline ({_load()}): sklearn per fold, one process, no cache")
    sup = [bt_job] + [j for j in rest if not j.is_distance]
    m_l, x_l = naive_loocv_seconds(design, sup, args.naive_folds)
    m_n, x_n = naive_nested_seconds(design, args.naive_pairs)
    print(
        f"  LOOCV of {len(sup)} supervised models: measured {m_l:.1f} s on {args.naive_folds} "
        f"folds each -> extrapolated LINEARLY to 215 folds: {x_l:8.1f} s"
    )
    print(
        f"  nested inner BT fits: measured {m_n:.1f} s on {args.naive_pairs} pairs -> "
        f"extrapolated LINEARLY to 23,005 pairs: {x_n:8.1f} s"
    )
    naive_default = x_l + x_n
    print(f"  naive default stage (extrapolated): {naive_default:8.1f} s wall")
    print(
        f"  speed-up: nested {x_n / t_nested.wall:6.1f}x (cold wall), default stage "
        f"{naive_default / cold_wall:6.1f}x cold, {naive_default / t_warm.wall:8.0f}x warm"
    )


def grid_stage(design: Design, args: argparse.Namespace) -> None:
    jobs, skipped = grid_jobs(design)
    with tempfile.TemporaryDirectory() as tmp:
        print(
            f"\n[2] full ablation grid: {len(jobs)} fits "
            f"({sum(not j.is_distance for j in jobs)} LOOCV, "
            f"{sum(j.is_distance for j in jobs)} distance), skipped {skipped} ({_load()})"
        )
        with Timer() as t_grid:
            run_fits(design, jobs, FitCache(tmp), args.n_jobs)
        print(f"  grid cold: {t_grid}   target < 1200 s wall")
        with Timer() as t_gwarm:
            run_fits(design, jobs, FitCache(tmp), args.n_jobs)
        print(f"  grid warm (read from the cache): {t_gwarm}")
    print(f"\n[2b] naive grid baseline ({_load()})")
    m_g, x_g = naive_loocv_seconds(design, jobs, max(2, args.naive_folds // 2))
    print(
        f"  measured {m_g:.1f} s on {max(2, args.naive_folds // 2)} folds per (model, "
        f"feature set) -> extrapolated LINEARLY to 215 folds: {x_g:8.1f} s"
    )
    print(f"  speed-up vs naive: {x_g / t_grid.wall:6.1f}x cold, {x_g / t_gwarm.wall:8.0f}x warm")


if __name__ == "__main__":
    from _results import run_and_record

    raise SystemExit(run_and_record("food_models", main))
