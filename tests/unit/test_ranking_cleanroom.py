"""Clean-room MMRF and Ridge (issue 22): written from docs/benchmark.md §3 and docs/ranking.md's
decisions alone, in plain Python loops (no warehouse.ranking code but the design's accessors),
and compared with the warehouse's fits to 1e-9.

MMRF as decided in docs/ranking.md: per modality (N: one per subset, that subset's nutrition
columns, that subset's products), the products that have the modality (an analog the design
zero-filled does not; images as the feature mart gives them, KNN-imputed included); a standard
scaler over them (population sd; a column whose sd is at most 1e-10 times the block's largest
keeps scale 1); per category, the centroid of
the standardized reference rows; cosine or Euclidean distance to it; rank within the category
over every product with a distance, ``#{d' <= d, ties at 1e-10} / (count + 1)``; score = minus
the mean over the modalities the analog has.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from warehouse.ranking.design import Design
from warehouse.ranking.loocv import Job, run_fits
from warehouse.ranking.synthetic import SMALL_CATEGORIES, SMALL_DIMS, synthetic_design

TIE = 1e-10


def _standardize(rows: list[list[float]]) -> list[list[float]]:
    n, p = len(rows), len(rows[0])
    means = [sum(r[j] for r in rows) / n for j in range(p)]
    sds = [math.sqrt(sum((r[j] - means[j]) ** 2 for r in rows) / n) for j in range(p)]
    sds = [s if s > 1e-10 * max(sds) else 1.0 for s in sds]
    return [[(r[j] - means[j]) / sds[j] for j in range(p)] for r in rows]


def _distance(u: list[float], c: list[float], metric: str) -> float:
    if metric == "euclidean":
        return math.sqrt(sum((a - b) ** 2 for a, b in zip(u, c, strict=True)))
    nu = math.sqrt(sum(a * a for a in u))
    nc = math.sqrt(sum(b * b for b in c))
    if nu == 0 or nc == 0:
        return math.nan
    return 1.0 - sum(a * b for a, b in zip(u, c, strict=True)) / (nu * nc)


def _modality_ranks(products: list[dict], metric: str) -> dict[int, float]:
    """products: dicts with id, category, is_ref, row (None = modality absent)."""
    have = [p for p in products if p["row"] is not None]
    if not have:
        return {}
    z = dict(zip([p["id"] for p in have], _standardize([p["row"] for p in have]), strict=True))
    out = {}
    for cat in sorted({p["category"] for p in have}):
        members = [p for p in have if p["category"] == cat]
        refs = [z[p["id"]] for p in members if p["is_ref"]]
        if not refs:
            continue
        centroid = [sum(col) / len(refs) for col in zip(*refs, strict=True)]
        dist = {p["id"]: _distance(z[p["id"]], centroid, metric) for p in members}
        ok = {k: v for k, v in dist.items() if not math.isnan(v)}
        for k, d in ok.items():
            out[k] = sum(1 for e in ok.values() if e <= d or abs(e - d) < TIE) / (len(ok) + 1)
    return out


def _products(design: Design, block: str, cols: list[int] | None, subset: str | None):
    keys = design.keys.to_dicts()
    refs = design.reference_keys.to_dicts()
    absent = design.absent.get(block, np.zeros(design.n, bool))
    out = []
    for i, k in enumerate(keys + refs):
        is_ref = i >= design.n
        raw = design.reference_blocks[block][i - design.n] if is_ref else design.block(block)[i]
        row = None if (not is_ref and absent[i]) or np.isnan(raw).any() else list(raw)
        if subset is not None and k["subset"] != subset:
            row = None
        if row is not None and cols is not None:
            row = [row[j] for j in cols]
        out.append({"id": i, "category": k["category"], "is_ref": is_ref, "row": row})
    return out


def cleanroom_mmrf(design: Design, blocks: list[str], metric: str) -> np.ndarray:
    per_analog: list[list[float]] = [[] for _ in range(design.n)]
    for b in blocks:
        if b == "N":
            parts = [
                (s, [design.nutrition_columns.index(c) for c in cols])
                for s, cols in design.subset_columns.items()
            ]
        else:
            parts = [(None, None)]
        for subset, cols in parts:
            for i, r in _modality_ranks(_products(design, b, cols, subset), metric).items():
                if i < design.n:
                    per_analog[i].append(r)
    return np.array([-sum(v) / len(v) for v in per_analog])


def _pca95(a: np.ndarray) -> np.ndarray:
    """(p, k) orthonormal directions keeping >= 95% of the variance (numpy SVD)."""
    centred = a - a.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    ratio = np.cumsum(s**2) / np.sum(s**2)
    k = int(np.argmax(ratio > 0.95)) + 1
    return vt[:k].T


def cleanroom_ridge(design: Design, blocks: list[str]) -> np.ndarray:
    """LOOCV: per fold and block a standard scaler and, over 10 columns, PCA to 95%; Ridge
    alpha 1 with an intercept in closed form; the held-out product's prediction."""
    out = np.empty(design.n)
    for r in range(design.n):
        train = np.delete(np.arange(design.n), r)
        ztr, zte = [], []
        for b in blocks:
            x = design.block(b)
            mean, sd = x[train].mean(axis=0), x[train].std(axis=0)
            sd = np.where(sd > 1e-10 * sd.max(), sd, 1.0)
            a_tr, a_te = (x[train] - mean) / sd, (x[[r]] - mean) / sd
            if x.shape[1] > 10:
                v, mu = _pca95(a_tr), a_tr.mean(axis=0)
                a_tr, a_te = (a_tr - mu) @ v, (a_te - mu) @ v
            ztr.append(a_tr)
            zte.append(a_te)
        xtr, xte, y = np.hstack(ztr), np.hstack(zte), design.target[train]
        xm, ym = xtr.mean(axis=0), y.mean()
        w = np.linalg.solve(
            (xtr - xm).T @ (xtr - xm) + np.eye(xtr.shape[1]), (xtr - xm).T @ (y - ym)
        )
        out[r] = ym + ((xte - xm) @ w)[0]
    return out


@pytest.fixture(scope="module")
def small() -> Design:
    d = synthetic_design(seed=5, plant="nutrition", dims=SMALL_DIMS, layout=SMALL_CATEGORIES)
    c, t = d.block("C").copy(), d.block("T").copy()
    absent = np.zeros(d.n, bool)
    absent[[0, 3, 12]] = True
    c[absent] = 0.0
    t[[7, 9]] = t[8]  # three analogs of one category share a T vector
    t[:, 4] = 1e-33 * np.random.default_rng(0).standard_normal(d.n)  # rounding residue
    return d.with_block("C", c, absent_rows=absent).with_block("T", t)


@pytest.mark.parametrize(
    ("model", "metric"), [("dist_pred_cosine", "cosine"), ("dist_pred_l2", "euclidean")]
)
def test_cleanroom_mmrf_agrees_with_the_warehouse(small, model, metric):
    (fit,) = run_fits(small, [Job.of(model, "NCTI")], n_jobs=1)
    clean = cleanroom_mmrf(small, ["N", "C", "T", "I"], metric)
    assert np.abs(fit.predictions - clean).max() < 1e-9


def test_cleanroom_ridge_agrees_with_the_warehouse(small):
    (fit,) = run_fits(small, [Job.of("ridge", "SNCTI")], n_jobs=1)
    clean = cleanroom_ridge(small, ["S", "N", "C", "T", "I"])
    assert np.abs(fit.predictions - clean).max() < 1e-9
