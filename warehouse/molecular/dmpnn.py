"""Chemprop 2.3 D-MPNN for the five-class taste task: training and embeddings (the 12-config
grid is :mod:`warehouse.molecular.grid`).

Model (built like ``chemprop train`` does in ``chemprop/cli/train.py::build_model``, with the
docs/benchmark.md §6 settings): ``BondMessagePassing(d_h=300, depth, dropout)`` ->
``MeanAggregation`` -> ``MulticlassClassificationFFN(n_classes=5, hidden_dim=300, n_layers=1,
dropout)``, no batch norm, Adam with chemprop's Noam-like schedule (warm-up 2 epochs,
1e-4 -> 1e-3 -> 1e-4), batch 50, at most ``max_epochs`` epochs, early stopping on validation
loss (patience 10); the best-val-loss checkpoint is kept.

Class weighting goes through chemprop's per-datapoint loss weights (``MoleculeDatapoint.weight``
multiplies each molecule's cross-entropy): ``none`` = 1, ``inverse`` = n / (K n_c),
``sqrt-inverse`` proportional to 1 / sqrt(n_c) rescaled to mean 1 over the training molecules.
Only training molecules are weighted; the validation loss that drives early stopping is the plain
(unweighted) cross-entropy, so three validation umami molecules cannot dominate it.

Embeddings (:func:`embed_dmpnn`) are ``MPNN.encoding(bmg, i=-1)``: the FFN up to but excluding
its output block, i.e. the 300-d hidden layer (pre-activation) that feeds the output layer. This
is what ``chemprop fingerprint --ffn-block-index -1`` writes.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import time
import warnings
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import polars as pl

from warehouse.files import sha256_file
from warehouse.molecular.baselines import (
    SPLITS,
    FitResult,
    SplitData,
    data_hash,
    split_data,
)
from warehouse.molecular.featurize import parse_smiles
from warehouse.molecular.labels import (
    LABEL_COLUMN,
    SMILES_COLUMN,
    TASTE_CLASSES,
    as_polars,
    labels_from_codes,
)

Weighting = Literal["none", "inverse", "sqrt-inverse"]
WEIGHTINGS: tuple[str, ...] = ("none", "inverse", "sqrt-inverse")
CHECKPOINT_NAME = "model.pt"
DONE_MARKER = "DONE"
REGISTRY_NAME = "fits.json"
FILE_ROW_COLUMN = "_file_row"
DMPNN_ENCODER = "chemprop2.3_dmpnn_encoding_ffn_block_-1"


@dataclass(frozen=True)
class DMPNNConfig:
    depth: int = 5
    dropout: float = 0.2
    class_weighting: Weighting = "none"
    hidden_dim: int = 300
    ffn_hidden_dim: int = 300
    ffn_num_layers: int = 1
    aggregation: str = "mean"
    batch_size: int = 50
    warmup_epochs: int = 2
    init_lr: float = 1e-4
    max_lr: float = 1e-3
    final_lr: float = 1e-4

    def __post_init__(self):
        if self.class_weighting not in WEIGHTINGS:
            raise ValueError(f"class_weighting must be one of {WEIGHTINGS}")
        if self.aggregation != "mean":
            raise ValueError("only mean aggregation is supported (docs/benchmark.md §6)")

    @property
    def name(self) -> str:
        return f"depth{self.depth}_dropout{self.dropout:g}_{self.class_weighting}"


def grid_configs() -> list[DMPNNConfig]:
    """The 12 grid configurations: depth {3,5} x dropout {0, 0.2} x weighting (3)."""
    return [
        DMPNNConfig(depth=d, dropout=p, class_weighting=w)
        for d in (3, 5)
        for p in (0.0, 0.2)
        for w in WEIGHTINGS
    ]


def selection_key(val_macro_f1: float | None, name: str) -> tuple[float, int]:
    """Sort key of the grid's selection rule (larger is better): validation macro-F1 (missing or
    non-finite counts as -inf), ties to the configuration earlier in :func:`grid_configs` order
    (names outside the grid come last). Used by :func:`run_grid` and by the build."""
    f1 = val_macro_f1 if val_macro_f1 is not None and np.isfinite(val_macro_f1) else -np.inf
    order = [c.name for c in grid_configs()]
    return (float(f1), -(order.index(name) if name in order else len(order)))


def class_weights(codes: np.ndarray, scheme: str) -> np.ndarray:
    """Per-class loss weights (length 5) from training label codes; mean weight per molecule 1."""
    counts = np.bincount(codes, minlength=len(TASTE_CLASSES)).astype(np.float64)
    if scheme == "none":
        return np.ones(len(TASTE_CLASSES))
    raw = np.zeros_like(counts)
    present = counts > 0
    if scheme == "inverse":
        raw[present] = 1.0 / counts[present]
    elif scheme == "sqrt-inverse":
        raw[present] = 1.0 / np.sqrt(counts[present])
    else:
        raise ValueError(f"unknown class weighting {scheme!r}")
    return raw * counts.sum() / np.sum(raw * counts)


@contextmanager
def _torch_runtime(num_threads: int):
    """Cap torch threads, quiet lightning's info logging and worker warnings, and restore the
    process-wide torch settings (threads, deterministic algorithms) afterwards."""
    import torch

    previous = torch.get_num_threads()
    deterministic = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(max(1, min(num_threads, 2)))
    loggers = [logging.getLogger(n) for n in ("lightning.pytorch", "lightning.fabric", "chemprop")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", ".*does not have many workers.*")
            warnings.filterwarnings("ignore", ".*GPU available.*")
            warnings.filterwarnings("ignore", ".*LeafSpec.*")
            yield
    finally:
        torch.set_num_threads(previous)
        torch.use_deterministic_algorithms(deterministic)  # lightning sets it process-wide
        for lg, lvl in zip(loggers, levels, strict=True):
            lg.setLevel(lvl)


def _subset(data: SplitData, n: int | None, seed: int) -> tuple[SplitData, np.ndarray]:
    """Seeded sample of n rows that keeps one molecule of every class present (when n >= 5),
    and the sampled positions (all positions when no sample is drawn)."""
    if n is None or n >= len(data.smiles):
        return data, np.arange(len(data.smiles))
    rng = np.random.default_rng(seed)
    first = [rng.choice(np.flatnonzero(data.codes == k)) for k in np.unique(data.codes)]
    first = first[:n]
    rest = np.setdiff1d(np.arange(len(data.smiles)), first)
    idx = np.sort(np.concatenate([first, rng.choice(rest, size=n - len(first), replace=False)]))
    return SplitData([data.smiles[i] for i in idx], data.codes[idx], data.smiles_column), idx


def _file_rows(df, row_col: str) -> np.ndarray:
    """The split file's 1-based data row of every molecule: ``row_col`` when the frame has it
    (``read_fartdb`` adds ``_file_row``), else the frame's own order."""
    df = as_polars(df)
    if row_col in df.columns:
        return df[row_col].cast(pl.Int64).to_numpy()
    return np.arange(1, df.height + 1, dtype=np.int64)


