"""The planted-signal check: can the models recover a target that follows one block, and does
permuting that block inside each category take the signal away (docs/benchmark.md §8)?

One permuted draw is not a null: a draw can happen to align with other features, which a
product-resampling CI cannot see (issue 22: BT on SNCTI scored .590 [.536, .643] on one
permuted draw). The check therefore fits ``K`` permutations (default 20; draw ``k`` shuffles the
block with ``default_rng(seed + k)``, so draw 0 is the former single draw) and reports the
planted score's rank among them and the permutation p-value ``(1 + #{permuted >= planted}) /
(K + 1)`` (ties at 1e-10 count against the plant).

Used by the tests on synthetic designs and, on a build simulated with ``tastebench simulate
--plant-signal nutrition|text``, on the real blocks (docs/ranking.md has the numbers).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.errors import WarehouseError
from warehouse.ranking.cache import FitCache
from warehouse.ranking.design import Design
from warehouse.ranking.loocv import Job, run_loocv

N_PERMUTATIONS = 20
TIE_EPS = 1e-10


def planted_signal_check(
    design: Design,
    block: str,
    feature_set: str,
    models: Sequence[str] = ("bradley_terry", "ridge"),
    n_boot: int = 10000,
    seed: int = 42,
    cache: FitCache | None = None,
    n_jobs: int = 2,
    n_permutations: int = N_PERMUTATIONS,
) -> pl.DataFrame:
    """One row per (model, draw): ``variant`` ``planted`` (draw 0, with its main-table BCa 95%
    CI) or ``permuted`` (draws 0..K-1, ``block`` shuffled inside each category with
    ``default_rng(seed + draw)``; no CI): pairwise accuracy, CI, whether it excludes .5."""
    from warehouse.metrics import pairwise_accuracy

    if n_permutations < 1:
        raise ValueError(f"n_permutations must be >= 1, got {n_permutations}")
    jobs = [Job.of(m, feature_set) for m in models]
    rows = []
    for fit in run_loocv(design, jobs, cache, n_jobs):
        point, lo, hi = fit.pairwise_accuracy_ci(design, n_boot, seed)
        rows.append(_row(fit, design, "planted", 0, None, point, lo, hi))
    for k in range(n_permutations):
        d = design.permute_block_within_category(block, seed + k)
        for fit in run_loocv(d, jobs, cache, n_jobs):
            acc = pairwise_accuracy(d.categories, d.target, fit.predictions)
            rows.append(_row(fit, d, "permuted", k, seed + k, acc, None, None))
    return pl.DataFrame(rows)


def _row(fit, design: Design, variant: str, draw: int, perm_seed, acc, lo, hi) -> dict:
    return {
        "model": fit.model,
        "feature_set": fit.feature_set,
        "variant": variant,
        "draw": draw,
        "permutation_seed": perm_seed,
        "pairwise_accuracy": float(acc),
        "ci_lo": lo,
        "ci_hi": hi,
        "ci_excludes_half": None if lo is None else bool(lo > 0.5 or hi < 0.5),
        "data_origin": design.data_origin,
    }


def permutation_summary(table: pl.DataFrame) -> pl.DataFrame:
    """Per model, from :func:`planted_signal_check`'s rows: the planted accuracy and CI, the
    permuted draws' mean, sd, 95th percentile and maximum, the planted score's rank among the
    ``K + 1`` scores (1 = highest; a permuted draw within 1e-10 ranks above it) and the
    permutation p-value ``(1 + #{permuted >= planted - 1e-10}) / (K + 1)``."""
    out = []
    for (model,), rows in table.group_by(["model"], maintain_order=True):
        planted = rows.filter(pl.col("variant") == "planted").row(0, named=True)
        perm = rows.filter(pl.col("variant") == "permuted")["pairwise_accuracy"].to_numpy()
        at_least = int((perm >= planted["pairwise_accuracy"] - TIE_EPS).sum())
        out.append(
            {
                "model": model,
                "feature_set": planted["feature_set"],
                "planted_accuracy": planted["pairwise_accuracy"],
                "ci_lo": planted["ci_lo"],
                "ci_hi": planted["ci_hi"],
                "n_permutations": len(perm),
                "permuted_mean": float(perm.mean()),
                "permuted_sd": float(perm.std(ddof=1)) if len(perm) > 1 else float("nan"),
                "permuted_q95": float(np.quantile(perm, 0.95)),
                "permuted_max": float(perm.max()),
                "planted_rank": 1 + at_least,
                "p_value": (1 + at_least) / (len(perm) + 1),
                "data_origin": planted["data_origin"],
            }
        )
    return pl.DataFrame(out)


def summary_markdown(summary: pl.DataFrame, block: str) -> str:
    """The report section of ``tastebench train food --check-signal BLOCK``."""
    head = (
        f"## Planted-signal check: {block}\n\n"
        "| model | feature set | planted (BCa 95%) | permuted mean ± sd | permuted q95 / max "
        "| rank of planted | p | data origin |\n|---|---|---|---|---|---|---|---|\n"
    )
    lines = [
        f"| {r['model']} | {r['feature_set']} | {r['planted_accuracy']:.3f} "
        f"[{r['ci_lo']:.3f}, {r['ci_hi']:.3f}] | {r['permuted_mean']:.3f} ± "
        f"{r['permuted_sd']:.3f} | {r['permuted_q95']:.3f} / {r['permuted_max']:.3f} | "
        f"{r['planted_rank']} of {r['n_permutations'] + 1} | {r['p_value']:.3f} | "
        f"{r['data_origin']} |"
        for r in summary.iter_rows(named=True)
    ]
    return head + "\n".join(lines) + "\n"


def signal_check_report(
    design: Design,
    block: str,
    n_jobs: int = 2,
    n_permutations: int = N_PERMUTATIONS,
    out_dir: Path | str | None = None,
) -> str:
    """BT and Ridge on ``S`` + ``block`` against ``n_permutations`` within-category permutations
    of the block (no cache: the permuted designs are throwaways): the report section. With
    ``out_dir`` also written to ``signal_check_<block>.md`` and every draw to
    ``signal_check_<block>_draws.csv`` there."""
    if block not in ("N", "C", "T", "I") or block not in design.blocks:
        raise WarehouseError(
            f"--check-signal {block!r}: not a feature block of this warehouse. Fix: use one of "
            f"{', '.join(b for b in 'NCTI' if b in design.blocks)}."
        )
    table = planted_signal_check(
        design, block, "S" + block, n_jobs=n_jobs, n_permutations=n_permutations
    )
    text = summary_markdown(permutation_summary(table), block)
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / f"signal_check_{block}.md").write_text(text, encoding="utf-8")
        table.write_csv(out / f"signal_check_{block}_draws.csv")
        text += f"\nwritten to {out / f'signal_check_{block}.md'} (+ _draws.csv)\n"
    return text
