"""Straightforward scikit-learn implementations of one fold: the correctness reference of the
tests and the naive "refit everything" baseline of ``benchmarks/food_models.py``.

Every fold refits ``StandardScaler`` and ``PCA(n_components=0.95)`` per block with scikit-learn,
builds the pairwise rows in plain Python, fits the model with its published estimator
(``LogisticRegression`` lbfgs or, for a tight reference, newton-cholesky; ``SVC`` with its own RBF
kernel; ``Ridge``; ``LGBMRegressor`` on its input rounded as documented) and scores the test
rows. Nothing is shared between folds or models and nothing is cached.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from scipy.special import expit

from warehouse.ranking import bt
from warehouse.ranking import models as mdl
from warehouse.ranking.design import Design, FeatureSet


def sklearn_features(
    design: Design, names: Sequence[str], train: np.ndarray, test: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler

    ztr, zte = [], []
    for b in names:
        x = design.block(b)
        sc = StandardScaler().fit(x[train])
        a_tr, a_te = sc.transform(x[train]), sc.transform(x[test])
        if x.shape[1] > 10:
            pca = PCA(n_components=0.95).fit(a_tr)
            a_tr, a_te = pca.transform(a_tr), pca.transform(a_te)
        ztr.append(a_tr)
        zte.append(a_te)
    return np.hstack(ztr), np.hstack(zte)


def python_pairs(cat: np.ndarray, y: np.ndarray) -> list[tuple[int, int]]:
    """(winner, loser) positions of every untied same-category pair, by category then rows."""
    out = []
    for c in sorted(set(cat)):
        rows = [k for k in range(len(cat)) if cat[k] == c]
        for ia, a in enumerate(rows):
            for b in rows[ia + 1 :]:
                if abs(y[a] - y[b]) >= bt.TIE_EPS:
                    out.append((a, b) if y[a] > y[b] else (b, a))
    return out


def _logistic(x, lab, solver: str):
    from sklearn.linear_model import LogisticRegression

    tol = 1e-12 if solver == "newton-cholesky" else 1e-4
    lr = LogisticRegression(C=1.0, fit_intercept=False, solver=solver, tol=tol, max_iter=1000)
    return lr.fit(x, lab).coef_.ravel()


def _rows(z, pairs):
    d = np.array([z[w] - z[lo] for w, lo in pairs]) if pairs else np.zeros((0, z.shape[1]))
    return np.vstack([d, -d]), np.r_[np.ones(len(d)), np.zeros(len(d))]


def _tournament(z_test, cat_test, z_train, cat_train, ws):
    return np.array(
        [
            sum(
                expit(z_test[t] @ ws[t] - z_train[j] @ ws[t])
                for j in range(len(z_train))
                if cat_train[j] == cat_test[t]
            )
            for t in range(len(z_test))
        ]
    )


def reference_scores(
    design: Design,
    model: str,
    feature_set: str | FeatureSet,
    train: np.ndarray,
    test: np.ndarray,
    bt_solver: str = "lbfgs",
) -> np.ndarray:
    """Scores of ``test`` rows from ``model`` trained on ``train`` rows, all with sklearn."""
    fs = FeatureSet.parse(feature_set)
    ztr, zte = sklearn_features(design, fs.block_names, train, test)
    y, cat, grp = design.target, design.categories, design.groups
    cat_tr, cat_te = cat[train], cat[test]
    if model == "ridge":
        from sklearn.linear_model import Ridge

        return Ridge(alpha=1.0).fit(ztr, y[train]).predict(zte)
    if model == "lightgbm_reg":
        import lightgbm as lgb

        cfg = mdl.model_config("lightgbm_reg")
        dec = int(cfg.pop("input_decimals"))
        m = lgb.LGBMRegressor(verbose=-1, **cfg).fit(np.round(ztr, dec), y[train])
        return m.predict(np.round(zte, dec))
    pairs = python_pairs(cat_tr, y[train])
    if model == "bradley_terry":
        w = _logistic(*_rows(ztr, pairs), bt_solver)
        return _tournament(zte, cat_te, ztr, cat_tr, [w] * len(test))
    if model == "hierarchical_bt":
        return _hbt_scores(ztr, zte, cat_tr, cat_te, grp[train], grp[test], pairs, bt_solver)
    if model == "kernel_ranksvm":
        return _ranksvm_scores(ztr, zte, cat_tr, cat_te, pairs)
    raise ValueError(f"no reference for {model!r}")


def _hbt_scores(ztr, zte, cat_tr, cat_te, grp_tr, grp_te, pairs, bt_solver: str) -> np.ndarray:
    """Hierarchical BT: one logistic fit per group's pairs, shrunk
    (:func:`.bt.shrink_group_weights`); each test row is scored with its group's weights."""
    groups = list(mdl.HBT_GROUPS)
    ws, ns = [], []
    for g in groups:
        gp = [p for p in pairs if grp_tr[p[0]] == g]
        ws.append(_logistic(*_rows(ztr, gp), bt_solver) if gp else np.zeros(ztr.shape[1]))
        ns.append(2 * len(gp))
    shr = bt.shrink_group_weights(groups, np.array(ws), np.array(ns))
    per = [shr.w_shrunk[groups.index(g)] for g in grp_te]
    return _tournament(zte, cat_te, ztr, cat_tr, per)


def _ranksvm_scores(ztr, zte, cat_tr, cat_te, pairs) -> np.ndarray:
    """Kernel RankSVM: ``SVC`` (RBF) on the pair differences; a test row's score sums its win
    probabilities against the training rows of its category."""
    from sklearn.svm import SVC

    x, lab = _rows(ztr, pairs)
    svc = SVC(
        kernel="rbf",
        C=1.0,
        gamma="scale",
        probability=True,
        max_iter=5000,
        random_state=mdl.SEED,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # sklearn 1.9: probability=True
        svc.fit(x, lab)
    col = list(svc.classes_).index(1.0)
    return np.array(
        [
            svc.predict_proba(zte[t] - ztr[cat_tr == cat_te[t]])[:, col].sum()
            for t in range(len(zte))
        ]
    )


def reference_loocv(
    design: Design,
    model: str,
    feature_set: str | FeatureSet,
    folds: Sequence[int] | None = None,
    bt_solver: str = "lbfgs",
) -> np.ndarray:
    """Reference out-of-fold scores for ``folds`` (default all rows)."""
    folds = range(design.n) if folds is None else folds
    return np.array(
        [
            reference_scores(
                design,
                model,
                feature_set,
                np.delete(np.arange(design.n), r),
                np.array([r]),
                bt_solver,
            )[0]
            for r in folds
        ]
    )


def reference_pair(
    design: Design, feature_set: str | FeatureSet, i: int, j: int, bt_solver: str = "lbfgs"
) -> np.ndarray:
    """BT scores of (i, j) trained without both: one naive nested inner fit."""
    train = np.delete(np.arange(design.n), [i, j])
    return reference_scores(
        design, "bradley_terry", feature_set, train, np.array([i, j]), bt_solver
    )
