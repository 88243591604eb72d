"""The raw NECTAR bundle layout the simulation writes (Croissant ``croissant/nectar.json``).

Column names and order are copied from the Croissant record sets; ``tests/unit/test_simulate.py``
checks them against the public Croissant file so a schema change upstream fails loudly.
Croissant types decide the CSV spelling (see ``SIMULATION.md``): ``sc:Integer`` -> ``5``,
``sc:Float`` -> Python ``repr`` of the float (``5.0``, ``2.5``), ``sc:Boolean`` -> ``True`` /
``False`` (the pandas spelling), ``sc:Text`` -> as is; a missing value is an empty field.
"""

from __future__ import annotations

from warehouse.sources.seeds import SERVING_SIZE, label_nutrients

RATINGS_FILE = "nectar_consolidated_sensory_rating.csv"
PRODUCTS_FILE = "nectar_consolidated_ingredients_nutrition.csv"
LABELS_FILE = "nectar_product_labels.csv"
LABELS_CLEAN_FILE = "product_labels_manually_cleaned.csv"
CSV_FILES = (RATINGS_FILE, PRODUCTS_FILE, LABELS_FILE, LABELS_CLEAN_FILE)

LIKERT_COLUMNS = (
    "appearance",
    "flavor",
    "liking",
    "nutrition_purchase_intent",
    "similarity",
    "texture",
)
TEXT_RATING_COLUMNS = (
    "purchase_intent",
    "brand",
    "meatiness",
    "greasiness",
    "color",
    "smokiness",
    "sweetness",
    "saltiness",
    "juiciness",
    "firmness",
    "aftertaste_strength",
    "aftertaste_pleasantness",
    "crispiness",
    "breading_flavor",
)
NUTRIENT_COLUMNS = tuple(n["label"] for n in label_nutrients() if n["label"] != SERVING_SIZE)

# (column, Croissant dataType) in Croissant order, per file.
SCHEMA: dict[str, tuple[tuple[str, str], ...]] = {
    RATINGS_FILE: (
        ("join_key", "sc:Text"),
        ("product_category", "sc:Text"),
        ("year", "sc:Integer"),
        ("respondent", "sc:Integer"),
        ("product_code", "sc:Integer"),
        *((c, "sc:Float") for c in LIKERT_COLUMNS),
        *((c, "sc:Text") for c in TEXT_RATING_COLUMNS),
    ),
    PRODUCTS_FILE: (
        ("join_key", "sc:Text"),
        ("Year", "sc:Integer"),
        ("Category", "sc:Text"),
        ("Product_Code", "sc:Integer"),
        ("Brand", "sc:Text"),
        ("UPC", "sc:Text"),
        ("Ingredient List", "sc:Text"),
        ("Manually Cleaned Ingredients", "sc:Text"),
        (SERVING_SIZE, "sc:Float"),
        ("Servings Per Container (#)", "sc:Float"),
        *((c, "sc:Float") for c in NUTRIENT_COLUMNS),
    ),
    LABELS_FILE: (
        ("category", "sc:Text"),
        ("product_code", "sc:Integer"),
        ("product_type", "sc:Text"),
        ("has_meat", "sc:Boolean"),
        ("has_dairy", "sc:Boolean"),
        ("cleaned_ingredients", "sc:Text"),
        ("is_reference", "sc:Boolean"),
    ),
    LABELS_CLEAN_FILE: (
        ("product_code", "sc:Integer"),
        ("category", "sc:Text"),
        ("product_type", "sc:Text"),
        ("has_meat", "sc:Boolean"),
        ("has_dairy", "sc:Boolean"),
        ("cleaned_ingredients", "sc:Text"),
        ("is_reference", "sc:Boolean"),
    ),
}


def columns(file_name: str) -> list[str]:
    """Column names of one bundle CSV, in Croissant order."""
    return [name for name, _ in SCHEMA[file_name]]


def format_value(value: object, data_type: str) -> str:
    """CSV spelling of one cell under its Croissant type (empty string = missing)."""
    if value is None:
        return ""
    if isinstance(value, float) and value != value:  # NaN
        return ""
    if data_type == "sc:Integer":
        return str(int(value))
    if data_type == "sc:Float":
        return repr(float(value))
    if data_type == "sc:Boolean":
        return "True" if bool(value) else "False"
    return str(value)
