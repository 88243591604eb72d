"""The result of ``tastebench evaluate`` as typed objects: each ``to_json()`` gives its part of the
JSON contract of docs/evaluate.md (key order included). The scoring engine
(:mod:`warehouse.metrics.scoring`) returns frames and records; the JSON is shaped here.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from warehouse.evaluate.contract import SCHEMA_VERSION
from warehouse.metrics.intervals import (
    DEFAULT_CI_METHODS,
    DEFAULT_PER_CATEGORY_METHOD,
    INTERVAL_METRICS,
)
from warehouse.metrics.scoring import (
    DEFAULT_PER_CATEGORY_VARIANT,
    DEFAULT_VARIANT,
    MAIN_VARIANT,
    PER_CATEGORY_VARIANT,
    interval,
)


def comparison_records(comparisons: pl.DataFrame) -> list[dict[str, object]]:
    """The rows of :func:`warehouse.metrics.scoring.compare_pair_tables` as JSON records (its
    columns in order; null -> None)."""
    return comparisons.to_dicts()


def per_category_records(per_category: pl.DataFrame) -> dict[str, dict[str, object]]:
    """``models[].per_category``: category -> sizes and the pairwise accuracy with its interval,
    from :func:`warehouse.metrics.scoring.score_per_category`."""
    return {
        r["category"]: {
            "n_products": int(r["n_products"]),
            "n_pairs": int(r["n_pairs"]),
            "pairwise_accuracy": {
                **interval(r["pairwise_accuracy"], r["ci_lo"], r["ci_hi"]),
                "ci_method": r["ci_method"],
                "is_degenerate": bool(r["is_degenerate"]),
                "ci_note": r["ci_note"],
            },
        }
        for r in per_category.iter_rows(named=True)
    }


@dataclass(frozen=True)
class Coverage:
    """How much of the known products a file covers (``models[]``'s coverage fields)."""

    n_expected: int
    n_present: int
    coverage: float | None
    missing_products: list[dict[str, object]]


@dataclass(frozen=True)
class ModelResult:
    """One entry of ``models``."""

    name: str
    source_file: str
    gold_column: str | None
    n_products: int
    n_pairs: int
    coverage: Coverage
    metrics: dict[str, dict[str, object]]
    per_category: dict[str, dict[str, object]]
    slices: dict[str, object]
    calibration: dict[str, object] | None

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "source_file": self.source_file,
            "gold_column": self.gold_column,
            "n_products": self.n_products,
            "n_pairs": self.n_pairs,
            "coverage": self.coverage.coverage,
            "n_expected_products": self.coverage.n_expected,
            "missing_products": self.coverage.missing_products,
            "metrics": self.metrics,
            "per_category": self.per_category,
            "slices": self.slices,
            "calibration": self.calibration,
        }


@dataclass(frozen=True)
class ScoringOptions:
    """The interval convention and bootstrap settings (``ci`` and ``bootstrap``)."""

    convention: str
    compare_method: str
    n_boot: int
    seed: int
    alpha: float

    def ci_json(self) -> dict[str, object]:
        default = self.convention == "default"
        return {
            "convention": self.convention,
            "methods": {
                m: (DEFAULT_CI_METHODS[m] if default else "published_bca") for m in INTERVAL_METRICS
            },
            "per_category": DEFAULT_PER_CATEGORY_METHOD if default else "published_bca",
            "comparisons": self.compare_method,
            "doc": "docs/statistics.md",
        }

    def bootstrap_json(self) -> dict[str, object]:
        published = self.convention == "published_bca"
        return {
            "n_boot": int(self.n_boot),
            "seed": int(self.seed),
            "alpha": self.alpha,
            "main_table": MAIN_VARIANT if published else DEFAULT_VARIANT,
            "per_category": PER_CATEGORY_VARIANT if published else DEFAULT_PER_CATEGORY_VARIANT,
        }


@dataclass(frozen=True)
class EvaluationResult:
    """The whole result of :func:`warehouse.evaluate.files.evaluate_files`."""

    gold: str
    data_origin: str
    settings: ScoringOptions
    models: tuple[ModelResult, ...]
    comparisons: pl.DataFrame
    trivial_policies: list[dict[str, object]]
    notes: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "schema_version": SCHEMA_VERSION,
            "gold": self.gold,
            "data_origin": self.data_origin,
            "ci": self.settings.ci_json(),
            "bootstrap": self.settings.bootstrap_json(),
            "models": [m.to_json() for m in self.models],
            "comparisons": comparison_records(self.comparisons),
            "trivial_policies": self.trivial_policies,
            "notes": list(self.notes),
        }
