"""Fast fingerprint baselines (LightGBM, class-balanced random forest) and the FitResult record.

Model inputs are built by :func:`warehouse.molecular.featurize.fingerprint_matrix`, which takes
only the SMILES column: ``Original Labels`` (which leaks the class) cannot reach a model.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from warehouse.molecular.featurize import (
    FINGERPRINT_COLUMNS,
    FINGERPRINT_SPEC,
    RDKIT_VERSION,
    fingerprint_matrix,
)
from warehouse.molecular.labels import (
    FORBIDDEN_FEATURE_COLUMNS,
    LABEL_COLUMN,
    SMILES_COLUMN,
    TASTE_CLASSES,
    as_polars,
    labels_from_codes,
    resolve_column,
    validate_labels,
)
from warehouse.molecular.metrics import classification_metrics

SPLITS = ("train", "val", "test")
FINGERPRINT_MODELS = ("lightgbm", "random_forest")


@dataclass
class FitResult:
    """One fitted model: identity, configuration and per-split predictions.

    ``proba[split]`` is ``n x 5`` in :data:`TASTE_CLASSES` order, ``labels[split]`` the argmax
    class names, ``y_true[split]`` the gold class names. ``fit_id`` is a sha256: of the model
    configuration plus the training-data hash for the fingerprint baselines, of the checkpoint
    file for D-MPNN fits.
    """

    name: str
    fit_id: str
    config: dict[str, Any]
    proba: dict[str, np.ndarray]
    labels: dict[str, np.ndarray]
    y_true: dict[str, np.ndarray]
    wall_s: float
    checkpoint: Path | None = None
    info: dict[str, Any] = field(default_factory=dict)
    model: Any = field(default=None, repr=False, compare=False)

    @classmethod
    def from_proba(
        cls,
        name: str,
        fit_id: str,
        config: dict[str, Any],
        proba: dict[str, np.ndarray],
        y_true: dict[str, np.ndarray],
        wall_s: float,
        **rest: Any,
    ) -> FitResult:
        """The result whose ``labels`` are the argmax classes of ``proba`` in every split;
        ``rest``: the optional fields (``checkpoint``, ``info``, ``model``)."""
        labels = {s: labels_from_codes(proba[s].argmax(axis=1)) for s in SPLITS}
        return cls(name, fit_id, config, proba, labels, y_true, wall_s, **rest)

    def metrics(self, split: str = "test") -> dict[str, float]:
        return classification_metrics(self.y_true[split], self.labels[split], self.proba[split])


def sha256_json(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()


def data_hash(smiles: Sequence[str], labels: Sequence[str]) -> str:
    """sha256 of the (SMILES, label) rows in order: identifies a training set."""
    h = hashlib.sha256()
    for s, y in zip(smiles, labels, strict=True):
        h.update(f"{s}\t{y}\n".encode())
    return h.hexdigest()


@dataclass(frozen=True)
class SplitData:
    smiles: list[str]
    codes: np.ndarray
    smiles_column: str

    @property
    def labels(self) -> np.ndarray:
        return labels_from_codes(self.codes)


def split_data(df, smiles_col: str = SMILES_COLUMN, label_col: str = LABEL_COLUMN) -> SplitData:
    """SMILES and validated label codes of one split (a polars frame)."""
    df = as_polars(df)
    scol = resolve_column(df, smiles_col)
    if scol in FORBIDDEN_FEATURE_COLUMNS:
        raise ValueError(f"column {scol!r} may not be used as a model input")
    lcol = resolve_column(df, label_col)
    return SplitData(df[scol].to_list(), validate_labels(df[lcol].to_list()), scol)


def assert_no_leaky_inputs(input_columns: Sequence[str], feature_names: Sequence[str]) -> None:
    """Refuse any model input column that is the class or its free-text source (or built from
    them): inputs must be the SMILES column only, features Morgan bits / RDKit descriptors."""
    bad = [c for c in input_columns if c in FORBIDDEN_FEATURE_COLUMNS]
    bad += [f for f in feature_names if any(t in f.lower() for t in ("label", "taste", "original"))]
    if bad:
        raise ValueError(f"leaky model inputs: {bad}")


def _full_proba(proba: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """Spread predict_proba columns (for the classes seen in training) into all five classes."""
    out = np.zeros((proba.shape[0], len(TASTE_CLASSES)))
    out[:, np.asarray(classes, dtype=np.int64)] = proba
    return out


def lightgbm_config(seed: int = 42, num_threads: int = 1) -> dict[str, Any]:
    return {
        "objective": "multiclass",
        "num_class": len(TASTE_CLASSES),
        "learning_rate": 0.1,
        "num_leaves": 31,
        "min_data_in_leaf": 20,
        "num_boost_round": 500,
        "early_stopping_rounds": 50,
        "early_stopping_metric": "multi_logloss on val",
        "deterministic": True,
        "force_row_wise": True,
        "num_threads": num_threads,
        "seed": seed,
        "verbose": -1,
    }


def random_forest_config(seed: int = 42, n_estimators: int = 300, n_jobs: int = 2):
    return {
        "n_estimators": n_estimators,
        "class_weight": "balanced_subsample",
        "n_jobs": n_jobs,
        "random_state": seed,
    }


def _fit_lightgbm(cfg, X, y):
    import lightgbm as lgb

    params = {
        k: v
        for k, v in cfg.items()
        if k not in ("num_boost_round", "early_stopping_rounds", "early_stopping_metric")
    }
    X = {s: np.asarray(X[s], dtype=np.float32) for s in SPLITS}  # uint8 -> float32: faster
    train = lgb.Dataset(X["train"], y["train"], free_raw_data=True)
    val = lgb.Dataset(X["val"], y["val"], reference=train)
    booster = lgb.train(
        params,
        train,
        num_boost_round=cfg["num_boost_round"],
        valid_sets=[val],
        callbacks=[lgb.early_stopping(cfg["early_stopping_rounds"], verbose=False)],
    )
    proba = {s: booster.predict(X[s], num_iteration=booster.best_iteration) for s in SPLITS}
    return booster, proba, {"best_iteration": int(booster.best_iteration)}


def _fit_random_forest(cfg, X, y):
    from sklearn.ensemble import RandomForestClassifier

    model = RandomForestClassifier(**cfg).fit(X["train"], y["train"])
    # predict on one thread: with n_jobs > 1 the trees' probabilities are summed in whatever
    # order the threads finish, which moves the last bit between runs (outputs byte-stable)
    model.set_params(n_jobs=1)
    proba = {s: _full_proba(model.predict_proba(X[s]), model.classes_) for s in SPLITS}
    return model, proba, {}


def _feature_matrices(data: dict, descriptors: bool, fingerprints) -> tuple[dict, list[str]]:
    """Per split: the Morgan bit matrix (plus RDKit descriptors), computed here or read through
    ``fingerprints``; and the feature names."""
    X, feature_names = {}, []
    if fingerprints is not None and descriptors:
        raise ValueError("precomputed fingerprints carry no descriptors; drop one of the two")
    for s in SPLITS:
        if fingerprints is None:
            X[s], feature_names = fingerprint_matrix(data[s].smiles, descriptors=descriptors)
        else:
            X[s], feature_names = fingerprints(data[s].smiles), list(FINGERPRINT_COLUMNS)
            if X[s].shape != (len(data[s].smiles), len(FINGERPRINT_COLUMNS)):
                raise ValueError(f"fingerprints returned shape {X[s].shape} for split {s}")
    return X, feature_names


def _features(data: dict, descriptors: bool, fingerprints) -> tuple[dict, dict[str, Any], float]:
    """Per split feature matrices (leak-checked), the feature part of the configuration and
    the featurization time."""
    t0 = time.perf_counter()
    X, feature_names = _feature_matrices(data, descriptors, fingerprints)
    featurize_s = time.perf_counter() - t0
    input_columns = [data["train"].smiles_column]
    assert_no_leaky_inputs(input_columns, feature_names)
    return X, _feature_info(input_columns, feature_names, descriptors), featurize_s


def _feature_info(
    input_columns: list[str], feature_names: list[str], descriptors: bool
) -> dict[str, Any]:
    """The feature part of a fit's configuration (hashed into its ``fit_id``; key order kept)."""
    return {
        "input_columns": input_columns,
        "feature_spec": FINGERPRINT_SPEC + ("+rdkit_descriptors" if descriptors else ""),
        "n_features": len(feature_names),
        "feature_names_sha256": hashlib.sha256("\n".join(feature_names).encode()).hexdigest(),
        "rdkit_version": RDKIT_VERSION,
        "classes": list(TASTE_CLASSES),
    }


