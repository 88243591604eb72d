"""The fit store of the molecular task: fits are data (docs/architecture.md convention 7).

The fingerprint baselines are trained once per data/configuration/library key by the
``dim_ml_fits`` model, which writes each fitted estimator as a hashed artifact under
``<root>/<fit_id>/`` (``model.joblib`` + ``predictions.npz``) and an index
``<root>/fingerprint/<key>.json``. D-MPNN fits come from ``tastebench train molecular`` (a registry
``fits.json`` in the D-MPNN folder); the build only reads them. Downstream models read predictions
back from the artifacts by ``fit_id``, so nothing is trained twice. ``root`` is always passed in:
the build resolves it through :class:`warehouse.config.Settings` (``fits_dir``, ``dmpnn_dir``),
never from the repository's own ``build/``.

Every stored file (artifacts, index, cached embeddings) is written atomically with a ``.sha256``
sidecar (:mod:`warehouse.files`); a read verifies it, and an entry that fails is logged, counted in
``<root>/recomputed.jsonl`` and recomputed (the fingerprint fits retrained, the embedding rerun).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.errors import WarehouseError
from warehouse.files import (
    atomic_write,
    checksum_problem,
    record_recomputed,
    sha256_file,
    verified,
    write_checksum,
)
from warehouse.molecular.baselines import SPLITS, FitResult, train_fingerprint_models
from warehouse.molecular.dmpnn import CHECKPOINT_NAME, REGISTRY_NAME, load_dmpnn_fit
from warehouse.molecular.featurize import RDKIT_VERSION
from warehouse.molecular.labels import LABEL_COLUMN, SMILES_COLUMN, TASTE_CLASSES
from warehouse.molecular.staging import split_frames

FIT_ROW_SCHEMA = 2  # bump when _fit_row's columns change (part of the fit key: refits once)
EMBEDDING_CACHE_SCHEMA = 1  # bump when embed_dmpnn's output changes for the same inputs


def _save_fit(fit: FitResult, root: Path) -> Path:
    import joblib

    out = root / fit.fit_id
    if fit.model is not None and not verified(out / "model.joblib", root):
        atomic_write(out / "model.joblib", lambda tmp: joblib.dump(fit.model, tmp))
        write_checksum(out / "model.joblib")
    proba = {f"proba_{s}": fit.proba[s] for s in SPLITS}
    atomic_write(out / "predictions.npz", lambda tmp: _savez(tmp, proba))
    write_checksum(out / "predictions.npz")
    meta = {"name": fit.name, "fit_id": fit.fit_id, "config": fit.config}
    text = json.dumps(meta, sort_keys=True, indent=2, default=str)
    atomic_write(out / "fit.json", text.encode())
    return out


def _savez(tmp: Path, arrays: dict[str, np.ndarray]) -> None:
    with open(tmp, "wb") as fh:  # a file object: np.savez would append .npz to a bare name
        np.savez(fh, **arrays)


def _stored_rows(root: Path, index: Path) -> list[dict] | None:
    """The fit rows of ``index`` when it and every fit's predictions pass their checksums; None
    (retrain) otherwise."""
    if not verified(index, root):
        return None
    rows = json.loads(index.read_text())
    ok = [verified(root / r["fit_id"] / "predictions.npz", root) for r in rows]
    return rows if all(ok) else None


def registered_dmpnn_fits(state: Path) -> list[FitResult]:
    """Finished D-MPNN fits from the training registry in ``state`` (empty when none was
    trained there)."""
    reg = state / REGISTRY_NAME
    if not reg.exists():
        return []
    fits = []
    for name, rec in sorted(json.loads(reg.read_text()).get("fits", {}).items()):
        if rec.get("subset") is not None:
            continue  # a --subset smoke fit predicts a sample, not the splits: never scored
        out = state / name
        ckpt = out / CHECKPOINT_NAME
        if ckpt.exists() and sha256_file(ckpt) == rec["fit_id"] and (out / "fit.json").exists():
            fits.append(load_dmpnn_fit(out))
    return fits


def selected_dmpnn(fits: list[FitResult]) -> FitResult | None:
    """The D-MPNN the warehouse uses as its learned encoder: the registered fit with the highest
    validation macro-F1, ties to the earlier grid configuration (the grid's own rule,
    :func:`~warehouse.molecular.dmpnn.selection_key`)."""
    from warehouse.molecular.dmpnn import selection_key

    if not fits:
        return None
    return max(
        fits, key=lambda f: selection_key(f.metrics("val")["macro_f1"], f.config.get("name", ""))
    )


def _retrain_fix(fit_row: dict, path: Path) -> str:
    config = str(fit_row["model_name"]).removeprefix("dmpnn_")
    return (
        f"Fix: delete {path.parent} (a rerun skips finished configurations) and run "
        f"`tastebench train molecular --config {config}` on the pinned splits without --subset."
    )


def _training_key(frames: dict[str, pl.DataFrame]) -> str:
    """Hash of everything the fingerprint fits depend on: data, configs, library versions."""
    import hashlib

    import lightgbm
    import sklearn

    from warehouse.molecular.baselines import lightgbm_config, random_forest_config

    h = hashlib.sha256()
    for split in SPLITS:
        f = frames[split]
        h.update(split.encode())
        lines = f.select(pl.concat_str(SMILES_COLUMN, LABEL_COLUMN, separator="\t")).to_series()
        h.update("\n".join(lines).encode())
    h.update(
        json.dumps(
            [
                lightgbm_config(42),
                random_forest_config(42),
                FIT_ROW_SCHEMA,
                RDKIT_VERSION,
                lightgbm.__version__,
                sklearn.__version__,
            ],
            sort_keys=True,
            default=str,
        ).encode()
    )
    return h.hexdigest()


def fingerprint_lookup(featurized: pl.DataFrame):
    """Morgan bit matrices rebuilt from ``int_molecules_featurized.morgan_on_bits`` (computed
    once per build), keyed by canonical SMILES: the same ``uint8`` matrix
    :func:`~warehouse.molecular.featurize.fingerprint_matrix` computes from those SMILES."""
    from warehouse.molecular.featurize import MORGAN_BITS

    index = dict(
        zip(
            featurized["canonical_smiles"].to_list(),
            featurized["morgan_on_bits"].to_list(),
            strict=True,
        )
    )

    def lookup(smiles: list[str]) -> np.ndarray:
        missing = [s for s in smiles if s not in index]
        if missing:
            raise WarehouseError(
                f"{len(missing)} SMILES (first {missing[0]!r}) are not in "
                "int_molecules_featurized. Fix: rebuild it from the same stg_fartdb__molecules."
            )
        X = np.zeros((len(smiles), MORGAN_BITS), dtype=np.uint8)
        for i, s in enumerate(smiles):
            X[i, np.asarray(index[s], dtype=np.int64)] = 1
        return X

    return lookup


def train_and_register(
    molecules: pl.DataFrame,
    featurized: pl.DataFrame | None,
    *,
    root: Path,
    dmpnn_dir: Path,
) -> pl.DataFrame:
    """Train the fingerprint baselines (or reuse the fits already stored for exactly this data and
    configuration), write their artifacts, add registered D-MPNN fits; one row per fit
    (``dim_ml_fits``). ``featurized`` (``int_molecules_featurized``) supplies the Morgan bits so
    they are not computed twice in a build. ``root``: the fit store (:attr:`Settings.fits_dir`);
    ``dmpnn_dir``: the D-MPNN registry of ``tastebench train molecular``."""
    frames = split_frames(molecules)
    index = root / "fingerprint" / f"{_training_key(frames)}.json"
    rows = _stored_rows(root, index)
    if rows is None:
        fits = train_fingerprint_models(
            frames["train"],
            frames["val"],
            frames["test"],
            seed=42,
            fingerprints=None if featurized is None else fingerprint_lookup(featurized),
        )
        rows = []
        for fit in fits.values():
            path = _save_fit(fit, root)
            rows.append(_fit_row(fit, "fingerprint", path / "model.joblib"))
        atomic_write(index, json.dumps(rows, indent=2, sort_keys=True).encode())
        write_checksum(index)
    dmpnn = registered_dmpnn_fits(dmpnn_dir)
    chosen = selected_dmpnn(dmpnn)
    for fit in dmpnn:
        rows.append(_fit_row(fit, "dmpnn", fit.checkpoint, selected=fit is chosen))
    note = (
        "" if dmpnn else "no registered D-MPNN fit: run `tastebench train molecular --config best`"
    )
    frame = pl.DataFrame(rows, infer_schema_length=None).select(FIT_COLUMNS)
    return frame.with_columns(
        pl.col(pl.Float64).fill_nan(None),  # a NaN metric is null, as it always was in the table
        note=pl.when(pl.col("family") == "fingerprint").then(pl.lit(note)).otherwise(pl.lit("")),
    )


# the columns of a fit's row, in the table's order (rows read back from a stored index come with
# their keys sorted: the table is selected in this order either way)
FIT_COLUMNS = (
    "fit_id", "model_name", "family", "config_json", "artifact_path", "artifact_sha256",
    "train_wall_s", "val_macro_f1", "test_accuracy", "test_macro_f1", "is_selected_dmpnn",
    "rdkit_version", "data_origin",
)  # fmt: skip


def _fit_row(fit: FitResult, family: str, artifact: Path | None, selected: bool = False) -> dict:
    m = fit.metrics("test")
    values = (
        fit.fit_id,
        fit.name,
        family,
        json.dumps(fit.config, sort_keys=True, default=str),
        str(artifact) if artifact else None,
        sha256_file(artifact) if artifact and artifact.exists() else None,
        float(fit.wall_s),
        fit.metrics("val")["macro_f1"],
        m["accuracy"],
        m["macro_f1"],
        selected,
        RDKIT_VERSION,
        "fartdb",
    )
    return dict(zip(FIT_COLUMNS, values, strict=True))


def proba_for(fit_row: dict, frames: dict[str, pl.DataFrame], root: Path) -> dict[str, np.ndarray]:
    """Per-split probabilities of one fit (a ``dim_ml_fits`` row as a dict), row-aligned with
    ``split_frames``.

    Fingerprint fits are trained from ``split_frames`` itself. A D-MPNN fit is trained outside
    the build, so its ``predictions.npz`` records each prediction's split-file row
    (``rows_<split>``) and is re-ordered by it; predictions that do not cover exactly the split's
    rows are an error, never a silent misalignment. (Fits written before ``rows_<split>`` existed
    are accepted only when their stored gold classes match the split row for row.)
    """
    if fit_row["family"] != "dmpnn":
        stored = root / fit_row["fit_id"] / "predictions.npz"
        # dim_ml_fits verified (or retrained) it in this build: a failure now is a foreign row
        if not stored.exists() or checksum_problem(stored) is not None:
            raise WarehouseError(
                f"{stored}: the predictions of {fit_row['model_name']} are missing or fail their "
                "checksum. Fix: `tastebench build --full-refresh` retrains them (dim_ml_fits)."
            )
        arrays = np.load(stored)
        return {s: arrays[f"proba_{s}"] for s in SPLITS}
    path = Path(fit_row["artifact_path"]).parent / "predictions.npz"
    arrays = np.load(path)
    out = {}
    for s in SPLITS:
        frame = frames[s]
        proba = arrays[f"proba_{s}"]
        if f"rows_{s}" in arrays:
            rows = np.asarray(arrays[f"rows_{s}"])
            n_distinct = np.unique(rows).size
            covers = (
                len(rows) == frame.height and n_distinct == len(rows) and len(proba) == len(rows)
            )
            pos = _positions(rows, frame["file_row_number"].to_numpy()) if covers else None
            if pos is None or (pos < 0).any():
                raise WarehouseError(
                    f"{path}: {fit_row['model_name']} has {len(rows)} {s} predictions "
                    f"({n_distinct} distinct file rows) that do not cover the {frame.height} "
                    f"rows of the {s} split. {_retrain_fix(fit_row, path)}"
                )
            out[s] = proba[pos]
        else:
            gold = np.array([TASTE_CLASSES.index(c) for c in frame[LABEL_COLUMN].to_list()])
            if not np.array_equal(arrays[f"codes_{s}"], gold):
                raise WarehouseError(
                    f"{path}: the {s} predictions of {fit_row['model_name']} do not line up with "
                    "stg_fartdb__molecules (no rows_<split> recorded and the gold classes differ "
                    f"row by row). {_retrain_fix(fit_row, path)}"
                )
            out[s] = proba
    return out


def _positions(rows: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Position in ``rows`` (distinct values) of every value of ``wanted``; -1 where absent."""
    if not len(rows):
        return np.full(len(wanted), -1, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    pos = order[np.clip(np.searchsorted(rows, wanted, sorter=order), 0, len(rows) - 1)]
    return np.where(rows[pos] == wanted, pos, -1)


def cached_dmpnn_embedding(checkpoint: Path, smiles: list[str], root: Path):
    """D-MPNN vectors (:func:`~warehouse.molecular.dmpnn.embed_dmpnn`) of RDKit-canonical SMILES
    (``int_molecules_featurized`` keys), stored once per (checkpoint sha256, SMILES list, encoder,
    chemprop/torch/RDKit versions) under ``<root>/embeddings/`` (``root``: the fit store) so
    rebuilds do not re-run the network (about 1-2 min for 15k SMILES on 2 cores). A stored array
    failing its checksum or of the wrong shape is logged, counted and recomputed."""
    import hashlib

    import chemprop
    import torch

    from warehouse.molecular import dmpnn as dmpnn_lib
    from warehouse.molecular.embeddings import Embedding

    smiles = list(smiles)
    fit_hash = sha256_file(checkpoint)
    spec = [
        EMBEDDING_CACHE_SCHEMA,
        dmpnn_lib.DMPNN_ENCODER,
        chemprop.__version__,
        torch.__version__,
        RDKIT_VERSION,
        *smiles,
    ]
    key = hashlib.sha256("\n".join(map(str, spec)).encode()).hexdigest()
    path = root / "embeddings" / fit_hash / f"{key}.npy"
    vectors = np.load(path) if verified(path, root) else None
    if vectors is not None and (vectors.ndim != 2 or vectors.shape[0] != len(smiles)):
        record_recomputed(path, f"stored shape {vectors.shape}, {len(smiles)} SMILES", root)
        vectors = None
    if vectors is None:
        vectors = dmpnn_lib.embed_dmpnn(checkpoint, smiles)
        atomic_write(path, lambda tmp: _save_npy(tmp, vectors))
        write_checksum(path)
    return Embedding(vectors, smiles, dmpnn_lib.DMPNN_ENCODER, fit_hash)


def _save_npy(tmp: Path, vectors: np.ndarray) -> None:
    with open(tmp, "wb") as fh:
        np.save(fh, vectors)
