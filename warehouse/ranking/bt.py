"""Bradley-Terry on feature differences (docs/benchmark.md §3): pairs, solver, tournament,
shrinkage.

**Pairwise rows.** Every same-category pair of training products with different targets
(``|y_a - y_b| >= 1e-10``, the benchmark's tie rule) gives ``(x_win - x_lose, 1)`` and
``(x_lose - x_win, 0)``. Pairs are listed by category, then by row order (``a < b``).

**The fit** is ``LogisticRegression(C=1, fit_intercept=False, solver="lbfgs", max_iter=1000)`` on
those rows. Both rows of a pair have the same log-loss, so the objective is
``2C * sum_p log(1 + exp(-w.d_p)) + ||w||^2 / 2`` with ``d_p = x_win - x_lose``: strictly convex
(Hessian >= I). :func:`fit_bt` minimizes it with Newton's method (Cholesky solves, backtracking
line search) until ``||gradient||_2 <= tol`` (1e-9); since the Hessian is >= I this bounds the
distance to the exact optimum by the same 1e-9, whatever the starting point. sklearn's lbfgs stops
at its default ``tol=1e-4`` (gradient of the per-row-averaged loss), about 1e-5 from the optimum;
:func:`fit_bt_sklearn` is the reference the tests compare against (to ~1e-8 with a tight sklearn
tolerance). The Hessian is formed as ``Zᵀ L Z + I`` with ``L`` the pair Laplacian (m x m, m =
training products, applied through the sparse pair incidence matrix), cheaper than ``Dᵀ S D``
over the ~900 pairs. Near the optimum the Cholesky factor is reused while it still shrinks the
gradient 4x per step.

**Test score** = expected tournament wins: ``sum_j sigmoid(w.(z_test - z_j))`` over the training
products ``j`` of the test product's category.

**Hierarchical BT**: one BT per group (meat, nonsweet_dairy, other_dairy) on that group's pairs;
``w_global`` = pair-row-weighted mean of the group weights; ``alpha`` = median group row count;
``lambda_s = alpha / (alpha + n_s)``; ``w~_s = (1 - lambda_s) w_s + lambda_s w_global``
(:func:`shrink_group_weights`). Row counts ``n_s`` count both rows of a pair.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from scipy import sparse
from scipy.special import expit, log_expit

TIE_EPS = 1e-10
BT_TOL = 1e-9


# --------------------------------------------------------------------------- pairs


@dataclass(frozen=True)
class PairIndex:
    """All within-category untied pairs of a design, as global row indices.

    ``win[p]``/``lose[p]``: the higher/lower-target product of pair ``p``; ``a``/``b`` the same
    pair in row order (``a < b``). Folds select the pairs whose both ends are training rows.
    """

    a: np.ndarray
    b: np.ndarray
    win: np.ndarray
    lose: np.ndarray

    @classmethod
    def build(cls, category_index: np.ndarray, y: np.ndarray) -> PairIndex:
        cat = np.asarray(category_index)
        y = np.asarray(y, dtype=np.float64)
        a_all, b_all = [], []
        for c in np.unique(cat):
            rows = np.flatnonzero(cat == c)
            i, j = np.triu_indices(len(rows), 1)
            a_all.append(rows[i])
            b_all.append(rows[j])
        a = np.concatenate(a_all) if a_all else np.zeros(0, np.int64)
        b = np.concatenate(b_all) if b_all else np.zeros(0, np.int64)
        keep = np.abs(y[a] - y[b]) >= TIE_EPS
        a, b = a[keep], b[keep]
        a_wins = y[a] > y[b]
        return cls(a, b, np.where(a_wins, a, b), np.where(a_wins, b, a))

    def for_training(self, train_idx: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(win, lose) as positions into ``train_idx`` for the pairs inside the training rows."""
        pos = np.full(n, -1, dtype=np.int64)
        pos[train_idx] = np.arange(len(train_idx))
        keep = (pos[self.a] >= 0) & (pos[self.b] >= 0)
        return pos[self.win[keep]], pos[self.lose[keep]]


