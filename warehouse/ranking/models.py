"""The supervised food-ranking models of docs/benchmark.md §3 and their exact configurations.

Every model is a name plus a configuration dict (:data:`DEFAULTS`, overridable); the dict, the
feature set and the library versions make the fit's configuration hash (:mod:`.cache`). A model
sees one fold (:class:`Fold`: preprocessed training and test rows) and returns the test rows'
scores; only the within-category order of the scores matters.

* ``bradley_terry``: logistic regression on pairwise difference rows, no intercept, C=1; the
  published solver is lbfgs (max_iter 1000); ``solver="newton"`` (default) reaches the same
  objective's optimum to 1e-9 (:mod:`.bt`), ``solver="lbfgs"`` runs sklearn as published.
  Score = expected tournament wins against same-category training products.
* ``hierarchical_bt``: one BT per group (meat / nonsweet_dairy / other_dairy), shrunk to the
  pair-row-weighted global weights (:func:`.bt.shrink_group_weights`).
* ``kernel_ranksvm``: ``SVC(kernel="rbf", C=1, gamma="scale", probability=True, max_iter=5000,
  random_state=42)`` on the pairwise rows; score = tournament over Platt probabilities of
  "test beats j". ``kernel_impl="precomputed"`` (default) hands libsvm the same RBF Gram matrix
  computed with BLAS (gamma from the rows exactly as sklearn's "scale"), which is much faster
  than libsvm's per-entry kernel on ~1,800 rows and gives the same model; ``"rbf"`` runs SVC's
  own kernel (the tests check both agree).
* ``ridge``: ``Ridge(alpha=1, fit_intercept=True)`` on the panel mean.
* ``lightgbm_reg``: ``LGBMRegressor(objective="regression", n_estimators=100,
  learning_rate=0.1, num_leaves=31, min_child_samples=5, deterministic=True,
  force_row_wise=True, n_jobs=1, random_state=42)`` on the panel mean, its input rounded to
  :data:`LGBM_INPUT_DECIMALS` decimals (``input_decimals``, not an LGBMRegressor argument).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from warehouse.errors import WarehouseError
from warehouse.ranking import bt

SEED = 42
HBT_GROUPS = ("meat", "nonsweet_dairy", "other_dairy")

SUPERVISED = ("bradley_terry", "hierarchical_bt", "kernel_ranksvm", "ridge", "lightgbm_reg")
DISTANCE = ("dist_pred_cosine", "dist_pred_l2")
PAIRWISE = ("bradley_terry", "hierarchical_bt", "kernel_ranksvm")

LGBM_INPUT_DECIMALS = 9
"""LightGBM reads its preprocessed input rounded to 9 decimals (``np.round``; the inputs are
standardized or PCA scores of order 1, so 1e-9 is far below any measured precision): rows
equal up to rounding noise (a 1e-12 perturbation, another correct PCA) are equal for its
binning, which would otherwise place split points between them (docs/ranking.md)."""

SHORT_NAMES = {
    "bradley_terry": "bt",
    "hierarchical_bt": "hbt",
    "kernel_ranksvm": "ksvm",
    "ridge": "ridge",
    "lightgbm_reg": "lgbm",
}

# the Bradley-Terry settings hierarchical_bt shares; the distance settings both metrics share
_BT_SETTINGS: dict[str, object] = {
    "C": 1.0,
    "fit_intercept": False,
    "solver": "newton",
    "tol": bt.BT_TOL,
    "lbfgs_max_iter": 1000,
}
_DISTANCE_SETTINGS: dict[str, object] = {
    "scaler": "standard",
    "normalization": "rank",
    "missing": "skip",
    "tie_tolerance": 1e-10,
    "distance": "rowwise",
    "negligible_sd": 1e-10,
    "snap_rtol": 1e-10,
}

DEFAULTS: dict[str, dict[str, object]] = {
    "bradley_terry": dict(_BT_SETTINGS),
    "hierarchical_bt": {**_BT_SETTINGS, "groups": list(HBT_GROUPS)},
    "kernel_ranksvm": {
        "C": 1.0,
        "kernel": "rbf",
        "gamma": "scale",
        "probability": True,
        "max_iter": 5000,
        "random_state": SEED,
        "kernel_impl": "precomputed",
    },
    "ridge": {"alpha": 1.0, "fit_intercept": True},
    "lightgbm_reg": {
        "objective": "regression",
        "n_estimators": 100,
        "learning_rate": 0.1,
        "num_leaves": 31,
        "min_child_samples": 5,
        "deterministic": True,
        "force_row_wise": True,
        "n_jobs": 1,
        "random_state": SEED,
        "input_decimals": LGBM_INPUT_DECIMALS,
    },
    "dist_pred_cosine": {"metric": "cosine", **_DISTANCE_SETTINGS},
    "dist_pred_l2": {"metric": "euclidean", **_DISTANCE_SETTINGS},
}

_CHOICES = {
    ("bradley_terry", "solver"): ("newton", "lbfgs"),
    ("hierarchical_bt", "solver"): ("newton", "lbfgs"),
    ("kernel_ranksvm", "kernel_impl"): ("precomputed", "rbf"),
}


class ModelConfigError(WarehouseError):
    """Unknown model or configuration key."""


def model_config(name: str, overrides: Mapping[str, object] | None = None) -> dict[str, object]:
    """The full configuration of ``name``: :data:`DEFAULTS` updated with ``overrides``."""
    if name not in DEFAULTS:
        raise ModelConfigError(f"unknown model {name!r}; choose one of {sorted(DEFAULTS)}")
    cfg = dict(DEFAULTS[name])
    for key, value in (overrides or {}).items():
        if key not in cfg:
            raise ModelConfigError(f"model {name!r} has no setting {key!r} (has {sorted(cfg)})")
        if (name, key) in _CHOICES and value not in _CHOICES[(name, key)]:
            raise ModelConfigError(f"{name}.{key} must be one of {_CHOICES[(name, key)]}")
        cfg[key] = value
    return cfg


@dataclass(frozen=True)
class Fold:
    """One fold's preprocessed rows. ``win``/``lose`` index ``z_train`` (untied same-category
    training pairs); ``pair_group`` is the group of each pair (hierarchical BT)."""

    z_train: np.ndarray
    z_test: np.ndarray
    y_train: np.ndarray
    cat_train: np.ndarray
    cat_test: np.ndarray
    grp_test: np.ndarray
    win: np.ndarray
    lose: np.ndarray
    pair_group: np.ndarray


@dataclass(frozen=True)
class FoldOutput:
    scores: np.ndarray
    weights: np.ndarray | None = None  # linear weights on z (BT), for warm starts and audits
    n_iter: int = 0
    warnings: int = 0


def _bt_weights(cfg: Mapping[str, object], z, win, lose, w0=None) -> tuple[np.ndarray, int]:
    if cfg["solver"] == "lbfgs":
        w = bt.fit_bt_sklearn(z, win, lose, c=float(cfg["C"]), max_iter=int(cfg["lbfgs_max_iter"]))
        return w, 0
    fit = bt.fit_bt(z, win, lose, c=float(cfg["C"]), w0=w0, tol=float(cfg["tol"]))
    return fit.w, fit.n_iter


def _bradley_terry(cfg, fold: Fold, w0=None) -> FoldOutput:
    w, it = _bt_weights(cfg, fold.z_train, fold.win, fold.lose, w0)
    scores = bt.tournament_scores(fold.z_test, fold.cat_test, fold.z_train, fold.cat_train, w)
    return FoldOutput(scores, w, it)


def _hierarchical_bt(cfg, fold: Fold, w0=None) -> FoldOutput:
    groups = tuple(cfg["groups"])
    ws, ns, its = [], [], 0
    for g in groups:
        sel = fold.pair_group == g
        w, it = _bt_weights(cfg, fold.z_train, fold.win[sel], fold.lose[sel])
        ws.append(w)
        ns.append(2 * int(sel.sum()))
        its += it
    shr = bt.shrink_group_weights(list(groups), np.array(ws), np.array(ns))
    unknown = sorted(set(fold.grp_test) - set(groups))
    if unknown:
        raise ModelConfigError(
            f"hierarchical_bt: test products in groups {unknown} not in {groups}"
        )
    per_test = [shr.w_shrunk[groups.index(g)] for g in fold.grp_test]
    scores = bt.tournament_scores(
        fold.z_test, fold.cat_test, fold.z_train, fold.cat_train, per_test
    )
    return FoldOutput(scores, None, its)


def _sq_dists(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * (a @ b.T)
    return np.maximum(d, 0.0)


def _rbf_gram(x: np.ndarray, gamma: float) -> np.ndarray:
    """``np.exp(-gamma * _sq_dists(x, x))`` with the same operations in the same order (so the
    same bits), in place: two (m, m) arrays alive instead of five (a grouped K-fold fold of a
    scale-10 simulation has ~15,000 pair rows: 1.8 GB a matrix)."""
    sq = (x * x).sum(1)
    d = sq[:, None] + sq[None, :]
    g = x @ x.T
    g *= 2.0
    d -= g
    del g
    np.maximum(d, 0.0, out=d)
    d *= -gamma
    return np.exp(d, out=d)


def _kernel_ranksvm(cfg, fold: Fold, w0=None) -> FoldOutput:
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import SVC

    x, lab = bt.pair_rows(fold.z_train, fold.win, fold.lose)
    if cfg["gamma"] != "scale" or cfg["kernel"] != "rbf":
        raise ModelConfigError("kernel_ranksvm supports kernel='rbf' with gamma='scale' only")
    var = x.var()
    gamma = 1.0 / (x.shape[1] * var) if var != 0 else 1.0
    common = {
        "C": float(cfg["C"]),
        "probability": bool(cfg["probability"]),
        "max_iter": int(cfg["max_iter"]),
        "random_state": int(cfg["random_state"]),
    }
    precomputed = cfg["kernel_impl"] == "precomputed"
    svc = (
        SVC(kernel="precomputed", **common)
        if precomputed
        else SVC(kernel="rbf", gamma="scale", **common)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        svc.fit(_rbf_gram(x, gamma) if precomputed else x, lab)
    col = list(svc.classes_).index(1.0)
    scores = np.empty(len(fold.z_test))
    for t in range(len(fold.z_test)):
        rows = fold.z_test[t] - fold.z_train[fold.cat_train == fold.cat_test[t]]
        feats = np.exp(-gamma * _sq_dists(rows, x)) if precomputed else rows
        scores[t] = svc.predict_proba(feats)[:, col].sum()
    n_warn = sum(issubclass(w.category, ConvergenceWarning) for w in caught)
    return FoldOutput(scores, None, 0, n_warn)


def _ridge(cfg, fold: Fold, w0=None) -> FoldOutput:
    from sklearn.linear_model import Ridge

    m = Ridge(alpha=float(cfg["alpha"]), fit_intercept=bool(cfg["fit_intercept"]))
    m.fit(fold.z_train, fold.y_train)
    return FoldOutput(m.predict(fold.z_test), m.coef_.copy())


def _lightgbm(cfg, fold: Fold, w0=None) -> FoldOutput:
    import lightgbm as lgb

    params = {k: v for k, v in cfg.items() if k != "input_decimals"}
    dec = int(cfg["input_decimals"])
    m = lgb.LGBMRegressor(verbose=-1, **params)
    m.fit(np.round(fold.z_train, dec), fold.y_train)
    return FoldOutput(m.predict(np.round(fold.z_test, dec)))


FIT_PREDICT = {
    "bradley_terry": _bradley_terry,
    "hierarchical_bt": _hierarchical_bt,
    "kernel_ranksvm": _kernel_ranksvm,
    "ridge": _ridge,
    "lightgbm_reg": _lightgbm,
}


def fit_predict(name: str, cfg: Mapping[str, object], fold: Fold, w0=None) -> FoldOutput:
    """Fit model ``name`` on the fold's training rows and score its test rows."""
    try:
        fn = FIT_PREDICT[name]
    except KeyError:
        raise ModelConfigError(f"{name!r} is not a supervised model ({SUPERVISED})") from None
    return fn(cfg, fold, w0)
