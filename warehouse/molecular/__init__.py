"""Molecular library for the FartDB five-class taste task (docs/benchmark.md section 6).

* :mod:`.featurize`: RDKit canonical SMILES, InChIKey, Morgan fingerprints, descriptors.
* :mod:`.labels`: taste classes, label validation, the ``Original Labels`` leakage audit.
* :mod:`.baselines`: LightGBM / random-forest fingerprint baselines, :class:`FitResult`.
* :mod:`.metrics`: accuracy, macro P/R/F1, OvR AUROC, vectorized BCa CIs, McNemar.
* :mod:`.dmpnn`: chemprop D-MPNN training and 300-d embeddings; :mod:`.grid`: the 12-config
  resumable grid and its registry.
* :mod:`.embeddings`: fingerprint-derived embeddings and embedding tables.
* :mod:`.foodatlas`: SMILES for FoodAtlas PubChem CIDs from the KGv2 seed.

Heavy imports (torch, lightning, chemprop) happen only inside the D-MPNN functions.
"""

from warehouse.molecular.baselines import (
    FitResult,
    assert_no_leaky_inputs,
    train_fingerprint_models,
)
from warehouse.molecular.dmpnn import (
    DMPNNConfig,
    embed_dmpnn,
    grid_configs,
    load_dmpnn_fit,
    train_dmpnn,
)
from warehouse.molecular.embeddings import Embedding, embed_fingerprint, embedding_table
from warehouse.molecular.featurize import (
    RDKIT_VERSION,
    FeaturizedMolecules,
    InvalidSmilesError,
    canonical_smiles,
    featurize,
    fingerprint_matrix,
)
from warehouse.molecular.foodatlas import FoodAtlasSmiles, compound_smiles_from_foodatlas
from warehouse.molecular.grid import GridResult, run_grid
from warehouse.molecular.labels import (
    LABEL_COLUMN,
    LEAKY_COLUMN,
    SMILES_COLUMN,
    TASTE_CLASSES,
    keyword_leakage_baseline,
    validate_labels,
)
from warehouse.molecular.metrics import (
    bca_classification,
    bootstrap_metrics,
    classification_metrics,
    compare_all,
    mcnemar,
    per_class_metrics,
)

__all__ = [
    "DMPNNConfig",
    "Embedding",
    "FeaturizedMolecules",
    "FitResult",
    "FoodAtlasSmiles",
    "GridResult",
    "InvalidSmilesError",
    "LABEL_COLUMN",
    "LEAKY_COLUMN",
    "RDKIT_VERSION",
    "SMILES_COLUMN",
    "TASTE_CLASSES",
    "assert_no_leaky_inputs",
    "bca_classification",
    "bootstrap_metrics",
    "canonical_smiles",
    "classification_metrics",
    "compare_all",
    "compound_smiles_from_foodatlas",
    "embed_dmpnn",
    "embed_fingerprint",
    "embedding_table",
    "featurize",
    "fingerprint_matrix",
    "grid_configs",
    "keyword_leakage_baseline",
    "load_dmpnn_fit",
    "mcnemar",
    "per_class_metrics",
    "run_grid",
    "train_dmpnn",
    "train_fingerprint_models",
    "validate_labels",
]