def train_fingerprint_models(
    train_df,
    val_df,
    test_df,
    seed: int = 42,
    *,
    models: Sequence[str] = FINGERPRINT_MODELS,
    descriptors: bool = False,
    num_threads: int = 1,
    n_jobs: int = 2,
    rf_estimators: int = 300,
    smiles_col: str = SMILES_COLUMN,
    label_col: str = LABEL_COLUMN,
    fingerprints: Callable[[list[str]], np.ndarray] | None = None,
) -> dict[str, FitResult]:
    """Train the fingerprint baselines on the official splits; returns name -> FitResult.

    * ``lightgbm``: multiclass LightGBM (deterministic, row-wise, seed 42), up to 500 rounds
      with early stopping on validation multi-logloss. ``num_threads`` defaults to 1: on the
      shared 2-core machines OpenMP with 2 threads under contention ran 5-50x slower.
    * ``random_forest``: ``RandomForestClassifier(class_weight='balanced_subsample')`` with
      ``n_jobs`` joblib workers.

    Features: Morgan radius-2 2048-bit fingerprints of the SMILES column (plus RDKit
    descriptors when ``descriptors=True``), nothing else. ``fit_id`` = sha256 of the model
    configuration, the feature specification and the hashes of the train and validation
    (early stopping) data.

    ``fingerprints`` (optional) maps a list of SMILES to their Morgan bit matrix
    (:data:`FINGERPRINT_SPEC`, ``uint8``), e.g. a lookup into fingerprints computed once
    upstream (``int_molecules_featurized``); without it the SMILES are featurized here.
    """
    unknown = set(models) - set(FINGERPRINT_MODELS)
    if unknown:
        raise ValueError(f"unknown models {sorted(unknown)}; choose from {FINGERPRINT_MODELS}")
    data = {
        s: split_data(df, smiles_col, label_col)
        for s, df in zip(SPLITS, (train_df, val_df, test_df), strict=True)
    }
    X, feature_info, featurize_s = _features(data, descriptors, fingerprints)
    y = {s: data[s].codes for s in SPLITS}
    hashes = {
        "train_data_sha256": data_hash(data["train"].smiles, data["train"].labels),
        "val_data_sha256": data_hash(data["val"].smiles, data["val"].labels),
    }
    builders = {
        "lightgbm": (lightgbm_config(seed, num_threads), _fit_lightgbm),
        "random_forest": (random_forest_config(seed, rf_estimators, n_jobs), _fit_random_forest),
    }
    results: dict[str, FitResult] = {}
    for name in models:
        model_cfg, fit = builders[name]
        config = {"model": name, "params": model_cfg, **feature_info, "seed": seed}
        t1 = time.perf_counter()
        model, proba, extra = fit(model_cfg, X, y)
        wall = time.perf_counter() - t1
        info = {**extra, **hashes, "featurize_s": featurize_s}
        results[name] = _fit_result(name, config, hashes, proba, data, wall, info, model)
    return results


def _fit_result(name: str, config, hashes, proba, data, wall: float, info, model) -> FitResult:
    """One baseline's result; ``fit_id`` = sha256 of its configuration and the data hashes."""
    fit_id = sha256_json({"config": config, **hashes})
    y_true = {s: data[s].labels for s in SPLITS}
    return FitResult.from_proba(name, fit_id, config, proba, y_true, wall, info=info, model=model)
