"""The planted-signal check: can the models recover a target that follows one block, and does
permuting that block inside each category take the signal away (BENCHMARK.md §8)?

Used by the tests on synthetic designs and, on a build simulated with ``tastebench simulate
--plant-signal nutrition|text``, on the real blocks (docs/ranking.md has the numbers).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from warehouse.ranking.cache import FitCache
from warehouse.ranking.design import Design
from warehouse.ranking.loocv import Job, run_loocv


def planted_signal_check(
    design: Design,
    block: str,
    feature_set: str,
    models: Sequence[str] = ("bradley_terry", "ridge"),
    n_boot: int = 10000,
    seed: int = 42,
    cache: FitCache | None = None,
    n_jobs: int = 2,
) -> pl.DataFrame:
    """One row per (model, design variant ``planted`` / ``permuted``): pairwise accuracy with its
    main-table BCa 95% CI and whether the CI excludes .5. ``permuted`` shuffles ``block`` inside
    each category (``default_rng(seed)``)."""
    from warehouse.metrics import bca_ci

    rows = []
    variants = {"planted": design, "permuted": design.permute_block_within_category(block, seed)}
    for label, d in variants.items():
        fits = run_loocv(d, [Job.of(m, feature_set) for m in models], cache, n_jobs)
        for fit in fits:
            point, lo, hi = bca_ci(
                d.categories,
                d.target,
                fit.predictions,
                metrics=("pairwise_accuracy",),
                n_boot=n_boot,
                seed=seed,
            )["pairwise_accuracy"]
            rows.append(
                {
                    "model": fit.model,
                    "feature_set": fit.feature_set,
                    "variant": label,
                    "pairwise_accuracy": point,
                    "ci_lo": lo,
                    "ci_hi": hi,
                    "ci_excludes_half": bool(lo > 0.5 or hi < 0.5),
                    "data_origin": d.data_origin,
                }
            )
    return pl.DataFrame(rows)
