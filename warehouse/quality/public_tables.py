"""Public candidates: what a release would derive from gated marts, guarded before any release.

A table is *public* when it may leave the gated area as it is; which tables are is declared in dbt
(``meta.data_access``, read from the manifest by :mod:`warehouse.quality.governance`). Everything
else (raw, staging, intermediate and the gated marts) carries raw product codes, respondent ids,
brands, UPCs or per-product panel means and stays inside. The de-identification guards run on
every public table and on the *public candidates*: frames the build derives from gated marts the
way a release would publish them (public codes instead of raw codes, brand names rewritten), so
that a leak in what a release could publish fails the build before anything is written out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from warehouse.sources.seeds import nutrient_columns

# Public code columns are named public_code or public_code_<suffix>; a column named product_code*
# always holds raw codes (docs/quality.md).
PUBLIC_CODE_PATTERN = r"^public_code(_[a-z0-9]+)?$"


@dataclass(frozen=True)
class Candidate:
    """A public-candidate frame the build derives and guards (never written anywhere).

    ``derive(con, ctx)`` gets a read connection and a GatedContext whose code_map is a throwaway
    public-code permutation drawn for this run."""

    name: str
    derive: Callable[..., pl.DataFrame]
    description: str


NUTRIENT_COLUMNS = nutrient_columns()  # block N: var nutrition_block of dbt_project.yml


def _code_map(ctx) -> pl.DataFrame:
    return ctx.code_map.select(
        pl.col("category").cast(pl.String),
        pl.col("product_code").cast(pl.Int64),
        pl.col("public_code").cast(pl.Int64),
    )


def candidate_products(con, ctx) -> pl.DataFrame:
    """Products as a release would publish them: public code, type, ingredient text with brands,
    join keys and UPCs removed (the export's own redaction, ``GatedContext.redact``), the
    nutrition block; rows ordered by (category, public_code)."""
    products = con.sql(
        "select p.category, p.product_code, p.is_analog, p.product_type, p.cleaned_ingredients, "
        + ", ".join(f"n.{c}" for c in NUTRIENT_COLUMNS)
        + " from marts.dim_products p left join marts.fct_nutrition_per_100g n "
        "on p.product_key = n.product_key"
    ).pl()
    cmap = _code_map(ctx)
    products = products.with_columns(pl.col("product_code").cast(pl.Int64))
    out = products.join(cmap, on=["category", "product_code"], how="inner", validate="1:1")
    out = out.with_columns(
        cleaned_ingredients=pl.Series(ctx.redact(out["cleaned_ingredients"].to_list()))
    )
    cols = ["category", "public_code", "is_analog", "product_type", "cleaned_ingredients"]
    return out.select(cols + list(NUTRIENT_COLUMNS)).sort("category", "public_code")


def candidate_block_products(con, ctx) -> pl.DataFrame:
    """Block memberships under public codes (the design a release documents)."""
    bp = con.sql(
        "select category, block_id, product_code, is_reference from marts.fct_block_products"
    ).pl()
    cmap = _code_map(ctx)
    bp = bp.with_columns(pl.col("product_code").cast(pl.Int64))
    out = bp.join(cmap, on=["category", "product_code"], how="inner", validate="m:1")
    out = out.select("category", "block_id", "public_code", "is_reference")
    return out.sort("category", "block_id", "public_code")


PUBLIC_CANDIDATES: tuple[Candidate, ...] = (
    Candidate(
        "candidate.products",
        candidate_products,
        "dim_products + fct_nutrition_per_100g under public codes, brand names rewritten",
    ),
    Candidate(
        "candidate.block_products",
        candidate_block_products,
        "fct_block_products under public codes",
    ),
)