def pair_rows(z: np.ndarray, win: np.ndarray, lose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pairwise training rows ``[D; -D]`` with labels ``[1...; 0...]`` (D = z_win - z_lose)."""
    d = z[win] - z[lose]
    return np.vstack([d, -d]), np.concatenate([np.ones(len(d)), np.zeros(len(d))])


# --------------------------------------------------------------------------- solver


@dataclass(frozen=True)
class BTFit:
    w: np.ndarray
    n_iter: int
    grad_norm: float


def _objective(w: np.ndarray, d: np.ndarray, c2: float) -> float:
    return float(-c2 * log_expit(d @ w).sum() + 0.5 * w @ w)


def _incidence(win: np.ndarray, lose: np.ndarray, m: int) -> sparse.csr_matrix:
    """Incidence matrix B (m x pairs): +1 at the winner, -1 at the loser; L Z = B (s * D)."""
    nw = len(win)
    return sparse.csr_matrix(
        (np.r_[np.ones(nw), -np.ones(nw)], (np.r_[win, lose], np.r_[np.arange(nw), np.arange(nw)])),
        shape=(m, nw),
    )


def _hessian_factor(z, inc, d: np.ndarray, sig: np.ndarray, c2: float):
    """Cholesky factor of the Hessian ``Z' L Z + I`` at the current pair probabilities."""
    s = c2 * sig * (1.0 - sig)
    h = z.T @ (inc @ (s[:, None] * d))
    h[np.diag_indices_from(h)] += 1.0
    return sla.cho_factor(h, lower=False, check_finite=False)


def _armijo(w, step, d: np.ndarray, c2: float, f_cur: float, decrement: float):
    """Armijo backtracking along ``step`` (damped phase): the new weights and objective."""
    alpha = 1.0
    while True:
        w_new = w + alpha * step
        f_new = _objective(w_new, d, c2)
        if f_new <= f_cur - 1e-4 * alpha * decrement or alpha < 1e-8:
            return w_new, f_new
        alpha *= 0.5


def fit_bt(
    z: np.ndarray,
    win: np.ndarray,
    lose: np.ndarray,
    c: float = 1.0,
    w0: np.ndarray | None = None,
    tol: float = BT_TOL,
    max_iter: int = 100,
) -> BTFit:
    """Minimize ``2c * sum_p log(1 + exp(-w.(z_win - z_lose))) + ||w||^2 / 2`` by Newton.

    ``z``: (m, d) training rows; ``win``/``lose``: pair positions into ``z``. Returns the weights,
    the number of Newton steps and the final gradient norm (<= ``tol``; else ``RuntimeError``).
    """
    m, dim = z.shape
    w = np.zeros(dim) if w0 is None else np.array(w0, dtype=np.float64)
    if len(win) == 0:
        return BTFit(np.zeros(dim), 0, 0.0)
    c2 = 2.0 * c
    d = z[win] - z[lose]
    inc = _incidence(win, lose, m)
    f_cur = _objective(w, d, c2)
    factor, g_at_factor = None, np.inf
    for it in range(max_iter + 1):
        t = d @ w
        sig = expit(-t)  # sigma(-t) = 1 - P(win)
        grad = w - c2 * (d.T @ sig)
        gnorm = float(np.sqrt(grad @ grad))
        if gnorm <= tol:
            return BTFit(w, it, gnorm)
        if it == max_iter:
            break
        if factor is None or gnorm > 0.25 * g_at_factor:
            # (re)factor the Hessian; a stale factor is kept while it still shrinks the
            # gradient 4x per step (near the optimum one factorization suffices)
            factor = _hessian_factor(z, inc, d, sig, c2)
        g_at_factor = gnorm
        step = -sla.cho_solve(factor, grad, check_finite=False)
        decrement = -float(grad @ step)
        if decrement < 1e-6:  # local phase: take the full step (exact to rounding)
            w = w + step
            f_cur = None
            continue
        if f_cur is None:
            f_cur = _objective(w, d, c2)
        w, f_cur = _armijo(w, step, d, c2, f_cur, decrement)
    raise RuntimeError(
        f"Bradley-Terry Newton did not converge in {max_iter} steps (|g|={gnorm:.2e})"
    )


def fit_bt_sklearn(
    z: np.ndarray,
    win: np.ndarray,
    lose: np.ndarray,
    c: float = 1.0,
    tol: float = 1e-4,
    max_iter: int = 1000,
    seed: int = 42,
) -> np.ndarray:
    """The published fit: ``LogisticRegression`` (lbfgs, no intercept) on :func:`pair_rows`."""
    from sklearn.linear_model import LogisticRegression

    x, lab = pair_rows(z, win, lose)
    lr = LogisticRegression(
        C=c, fit_intercept=False, solver="lbfgs", max_iter=max_iter, tol=tol, random_state=seed
    )
    lr.fit(x, lab)
    return lr.coef_.ravel().copy()


# --------------------------------------------------------------------------- scoring


def tournament_scores(
    z_test: np.ndarray,
    cat_test: np.ndarray,
    z_train: np.ndarray,
    cat_train: np.ndarray,
    w: np.ndarray | list[np.ndarray],
) -> np.ndarray:
    """Expected wins of each test row against the same-category training rows.

    ``w`` is one weight vector or one per test row (hierarchical BT uses the test row's group).
    """
    f_train = z_train @ w if isinstance(w, np.ndarray) and w.ndim == 1 else None
    out = np.empty(len(z_test))
    for t in range(len(z_test)):
        wt = w if f_train is not None else w[t]
        ft = f_train if f_train is not None else z_train @ wt
        opp = cat_train == cat_test[t]
        out[t] = expit(z_test[t] @ wt - ft[opp]).sum()
    return out


# --------------------------------------------------------------------------- hierarchical


@dataclass(frozen=True)
class Shrinkage:
    groups: tuple[str, ...]
    n_rows: np.ndarray
    alpha: float
    lam: np.ndarray
    w_global: np.ndarray
    w_shrunk: np.ndarray  # (n_groups, d)


def shrink_group_weights(groups: list[str], w_groups: np.ndarray, n_rows: np.ndarray) -> Shrinkage:
    """Hierarchical shrinkage: ``w_global = sum_s n_s w_s / sum_s n_s``; ``alpha = median(n_s)``;
    ``lambda_s = alpha / (alpha + n_s)``; ``w~_s = (1 - lambda_s) w_s + lambda_s w_global``.

    A group with no pairs (n_s = 0) gets lambda 1 (pure global). With no pairs at all every
    weight is 0.
    """
    w_groups = np.asarray(w_groups, dtype=np.float64)
    n = np.asarray(n_rows, dtype=np.float64)
    total = n.sum()
    w_global = (
        (n[:, None] * w_groups).sum(axis=0) / total if total > 0 else np.zeros(w_groups.shape[1])
    )
    alpha = float(np.median(n))
    with np.errstate(invalid="ignore", divide="ignore"):
        lam = np.where(alpha + n > 0, alpha / (alpha + n), 1.0)
    shrunk = (1.0 - lam)[:, None] * w_groups + lam[:, None] * w_global
    return Shrinkage(tuple(groups), n, alpha, lam, w_global, shrunk)


def fit_hierarchical_bt(
    z: np.ndarray,
    win: np.ndarray,
    lose: np.ndarray,
    pair_group: np.ndarray,
    groups: tuple[str, ...],
    c: float = 1.0,
    tol: float = BT_TOL,
) -> Shrinkage:
    """One BT per group on that group's pairs (``pair_group[p]`` = group of pair p), shrunk."""
    ws, ns = [], []
    for g in groups:
        sel = pair_group == g
        ws.append(fit_bt(z, win[sel], lose[sel], c=c, tol=tol).w)
        ns.append(2 * int(sel.sum()))
    return shrink_group_weights(list(groups), np.array(ws), np.array(ns))
