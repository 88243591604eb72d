"""What the molecular dbt Python models call (polars in, polars out), and the frames behind them.

``python_models/.../<model>.py`` -> the function of the same name here. The fit store is resolved
through :func:`warehouse.config.load_settings` (``fits_dir``/``dmpnn_dir``; the build passes its
settings to dbt); the fits themselves live in :mod:`warehouse.molecular.fits`. The library works on
pandas frames; the mart functions convert at that boundary.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl

from warehouse.config import load_settings
from warehouse.molecular import fits as fit_store
from warehouse.molecular.embeddings import embed_fingerprint
from warehouse.molecular.featurize import RDKIT_VERSION, featurize
from warehouse.molecular.labels import (
    LABEL_COLUMN,
    SMILES_COLUMN,
    TASTE_CLASSES,
    keyword_leakage_baseline,
)
from warehouse.molecular.metrics import bca_classification, compare_all, per_class_metrics
from warehouse.molecular.staging import split_frames, split_rows, stage_fartdb_molecules

LEAKAGE_AUDIT = "keyword_leakage_audit"


# --------------------------------------------------------------------------- mart entry points


def stg_fartdb__molecules(raw: pl.DataFrame) -> pl.DataFrame:
    """FartDB rows with RDKit-canonical SMILES (errors name the file and row)."""
    return pl.from_pandas(stage_fartdb_molecules(raw.to_pandas()))


def int_molecules_featurized(molecules: pl.DataFrame, pubchem: pl.DataFrame) -> pl.DataFrame:
    """Every molecule reachable from FartDB and FoodAtlas, featurized once."""
    sources = molecule_sources(molecules.to_pandas(), pubchem.to_pandas())
    return pl.from_pandas(featurized_molecules(sources["canonical_smiles"].tolist(), sources))


def dim_ml_fits(molecules: pl.DataFrame, featurized: pl.DataFrame) -> pl.DataFrame:
    """Train (or reuse) the fingerprint fits and list them with the registered D-MPNN fits."""
    settings = load_settings()
    return pl.from_pandas(
        fit_store.train_and_register(
            molecules.to_pandas(),
            featurized.select("canonical_smiles", "morgan_on_bits").to_pandas(),
            root=settings.fits_dir,
            dmpnn_dir=settings.dmpnn_dir,
        )
    )


def fct_molecular_predictions(molecules: pl.DataFrame, fits: pl.DataFrame) -> pl.DataFrame:
    """Test-split predictions of every fit plus the Original-Labels leakage audit."""
    out = predictions(
        molecules.to_pandas(), fits.to_pandas(), load_settings().fits_dir, split="test"
    )
    return pl.from_pandas(out)


def agg_molecular_metrics(preds: pl.DataFrame, *, n_boot: int) -> pl.DataFrame:
    return pl.from_pandas(metrics_table(preds.to_pandas(), n_boot=n_boot))


def agg_molecular_metrics_per_class(preds: pl.DataFrame, *, n_boot: int) -> pl.DataFrame:
    return pl.from_pandas(per_class_table(preds.to_pandas(), n_boot=n_boot))


def agg_molecular_comparisons(preds: pl.DataFrame) -> pl.DataFrame:
    return pl.from_pandas(comparisons_table(preds.to_pandas()))


def fct_compound_embeddings(featurized: pl.DataFrame, molecules: pl.DataFrame) -> pl.DataFrame:
    """Fingerprint-derived embeddings of every molecule, plus the selected D-MPNN's."""
    settings = load_settings()
    return pl.from_pandas(
        compound_embeddings(
            featurized.to_pandas(),
            molecules.to_pandas(),
            root=settings.fits_dir,
            dmpnn_dir=settings.dmpnn_dir,
        )
    )


# --------------------------------------------------------------------------- frames


def predictions(
    molecules: pd.DataFrame, fits: pd.DataFrame, root: Path, split: str = "test"
) -> pd.DataFrame:
    """Long table of per-molecule predictions of every fit on ``split``, plus the leakage audit
    (keyword rules on ``Original Labels``, marked ``is_audit``: never a model input). ``root``: the
    fit store the fingerprint fits were written to."""
    frames = split_frames(molecules)
    part = frames[split]
    parts = []
    for _, row in fits.iterrows():
        proba = fit_store.proba_for(row, frames, root)[split]
        parts.append(_prediction_frame(part, row["fit_id"], row["model_name"], proba, False))
    labels = split_rows(molecules, split)["original_labels"]
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


def compound_embeddings(
    featurized: pd.DataFrame, molecules: pd.DataFrame, *, root: Path, dmpnn_dir: Path
) -> pd.DataFrame:
    """fct_compound_embeddings: one row per canonical SMILES and encoder. Always the
    fingerprint-derived encoder (TruncatedSVD-64 of Morgan bits, fitted on the FartDB train split,
    from ``int_molecules_featurized``'s bits); the D-MPNN 300-d penultimate activation of the
    selected D-MPNN fit (:func:`~warehouse.molecular.fits.selected_dmpnn`) when one is
    registered."""
    smiles = featurized["canonical_smiles"].tolist()
    train = molecules.loc[molecules["split"] == "train", "canonical_smiles"].tolist()
    lookup = fit_store.fingerprint_lookup(featurized)
    tables = [embed_fingerprint(smiles, 64, fit_smiles=train, fingerprints=lookup).table()]
    chosen = fit_store.selected_dmpnn(fit_store.registered_dmpnn_fits(dmpnn_dir))
    if chosen is not None:
        tables.append(fit_store.cached_dmpnn_embedding(chosen.checkpoint, smiles, root).table())
    out = pd.concat(tables, ignore_index=True)
    out.insert(0, "embedding_key", out["encoder"] + ":" + out["canonical_smiles"])
    out["embedding"] = out["embedding"].map(lambda v: v.astype(np.float32).tolist())
    out["data_origin"] = "derived"
    return out