def _dataset(smiles: Sequence[str], codes: np.ndarray | None, weights: np.ndarray | None):
    from chemprop import data as cdata
    from chemprop import featurizers

    mols, _ = parse_smiles(list(smiles), on_error="raise")
    points = [
        cdata.MoleculeDatapoint(
            mol,
            y=None if codes is None else np.array([float(codes[i])]),
            weight=1.0 if weights is None else float(weights[i]),
            name=smiles[i],
        )
        for i, mol in enumerate(mols)
    ]
    dataset = cdata.MoleculeDataset(points, featurizers.SimpleMoleculeMolGraphFeaturizer())
    dataset.cache = True  # featurize each molecule graph once, not once per epoch
    return dataset


def _eval_loader(dataset, batch_size: int):
    from chemprop import data as cdata

    return cdata.build_dataloader(dataset, batch_size=batch_size, shuffle=False, drop_last=False)


def build_model(config: DMPNNConfig, warmup_epochs: int):
    from chemprop import featurizers, models, nn

    featurizer = featurizers.SimpleMoleculeMolGraphFeaturizer()
    mp = nn.BondMessagePassing(
        featurizer.atom_fdim,
        featurizer.bond_fdim,
        d_h=config.hidden_dim,
        depth=config.depth,
        dropout=config.dropout,
    )
    predictor = nn.MulticlassClassificationFFN(
        n_classes=len(TASTE_CLASSES),
        n_tasks=1,
        input_dim=mp.output_dim,
        hidden_dim=config.ffn_hidden_dim,
        n_layers=config.ffn_num_layers,
        dropout=config.dropout,
    )
    return models.MPNN(
        mp,
        nn.MeanAggregation(),
        predictor,
        batch_norm=False,
        warmup_epochs=warmup_epochs,
        init_lr=config.init_lr,
        max_lr=config.max_lr,
        final_lr=config.final_lr,
    )


