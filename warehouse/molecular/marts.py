"""What the molecular dbt Python models call (polars in, polars out), and the frames behind them.

``python_models/.../<model>.py`` -> the function of the same name here. The fit store is resolved
through :func:`warehouse.config.load_settings` (``fits_dir``/``dmpnn_dir``; the build passes its
settings to dbt); the fits themselves live in :mod:`warehouse.molecular.fits`. The frames here and
in the molecular library are polars (numpy for the arrays); a missing value is null.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from warehouse.config import load_settings
from warehouse.files import cached_frame, cached_mart, frame_key
from warehouse.molecular import featurize as featurize_module
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
    """FartDB rows with RDKit-canonical SMILES (errors name the file and row); once per content
    (:func:`warehouse.files.cached_mart`: the same file, code and RDKit read back the frame).
    ``_loaded_at`` (the load's time, which staging never reads) stays out of the key."""
    return cached_mart(load_settings().fits_dir, stage_fartdb_molecules, raw.drop("_loaded_at"))


def int_molecules_featurized(molecules: pl.DataFrame, pubchem: pl.DataFrame) -> pl.DataFrame:
    """Every molecule reachable from FartDB and FoodAtlas, featurized once per content: a frame
    of the fit store (:func:`warehouse.files.cached_frame`), shared by every build that reads
    the same molecules."""
    code = (featurize_module, molecule_sources, featurized_molecules)
    key = frame_key(
        "molecules_featurized", (molecules, pubchem), code, RDKIT_VERSION, pl.__version__
    )
    return cached_frame(
        load_settings().fits_dir,
        "molecules_featurized",
        key,
        lambda: _featurized(molecules, pubchem),
    )


def _featurized(molecules: pl.DataFrame, pubchem: pl.DataFrame) -> pl.DataFrame:
    sources, _n_unparsed = molecule_sources(molecules, pubchem)
    return featurized_molecules(sources["canonical_smiles"].to_list(), sources)


def dim_ml_fits(molecules: pl.DataFrame, featurized: pl.DataFrame) -> pl.DataFrame:
    """Train (or reuse) the fingerprint fits and list them with the registered D-MPNN fits."""
    settings = load_settings()
    return fit_store.train_and_register(
        molecules,
        featurized.select("canonical_smiles", "morgan_on_bits"),
        root=settings.fits_dir,
        dmpnn_dir=settings.dmpnn_dir,
    )


def fct_molecular_predictions(molecules: pl.DataFrame, fits: pl.DataFrame) -> pl.DataFrame:
    """Test-split predictions of every fit plus the Original-Labels leakage audit."""
    return predictions(molecules, fits, load_settings().fits_dir, split="test")


def agg_molecular_metrics(preds: pl.DataFrame, *, n_boot: int) -> pl.DataFrame:
    return cached_mart(load_settings().fits_dir, metrics_table, preds, n_boot=n_boot)


def agg_molecular_metrics_per_class(preds: pl.DataFrame, *, n_boot: int) -> pl.DataFrame:
    return cached_mart(load_settings().fits_dir, per_class_table, preds, n_boot=n_boot)


def agg_molecular_comparisons(preds: pl.DataFrame) -> pl.DataFrame:
    return cached_mart(load_settings().fits_dir, comparisons_table, preds)


def fct_compound_embeddings(featurized: pl.DataFrame, molecules: pl.DataFrame) -> pl.DataFrame:
    """Fingerprint-derived embeddings of every molecule, plus the selected D-MPNN's."""
    settings = load_settings()
    return compound_embeddings(
        featurized, molecules, root=settings.fits_dir, dmpnn_dir=settings.dmpnn_dir
    )


# --------------------------------------------------------------------------- frames


def predictions(
    molecules: pl.DataFrame, fits: pl.DataFrame, root: Path, split: str = "test"
) -> pl.DataFrame:
    """Long table of per-molecule predictions of every fit on ``split``, plus the leakage audit
    (keyword rules on ``Original Labels``, marked ``is_audit``: never a model input). ``root``: the
    fit store the fingerprint fits were written to."""
    frames = split_frames(molecules)
    part = frames[split]
    parts = []
    for row in fits.iter_rows(named=True):
        proba = fit_store.proba_for(row, frames, root)[split]
        parts.append(_prediction_frame(part, row["fit_id"], row["model_name"], proba, False))
    labels = split_rows(molecules, split)["original_labels"]
    audit = keyword_leakage_baseline(labels.fill_null("").to_list())
    onehot = np.eye(len(TASTE_CLASSES))[[TASTE_CLASSES.index(c) for c in audit]]
    parts.append(_prediction_frame(part, LEAKAGE_AUDIT, LEAKAGE_AUDIT, onehot, True))
    return pl.concat(parts, how="vertical").with_columns(
        split=pl.lit(split, dtype=pl.String), data_origin=pl.lit("fartdb", dtype=pl.String)
    )


def _prediction_frame(part: pl.DataFrame, fit_id, model_name, proba, is_audit) -> pl.DataFrame:
    return part.select(
        (pl.lit(fit_id, dtype=pl.String) + ":" + pl.col("molecule_row_key")).alias(
            "prediction_key"
        ),
        pl.lit(fit_id, dtype=pl.String).alias("fit_id"),
        pl.lit(model_name, dtype=pl.String).alias("model_name"),
        pl.lit(is_audit, dtype=pl.Boolean).alias("is_audit"),
        pl.col("molecule_row_key"),
        pl.col(SMILES_COLUMN).alias("canonical_smiles"),
        pl.col(LABEL_COLUMN).alias("true_class"),
        pl.Series(
            "predicted_class", [TASTE_CLASSES[i] for i in proba.argmax(axis=1)], dtype=pl.String
        ),
        *(
            pl.Series(f"proba_{cls}", proba[:, k], dtype=pl.Float64)
            for k, cls in enumerate(TASTE_CLASSES)
        ),
    )


def _by_model(preds: pl.DataFrame):
    """(model, is_audit, rows, probabilities) per model, in (model_name, is_audit) order; rows
    keep their order in ``preds``."""
    proba_cols = [f"proba_{c}" for c in TASTE_CLASSES]
    ordered = preds.sort("model_name", "is_audit", maintain_order=True)
    for (model, is_audit), g in ordered.group_by("model_name", "is_audit", maintain_order=True):
        proba = None if is_audit else g.select(proba_cols).to_numpy()
        yield model, bool(is_audit), g, proba


def metrics_table(preds: pl.DataFrame, n_boot: int = 10_000) -> pl.DataFrame:
    """agg_molecular_metrics: accuracy, macro P/R/F1, OvR AUROC with BCa 95% CIs per model."""
    rows = []
    for model, is_audit, g, proba in _by_model(preds):
        ci = bca_classification(g["true_class"], g["predicted_class"], proba, n_boot=n_boot)
        rows.append(
            ci.select(pl.lit(model, dtype=pl.String).alias("model_name"), pl.all()).with_columns(
                is_audit=pl.lit(is_audit), n_molecules=pl.lit(g.height, dtype=pl.Int64)
            )
        )
    out = pl.concat(rows, how="diagonal")
    return out.select(
        (pl.col("model_name") + ":" + pl.col("metric")).alias("metric_key"), pl.all()
    ).with_columns(split=pl.lit(preds["split"][0], dtype=pl.String), data_origin=pl.lit("fartdb"))


def per_class_table(preds: pl.DataFrame, n_boot: int = 10_000) -> pl.DataFrame:
    """agg_molecular_metrics_per_class. Columns in order of first appearance (the audit, which
    has no AUROC, sorts first); ``auroc_n_boot_finite`` stays DOUBLE, the type the table has
    always had."""
    rows = []
    for model, is_audit, g, proba in _by_model(preds):
        pc = per_class_metrics(g["true_class"], g["predicted_class"], proba, n_boot=n_boot)
        rows.append(
            pc.select(pl.lit(model, dtype=pl.String).alias("model_name"), pl.all()).with_columns(
                is_audit=pl.lit(is_audit)
            )
        )
    out = pl.concat(rows, how="diagonal").rename({"class": "taste_class"})
    if "auroc_n_boot_finite" in out.columns:
        out = out.with_columns(pl.col("auroc_n_boot_finite").cast(pl.Float64))
    return out.select(
        (pl.col("model_name") + ":" + pl.col("taste_class")).alias("class_key"), pl.all()
    ).with_columns(data_origin=pl.lit("fartdb"))


def comparisons_table(preds: pl.DataFrame) -> pl.DataFrame:
    """agg_molecular_comparisons: McNemar between every pair of models (Holm-corrected)."""
    models = {}
    truth = None
    for model, _, g, _ in _by_model(preds):
        g = g.sort("molecule_row_key", maintain_order=True)
        models[model] = g["predicted_class"].to_numpy()
        truth = g["true_class"].to_numpy()
    out = compare_all(models, y_true=truth)
    return out.select(
        (pl.col("model_a") + ":" + pl.col("model_b")).alias("comparison_key"), pl.all()
    ).with_columns(data_origin=pl.lit("fartdb"))


def featurized_molecules(smiles: list[str], sources: pl.DataFrame) -> pl.DataFrame:
    """int_molecules_featurized: one row per canonical SMILES with InChIKey, Morgan on-bits and
    descriptors, plus where the molecule is reachable from (``sources``: ``canonical_smiles``,
    ``in_fartdb`` and optionally more columns; a SMILES missing there counts as FartDB's, as it
    always has)."""
    unique = sorted(set(smiles))
    feats = featurize(unique, descriptors=True)
    frame = feats.frame.drop("row_index", "input_smiles", "smiles_differs")
    frame = frame.with_columns(
        morgan_on_bits=pl.Series(
            [np.flatnonzero(row).astype(np.int32) for row in feats.fingerprints],
            dtype=pl.List(pl.Int32),
        ),
        rdkit_version=pl.lit(RDKIT_VERSION, dtype=pl.String),
    )
    frame = frame.join(sources, on="canonical_smiles", how="left", maintain_order="left")
    frame = frame.with_columns(
        data_origin=pl.when(pl.col("in_fartdb").fill_null(True))
        .then(pl.lit("fartdb"))
        .otherwise(pl.lit("foodatlas"))
    )
    return frame.unique("canonical_smiles", keep="first", maintain_order=True)


def molecule_sources(molecules: pl.DataFrame, pubchem: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Every SMILES reachable from FartDB and FoodAtlas (PubChem CIDs of the KGv2 seed), keyed by
    RDKit canonical SMILES and sorted by it, and how many PubChem structures RDKit could not
    parse (dropped *and counted*). A SMILES reached by several CIDs keeps the smallest;
    ``pubchem_cid`` is DOUBLE (null where FoodAtlas does not reach the molecule), the type the
    table has always had."""
    fart = molecules.select(pl.col("canonical_smiles").unique(maintain_order=True)).with_columns(
        in_fartdb=pl.lit(True)
    )
    pc = pubchem.drop_nulls("pubchem_canonical_smiles")
    feats = featurize(
        pc["pubchem_canonical_smiles"].to_list(),
        descriptors=False,
        inchikey=False,
        on_error="report",
    )
    fa = pl.DataFrame(
        {
            "canonical_smiles": feats.frame["canonical_smiles"],
            "pubchem_cid": pc["pubchem_cid"].to_numpy()[feats.frame["row_index"].to_numpy()],
        }
    )
    fa = (
        fa.sort("pubchem_cid", maintain_order=True)
        .unique("canonical_smiles", keep="first", maintain_order=True)
        .with_columns(pl.col("pubchem_cid").cast(pl.Float64), in_foodatlas=pl.lit(True))
    )
    out = fart.join(fa, on="canonical_smiles", how="full", coalesce=True).with_columns(
        pl.col("in_fartdb").fill_null(False), pl.col("in_foodatlas").fill_null(False)
    )
    return out.sort("canonical_smiles"), feats.invalid.height


def compound_embeddings(
    featurized: pl.DataFrame, molecules: pl.DataFrame, *, root: Path, dmpnn_dir: Path
) -> pl.DataFrame:
    """fct_compound_embeddings: one row per canonical SMILES and encoder. Always the
    fingerprint-derived encoder (TruncatedSVD-64 of Morgan bits, fitted on the FartDB train split,
    from ``int_molecules_featurized``'s bits); the D-MPNN 300-d penultimate activation of the
    selected D-MPNN fit (:func:`~warehouse.molecular.fits.selected_dmpnn`) when one is
    registered."""
    smiles = featurized["canonical_smiles"].to_list()
    tables = [cached_mart(root, fingerprint_embeddings, featurized, molecules)]
    chosen = fit_store.selected_dmpnn(fit_store.registered_dmpnn_fits(dmpnn_dir))
    if chosen is not None:
        tables.append(fit_store.cached_dmpnn_embedding(chosen.checkpoint, smiles, root).table())
    out = pl.concat(tables)
    return out.select(
        (pl.col("encoder") + ":" + pl.col("canonical_smiles")).alias("embedding_key"), pl.all()
    ).with_columns(data_origin=pl.lit("derived"))


def fingerprint_embeddings(featurized: pl.DataFrame, molecules: pl.DataFrame) -> pl.DataFrame:
    """The fingerprint encoder's rows of fct_compound_embeddings (TruncatedSVD-64 fitted on the
    FartDB train split), a pure function of the two frames."""
    smiles = featurized["canonical_smiles"].to_list()
    train = molecules.filter(pl.col("split") == "train")["canonical_smiles"].to_list()
    lookup = fit_store.fingerprint_lookup(featurized)
    return embed_fingerprint(smiles, 64, fit_smiles=train, fingerprints=lookup).table()
