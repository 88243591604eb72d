"""Read the dbt seeds from Python (loaders validate against the same lookups dbt uses)."""

from __future__ import annotations

import csv
from functools import lru_cache

from warehouse.config import SEEDS_DIR


@lru_cache(maxsize=1)
def category_lookup() -> dict[str, str]:
    """Every accepted spelling (canonical names and aliases) -> canonical category."""
    with (SEEDS_DIR / "categories.csv").open() as fh:
        lookup = {row["category"]: row["category"] for row in csv.DictReader(fh)}
    with (SEEDS_DIR / "category_aliases.csv").open() as fh:
        lookup.update({row["alias"]: row["category"] for row in csv.DictReader(fh)})
    return lookup