def _quiet_trainer(accelerator: str, **options):
    """A one-device lightning trainer with no logger, progress bar or model summary."""
    import lightning.pytorch as pl

    return pl.Trainer(
        accelerator=accelerator,
        devices=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        **options,
    )


def _predict_proba(model, loader, accelerator: str = "cpu") -> np.ndarray:
    """Class probabilities (n x 5) through a lightning predict loop (handles the device)."""
    import torch

    batches = _quiet_trainer(accelerator).predict(model, dataloaders=loader)
    return torch.cat(batches)[:, 0, :].double().cpu().numpy()


def train_dmpnn(
    train_df,
    val_df,
    test_df,
    config: DMPNNConfig,
    out_dir: str | os.PathLike,
    max_epochs: int = 50,
    patience: int = 10,
    seed: int = 42,
    subset: int | tuple[int, int, int] | None = None,
    *,
    num_threads: int = 2,
    accelerator: str = "cpu",
    smiles_col: str = SMILES_COLUMN,
    label_col: str = LABEL_COLUMN,
    row_col: str = FILE_ROW_COLUMN,
) -> FitResult:
    """Train one D-MPNN; save ``out_dir/model.pt`` (chemprop ``save_model`` format).

    ``subset`` (int, or one int per split) trains on a seeded random sample of each split, for
    smoke tests. ``fit_id`` = sha256 of the saved checkpoint file. Also writes
    ``predictions.npz`` (per split: probabilities, gold codes and ``rows_<split>``, the split
    file's 1-based data row of each prediction, from ``row_col`` or else the frame's order, so the
    build can line predictions up with ``stg_fartdb__molecules.file_row_number``) and ``fit.json``.
    ``num_threads`` caps torch CPU threads (at most 2); ``accelerator`` is passed to lightning.
    Cost: one full-train epoch (10,517 + 2,254 validation molecules) took about 400 s on the
    shared 2-core CPU machine, so the 12 x 50-epoch grid is a job for a GPU.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sizes = (subset,) * 3 if isinstance(subset, int) or subset is None else tuple(subset)
    frames = (train_df, val_df, test_df)
    data, rows = _sampled_splits(frames, sizes, seed, smiles_col, label_col, row_col)
    weights_by_class = class_weights(data["train"].codes, config.class_weighting)
    t0 = time.perf_counter()
    with _torch_runtime(num_threads):
        run = _fit_and_predict(
            data, weights_by_class, config, out, max_epochs, patience, seed, accelerator
        )
    wall = time.perf_counter() - t0
    recorded_sizes = sizes if subset is not None else None
    config_record = _config_record(
        config, max_epochs, patience, seed, recorded_sizes, run["warmup"], weights_by_class, data
    )
    info = _fit_info(run, accelerator, data)
    ckpt, proba = out / CHECKPOINT_NAME, run["proba"]
    fit_id = sha256_file(ckpt)
    _write_fit(out, fit_id, proba, data, rows, config_record, info, wall)
    y_true = {s: data[s].labels for s in SPLITS}
    return FitResult.from_proba(
        f"dmpnn_{config.name}",
        fit_id,
        config_record,
        proba,
        y_true,
        wall,
        checkpoint=ckpt,
        info=info,
    )


def _sampled_splits(frames, sizes, seed: int, smiles_col: str, label_col: str, row_col: str):
    """Per split: its (optionally sampled, :func:`_subset`) molecules and their file rows."""
    data, rows = {}, {}
    for s, df, n in zip(SPLITS, frames, sizes, strict=True):
        data[s], idx = _subset(split_data(df, smiles_col, label_col), n, seed)
        rows[s] = _file_rows(df, row_col)[idx]
    return data, rows


def _fit_info(run: dict, accelerator: str, data: dict) -> dict:
    """The run facts recorded in ``fit.json`` (``info``; key order kept)."""
    best_score = run["best_score"]
    return {
        "best_epoch": run["best_epoch"],
        "best_val_loss": float(best_score) if best_score is not None else None,
        "epochs_run": run["epochs_run"],
        "fit_s": run["fit_s"],
        "predict_s": run["predict_s"],
        "accelerator": accelerator,
        "train_data_sha256": data_hash(data["train"].smiles, data["train"].labels),
        "n": {s: len(data[s].smiles) for s in SPLITS},
    }


def _trainer(out: Path, accelerator: str, max_epochs: int, patience: int):
    """The lightning trainer (deterministic, early stopping on the validation loss) and its
    best-checkpoint callback (under ``out/lightning``)."""
    from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint

    checkpointing = ModelCheckpoint(
        dirpath=out / "lightning", filename="best", monitor="val_loss", mode="min", save_top_k=1
    )
    stopping = EarlyStopping("val_loss", patience=patience, mode="min")
    trainer = _quiet_trainer(
        accelerator,
        max_epochs=max_epochs,
        callbacks=[checkpointing, stopping],
        deterministic=True,
        default_root_dir=out,
    )
    return trainer, checkpointing


def _fit_and_predict(
    data: dict, weights_by_class: np.ndarray, config: DMPNNConfig, out: Path,
    max_epochs: int, patience: int, seed: int, accelerator: str,
) -> dict:  # fmt: skip
    """Seed, train with early stopping, save the best model as ``out/model.pt`` and predict
    every split with it (inside :func:`_torch_runtime`)."""
    import lightning.pytorch as pl
    from chemprop import data as cdata
    from chemprop import models as cmodels

    pl.seed_everything(seed, verbose=False)
    train_set = _dataset(
        data["train"].smiles, data["train"].codes, weights_by_class[data["train"].codes]
    )
    sets = {
        "train": train_set,
        "val": _dataset(data["val"].smiles, data["val"].codes, None),
        "test": _dataset(data["test"].smiles, data["test"].codes, None),
    }
    train_loader = cdata.build_dataloader(
        train_set, batch_size=config.batch_size, shuffle=True, seed=seed
    )
    val_loader = _eval_loader(sets["val"], config.batch_size)
    warmup = min(config.warmup_epochs, max(max_epochs - 1, 0))
    model = build_model(config, warmup)
    trainer, checkpointing = _trainer(out, accelerator, max_epochs, patience)
    t_fit = time.perf_counter()
    trainer.fit(model, train_loader, val_loader)
    fit_s = time.perf_counter() - t_fit
    best_path = checkpointing.best_model_path
    best_score = checkpointing.best_model_score
    best = cmodels.MPNN.load_from_checkpoint(best_path, map_location="cpu")
    best_epoch = int(_load_ckpt_epoch(best_path))
    cmodels.save_model(out / CHECKPOINT_NAME, best, [LABEL_COLUMN])
    shutil.rmtree(out / "lightning", ignore_errors=True)
    t_pred = time.perf_counter()
    proba = {s: _predict_proba(best, _eval_loader(sets[s], 500), accelerator) for s in SPLITS}
    return {
        "proba": proba,
        "warmup": warmup,
        "best_score": best_score,
        "best_epoch": best_epoch,
        "epochs_run": int(trainer.current_epoch),
        "fit_s": fit_s,
        "predict_s": time.perf_counter() - t_pred,
    }


def _config_record(
    config: DMPNNConfig, max_epochs: int, patience: int, seed: int, sizes: tuple | None,
    warmup: int, weights_by_class: np.ndarray, data: dict,
) -> dict:  # fmt: skip
    """The fit's configuration as recorded in ``fit.json`` (key order kept)."""
    import chemprop
    import torch

    return {
        **asdict(config),
        "name": config.name,
        "max_epochs": max_epochs,
        "patience": patience,
        "seed": seed,
        "subset": list(sizes) if sizes is not None else None,
        "warmup_epochs_used": warmup,
        "class_weights": dict(zip(TASTE_CLASSES, weights_by_class.round(6).tolist(), strict=True)),
        "chemprop_version": chemprop.__version__,
        "torch_version": torch.__version__,
        "input_columns": [data["train"].smiles_column],
    }


