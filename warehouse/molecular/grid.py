"""The resumable 12-configuration D-MPNN grid (docs/benchmark.md section 6) and its fit registry.

``run_grid`` trains each configuration with :func:`~warehouse.molecular.dmpnn.train_dmpnn`, records
it in ``<state_dir>/fits.json`` (atomic rewrite) with a ``DONE`` marker and the checkpoint's sha256,
skips configurations already finished with the same run settings, and selects the fit with the best
validation macro-F1 (:func:`~warehouse.molecular.dmpnn.selection_key`: ties go to the earlier grid
configuration). The build reads the registry (:mod:`warehouse.molecular.fits`); it never trains.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from warehouse.files import atomic_text, sha256_file
from warehouse.molecular.baselines import FitResult
from warehouse.molecular.dmpnn import (
    CHECKPOINT_NAME,
    DONE_MARKER,
    REGISTRY_NAME,
    DMPNNConfig,
    grid_configs,
    selection_key,
    train_dmpnn,
)


def _read_registry(path: Path) -> dict[str, Any]:
    if path.exists():
        return json.loads(path.read_text())
    return {"schema": 1, "fits": {}}


def _write_registry(path: Path, registry: dict[str, Any]) -> None:
    atomic_text(path, json.dumps(registry, indent=2, sort_keys=True))


def _run_settings(max_epochs: int, patience: int, seed: int, subset) -> dict[str, Any]:
    return json.loads(
        json.dumps({"max_epochs": max_epochs, "patience": patience, "seed": seed, "subset": subset})
    )


def _is_finished(
    state_dir: Path, registry: dict[str, Any], config: DMPNNConfig, settings: dict[str, Any]
) -> bool:
    """Finished = registry entry + DONE marker + checkpoint whose sha256 equals the fit_id.

    A record made with other run settings (epochs, patience, seed, subset) is an error: a smoke
    grid must not be resumed as the full grid (use another ``state_dir``).
    """
    rec = registry["fits"].get(config.name)
    out = state_dir / config.name
    if rec is None or not (out / DONE_MARKER).exists():
        return False
    recorded = {k: rec.get(k) for k in settings}
    if recorded != settings:
        raise ValueError(
            f"{state_dir / REGISTRY_NAME} holds {config.name} run with {recorded}, "
            f"not {settings}; use a fresh state_dir"
        )
    ckpt = out / CHECKPOINT_NAME
    return ckpt.exists() and sha256_file(ckpt) == rec["fit_id"]


@dataclass(frozen=True)
class GridResult:
    registry: pl.DataFrame
    best: dict[str, Any]
    trained: list[str]
    skipped: list[str]


def run_grid(
    train_df,
    val_df,
    test_df,
    state_dir: str | os.PathLike,
    *,
    configs: Sequence[DMPNNConfig] | None = None,
    max_epochs: int = 50,
    patience: int = 10,
    seed: int = 42,
    subset: int | tuple[int, int, int] | None = None,
    trainer: Callable[..., FitResult] | None = None,
    show_progress: bool = True,
) -> GridResult:
    """Train every grid configuration not finished yet; select by validation macro-F1.

    Resumable: each config trains into ``state_dir/<config.name>/``; when it finishes, its record
    (config, fit_id, val macro-F1, val and test metrics, wall time) is written atomically to
    ``state_dir/fits.json`` and then a ``DONE`` marker is dropped. Re-running skips configs
    whose record, marker and checkpoint (sha256 = fit_id) are all present; an interrupted
    config is retrained from scratch. Selection: :func:`selection_key` (ties go to the earlier
    grid configuration).
    """
    train_fn = trainer if trainer is not None else train_dmpnn
    configs = list(configs) if configs is not None else grid_configs()
    state = Path(state_dir)
    state.mkdir(parents=True, exist_ok=True)
    reg_path = state / REGISTRY_NAME
    registry = _read_registry(reg_path)
    settings = _run_settings(max_epochs, patience, seed, subset)
    run_kwargs = {"max_epochs": max_epochs, "patience": patience, "seed": seed, "subset": subset}
    frames = (train_df, val_df, test_df)
    trained, skipped = [], []
    with _progress(show_progress) as progress:
        task = progress.add_task("D-MPNN grid", total=len(configs))
        for cfg in configs:
            if _is_finished(state, registry, cfg, settings):
                skipped.append(cfg.name)
                progress.update(task, advance=1, description=f"skip {cfg.name}")
                continue
            out = state / cfg.name
            if out.exists():
                shutil.rmtree(out)
            progress.update(task, description=f"train {cfg.name}")
            t0 = time.perf_counter()
            fit = train_fn(*frames, cfg, out, **run_kwargs)
            registry["fits"][cfg.name] = _fit_record(cfg, fit, time.perf_counter() - t0, settings)
            _write_registry(reg_path, registry)
            (out / DONE_MARKER).write_text(fit.fit_id + "\n")
            trained.append(cfg.name)
            progress.update(task, advance=1, description=f"done {cfg.name}")
    records = [registry["fits"][c.name] for c in configs]
    best = max(records, key=lambda r: selection_key(r["val_macro_f1"], r["name"]))
    frame = _registry_frame(records)
    return GridResult(registry=frame, best=best, trained=trained, skipped=skipped)


def _progress(show: bool):
    """The grid's progress bar (rich; disabled when ``show`` is false)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
    )
    return Progress(*columns, disable=not show, transient=False)


def _fit_record(
    cfg: DMPNNConfig, fit: FitResult, wall: float, settings: dict[str, Any]
) -> dict[str, Any]:
    """A finished configuration's entry of ``fits.json``."""
    val_m, test_m = fit.metrics("val"), fit.metrics("test")
    return {
        "name": cfg.name,
        "config": asdict(cfg),
        "fit_id": fit.fit_id,
        "checkpoint": str(Path(cfg.name) / CHECKPOINT_NAME),
        "val_macro_f1": val_m["macro_f1"],
        "val_metrics": val_m,
        "test_metrics": test_m,
        "wall_s": wall,
        "epochs_run": fit.info.get("epochs_run"),
        "best_epoch": fit.info.get("best_epoch"),
        **settings,
        "finished_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _registry_frame(records: list[dict[str, Any]]) -> pl.DataFrame:
    """One row per configuration (grid order): config, fit_id, val macro-F1, test metrics."""
    return pl.DataFrame(
        [
            {
                "name": r["name"],
                **r["config"],
                "fit_id": r["fit_id"],
                "val_macro_f1": r["val_macro_f1"],
                **{f"test_{k}": v for k, v in r["test_metrics"].items()},
                "wall_s": r["wall_s"],
                "epochs_run": r["epochs_run"],
            }
            for r in records
        ],
        infer_schema_length=None,
    )


__all__ = ["GridResult", "run_grid"]
