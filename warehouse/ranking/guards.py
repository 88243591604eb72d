"""Leakage guards, run inside every fold (and usable on their own).

* :func:`check_fold`: the held-out rows are not training rows; no training pair touches a
  held-out row; every block's scaler was fitted on exactly the training rows (its row count and
  column means are recomputed here from the raw training rows and must agree to 1e-9 relative).
  A preprocessing step fitted on all rows, or a pair list built before the hold-out, fails it.
* :func:`audit_target_leak`: flags any block column whose Pearson correlation with the target is
  ``>= 0.99`` in absolute value, overall or after removing category means from both (a feature
  that copies the target, or its within-category order, is a leak however it got there).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from warehouse.errors import WarehouseError

LEAK_R = 0.99


class LeakageError(WarehouseError):
    """A fold or a design would let a model see its held-out target."""


def block_stats(raw_blocks: dict[str, np.ndarray]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per block: column sums over all rows and the tolerance of the scaler check (computed once
    per design, reused by every fold's :func:`check_fold`)."""
    return {
        name: (x.sum(axis=0), 1e-9 * (np.abs(x).max(axis=0) + 1e-300))
        for name, x in raw_blocks.items()
    }


def check_fold(
    raw_blocks: dict[str, np.ndarray],
    fold_blocks: object,
    win: np.ndarray,
    lose: np.ndarray,
    where: str = "fold",
    stats: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
    held: np.ndarray | None = None,
) -> None:
    """Raise :class:`LeakageError` unless the fold's preprocessing and pairs exclude its
    held-out rows. ``fold_blocks`` is a :class:`.preprocess.FoldBlocks`; ``win``/``lose`` are
    pair positions into its training rows; ``stats``: :func:`block_stats` of ``raw_blocks``;
    ``held``: rows besides the test rows that must stay out of training (an inner fold of a
    nested K-fold: the outer fold's test products)."""
    train = np.asarray(fold_blocks.train_idx)
    test = np.asarray(fold_blocks.test_idx)
    if held is not None:
        test = np.union1d(test, held)
    if np.intersect1d(train, test).size:
        raise LeakageError(
            f"{where}: held-out rows {sorted(np.intersect1d(train, test))} are also training rows"
        )
    if len(win) and (max(win.max(), lose.max()) >= len(train) or min(win.min(), lose.min()) < 0):
        raise LeakageError(f"{where}: a training pair points outside the training rows")
    ends = np.concatenate([train[win], train[lose]]) if len(win) else np.zeros(0, np.int64)
    if np.isin(ends, test).any():
        raise LeakageError(f"{where}: a training pair contains a held-out product")
    if len(np.unique(train)) != len(train):
        raise LeakageError(f"{where}: training rows repeat a product")
    outside: dict[int, np.ndarray] = {}  # rows outside the training set, by block height
    for name, t in fold_blocks.transforms.items():
        raw = raw_blocks[name]
        if t.n_train != len(train):
            raise LeakageError(
                f"{where}: block {name!r} preprocessing was fitted on {t.n_train} "
                f"rows, the fold has {len(train)} training rows"
            )
        # the training rows' column means, recomputed from the raw block (all rows minus the
        # rows outside the training set: cheaper than copying the training rows)
        if len(raw) not in outside:
            outside[len(raw)] = np.setdiff1d(np.arange(len(raw)), train)
        colsum, tol = stats[name] if stats is not None else block_stats({name: raw})[name]
        mean = (colsum - raw[outside[len(raw)]].sum(axis=0)) / len(train)
        if np.any(np.abs(mean - t.mean) > tol):
            raise LeakageError(
                f"{where}: block {name!r} scaler statistics differ from the "
                "training rows' (preprocessing fitted outside the fold)"
            )


def _corr(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=0)
    yc = y - y.mean()
    den = np.sqrt((xc * xc).sum(axis=0) * (yc @ yc))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (xc.T @ yc) / np.where(den > 0, den, 1.0), 0.0)


def audit_target_leak(design: object, threshold: float = LEAK_R) -> pl.DataFrame:
    """One row per flagged (block, column): ``block, column, r_overall, r_within``."""
    y = design.target
    cat = design.category_index
    counts = np.bincount(cat)
    y_within = y - (np.bincount(cat, weights=y) / counts)[cat]
    rows = []
    for name in sorted(design.blocks):
        x = design.blocks[name]
        means = np.zeros((len(counts), x.shape[1]))
        np.add.at(means, cat, x)
        x_within = x - (means / counts[:, None])[cat]
        r_all = _corr(x, y)
        r_in = _corr(x_within, y_within)
        for col in np.flatnonzero((np.abs(r_all) >= threshold) | (np.abs(r_in) >= threshold)):
            rows.append((name, int(col), float(r_all[col]), float(r_in[col])))
    return pl.DataFrame(
        rows,
        schema={
            "block": pl.String,
            "column": pl.Int64,
            "r_overall": pl.Float64,
            "r_within": pl.Float64,
        },
        orient="row",
    )


def assert_no_target_leak(design: object, threshold: float = LEAK_R) -> None:
    flagged = audit_target_leak(design, threshold)
    if flagged.height:
        first = flagged.row(0, named=True)
        raise LeakageError(
            f"block {first['block']!r} column {first['column']} correlates with the target at "
            f"r = {first['r_overall']:.4f} (within categories {first['r_within']:.4f}); "
            f"{flagged.height} column(s) at |r| >= {threshold}: a feature must not carry the "
            "panel mean (check the features' inputs for a join to the ratings)"
        )
