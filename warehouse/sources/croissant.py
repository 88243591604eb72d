"""The NECTAR raw schema, read from its public Croissant record sets."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

# The four files of the official bundle (docs/benchmark.md §1); the optional taste_like/ folder is
# not part of the benchmark and is not loaded.
NECTAR_FILES = (
    "nectar_consolidated_sensory_rating.csv",
    "nectar_consolidated_ingredients_nutrition.csv",
    "nectar_product_labels.csv",
    "product_labels_manually_cleaned.csv",
)

_TYPE_MAP = {
    "sc:Text": "text",
    "sc:Integer": "integer",
    "sc:Float": "float",
    "sc:Boolean": "boolean",
}


@dataclass(frozen=True)
class Field:
    name: str
    kind: str  # text | integer | float | boolean


@lru_cache(maxsize=4)
def record_sets(croissant_path: Path) -> dict[str, tuple[Field, ...]]:
    """Map file name -> ordered fields, from the Croissant JSON-LD."""
    doc = json.loads(Path(croissant_path).read_text())
    out: dict[str, tuple[Field, ...]] = {}
    for rs in doc["recordSet"]:
        fields = []
        for f in rs["field"]:
            types = f.get("dataType") or ["sc:Text"]
            types = types if isinstance(types, list) else [types]
            kind = next((_TYPE_MAP[t] for t in types if t in _TYPE_MAP), "text")
            fields.append(Field(name=f["source"]["extract"]["column"], kind=kind))
        out[rs["name"]] = tuple(fields)
    return out
