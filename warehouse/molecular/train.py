"""`tastebench train molecular`: D-MPNN training outside `dbt build` (docs/architecture.md
convention 7).

Fits land in the registry that the build reads (``<build_dir>/fits/dmpnn/fits.json`` unless
``TASTEBENCH_DMPNN_DIR`` says otherwise); the next `tastebench build` lists them in
``marts.dim_ml_fits``, scores them in ``marts.agg_molecular_metrics`` and adds their 300-d
embeddings to ``marts.fct_compound_embeddings``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from warehouse.config import Settings
from warehouse.errors import WarehouseError
from warehouse.molecular import DMPNNConfig, grid_configs, run_grid
from warehouse.sources.public import read_fartdb

BEST = DMPNNConfig(depth=5, dropout=0.2, class_weighting="none")


def fartdb_frames(settings: Settings) -> tuple:
    """The three official splits, read and verified through the registry, in file order (each
    row keeps ``_file_row``, which ``train_dmpnn`` records next to its predictions)."""
    (table,) = read_fartdb(settings)
    frame = table.frame
    return tuple(
        frame.filter(pl.col("split") == s).sort("_file_row", maintain_order=True)
        for s in ("train", "val", "test")
    )


def config_named(name: str) -> DMPNNConfig:
    """``best`` (the published best) or one grid configuration by name, e.g.
    ``depth5_dropout0.2_sqrt-inverse``; anything else is an error that lists the names."""
    if name == "best":
        return BEST
    by_name = {c.name: c for c in grid_configs()}
    if name not in by_name:
        raise WarehouseError(
            f"unknown --config {name!r}. Fix: use --config best, one of "
            f"{', '.join(by_name)}, or --grid."
        )
    return by_name[name]


def train_molecular(
    settings: Settings,
    *,
    grid: bool,
    config: str = "best",
    state_dir: Path,
    max_epochs: int = 50,
    patience: int = 10,
    subset: int | None = None,
):
    """Run the 12-configuration grid (``grid=True``) or one configuration (``config``: ``best`` =
    depth 5, dropout 0.2, no class weighting, or a grid name). Resumes: finished configurations
    are skipped."""
    configs = grid_configs() if grid else [config_named(config)]
    train, val, test = fartdb_frames(settings)
    return run_grid(
        train,
        val,
        test,
        state_dir,
        configs=configs,
        max_epochs=max_epochs,
        patience=patience,
        seed=42,
        subset=subset,
    )


def train_summary(result, state_dir: Path) -> str:
    """What `tastebench train molecular` prints: the best fit of the run and what to do next."""
    best = result.best
    return (
        f"registered in {state_dir}: best of this run {best['name']} "
        f"(val macro-F1 {best['val_macro_f1']:.3f}, "
        f"test accuracy {best['test_metrics']['accuracy']:.3f}, "
        f"test macro-F1 {best['test_metrics']['macro_f1']:.3f}, {best['wall_s']:.0f} s); "
        f"trained {len(result.trained)}, skipped {len(result.skipped)}. "
        "Run `tastebench build` to add it to the warehouse (which selects among all registered "
        "fits)."
    )
