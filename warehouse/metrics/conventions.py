"""Scoring under interval conventions (docs/statistics.md): the one loop over conventions that
the metric marts (:mod:`warehouse.metrics.tables`, both conventions) and ``tastebench evaluate``
(:mod:`warehouse.evaluate.files`, the one it was asked for) share. Each convention is scored by
the engine of :mod:`warehouse.metrics.scoring` with the same ``n_boot`` and ``seed``, so a
convention's numbers do not depend on which other conventions are scored beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from .scoring import ALPHA, score_model, score_per_category, trivial_policies

CONVENTIONS = ("published_bca", "default")
"""Interval conventions of every model's rows in the metric marts. The published files need
``published_bca`` to reproduce Table 2; the warehouse's own fits carry it too (issue #11 asks for
their BCa intervals beside the published models'), as the non-default row: ``is_default_ci`` marks
the default (docs/statistics.md), which every reader (report, evaluate, comparisons) uses."""


@dataclass(frozen=True)
class ConventionScore:
    """One model scored under one convention: the overall metrics (:func:`.scoring.score_model`)
    and the per-category table (:func:`.scoring.score_per_category`), each None when not asked
    for."""

    convention: str
    overall: dict[str, object] | None
    per_category: pl.DataFrame | None


def score_conventions(
    category: object,
    gold: object,
    pred: object,
    *,
    conventions: Sequence[str] = CONVENTIONS,
    n_boot: int = 10000,
    seed: int = 42,
    alpha: float = ALPHA,
    overall: bool = True,
    per_category: bool = False,
    all_metrics: bool = True,
) -> list[ConventionScore]:
    """Score one model's rows (in the given order) under each of ``conventions``, in order."""
    return [
        ConventionScore(
            convention=conv,
            overall=score_model(
                category, gold, pred, n_boot=n_boot, seed=seed, alpha=alpha, ci=conv
            )
            if overall
            else None,
            per_category=score_per_category(
                category,
                gold,
                pred,
                n_boot=n_boot,
                seed=seed,
                all_metrics=all_metrics,
                ci=conv,
            )
            if per_category
            else None,
        )
        for conv in conventions
    ]


def policies_by_convention(
    category: object,
    product_code: object,
    gold: object,
    gold_pairs: object | None,
    *,
    conventions: Sequence[str] = CONVENTIONS,
    n_boot: int = 10000,
    seed: int = 42,
    pair_file: str = "the gold pair file",
) -> list[tuple[str, list[dict[str, object]]]]:
    """The trivial policies (:func:`.scoring.trivial_policies`) scored on the reference products
    under each of ``conventions``, in order: ``(convention, policies)``."""
    return [
        (
            conv,
            trivial_policies(
                category,
                product_code,
                gold,
                gold_pairs,
                n_boot=n_boot,
                seed=seed,
                pair_file=pair_file,
                ci=conv,
            ),
        )
        for conv in conventions
    ]
