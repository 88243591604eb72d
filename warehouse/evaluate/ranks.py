"""The rank of each model in the main table (pairwise accuracy) with the interval of that rank,
from paired bootstrap draws: one set of product draws (stratified by category, as the main
table's bootstrap) shared by every model, so each draw ranks all models on the same products.

A draw is a multinomial count ``w`` of each product of a category; a model's accuracy on the
draw is ``sum_{i<j} w_i w_j c_ij + 0.5 * sum_i C(w_i, 2)`` over ``sum_c C(n_c, 2)``, where
``c_ij`` is the pair credit (docs/benchmark.md §4) and a product drawn twice forms a gold tie (0.5),
exactly what scoring the resampled rows would give.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

RANK_METHOD = "paired_product_bootstrap"
TIE = 1e-10


def _credit_matrix(gold: np.ndarray, pred: np.ndarray) -> np.ndarray:
    """Upper-triangular pair credits of one category (i < j)."""
    dg = gold[:, None] - gold[None, :]
    dp = pred[:, None] - pred[None, :]
    c = np.where(np.abs(dg) < TIE, 0.5, np.where(np.abs(dp) < TIE, 0.5, (dg * dp > 0) * 1.0))
    return np.triu(c, 1)


def shared_products(frames: Mapping[str, pl.DataFrame]) -> pl.DataFrame:
    """``category, product_code`` covered by every frame, sorted."""
    keys = None
    for df in frames.values():
        k = df.select("category", "product_code").unique()
        keys = k if keys is None else keys.join(k, on=["category", "product_code"], how="inner")
    return keys.sort("category", "product_code")


def accuracy_draws(
    frames: Mapping[str, pl.DataFrame], n_boot: int, seed: int
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Point accuracies ``(M,)`` and draws ``(n_boot, M)`` on the products every frame covers."""
    names = list(frames)
    keys = shared_products(frames)
    aligned = {
        n: keys.join(
            df.select("category", "product_code", "gold", "pred"),
            on=["category", "product_code"],
            how="left",
        )
        for n, df in frames.items()
    }
    rng = np.random.default_rng(seed)
    num = np.zeros((n_boot, len(names)))
    point = np.zeros(len(names))
    den = 0.0
    for cat in keys["category"].unique(maintain_order=True).to_list():
        rows = np.flatnonzero((keys["category"] == cat).to_numpy())
        n_c = rows.size
        if n_c < 2:
            continue
        w = rng.multinomial(n_c, np.full(n_c, 1 / n_c), size=n_boot).astype(float)
        self_ties = 0.5 * (w * (w - 1) / 2).sum(axis=1)
        den += n_c * (n_c - 1) / 2
        for m, n in enumerate(names):
            df = aligned[n]
            c = _credit_matrix(df["gold"].to_numpy()[rows], df["pred"].to_numpy()[rows])
            point[m] += c.sum()
            num[:, m] += ((w @ c) * w).sum(axis=1) + self_ties
    if den == 0:
        return np.full(len(names), np.nan), np.full((n_boot, len(names)), np.nan), names
    return point / den, num / den, names


def _ranks(values: np.ndarray) -> np.ndarray:
    """1 = best; ties share the best rank of their group (competition ranking), row-wise."""
    v = np.atleast_2d(values)
    return (v[:, None, :] > v[:, :, None]).sum(axis=2) + 1


def model_ranks(
    frames: Mapping[str, pl.DataFrame],
    users: list[str],
    n_boot: int,
    seed: int,
    alpha: float = 0.05,
) -> list[dict[str, object]]:
    """Rank of each user model among all ``frames`` (pairwise accuracy, 1 = best) with its
    percentile interval over the paired draws; ``is_resolved`` when the interval is one rank."""
    point, draws, names = accuracy_draws(frames, n_boot, seed)
    n_products = shared_products(frames).height
    if not np.isfinite(point).all():
        return [
            {
                "name": u,
                "rank": None,
                "rank_ci_lo": None,
                "rank_ci_hi": None,
                "n_models": len(names),
                "n_products": n_products,
                "is_resolved": False,
                "rank_method": RANK_METHOD,
                "note": "not resolvable: no shared products",
            }
            for u in users
        ]
    point_rank = _ranks(point)[0]
    draw_ranks = _ranks(draws)
    out = []
    for u in users:
        m = names.index(u)
        lo = int(np.floor(np.percentile(draw_ranks[:, m], 100 * alpha / 2)))
        hi = int(np.ceil(np.percentile(draw_ranks[:, m], 100 * (1 - alpha / 2))))
        resolved = lo == hi
        note = (
            f"rank {lo} in every draw but a tail of {100 * alpha:.0f}%"
            if resolved
            else f"not resolved: rank {lo} to {hi} of {len(names)} across the draws"
        )
        out.append(
            {
                "name": u,
                "rank": int(point_rank[m]),
                "rank_ci_lo": lo,
                "rank_ci_hi": hi,
                "n_models": len(names),
                "n_products": n_products,
                "accuracy": float(point[m]),
                "is_resolved": resolved,
                "rank_method": RANK_METHOD,
                "note": note,
            }
        )
    return out
