"""What the ranking dbt Python models call (each model: read refs, call one function here); each
function resolves the build's settings and dbt vars and calls one library function.

* :func:`food_design`: the build's design (:func:`.warehouse_design.warehouse_design`);
* :func:`fct_food_oof_predictions`: the default stage's rows (:func:`.oof.food_oof_predictions`);
* :func:`dim_food_fits`: one row per fit of them (:func:`.oof.food_fits_table`);
* :func:`agg_ablation_metrics`: the cached ablation grid (:func:`.ablation.ablation_table`);
* :func:`feature_encoders_json`: the encoders of the feature marts a design read.

``cache_dir`` is an argument of every library function; the entry points resolve it once, through
the warehouse settings (:func:`ranking_cache_dir`: ``<Settings.fits_dir>/ranking``), so a build
(or a test) with its own build folder never reads fits from another one. This module, the dbt
entry point, is the only one of the package that reads the settings or ``dbt_project.yml`` (each
when a function needs it, never at import).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from warehouse.config import project_var
from warehouse.ranking.ablation import DEFAULT_ENSEMBLE_MODELS, ablation_table
from warehouse.ranking.cache import canonical_json
from warehouse.ranking.design import Design
from warehouse.ranking.oof import food_fits_table, food_oof_predictions
from warehouse.ranking.warehouse_design import warehouse_design


def max_analogs_default_stage() -> int:
    """LOOCV up to this many analogs, grouped K-fold above (:func:`.folds.fold_scheme`): LOOCV
    costs n fits of every model and the nested ensembles n(n-1)/2 pair fits (23,005 at the public
    215; 2.3M at a scale-10 simulation's 2,150, i.e. days), grouped K-fold k fits and k x k inner
    fits (:mod:`.folds`, docs/scaling.md). The dbt var ``food_models_max_analogs`` of
    dbt_project.yml (400; a build's ``--vars`` may override it, 0 switches the stage off), read
    when first needed (:func:`warehouse.config.project_var` caches it)."""
    return int(project_var("food_models_max_analogs"))


def ranking_cache_dir() -> Path:
    """``Settings.ranking_cache_dir`` (default ``<fits_dir>/ranking``): the build's fit cache for
    the food-ranking models."""
    from warehouse.config import load_settings

    return load_settings().ranking_cache_dir


def default_n_jobs() -> int:
    """Two loky workers (the project machines' cores); results never depend on it."""
    return max(1, min(2, os.cpu_count() or 1))


def feature_encoders_json(features: Mapping[str, pl.DataFrame]) -> str:
    """``{letter: "<encoder>@<version>"}`` of the blocks the design read."""
    out = {}
    for letter, frame in sorted(features.items()):
        if frame.height:
            out[letter] = f"{frame['encoder'][0]}@{frame['encoder_version'][0]}"
    return canonical_json(out)


def food_design(
    products: pl.DataFrame,
    panel_means: pl.DataFrame,
    categories: pl.DataFrame,
    nutrition_subset_columns: pl.DataFrame,
    features: Mapping[str, pl.DataFrame],
    compound_variants: pl.DataFrame | None = None,
) -> Design:
    """The build's design from the marts (``features``: letter -> feature mart frame), with the
    leak audit under the dbt var :func:`max_analogs_default_stage`."""
    return warehouse_design(
        products,
        panel_means,
        categories,
        nutrition_subset_columns,
        features,
        compound_variants,
        max_analogs_default_stage(),
    )


def fct_food_oof_predictions(
    design: Design,
    public_oof: pl.DataFrame,
    encoders_json: str,
    cache_dir: Path | str | None = None,
    n_jobs: int | None = None,
    ensemble_models: Sequence[str] = DEFAULT_ENSEMBLE_MODELS,
    max_analogs: int | None = None,
) -> pl.DataFrame:
    """``marts.fct_food_oof_predictions``; None: :func:`ranking_cache_dir`,
    :func:`default_n_jobs`, :func:`max_analogs_default_stage` (0: the stage is off)."""
    return food_oof_predictions(
        design,
        public_oof,
        encoders_json,
        ranking_cache_dir() if cache_dir is None else cache_dir,
        default_n_jobs() if n_jobs is None else n_jobs,
        ensemble_models,
        max_analogs_default_stage() if max_analogs is None else max_analogs,
    )


def dim_food_fits(predictions: pl.DataFrame) -> pl.DataFrame:
    """``marts.dim_food_fits`` from ``fct_food_oof_predictions``."""
    return food_fits_table(predictions)


def agg_ablation_metrics(
    design: Design,
    default_predictions: pl.DataFrame,
    cache_dir: Path | str | None = None,
    n_boot: int = 10000,
    seed: int = 42,
    max_analogs: int | None = None,
) -> pl.DataFrame:
    """``marts.agg_ablation_metrics``: the grid fits ``tastebench train food --grid ablation``
    cached; None: :func:`ranking_cache_dir`, :func:`max_analogs_default_stage`."""
    return ablation_table(
        design,
        default_predictions,
        ranking_cache_dir() if cache_dir is None else cache_dir,
        n_boot,
        seed,
        max_analogs_default_stage() if max_analogs is None else max_analogs,
    )