def _write_fit(out: Path, fit_id: str, proba, data, rows, config_record, info, wall: float):
    """``out/predictions.npz`` (per split: probabilities, gold codes, file rows) and
    ``out/fit.json``."""
    np.savez(
        out / "predictions.npz",
        **{f"proba_{s}": proba[s] for s in SPLITS},
        **{f"codes_{s}": data[s].codes for s in SPLITS},
        **{f"rows_{s}": rows[s] for s in SPLITS},
    )
    (out / "fit.json").write_text(
        json.dumps(
            {"fit_id": fit_id, "config": config_record, "info": info, "wall_s": wall},
            indent=2,
            sort_keys=True,
        )
    )


def _load_ckpt_epoch(path: str) -> int:
    import torch

    return torch.load(path, map_location="cpu", weights_only=False).get("epoch", -1)


def load_dmpnn_fit(out_dir: str | os.PathLike) -> FitResult:
    """Rebuild the FitResult of a finished :func:`train_dmpnn` run from its output folder."""
    out = Path(out_dir)
    meta = json.loads((out / "fit.json").read_text())
    arrays = np.load(out / "predictions.npz")
    proba = {s: arrays[f"proba_{s}"] for s in SPLITS}
    return FitResult.from_proba(
        f"dmpnn_{meta['config']['name']}",
        meta["fit_id"],
        meta["config"],
        proba,
        {s: labels_from_codes(arrays[f"codes_{s}"]) for s in SPLITS},
        meta["wall_s"],
        checkpoint=out / CHECKPOINT_NAME,
        info=meta["info"],
    )


def embed_dmpnn(
    checkpoint: str | os.PathLike,
    smiles: Sequence[str],
    *,
    batch_size: int = 500,
    num_threads: int = 2,
) -> np.ndarray:
    """Learned 300-d representation per SMILES: ``MPNN.encoding(..., i=-1)`` (see module doc).

    Invalid SMILES raise :class:`~warehouse.molecular.featurize.InvalidSmilesError`.
    """
    import torch
    from chemprop import models as cmodels

    smiles = list(smiles)
    with _torch_runtime(num_threads):
        model = cmodels.MPNN.load_from_file(checkpoint, map_location=torch.device("cpu"))
        model.eval()
        loader = _eval_loader(_dataset(smiles, None, None), batch_size)
        out = []
        with torch.inference_mode():
            for batch in loader:
                out.append(model.encoding(batch.bmg, batch.V_d, batch.X_d, i=-1))
    if not out:
        return np.zeros((0, model.predictor.input_dim), dtype=np.float32)
    return torch.cat(out).numpy()


__all__ = [
    "DMPNNConfig",
    "class_weights",
    "embed_dmpnn",
    "grid_configs",
    "load_dmpnn_fit",
    "selection_key",
    "train_dmpnn",
]
