"""Structural test fixtures for the human baseline (NOT the calibrated simulator).

:func:`ratings_from_block_structure` turns a block structure (per category and block: number of
respondents and of analogs) into a ratings frame with random integer 1..7 similarities. It only
reproduces the *shape* of the design so that block assignment, row counts and run times can be
checked; its ratings are not calibrated to any published reliability figure (that is the job of
``warehouse.simulate``).

Layout of the generated design, per category: each block gets its own analogs (codes 1, 2, ... in
block order, disjoint across blocks, so lower block ids hold lower codes and the sorted-tuple
tie-break of :func:`~warehouse.human.blocks.assign_blocks` reproduces the given numbering) plus
``n_references`` references shared by every block of the category (codes after the analogs).
Respondent ids are reused across categories, as in the real panel.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

PUBLIC_LOO_PATH = Path("tastebench_public/human_baseline/results/individual_loo_accuracy.csv")


def public_block_structure(loo_csv: str | Path) -> pl.DataFrame:
    """``category, block_id, n_respondents, n_analogs`` from ``individual_loo_accuracy.csv``."""
    loo = pl.read_csv(loo_csv)
    return (
        loo.group_by(["category", "block_id"], maintain_order=True)
        .agg(n_respondents=pl.len().cast(pl.Int64), n_analogs=pl.col("n_analogs").first())
        .sort(["category", "block_id"])
    )


def ratings_from_block_structure(
    structure: pl.DataFrame,
    *,
    respondent_scale: int = 1,
    n_references: int = 1,
    seed: int = 0,
    signal_sd: float = 0.8,
    bias_sd: float = 0.7,
    noise_sd: float = 1.4,
) -> pl.DataFrame:
    """Random ratings with the given block structure.

    ``structure`` has ``category, block_id, n_respondents, n_analogs``. ``respondent_scale``
    multiplies every block's respondent count. Rating = round(4 + product effect + respondent bias
    + noise), clipped to 1..7 (references get +1.5). Deterministic for a seed.
    """
    rng = np.random.default_rng(seed)
    frames = []
    structure = structure.sort(["category", "block_id"])
    for (cat,), blocks in sorted(structure.partition_by("category", as_dict=True).items()):
        n_an_total = int(blocks["n_analogs"].sum())
        ref_codes = np.arange(n_an_total + 1, n_an_total + 1 + n_references)
        next_code = 1
        next_resp = 0
        for row in blocks.iter_rows(named=True):
            codes = np.arange(next_code, next_code + int(row["n_analogs"]))
            next_code += int(row["n_analogs"])
            all_codes = np.concatenate([codes, ref_codes])
            is_ref = np.concatenate([np.zeros(codes.size, bool), np.ones(ref_codes.size, bool)])
            n = int(row["n_respondents"]) * respondent_scale
            rids = np.arange(next_resp, next_resp + n)
            next_resp += n
            effect = rng.normal(0.0, signal_sd, all_codes.size) + 1.5 * is_ref
            bias = rng.normal(0.0, bias_sd, n)
            raw = (
                4.0
                + effect[None, :]
                + bias[:, None]
                + rng.normal(0.0, noise_sd, (n, codes.size + ref_codes.size))
            )
            vals = np.clip(np.rint(raw), 1, 7)
            frames.append(
                pl.DataFrame(
                    {
                        "category": [cat] * (n * all_codes.size),
                        "respondent_id": np.repeat(rids, all_codes.size),
                        "product_code": np.tile(all_codes, n),
                        "is_reference": np.tile(is_ref, n),
                        "similarity": vals.ravel(),
                    }
                )
            )
    out = pl.concat(frames, how="vertical")
    return out.with_columns(
        pl.col("respondent_id", "product_code").cast(pl.Int64),
        pl.col("similarity").cast(pl.Float64),
    )
