"""Synthetic designs for tests, planted-signal checks and benchmarks (never a result).

Blocks are shaped like the real ones (S 4-d one-hot, N 6-d per-100 g nutrition, C 64-d, T 384-d,
I 50-d) and built as a category effect plus a low-rank factor part with a power-law spectrum, so
that PCA to 95% keeps a realistic number of components (about 25 / 75 / 25 of C / T / I on 214
rows). The category layout defaults to the public benchmark's: 24 categories, 215 analogs
(:data:`PUBLIC_CATEGORY_SIZES`, from the public out-of-fold files), one or two references each.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import polars as pl

from warehouse.ranking.design import NUTRITION_COLUMNS, Design, subset_one_hot

# (category, subset, hbt_group, analogs, references): the public benchmark's layout
PUBLIC_CATEGORIES = (
    ("Bacon", "meat", "meat", 10, 2),
    ("Barista_Milk", "nonsweet_dairy", "nonsweet_dairy", 10, 1),
    ("Bratwurst", "meat", "meat", 9, 1),
    ("Breaded_Chicken_Filet", "meat", "meat", 5, 1),
    ("Breakfast_Sausages", "meat", "meat", 10, 1),
    ("Burgers", "meat", "meat", 10, 2),
    ("Butter", "nonsweet_dairy", "nonsweet_dairy", 10, 1),
    ("Cheddar_Cheese", "cheese", "other_dairy", 8, 1),
    ("Chicken_Strips", "meat", "meat", 10, 1),
    ("Cream_Cheese", "nonsweet_dairy", "nonsweet_dairy", 10, 1),
    ("Creamer", "nonsweet_dairy", "nonsweet_dairy", 9, 2),
    ("Deli_Ham", "meat", "meat", 9, 2),
    ("Deli_Turkey", "meat", "meat", 7, 2),
    ("Hot_Dogs", "meat", "meat", 10, 1),
    ("Ice_Cream_Hard_Serve", "sweet_dairy", "other_dairy", 10, 2),
    ("Meatballs", "meat", "meat", 5, 1),
    ("Milk", "nonsweet_dairy", "nonsweet_dairy", 18, 2),
    ("Mozzarella", "cheese", "other_dairy", 8, 1),
    ("Nuggets", "meat", "meat", 10, 1),
    ("Pulled_Pork", "meat", "meat", 7, 1),
    ("Sour_Cream", "nonsweet_dairy", "nonsweet_dairy", 5, 1),
    ("Steak", "meat", "meat", 9, 1),
    ("Unbreaded_Chicken_Breast", "meat", "meat", 10, 1),
    ("Yogurt", "sweet_dairy", "other_dairy", 6, 2),
)
PUBLIC_CATEGORY_SIZES = {c: n for c, _, _, n, _ in PUBLIC_CATEGORIES}

SMALL_CATEGORIES = (
    ("Bacon", "meat", "meat", 6, 1),
    ("Milk", "nonsweet_dairy", "nonsweet_dairy", 6, 1),
    ("Cheddar_Cheese", "cheese", "other_dairy", 5, 1),
    ("Yogurt", "sweet_dairy", "other_dairy", 5, 2),
)
"""A 22-analog layout covering every subset and group (fast unit tests)."""
SMALL_DIMS = {"N": 6, "C": 16, "T": 30, "I": 12}

DIMS = {"N": 6, "C": 64, "T": 384, "I": 50}
DECAY = {"C": 0.9, "T": 0.55, "I": 0.9}

SUBSET_COLUMNS = {
    "meat": (
        "total_fat_g_per_100g",
        "sodium_g_per_100g",
        "protein_g_per_100g",
        "dietary_fiber_g_per_100g",
    ),
    "nonsweet_dairy": ("total_fat_g_per_100g", "sodium_g_per_100g"),
    "cheese": ("total_fat_g_per_100g", "sodium_g_per_100g", "total_carbohydrate_g_per_100g"),
    "sweet_dairy": ("total_fat_g_per_100g", "total_sugars_g_per_100g"),
}
"""``seeds/nutrition_subset_columns.csv`` as a mapping (the synthetic designs' copy)."""


def synthetic_keys(
    layout=PUBLIC_CATEGORIES,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(analog keys, reference keys) for a category layout; codes 1..n_c, references after."""
    rows, refs = [], []
    for cat, subset, group, n, n_ref in layout:
        rows += [(cat, code, subset, group) for code in range(1, n + 1)]
        refs += [(cat, n + k, subset) for k in range(1, n_ref + 1)]
    keys = pl.DataFrame(
        rows, schema=["category", "product_code", "subset", "hbt_group"], orient="row"
    ).sort("category", "product_code")
    ref_keys = pl.DataFrame(refs, schema=["category", "product_code", "subset"], orient="row")
    return keys, ref_keys.sort("category", "product_code")


def _block(rng, cat_idx: np.ndarray, n_cat: int, p: int, decay: float) -> np.ndarray:
    rank = min(p, 120)
    spectrum = np.arange(1, rank + 1) ** (-decay)
    basis = np.linalg.qr(rng.standard_normal((p, rank)))[0]  # (p, rank) orthonormal
    factors = rng.standard_normal((len(cat_idx), rank)) * spectrum
    cat_effect = rng.standard_normal((n_cat, rank)) * spectrum * 0.8
    noise = 0.02 * rng.standard_normal((len(cat_idx), p))
    return (factors + cat_effect[cat_idx]) @ basis.T + noise


def synthetic_blocks(
    keys: pl.DataFrame, ref_keys: pl.DataFrame, seed: int = 42, dims: Mapping[str, int] = DIMS
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(analog blocks, reference blocks) for the given keys: S from the subsets, N nutrition-like
    (non-negative, per 100 g scale), C/T/I factor blocks. Deterministic for a seed."""
    rng = np.random.default_rng(seed)
    all_keys = pl.concat([keys.select("category", "subset"), ref_keys.select("category", "subset")])
    cats = sorted(set(all_keys["category"].to_list()))
    cat_idx = np.array([cats.index(c) for c in all_keys["category"].to_list()])
    n = keys.height
    out: dict[str, np.ndarray] = {"S": subset_one_hot(all_keys["subset"].to_list())}
    scale = np.array([15.0, 0.6, 12.0, 2.0, 10.0, 5.0])[: dims.get("N", 6)]
    level = rng.gamma(2.0, 1.0, (len(cats), len(scale))) * scale
    out["N"] = np.abs(level[cat_idx] * (1 + 0.35 * rng.standard_normal((len(cat_idx), len(scale)))))
    for b in ("C", "T", "I"):
        if b in dims:
            out[b] = _block(rng, cat_idx, len(cats), dims[b], DECAY[b])
    return {k: v[:n] for k, v in out.items()}, {k: v[n:] for k, v in out.items()}


C_VARIANTS = {
    "C:dmpnn": 300,  # encoder swap: D-MPNN compound vectors instead of Morgan-SVD
    "C:uniform_mean": 64,  # aggregation rules of the ablation
    "C:max": 64,
    "C:top3_conc": 64,
    "C:linear": 64,
}


def synthetic_variants(
    keys: pl.DataFrame,
    ref_keys: pl.DataFrame,
    seed: int = 43,
    variants: Mapping[str, int] = C_VARIANTS,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Extra C-block variants (encoder swap, aggregation rules) shaped like the features side's."""
    rng = np.random.default_rng(seed)
    cats = sorted(set(keys["category"].to_list()) | set(ref_keys["category"].to_list()))
    all_cats = keys["category"].to_list() + ref_keys["category"].to_list()
    cat_idx = np.array([cats.index(c) for c in all_cats])
    n = keys.height
    out, refs = {}, {}
    for name, p in variants.items():
        mat = _block(rng, cat_idx, len(cats), p, DECAY["C"])
        out[name], refs[name] = mat[:n], mat[n:]
    return out, refs


def planted_target(
    keys: pl.DataFrame, signal: np.ndarray, seed: int = 42, strength: float = 1.0
) -> np.ndarray:
    """Panel means ``4 + category level + 0.5 (strength z + noise)`` with ``z`` = ``signal``
    standardized within each category and N(0,1) noise; ``strength=0`` gives no signal."""
    rng = np.random.default_rng(seed)
    cats = keys["category"].to_list()
    names = sorted(set(cats))
    idx = np.array([names.index(c) for c in cats])
    level = 0.5 * rng.standard_normal(len(names))
    z = np.zeros(len(cats))
    for c in range(len(names)):
        rows = idx == c
        s = signal[rows]
        sd = s.std()
        z[rows] = (s - s.mean()) / sd if sd > 0 else 0.0
    return 4.0 + level[idx] + 0.5 * (strength * z + rng.standard_normal(len(cats)))


def synthetic_design(
    seed: int = 42,
    plant: str | None = None,
    strength: float = 1.0,
    dims: Mapping[str, int] = DIMS,
    layout=PUBLIC_CATEGORIES,
    feature_set: str = "SNCTI",
) -> Design:
    """A full synthetic design. ``plant``: None (target unrelated to the blocks), ``"nutrition"``
    (target follows protein per 100 g, N column 3) or ``"text"`` (target follows T's leading
    direction: the first principal axis of T over the analogs)."""
    keys, ref_keys = synthetic_keys(layout)
    blocks, refs = synthetic_blocks(keys, ref_keys, seed, dims)
    if plant is None:
        signal = np.zeros(keys.height)
        strength = 0.0
    elif plant == "nutrition":
        signal = blocks["N"][:, NUTRITION_COLUMNS.index("protein_g_per_100g")]
    elif plant == "text":
        t = blocks["T"] - blocks["T"].mean(axis=0)
        signal = t @ np.linalg.svd(t, full_matrices=False)[2][0]
    else:
        raise ValueError(f"plant must be None, 'nutrition' or 'text', got {plant!r}")
    target = planted_target(keys, signal, seed + 1, strength)
    return Design(
        keys=keys,
        target=target,
        blocks=blocks,
        reference_keys=ref_keys,
        reference_blocks=refs,
        subset_columns=SUBSET_COLUMNS,
        feature_set=feature_set,
        data_origin="synthetic",
    )
