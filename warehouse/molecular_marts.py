"""Glue between the molecular marts (dbt Python models) and ``warehouse.molecular``.

Fits are data (STYLE.md convention 7): the fingerprint baselines are trained once per build by the
``dim_ml_fits`` model, which writes each fitted estimator as a hashed artifact under
``<build_dir>/fits/<fit_id>/`` (``model.joblib`` + ``predictions.npz``) and one row per fit. D-MPNN
fits come from ``tastebench train molecular`` (a registry ``fits.json`` under
``<build_dir>/fits/dmpnn/``); dbt only reads them. Downstream models read predictions back from the
artifacts by ``fit_id``, so nothing is trained twice.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from warehouse.errors import WarehouseError
from warehouse.molecular import (
    LABEL_COLUMN,
    RDKIT_VERSION,
    SMILES_COLUMN,
    TASTE_CLASSES,
    bca_classification,
    compare_all,
    featurize,
    keyword_leakage_baseline,
    load_dmpnn_fit,
    per_class_metrics,
    train_fingerprint_models,
)
from warehouse.molecular.baselines import SPLITS, FitResult
from warehouse.molecular.dmpnn import CHECKPOINT_NAME, REGISTRY_NAME, sha256_file

LEAKAGE_AUDIT = "keyword_leakage_audit"
FIT_ROW_SCHEMA = 2  # bump when _fit_row's columns change (part of the fit key: refits once)


def fits_dir() -> Path:
    """Content-addressed store of fitted models, shared by every build on this machine
    (``TASTEBENCH_FITS_DIR``, default ``build/fits`` in the repository)."""
    from warehouse.config import REPO_ROOT

    return Path(os.environ.get("TASTEBENCH_FITS_DIR") or REPO_ROOT / "build" / "fits")


def dmpnn_state_dir() -> Path:
    return Path(os.environ.get("TASTEBENCH_DMPNN_DIR") or fits_dir() / "dmpnn")


def _split_rows(molecules: pd.DataFrame, split: str) -> pd.DataFrame:
    """One split of stg_fartdb__molecules in split-file order (``file_row_number``), the order
    every fit's per-split arrays follow."""
    return molecules[molecules["split"] == split].sort_values("file_row_number", kind="stable")


