"""Coverage of the feature blocks: one row per block (the ``agg_feature_coverage`` mart)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from warehouse.features.block import FeatureBlock, FeatureError

_C_STATS = {
    "ingredients_parsed": "n_ingredients_parsed",
    "ingredients_mapped": "n_ingredients_mapped",
    "compounds_linked": "n_compounds_linked",
    "compounds_used": "n_compounds_used",
}


def _stats(values: np.ndarray, prefix: str) -> dict[str, float | None]:
    if values.size == 0:
        return {f"{prefix}_{s}": None for s in ("mean", "median", "min", "max")}
    return {
        f"{prefix}_mean": float(values.mean()),
        f"{prefix}_median": float(np.median(values)),
        f"{prefix}_min": float(values.min()),
        f"{prefix}_max": float(values.max()),
    }


def coverage_table(
    blocks: Sequence[FeatureBlock], is_analog: np.ndarray | None = None
) -> pl.DataFrame:
    """Per block: products with the block (native or imputed), shares over all products and
    over analogs, whether the block is absent; for C also ingredients parsed/mapped and
    compounds linked/used per product (mean, median, min, max over all products; null for
    other blocks). ``is_analog`` is aligned with the blocks' keys (default: all products)."""
    rows = []
    for blk in blocks:
        n = blk.n_products
        analog = np.ones(n, dtype=bool) if is_analog is None else np.asarray(is_analog, bool)
        if analog.shape != (n,):
            raise FeatureError(f"coverage: is_analog has {analog.shape[0]} rows, not {n}")
        native = blk.has_block & ~blk.is_imputed
        row: dict[str, object] = {
            "block": blk.name,
            "encoder": blk.encoder,
            "encoder_version": blk.encoder_version,
            "dim": blk.dim,
            "n_products": n,
            "n_with_block": int(blk.has_block.sum()),
            "n_native": int(native.sum()),
            "n_imputed": int(blk.is_imputed.sum()),
            "share_with_block": float(blk.has_block.mean()) if n else None,
            "share_native": float(native.mean()) if n else None,
            "share_imputed": float(blk.is_imputed.mean()) if n else None,
            "n_analogs": int(analog.sum()),
            "share_analogs_with_block": (
                float(blk.has_block[analog].mean()) if analog.any() else None
            ),
            "share_analogs_native": float(native[analog].mean()) if analog.any() else None,
            "is_absent": blk.is_absent,
            "data_origin": "|".join(sorted(set(blk.data_origin))),
        }
        is_c = blk.name == "C" and all(c in blk.extra.columns for c in _C_STATS.values())
        for prefix, col in _C_STATS.items():
            values = blk.extra[col].to_numpy().astype(float) if is_c else np.empty(0)
            row.update(_stats(values, prefix))
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)
