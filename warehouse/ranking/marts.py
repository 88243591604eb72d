"""What the ranking dbt Python models call (each model: read refs, call one function here).

* :func:`food_design`: the design from ``marts.dim_products``, ``marts.fct_panel_means``,
  ``seeds.categories``, ``seeds.nutrition_subset_columns`` and the feature marts (one frame per
  block with a ``vector`` list column), with the target-leak audit;
* :func:`default_model_fits`: the default model stage (five supervised models, two MMRF
  baselines, the nested BT + Gemini ensembles), fits read from / written to ``cache_dir``;
* :func:`oof_prediction_rows`: rows for ``marts.fct_oof_predictions`` (``source = 'warehouse_fit'``,
  gold = panel mean), unioned by name with the public files;
* :func:`fit_rows`: one row per fit (configuration JSON, hash, versions) for a fits mart;
* :func:`ablation_fit_rows` / :func:`ablation_metrics_rows`: the ablation grid as far as the CLI
  has filled the cache (the build never fits the grid), scored with :mod:`warehouse.metrics`;
* :func:`run_ablation_grid`: fits the grid into the cache (``tastebench train food``, through
  :mod:`warehouse.ranking.train`);
* :func:`food_design`, :func:`fct_food_oof_predictions`, :func:`dim_food_fits`,
  :func:`agg_ablation_metrics`: the dbt models' entry points (``python_models/marts/ranking/``).

``cache_dir`` is an argument of every library function; the dbt entry points resolve it once,
through the warehouse settings (:func:`ranking_cache_dir`: ``<Settings.fits_dir>/ranking``), so a
build (or a test) with its own build folder never reads fits from another one. This module, the
dbt entry point, is the only one of the package that reads the settings or ``dbt_project.yml``
(each when a function needs it, never at import).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from warehouse.config import project_var
from warehouse.ranking import models as mdl
from warehouse.ranking.ablation import cached_fits, default_jobs, grid_jobs, grid_metrics, run_grid
from warehouse.ranking.cache import FitCache, canonical_json
from warehouse.ranking.design import Design, DesignError, FeatureSet, design_from_frames
from warehouse.ranking.folds import GroupedKFold, fold_scheme
from warehouse.ranking.guards import assert_no_target_leak
from warehouse.ranking.loocv import FitResult, Job, run_fits
from warehouse.ranking.nested import align_external, run_ensembles

SOURCE = "warehouse_fit"  # fct_oof_predictions.source of the warehouse's own fits
GEMINI_STEM = "llm_gemini_3_1_pro_preview_ingredients_image"


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


def default_model_fits(
    design: Design,
    oof: pl.DataFrame,
    cache_dir: Path | str,
    n_jobs: int = 2,
    ensemble_models: Sequence[str] = ("bradley_terry",),
    cv: GroupedKFold | None = None,
) -> list[FitResult]:
    """The default stage: every model's main configuration and, for every supervised model, its
    ensembles with Gemini: rank average and mean always (no training beyond the model's own
    out-of-fold fit); the nested NNLS for ``ensemble_models`` (BT: 23,005 warm-started pair
    fits, minutes) and for any other model whose nested base is already in the cache
    (``tastebench train food --grid ensembles`` fits them: hours for RankSVM and LightGBM),
    never fitted here. ``cv``: None = LOOCV, else the grouped K-fold of the supervised models
    (:func:`.folds.fold_scheme`)."""
    cache = FitCache(cache_dir)
    jobs = default_jobs(design, cv=cv)
    fits = run_fits(design, jobs, cache, n_jobs)
    gemini = external_predictions(design, oof)
    fs = FeatureSet.parse(design.feature_set)
    for model in sorted(mdl.SUPERVISED, key=lambda m: (m not in ensemble_models, m)):
        fits += run_ensembles(
            design,
            Job(model, fs, cv=cv),
            gemini,
            "gemini",
            cache,
            n_jobs,
            nnls_if_cached=model not in ensemble_models,
        )
    return fits


def oof_prediction_rows(
    design: Design, fits: Sequence[FitResult], config_hash: bool = False
) -> pl.DataFrame:
    """Rows in the contract layout of ``marts.fct_oof_predictions`` (without the derived
    ``prediction_key``); ``config_hash=True`` adds the fit's configuration hash (also in
    :func:`fit_rows`, joinable on ``fit_id``)."""
    gold = design.keys.select("category", "product_code").with_columns(
        pl.Series("gold_value", design.target)
    )
    frames = []
    for f in fits:
        frames.append(
            f.frame(design)
            .join(gold, on=["category", "product_code"], how="left", maintain_order="left")
            .select(
                pl.lit(f"{f.model_key}:{f.fit_id[:12]}").alias("model_id"),
                pl.lit(None, pl.String).alias("model_file_stem"),
                pl.lit(f.model).alias("model_name"),
                pl.lit(f.feature_set).alias("feature_set"),
                pl.lit(False).alias("is_bench_variant"),
                pl.lit(SOURCE).alias("source"),
                pl.lit(f.fit_id).alias("fit_id"),
                pl.col("category"),
                pl.col("product_code").cast(pl.Int32),
                (pl.col("category") + ":" + pl.col("product_code").cast(pl.String)).alias(
                    "product_key"
                ),
                pl.lit("panel_mean").alias("gold_column"),
                pl.col("gold_value"),
                pl.lit(None, pl.Float64).alias("true_rank"),
                pl.lit(None, pl.Float64).alias("true_score"),
                pl.col("predicted_score"),
                pl.lit(design.data_origin).alias("data_origin"),
                pl.lit(None, pl.String).alias("source_file"),
                *([pl.lit(f.config_hash).alias("config_hash")] if config_hash else []),
            )
        )
    return pl.concat(frames) if frames else pl.DataFrame()


def fit_rows(fits: Sequence[FitResult]) -> pl.DataFrame:
    """One row per fit: ids, protocol, configuration JSON, versions, whether it was read."""
    rows = []
    for f in fits:
        rows.append(
            {
                "fit_id": f.fit_id,
                "model_id": f"{f.model_key}:{f.fit_id[:12]}",
                "model_name": f.model,
                "feature_set": f.feature_set,
                "protocol": f.protocol,
                "config_hash": f.config_hash,
                "config_json": canonical_json(f.config),
                "library_versions_json": json.dumps(f.meta.get("versions", {}), sort_keys=True),
                "is_from_cache": f.from_cache,
                "n_rows": int(f.meta.get("n_rows", len(f.predictions))),
                "data_origin": str(f.meta.get("data_origin", "unknown")),
            }
        )
    return pl.DataFrame(rows)


def ablation_fit_rows(
    design: Design, cache_dir: Path | str, cv: GroupedKFold | None = None
) -> tuple[list[FitResult], int]:
    """The ablation grid's fits already in the cache, and how many grid jobs are missing
    (``tastebench`` fills them; the build only reads)."""
    jobs, _ = grid_jobs(design, cv=cv)
    found, missing = cached_fits(design, jobs, FitCache(cache_dir))
    return found, len(missing)


def ablation_metrics_rows(
    design: Design, cache_dir: Path | str, n_boot: int = 0, cv: GroupedKFold | None = None
) -> pl.DataFrame:
    """``agg_ablation_metrics``: one row per cached grid fit with its metrics."""
    found, _ = ablation_fit_rows(design, cache_dir, cv)
    if not found:
        return pl.DataFrame()
    return grid_metrics(design, found, n_boot=n_boot)


def run_ablation_grid(
    design: Design,
    cache_dir: Path | str,
    n_jobs: int = 2,
    supervised: Sequence[str] = mdl.SUPERVISED,
    distance: Sequence[str] = mdl.DISTANCE,
    cv: GroupedKFold | None = None,
) -> list[FitResult]:
    """Fit every missing grid job into ``cache_dir`` (the CLI command; minutes, not seconds)."""
    return run_grid(design, FitCache(cache_dir), n_jobs, supervised, distance, cv)


# --------------------------------------------------------------------------- dbt entry points

#: feature mart of each block letter (``python_models/marts/features/``)
FEATURE_MARTS = {
    "S": "fct_features_subset",
    "N": "fct_features_nutrition",
    "C": "fct_features_compound",
    "T": "fct_features_text",
    "I": "fct_features_image",
}
#: what the build's fit columns add to the ``fct_oof_predictions`` layout
FIT_COLUMNS = (
    "config_hash",
    "protocol",
    "config_json",
    "library_versions_json",
    "feature_encoders_json",
)
MAIN_C_AGGREGATION = "log"
DEFAULT_ENSEMBLE_MODELS = ("bradley_terry",)
MIN_ANALOGS_PER_CATEGORY = 5


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


def _block_frame(frame: pl.DataFrame) -> pl.DataFrame:
    """``category, product_code, vector`` with the vector null where ``has_block`` is false:
    an analog gets the feature mart's zero row for the supervised models (the design's
    ``missing='zero'``, marked in ``Design.absent``), which the distance baselines skip like a
    reference's NaN (= modality absent)."""
    return frame.select(
        "category",
        "product_code",
        pl.when(pl.col("has_block")).then(pl.col("vector")).otherwise(None).alias("vector"),
    )