def split_frames(molecules: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """stg_fartdb__molecules -> per split, in the library's column names (SMILES + class only;
    ``original_labels`` never reaches a model), in split-file order."""
    out = {}
    for split in SPLITS:
        part = _split_rows(molecules, split)
        out[split] = pd.DataFrame(
            {
                "molecule_row_key": part["molecule_row_key"].to_numpy(),
                "file_row_number": part["file_row_number"].to_numpy(),
                SMILES_COLUMN: part["canonical_smiles"].to_numpy(),
                LABEL_COLUMN: part["taste_class"].to_numpy(),
            }
        )
    return out


def _save_fit(fit: FitResult, root: Path) -> Path:
    import joblib

    out = root / fit.fit_id
    out.mkdir(parents=True, exist_ok=True)
    if fit.model is not None and not (out / "model.joblib").exists():
        joblib.dump(fit.model, out / "model.joblib")
    np.savez(
        out / "predictions.npz",
        **{f"proba_{s}": fit.proba[s] for s in SPLITS},
    )
    (out / "fit.json").write_text(
        json.dumps(
            {"name": fit.name, "fit_id": fit.fit_id, "config": fit.config},
            sort_keys=True,
            indent=2,
            default=str,
        )
    )
    return out


def registered_dmpnn_fits(state_dir: Path | None = None) -> list[FitResult]:
    """Finished D-MPNN fits from the training registry (empty when none was trained)."""
    state = state_dir or dmpnn_state_dir()
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


def _retrain_fix(fit_row: pd.Series, path: Path) -> str:
    config = str(fit_row["model_name"]).removeprefix("dmpnn_")
    return (
        f"Fix: delete {path.parent} (a rerun skips finished configurations) and run "
        f"`tastebench train molecular --config {config}` on the pinned splits without --subset."
    )


def _training_key(frames: dict[str, pd.DataFrame]) -> str:
    """Hash of everything the fingerprint fits depend on: data, configs, library versions."""
    import hashlib

    import lightgbm
    import sklearn

    from warehouse.molecular.baselines import lightgbm_config, random_forest_config

    h = hashlib.sha256()
    for split in SPLITS:
        f = frames[split]
        h.update(split.encode())
        h.update("\n".join(f[SMILES_COLUMN] + "\t" + f[LABEL_COLUMN]).encode())
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


def fingerprint_lookup(featurized: pd.DataFrame):
    """Morgan bit matrices rebuilt from ``int_molecules_featurized.morgan_on_bits`` (computed
    once per build), keyed by canonical SMILES: the same ``uint8`` matrix
    :func:`~warehouse.molecular.featurize.fingerprint_matrix` computes from those SMILES."""
    from warehouse.molecular.featurize import MORGAN_BITS

    index = dict(zip(featurized["canonical_smiles"], featurized["morgan_on_bits"], strict=True))

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
    molecules: pd.DataFrame, featurized: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Train the fingerprint baselines (or reuse the fits already stored for exactly this data and
    configuration), write their artifacts, add registered D-MPNN fits; one row per fit
    (``dim_ml_fits``). ``featurized`` (``int_molecules_featurized``) supplies the Morgan bits so
    they are not computed twice in a build."""
    frames = split_frames(molecules)
    root = fits_dir()
    index = root / "fingerprint" / f"{_training_key(frames)}.json"
    rows = json.loads(index.read_text()) if index.exists() else None
    if rows is None or not all((root / r["fit_id"] / "predictions.npz").exists() for r in rows):
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
        index.parent.mkdir(parents=True, exist_ok=True)
        tmp = index.with_suffix(".tmp")
        tmp.write_text(json.dumps(rows, indent=2, sort_keys=True))
        os.replace(tmp, index)
    dmpnn = registered_dmpnn_fits()
    chosen = selected_dmpnn(dmpnn)
    for fit in dmpnn:
        rows.append(_fit_row(fit, "dmpnn", fit.checkpoint, selected=fit is chosen))
    frame = pd.DataFrame(rows)
    frame["note"] = np.where(
        frame["family"] == "fingerprint",
        "" if dmpnn else "no registered D-MPNN fit: run `tastebench train molecular --config best`",
        "",
    )
    return frame


def _fit_row(fit: FitResult, family: str, artifact: Path | None, selected: bool = False) -> dict:
    m = fit.metrics("test")
    return {
        "fit_id": fit.fit_id,
        "model_name": fit.name,
        "family": family,
        "config_json": json.dumps(fit.config, sort_keys=True, default=str),
        "artifact_path": str(artifact) if artifact else None,
        "artifact_sha256": sha256_file(artifact) if artifact and artifact.exists() else None,
        "train_wall_s": float(fit.wall_s),
        "val_macro_f1": fit.metrics("val")["macro_f1"],
        "test_accuracy": m["accuracy"],
        "test_macro_f1": m["macro_f1"],
        "is_selected_dmpnn": selected,
        "rdkit_version": RDKIT_VERSION,
        "data_origin": "fartdb",
    }


def _proba_for(fit_row: pd.Series, frames: dict[str, pd.DataFrame]) -> dict[str, np.ndarray]:
    """Per-split probabilities of one fit, row-aligned with ``split_frames``.

    Fingerprint fits are trained from ``split_frames`` itself. A D-MPNN fit is trained outside
    the build, so its ``predictions.npz`` records each prediction's split-file row
    (``rows_<split>``) and is re-ordered by it; predictions that do not cover exactly the split's
    rows are an error, never a silent misalignment. (Fits written before ``rows_<split>`` existed
    are accepted only when their stored gold classes match the split row for row.)
    """
    if fit_row["family"] != "dmpnn":
        arrays = np.load(fits_dir() / fit_row["fit_id"] / "predictions.npz")
        return {s: arrays[f"proba_{s}"] for s in SPLITS}
    path = Path(fit_row["artifact_path"]).parent / "predictions.npz"
    arrays = np.load(path)
    out = {}
    for s in SPLITS:
        frame = frames[s]
        proba = arrays[f"proba_{s}"]
        if f"rows_{s}" in arrays:
            rows = pd.Index(arrays[f"rows_{s}"])
            covers = len(rows) == len(frame) and rows.is_unique and len(proba) == len(rows)
            pos = rows.get_indexer(frame["file_row_number"].to_numpy()) if covers else None
            if pos is None or (pos < 0).any():
                raise WarehouseError(
                    f"{path}: {fit_row['model_name']} has {len(rows)} {s} predictions "
                    f"({rows.nunique()} distinct file rows) that do not cover the {len(frame)} "
                    f"rows of the {s} split. {_retrain_fix(fit_row, path)}"
                )
            out[s] = proba[pos]
        else:
            gold = np.array([TASTE_CLASSES.index(c) for c in frame[LABEL_COLUMN]])
            if not np.array_equal(arrays[f"codes_{s}"], gold):
                raise WarehouseError(
                    f"{path}: the {s} predictions of {fit_row['model_name']} do not line up with "
                    "stg_fartdb__molecules (no rows_<split> recorded and the gold classes differ "
                    f"row by row). {_retrain_fix(fit_row, path)}"
                )
            out[s] = proba
    return out


def predictions(molecules: pd.DataFrame, fits: pd.DataFrame, split: str = "test") -> pd.DataFrame:
    """Long table of per-molecule predictions of every fit on ``split``, plus the leakage audit
    (keyword rules on ``Original Labels``, marked ``is_audit``: never a model input)."""
    frames = split_frames(molecules)
    part = frames[split]
    parts = []
    for _, row in fits.iterrows():
        proba = _proba_for(row, frames)[split]
        parts.append(_prediction_frame(part, row["fit_id"], row["model_name"], proba, False))
    labels = _split_rows(molecules, split)["original_labels"]
    audit = keyword_leakage_baseline(labels.fillna("").tolist())
    onehot = np.eye(len(TASTE_CLASSES))[[TASTE_CLASSES.index(c) for c in audit]]
    parts.append(_prediction_frame(part, LEAKAGE_AUDIT, LEAKAGE_AUDIT, onehot, True))
    out = pd.concat(parts, ignore_index=True)
    out["split"] = split
    out["data_origin"] = "fartdb"
    return out


def _prediction_frame(part, fit_id, model_name, proba, is_audit) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "prediction_key": fit_id + ":" + part["molecule_row_key"],
            "fit_id": fit_id,
            "model_name": model_name,
            "is_audit": is_audit,
            "molecule_row_key": part["molecule_row_key"].to_numpy(),
            "canonical_smiles": part[SMILES_COLUMN].to_numpy(),
            "true_class": part[LABEL_COLUMN].to_numpy(),
            "predicted_class": [TASTE_CLASSES[i] for i in proba.argmax(axis=1)],
        }
    )
    for k, cls in enumerate(TASTE_CLASSES):
        frame[f"proba_{cls}"] = proba[:, k]
    return frame


def _by_model(preds: pd.DataFrame):
    proba_cols = [f"proba_{c}" for c in TASTE_CLASSES]
    for (model, is_audit), g in preds.groupby(["model_name", "is_audit"], sort=True):
        proba = None if is_audit else g[proba_cols].to_numpy()
        yield model, bool(is_audit), g, proba


def metrics_table(preds: pd.DataFrame, n_boot: int = 10_000) -> pd.DataFrame:
    """agg_molecular_metrics: accuracy, macro P/R/F1, OvR AUROC with BCa 95% CIs per model."""
    rows = []
    for model, is_audit, g, proba in _by_model(preds):
        ci = bca_classification(g["true_class"], g["predicted_class"], proba, n_boot=n_boot)
        ci.insert(0, "model_name", model)
        ci["is_audit"] = is_audit
        ci["n_molecules"] = len(g)
        rows.append(ci)
    out = pd.concat(rows, ignore_index=True)
    out.insert(0, "metric_key", out["model_name"] + ":" + out["metric"])
    out["split"] = preds["split"].iloc[0]
    out["data_origin"] = "fartdb"
    return out


def per_class_table(preds: pd.DataFrame, n_boot: int = 10_000) -> pd.DataFrame:
    rows = []
    for model, is_audit, g, proba in _by_model(preds):
        pc = per_class_metrics(g["true_class"], g["predicted_class"], proba, n_boot=n_boot)
        pc.insert(0, "model_name", model)
        pc["is_audit"] = is_audit
        rows.append(pc)
    out = pd.concat(rows, ignore_index=True).rename(columns={"class": "taste_class"})
    out.insert(0, "class_key", out["model_name"] + ":" + out["taste_class"])
    out["data_origin"] = "fartdb"
    return out


def comparisons_table(preds: pd.DataFrame) -> pd.DataFrame:
    models = {}
    truth = None
    for model, _, g, _ in _by_model(preds):
        g = g.sort_values("molecule_row_key")
        models[model] = g["predicted_class"].to_numpy()
        truth = g["true_class"].to_numpy()
    out = compare_all(models, y_true=truth)
    out.insert(0, "comparison_key", out["model_a"] + ":" + out["model_b"])
    out["data_origin"] = "fartdb"
    return out


def featurized_molecules(smiles: list[str], sources: pd.DataFrame) -> pd.DataFrame:
    """int_molecules_featurized: one row per canonical SMILES with InChIKey, Morgan on-bits and
    descriptors, plus where the molecule is reachable from."""
    unique = sorted(set(smiles))
    feats = featurize(unique, descriptors=True)
    frame = feats.frame.drop(columns=["row_index", "input_smiles", "smiles_differs"])
    frame["morgan_on_bits"] = [np.flatnonzero(row).astype(np.int32) for row in feats.fingerprints]
    frame["rdkit_version"] = RDKIT_VERSION
    frame = frame.merge(sources, on="canonical_smiles", how="left")
    frame["data_origin"] = np.where(frame["in_fartdb"], "fartdb", "foodatlas")
    return frame.drop_duplicates("canonical_smiles").reset_index(drop=True)


def molecule_sources(molecules: pd.DataFrame, pubchem: pd.DataFrame) -> pd.DataFrame:
    """Every SMILES reachable from FartDB and FoodAtlas (PubChem CIDs of the KGv2 seed), keyed by
    RDKit canonical SMILES; PubChem structures RDKit cannot parse are dropped *and counted* in
    ``n_unparsed_pubchem`` (attrs)."""
    fart = pd.DataFrame({"canonical_smiles": molecules["canonical_smiles"].unique()})
    fart["in_fartdb"] = True
    pc = pubchem.dropna(subset=["pubchem_canonical_smiles"])
    feats = featurize(
        pc["pubchem_canonical_smiles"].tolist(),
        descriptors=False,
        inchikey=False,
        on_error="report",
    )
    fa = pd.DataFrame(
        {
            "canonical_smiles": feats.frame["canonical_smiles"].to_numpy(),
            "pubchem_cid": pc["pubchem_cid"].to_numpy()[feats.frame["row_index"].to_numpy()],
        }
    )
    fa = fa.sort_values("pubchem_cid").drop_duplicates("canonical_smiles")
    fa["in_foodatlas"] = True
    out = fart.merge(fa, on="canonical_smiles", how="outer")
    out["in_fartdb"] = out["in_fartdb"].fillna(False).astype(bool)
    out["in_foodatlas"] = out["in_foodatlas"].fillna(False).astype(bool)
    out.attrs["n_unparsed_pubchem"] = len(feats.invalid)
    return out.sort_values("canonical_smiles").reset_index(drop=True)


EMBEDDING_CACHE_SCHEMA = 1  # bump when embed_dmpnn's output changes for the same inputs


def cached_dmpnn_embedding(checkpoint: Path, smiles: list[str]):
    """D-MPNN vectors (:func:`~warehouse.molecular.dmpnn.embed_dmpnn`) of RDKit-canonical SMILES
    (``int_molecules_featurized`` keys), stored once per (checkpoint sha256, SMILES list, encoder,
    chemprop/torch/RDKit versions) under ``<fits_dir>/embeddings/`` so rebuilds do not re-run the
    network (about 1-2 min for 15k SMILES on 2 cores). A stored array of the wrong shape is
    recomputed."""
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
    path = fits_dir() / "embeddings" / fit_hash / f"{key}.npy"
    vectors = np.load(path) if path.exists() else None
    if vectors is None or vectors.ndim != 2 or vectors.shape[0] != len(smiles):
        vectors = dmpnn_lib.embed_dmpnn(checkpoint, smiles)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, vectors)
        os.replace(tmp, path)
    return Embedding(vectors, smiles, dmpnn_lib.DMPNN_ENCODER, fit_hash)


def compound_embeddings(featurized: pd.DataFrame, molecules: pd.DataFrame) -> pd.DataFrame:
    """fct_compound_embeddings: one row per canonical SMILES and encoder. Always the
    fingerprint-derived encoder (TruncatedSVD-64 of Morgan bits, fitted on the FartDB train split,
    from ``int_molecules_featurized``'s bits); the D-MPNN 300-d penultimate activation of the
    selected D-MPNN fit (:func:`selected_dmpnn`) when one is registered."""
    from warehouse.molecular import embed_fingerprint

    smiles = featurized["canonical_smiles"].tolist()
    train = molecules.loc[molecules["split"] == "train", "canonical_smiles"].tolist()
    lookup = fingerprint_lookup(featurized)
    tables = [embed_fingerprint(smiles, 64, fit_smiles=train, fingerprints=lookup).table()]
    chosen = selected_dmpnn(registered_dmpnn_fits())
    if chosen is not None:
        tables.append(cached_dmpnn_embedding(chosen.checkpoint, smiles).table())
    out = pd.concat(tables, ignore_index=True)
    out.insert(0, "embedding_key", out["encoder"] + ":" + out["canonical_smiles"])
    out["embedding"] = out["embedding"].map(lambda v: v.astype(np.float32).tolist())
    out["data_origin"] = "derived"
    return out
