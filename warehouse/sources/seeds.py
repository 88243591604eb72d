"""Read the dbt seeds (and the list-valued dbt vars that declare columns) from Python: loaders
validate against the same lookups dbt uses."""

from __future__ import annotations

import csv
from functools import lru_cache

from warehouse.config import SEEDS_DIR, project_var

# Copies of a category in a scaled simulated bundle (`tastebench simulate --scale K`) are named
# `<spelling>_s<k>`, k = 2..K (warehouse/simulate/design.py). They are accepted only for a bundle
# whose simulation_manifest.json declares that scale; dbt adds the same copies to the category
# seeds (macros/scaled_categories.sql, var `simulation_scale` passed by the build).
SCALED_COPY_SUFFIX = "_s"


@lru_cache(maxsize=8)
def category_lookup(scale: int = 1) -> dict[str, str]:
    """Every accepted spelling (canonical names and aliases) -> canonical category; with
    ``scale`` > 1 also the simulator's copies ``<spelling>_s<k>`` -> ``<canonical>_s<k>``."""
    with (SEEDS_DIR / "categories.csv").open() as fh:
        lookup = {row["category"]: row["category"] for row in csv.DictReader(fh)}
    with (SEEDS_DIR / "category_aliases.csv").open() as fh:
        lookup.update({row["alias"]: row["category"] for row in csv.DictReader(fh)})
    base = dict(lookup)
    for k in range(2, int(scale) + 1):
        suffix = f"{SCALED_COPY_SUFFIX}{k}"
        lookup.update({spelling + suffix: category + suffix for spelling, category in base.items()})
    return lookup


def nutrient_columns() -> tuple[str, ...]:
    """The six columns of block N in ``marts.fct_nutrition_per_100g`` (``<nutrient>_per_100g``),
    in feature order: the dbt var ``nutrition_block`` of dbt_project.yml, which the mart's SQL
    reads too (the one declaration of the nutrients, their label columns and units)."""
    return tuple(f"{n['nutrient']}_per_100g" for n in project_var("nutrition_block"))


SERVING_SIZE = "Serving Size (g)"


def label_nutrients() -> list[dict[str, str]]:
    """The US nutrition label per serving, serving size first: ``label`` (the file header),
    ``column`` (the staging column) and ``description``, the dbt var ``label_nutrients`` of
    dbt_project.yml (which macros/label_nutrients.sql reads too)."""
    return [dict(n) for n in project_var("label_nutrients")]
