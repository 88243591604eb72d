"""`tastebench train food`: the food-ranking fits outside `dbt build` (docs/architecture.md
convention 7), read from the published warehouse through the dbt models' own design
(:func:`.warehouse_design.warehouse_design`), so the fit ids are the build's and its next run
reads them. The caller passes the dbt var ``food_models_max_analogs`` and the worker count."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from warehouse.errors import WarehouseError
from warehouse.ranking.ablation import default_model_fits, grid_jobs, run_grid, unfittable_reason
from warehouse.ranking.cache import FitCache
from warehouse.ranking.design import Design
from warehouse.ranking.folds import fold_scheme
from warehouse.ranking.loocv import FitResult
from warehouse.ranking.nested import fit_ensemble_bases
from warehouse.ranking.warehouse_design import FEATURE_MARTS, warehouse_design

#: the relations the dbt models read (the build's design + the public out-of-fold files)
WAREHOUSE_RELATIONS = {
    "products": "marts.dim_products",
    "panel_means": "marts.fct_panel_means",
    "categories": "seeds.categories",
    "nutrition_subset_columns": "seeds.nutrition_subset_columns",
    "compound_variants": "marts.fct_features_compound_variants",
    "public_oof": "staging.stg_tastebench__oof_predictions",
    **{letter: f"marts.{name}" for letter, name in FEATURE_MARTS.items()},
}


def read_warehouse(db_path: Path | str, max_analogs: int) -> tuple[Design, pl.DataFrame]:
    """(the build's design, the public out-of-fold rows) from the published DuckDB file
    (read-only): the same relations and design function as the dbt models, so the fit
    ids are the build's."""
    import duckdb

    from warehouse.sources.readonly import connect_read_only

    con = connect_read_only(Path(db_path))  # names a missing file
    try:
        read = {}
        for key, rel in WAREHOUSE_RELATIONS.items():
            try:
                read[key] = con.sql(f"select * from {rel}").pl()
            except duckdb.CatalogException as exc:
                raise WarehouseError(
                    f"{db_path} lacks {rel} ({exc}). Fix: rebuild with `tastebench build`."
                ) from exc
    finally:
        con.close()
    design = warehouse_design(
        read["products"],
        read["panel_means"],
        read["categories"],
        read["nutrition_subset_columns"],
        {letter: read[letter] for letter in FEATURE_MARTS},
        read["compound_variants"],
        max_analogs,
    )
    return design, read["public_oof"]


@dataclass(frozen=True)
class FoodTraining:
    """What one `tastebench train food` run did."""

    grid: str | None
    fits: list[FitResult]
    cache_dir: Path
    elapsed_s: float
    skipped: list[str]
    data_origin: str

    def summary(self) -> str:
        """The line the command prints."""
        n_fitted = sum(not f.from_cache for f in self.fits)
        return (
            f"{self.grid or 'default'} stage: {len(self.fits)} fits ({n_fitted} fitted, "
            f"{len(self.fits) - n_fitted} read) in {self.cache_dir}, {self.elapsed_s:.0f} s"
            + (f"; skipped (absent blocks): {', '.join(self.skipped)}" if self.skipped else "")
            + f"; data_origin = {self.data_origin}. `tastebench build` scores them "
            "(fct_food_oof_predictions, agg_ablation_metrics)."
        )


def train_food(
    db_path: Path | str, cache_dir: Path | str, max_analogs: int, grid: str | None, n_jobs: int
) -> FoodTraining:
    """Fit the default stage (``grid=None``), the full ablation grid (``ablation``), or the nested
    base of every supervised model (``ensembles``: their NNLS ensembles) of the warehouse
    ``db_path`` into the fit cache ``cache_dir``; the next build reads them."""
    if grid not in (None, "ablation", "ensembles"):
        raise WarehouseError(
            f"unknown --grid {grid!r}. Fix: use --grid ablation, --grid ensembles (or no --grid)."
        )
    design, public_oof = read_warehouse(db_path, max_analogs)
    if (reason := unfittable_reason(design, max_analogs)) is not None:
        raise WarehouseError(f"{db_path}: the design is too small to fit: {reason}.")
    cache_dir = Path(cache_dir)
    cv = fold_scheme(design.n, max_analogs)
    t0 = time.perf_counter()
    skipped: list[str] = []
    if grid == "ablation":
        _, skipped = grid_jobs(design, cv=cv)
        fits = run_grid(design, FitCache(cache_dir), n_jobs, cv=cv)
    elif grid == "ensembles":
        fits = fit_ensemble_bases(design, cache_dir, n_jobs, cv=cv)
    else:
        fits = default_model_fits(design, public_oof, cache_dir, n_jobs, cv=cv)
    elapsed = time.perf_counter() - t0
    return FoodTraining(grid, fits, cache_dir, elapsed, list(skipped), design.data_origin)
