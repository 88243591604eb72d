"""`tastebench train molecular`: D-MPNN training outside `dbt build` (STYLE.md convention 7).

Fits land in the registry that the build reads (``<build_dir>/fits/dmpnn/fits.json`` unless
``TASTEBENCH_DMPNN_DIR`` says otherwise); the next `tastebench build` lists them in
``marts.dim_ml_fits``, scores them in ``marts.agg_molecular_metrics`` and adds their 300-d
embeddings to ``marts.fct_compound_embeddings``.
"""

from __future__ import annotations

from pathlib import Path

from warehouse.config import Settings
from warehouse.molecular import DMPNNConfig, grid_configs, run_grid
from warehouse.sources.public import read_fartdb

BEST = DMPNNConfig(depth=5, dropout=0.2, class_weighting="none")


def fartdb_frames(settings: Settings) -> tuple:
    """The three official splits, read and verified through the registry."""
    (table,) = read_fartdb(settings)
    frame = table.frame
    return tuple(
        frame[frame["split"] == s].reset_index(drop=True) for s in ("train", "val", "test")
    )


def train_molecular(
    settings: Settings,
    *,
    grid: bool,
    state_dir: Path,
    max_epochs: int = 50,
    patience: int = 10,
    subset: int | None = None,
):
    """Run the 12-configuration grid (``grid=True``) or only the published best configuration
    (depth 5, dropout 0.2, no class weighting). Resumes: finished configurations are skipped."""
    train, val, test = fartdb_frames(settings)
    configs = grid_configs() if grid else [BEST]
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
