"""Label-free same-category k-NN imputation of a missing block (docs/benchmark.md §2, block I).

For a product without the block: the k = 5 nearest products *of the same category* that have
the block natively (not imputed themselves), by cosine distance on the OTHER blocks; the
imputed row is the element-wise mean of their rows, flagged ``is_imputed``. No label is read.

Distance space: each other block (absent blocks skipped) is z-scored per column over the
products that have it (a constant column is only centred), its rows without the block are set
to 0, and it is divided by sqrt(its width) so every block weighs about the same whatever its
dimension; the blocks are then concatenated. Ties go to the lower product_code. A category with
fewer than k candidates uses all of them; with none, or when the product has no other-block
signal at all (zero vector), the row stays missing (``has_block = False``): never invented.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import polars as pl

from warehouse.features.block import FeatureBlock, FeatureError

K_NEIGHBOURS = 5


def _distance_space(others: Sequence[FeatureBlock]) -> np.ndarray:
    parts = []
    for blk in others:
        if blk.is_absent or blk.dim == 0:
            continue
        x = blk.matrix.copy()
        have = blk.has_block
        mu = x[have].mean(axis=0)
        sd = x[have].std(axis=0)
        sd[sd < 1e-12] = 1.0
        z = (x - mu) / sd
        z[~have] = 0.0
        parts.append(z / np.sqrt(blk.dim))
    if not parts:
        raise FeatureError(
            "imputation: no other block with data to measure distances. Fix: pass the "
            "product's other blocks (N, C, T)"
        )
    return np.hstack(parts)


def impute_same_category(
    block: FeatureBlock, others: Sequence[FeatureBlock], k: int = K_NEIGHBOURS
) -> FeatureBlock:
    """``block`` with its missing rows imputed (see module doc). ``extra`` gains
    ``n_imputation_neighbours`` and ``imputation_neighbour_codes`` (product codes used)."""
    if k < 1:
        raise FeatureError(f"imputation: k must be at least 1, got {k}")
    for other in others:
        if not other.keys.equals(block.keys):
            raise FeatureError(
                f"imputation: block {other.name} has different products or order than "
                f"block {block.name}. Fix: build every block from the same product list"
            )
        if other.name == block.name:
            raise FeatureError(f"imputation: block {block.name} cannot be its own neighbour space")
    n = block.n_products
    matrix = block.matrix.copy()
    has = block.has_block.copy()
    imputed = block.is_imputed.copy()
    n_used = np.zeros(n, dtype=np.int32)
    codes: list[list[int]] = [[] for _ in range(n)]
    todo = np.flatnonzero(~block.has_block)
    if todo.size and not block.is_absent:
        space = _distance_space(others)
        norms = np.linalg.norm(space, axis=1)
        category = block.keys["category"].to_numpy()
        product_code = block.keys["product_code"].to_numpy()
        donors = block.has_block & ~block.is_imputed
        for i in todo:
            cand = np.flatnonzero(donors & (category == category[i]))
            if cand.size == 0 or norms[i] == 0:
                continue
            denom = norms[cand] * norms[i]
            cos = np.divide(space[cand] @ space[i], denom, out=np.zeros(cand.size), where=denom > 0)
            dist = 1.0 - cos
            order = np.lexsort((product_code[cand], dist))[:k]
            chosen = cand[order]
            matrix[i] = block.matrix[chosen].mean(axis=0)
            has[i] = True
            imputed[i] = True
            n_used[i] = chosen.size
            codes[i] = [int(c) for c in product_code[chosen]]
    extra = (
        block.extra.with_columns(
            pl.Series("n_imputation_neighbours", n_used, dtype=pl.Int32),
            pl.Series("imputation_neighbour_codes", codes, dtype=pl.List(pl.Int32)),
        )
        if block.extra.width
        else pl.DataFrame(
            {"n_imputation_neighbours": n_used, "imputation_neighbour_codes": codes},
            schema={
                "n_imputation_neighbours": pl.Int32,
                "imputation_neighbour_codes": pl.List(pl.Int32),
            },
        )
    )
    return replace(block, matrix=matrix, has_block=has, is_imputed=imputed, extra=extra)
