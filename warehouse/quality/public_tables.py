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

import pandas as pd

# Public code columns are named public_code or public_code_<suffix>; a column named product_code*
# always holds raw codes (docs/quality.md).
PUBLIC_CODE_PATTERN = r"^public_code(_[a-z0-9]+)?$"


@dataclass(frozen=True)
class Candidate:
    """A public-candidate frame the build derives and guards (never written anywhere).

    ``derive(con, ctx)`` gets a read connection and a GatedContext whose code_map is a throwaway
    public-code permutation drawn for this run."""

    name: str
    derive: Callable[..., pd.DataFrame]
    description: str


NUTRIENT_COLUMNS = (
    "total_fat_g_per_100g",
    "sodium_g_per_100g",
    "protein_g_per_100g",
    "dietary_fiber_g_per_100g",
    "total_carbohydrate_g_per_100g",
    "total_sugars_g_per_100g",
)


def candidate_products(con, ctx) -> pd.DataFrame:
    """Products as a release would publish them: public code, type, brand-free ingredient text,
    the nutrition block; rows ordered by (category, public_code)."""
    from warehouse.quality.guards import redact_names

    products = con.sql(
        "select p.category, p.product_code, p.is_analog, p.product_type, p.cleaned_ingredients, "
        + ", ".join(f"n.{c}" for c in NUTRIENT_COLUMNS)
        + " from marts.dim_products p left join marts.fct_nutrition_per_100g n "
        "on p.product_key = n.product_key"
    ).df()
    out = products.merge(ctx.code_map, on=["category", "product_code"], validate="1:1")
    out["cleaned_ingredients"] = redact_names(out["cleaned_ingredients"], ctx.names)
    cols = ["category", "public_code", "is_analog", "product_type", "cleaned_ingredients"]
    out = out[cols + list(NUTRIENT_COLUMNS)]
    return out.sort_values(["category", "public_code"]).reset_index(drop=True)


def candidate_block_products(con, ctx) -> pd.DataFrame:
    """Block memberships under public codes (the design a release documents)."""
    bp = con.sql(
        "select category, block_id, product_code, is_reference from marts.fct_block_products"
    ).df()
    out = bp.merge(ctx.code_map, on=["category", "product_code"], validate="m:1")
    out = out[["category", "block_id", "public_code", "is_reference"]]
    return out.sort_values(["category", "block_id", "public_code"]).reset_index(drop=True)


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