def _variant_name(text: str) -> str:
    return re.sub(r"[^\w.-]", "-", text)


def compound_variant_frames(variants: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """C-block variants of ``fct_features_compound_variants`` as design blocks: the main
    encoder with another aggregation rule -> ``C:<aggregation>``; another encoder with the main
    (log) rule -> ``C:<encoder>`` (the encoder swap). The main row (``is_main``) is ``C``."""
    if variants.height == 0:
        return {}
    main = variants.filter(pl.col("is_main"))
    if main.height == 0:
        return {}
    main_encoder = main["encoder"][0]
    out: dict[str, pl.DataFrame] = {}
    for (encoder, aggregation), rows in variants.filter(~pl.col("is_main")).group_by(
        ["encoder", "aggregation"], maintain_order=True
    ):
        if encoder == main_encoder:
            name = f"C:{_variant_name(str(aggregation))}"
        elif aggregation == MAIN_C_AGGREGATION:
            name = f"C:{_variant_name(str(encoder))}"
        else:
            continue  # encoder x rule cross terms are not in the grid
        out[name] = _block_frame(rows)
    return dict(sorted(out.items()))


def food_design(
    products: pl.DataFrame,
    panel_means: pl.DataFrame,
    categories: pl.DataFrame,
    nutrition_subset_columns: pl.DataFrame,
    features: Mapping[str, pl.DataFrame],
    compound_variants: pl.DataFrame | None = None,
) -> Design:
    """The design of the build: the feature marts by letter (``features``: ``S, N, C, T, I`` ->
    the mart's frame), a block no product has is absent (left out of the feature set, never
    faked); the main feature set is ``S`` + the present letters in ``SNCTI`` order."""
    frames: dict[str, pl.DataFrame] = {}
    for letter, frame in features.items():
        if letter not in FEATURE_MARTS:
            raise DesignError(f"unknown feature block {letter!r}; expected one of SNCTI")
        if frame.height and frame["has_block"].any():
            frames[letter] = _block_frame(frame)
    if compound_variants is not None and "C" in frames:
        frames.update(compound_variant_frames(compound_variants))
    letters = "S" + "".join(c for c in "NCTI" if c in frames)
    design = design_from_frames(
        products.filter(
            pl.col("category").is_in(
                categories.filter(pl.col("is_benchmark"))["category"].to_list()
            )
        ),
        panel_means,
        frames,
        categories=categories,
        subset_columns=nutrition_subset_columns,
        feature_set=letters,
        missing="zero",
    )
    if unfittable_reason(design) is None:
        assert_no_target_leak(design)
    return design


def unfittable_reason(design: Design, max_analogs: int | None = None) -> str | None:
    """Why the default stage cannot run on ``design`` (None when it can): every category needs
    :data:`MIN_ANALOGS_PER_CATEGORY` analogs (the public design's smallest has 5). A tiny bundle
    (the test fixture: 3 + 2 analogs) leaves the ranking marts empty; its target-leak audit is
    meaningless too (a 384-d block has columns at |r| >= .99 over 5 products by chance). Size is
    no reason: above ``max_analogs`` analogs (a scaled simulation) the stage runs grouped K-fold
    instead of LOOCV (:func:`.folds.fold_scheme`). ``max_analogs`` = 0: the stage is switched
    off (``tastebench build --no-food-models``); None: :func:`max_analogs_default_stage`."""
    max_analogs = max_analogs_default_stage() if max_analogs is None else max_analogs
    if max_analogs <= 0:
        return "the food-model stage is switched off (dbt var food_models_max_analogs = 0)"
    counts = design.keys.group_by("category").len()
    small = counts.filter(pl.col("len") < MIN_ANALOGS_PER_CATEGORY).sort("category")
    if small.height:
        row = small.row(0, named=True)
        return (
            f"category {row['category']} has {row['len']} analogs (< {MIN_ANALOGS_PER_CATEGORY}; "
            f"{small.height} such categories)"
        )
    return None


def feature_encoders_json(features: Mapping[str, pl.DataFrame]) -> str:
    """``{letter: "<encoder>@<version>"}`` of the blocks the design read."""
    out = {}
    for letter, frame in sorted(features.items()):
        if frame.height:
            out[letter] = f"{frame['encoder'][0]}@{frame['encoder_version'][0]}"
    return canonical_json(out)


def fct_food_oof_predictions(
    design: Design,
    public_oof: pl.DataFrame,
    encoders_json: str,
    cache_dir: Path | str | None = None,
    n_jobs: int | None = None,
    ensemble_models: Sequence[str] = DEFAULT_ENSEMBLE_MODELS,
    max_analogs: int | None = None,
) -> pl.DataFrame:
    """``marts.fct_food_oof_predictions``: the default stage's out-of-fold rows in the layout
    of ``fct_oof_predictions`` plus :data:`FIT_COLUMNS` (``dim_food_fits`` is read from them).
    Fits are read from / written to ``cache_dir`` (default :func:`ranking_cache_dir`); LOOCV up
    to ``max_analogs`` analogs, grouped K-fold above; empty when :func:`unfittable_reason` gives
    a reason (``max_analogs`` = 0: off; None: :func:`max_analogs_default_stage`)."""
    max_analogs = max_analogs_default_stage() if max_analogs is None else max_analogs
    if unfittable_reason(design, max_analogs) is not None:
        return pl.DataFrame(schema=FOOD_OOF_SCHEMA)
    cache_dir = ranking_cache_dir() if cache_dir is None else cache_dir
    fits = default_model_fits(
        design,
        public_oof,
        cache_dir,
        default_n_jobs() if n_jobs is None else n_jobs,
        ensemble_models=ensemble_models,
        cv=fold_scheme(design.n, max_analogs),
    )
    rows = oof_prediction_rows(design, fits, config_hash=True)
    info = (
        fit_rows(fits)
        .select("fit_id", "protocol", "config_json", "library_versions_json")
        .with_columns(pl.lit(encoders_json).alias("feature_encoders_json"))
    )
    return rows.join(info, on="fit_id", how="left", maintain_order="left").select(
        pl.col(c).cast(t) for c, t in FOOD_OOF_SCHEMA.items()
    )


FOOD_OOF_SCHEMA = {
    "model_id": pl.String,
    "model_file_stem": pl.String,
    "model_name": pl.String,
    "feature_set": pl.String,
    "is_bench_variant": pl.Boolean,
    "source": pl.String,
    "fit_id": pl.String,
    "category": pl.String,
    "product_code": pl.Int32,
    "product_key": pl.String,
    "gold_column": pl.String,
    "gold_value": pl.Float64,
    "true_rank": pl.Float64,
    "true_score": pl.Float64,
    "predicted_score": pl.Float64,
    "data_origin": pl.String,
    "source_file": pl.String,
    **dict.fromkeys(FIT_COLUMNS, pl.String),
}


def dim_food_fits(predictions: pl.DataFrame) -> pl.DataFrame:
    """``marts.dim_food_fits``: one row per fit of ``fct_food_oof_predictions`` (content hash =
    ``fit_id``, configuration, feature set, encoders, library versions, row count)."""
    return (
        predictions.group_by("fit_id", maintain_order=True)
        .agg(
            pl.col("model_id").first(),
            pl.col("model_name").first(),
            pl.col("feature_set").first(),
            *[pl.col(c).first() for c in FIT_COLUMNS],
            pl.len().cast(pl.Int64).alias("n_rows"),
            pl.col("data_origin").first(),
        )
        .with_columns(
            pl.col("model_name").is_in(list(mdl.SUPERVISED)).alias("is_supervised"),
            pl.col("model_name").is_in(list(mdl.DISTANCE)).alias("is_distance"),
            pl.col("model_name").str.starts_with("nested_").alias("is_ensemble"),
        )
        .sort("model_id")
    )


ABLATION_SCHEMA = {
    "model": pl.String,
    "feature_set": pl.String,
    "letters": pl.String,
    "variant": pl.String,
    "is_distance": pl.Boolean,
    "has_n": pl.Boolean,
    "has_c": pl.Boolean,
    "has_t": pl.Boolean,
    "has_i": pl.Boolean,
    "n_content_blocks": pl.Int64,
    "pairwise_accuracy": pl.Float64,
    "spearman": pl.Float64,
    "kendall_tau": pl.Float64,
    "recall_at_1": pl.Float64,
    "recall_at_2": pl.Float64,
    "recall_at_3": pl.Float64,
    "pairwise_accuracy_macro": pl.Float64,
    "pairwise_accuracy_pooled": pl.Float64,
    "pairwise_accuracy_lo": pl.Float64,
    "pairwise_accuracy_hi": pl.Float64,
    "config_hash": pl.String,
    "fit_id": pl.String,
    "data_origin": pl.String,
}


def agg_ablation_metrics(
    design: Design,
    default_predictions: pl.DataFrame,
    cache_dir: Path | str | None = None,
    n_boot: int = 10000,
    seed: int = 42,
    max_analogs: int | None = None,
) -> pl.DataFrame:
    """``marts.agg_ablation_metrics``: one row per ablation-grid fit found in the cache (the
    build never fits the grid; ``tastebench train food --grid ablation`` does), with the eight
    point metrics, the main-table BCa interval of pairwise accuracy, whether the default stage
    of this build produced it, and how many grid fits are still missing."""
    cache_dir = ranking_cache_dir() if cache_dir is None else cache_dir
    max_analogs = max_analogs_default_stage() if max_analogs is None else max_analogs
    found, n_missing = [], 0
    if unfittable_reason(design, max_analogs) is None:
        found, n_missing = ablation_fit_rows(design, cache_dir, fold_scheme(design.n, max_analogs))
    table = (
        grid_metrics(design, found, n_boot=n_boot, seed=seed)
        if found
        else pl.DataFrame(schema=ABLATION_SCHEMA)
    )
    defaults = default_predictions["fit_id"].unique().to_list()
    return table.select(
        (pl.col("model") + ":" + pl.col("feature_set")).alias("ablation_key"),
        *[pl.col(c).cast(t) for c, t in ABLATION_SCHEMA.items()],
        pl.col("fit_id").is_in(defaults).alias("is_default_stage"),
        pl.lit(len(found) + n_missing, pl.Int64).alias("n_grid_fits"),
        pl.lit(n_missing, pl.Int64).alias("n_grid_fits_missing"),
    )
