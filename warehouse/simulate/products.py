"""Simulated product records: fake brands, check-digit-valid UPCs, label text and nutrition.

Analogs take their ingredient list, nutrition and photo from a *random* real public competition
product of the same category (``kaggle_tastebench/.../products.csv``, drawn with the seed), so
these features carry no real signal about the simulated targets (unless ``plant_signal`` makes the
targets depend on them). References get the animal-product labels of
:mod:`warehouse.simulate.references` and a public photo of their category.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from warehouse.simulate.design import Category, PublicInputs, stream
from warehouse.simulate.references import REFERENCES
from warehouse.simulate.schema import NUTRIENT_COLUMNS
from warehouse.simulate.text import (
    clean_ingredient_list,
    label_items,
    manual_label_items,
    split_top_level,
)

BRANDED_SHARE = 0.20  # share of analog ingredient lists that name their brand

_SYL_START = (
    "Ver", "Plan", "Gro", "Mel", "Sor", "Tal", "Kin", "Lum", "Nor", "Vel", "Zel", "Bri", "Cal",
    "Fen", "Mor", "Ori", "Sel", "Tev", "Ula", "Quen", "Rov", "Dal", "Hav", "Jun", "Pim", "Sab",
)  # fmt: skip
_SYL_MID = ("a", "e", "i", "o", "", "", "")
_SYL_END = (
    "dora", "vita", "nix", "lo", "mira", "bo", "sa", "teo", "ra", "na", "leaf", "by", "ro", "ska",
    "vin", "tra", "mo", "quin", "zel", "dell",
)  # fmt: skip
_BRAND_SUFFIX = ("Foods", "Kitchen", "Co.", "Provisions", "Pantry", "Table", "Harvest")
_PLACE_A = (
    "Hollow", "Cedar", "Maple", "Willow", "Stone", "Birch", "Copper", "Quail", "Juniper", "Heron",
    "Amber", "Thistle", "Larch", "Fox",
)  # fmt: skip
_PLACE_B = ("Creek", "Ridge", "Hill", "Meadow", "Valley", "Brook", "Field", "Glen", "Bend")
_PLACE_KIND = ("Farms", "Creamery", "Dairy", "Meats", "Provisions", "Smokehouse")
# real brands a coined name must not contain (case-insensitive substring)
_DENY = (
    "beyond", "impossible", "oatly", "daiya", "violife", "tofurky", "gardein", "quorn", "boca",
    "silk", "ripple", "miyoko", "kite", "lightlife", "morning", "field roast", "simulate", "upton",
    "hooray", "planterra", "califia", "elmhurst", "delicious", "hormel", "tyson", "boar",
    "hillshire", "johnsonville", "kraft", "tillamook", "chobani", "horizon", "kerrygold", "perdue",
    "applegate", "nestle", "danone", "sargento", "cabot", "breyers", "talenti", "treeline",
    "forager", "siggi", "lavva", "mooala", "malk", "pacific", "dream", "vitasoy", "sproud",
    "nutpods", "laird", "starbucks", "melt", "earth balance", "country crock", "vegan",
)  # fmt: skip
_DAIRY_TERMS = re.compile(
    r"\b(whey|casein|caseinate|lactose|milk|cheese|butter|cream|ghee|yogurt)\b", re.IGNORECASE
)
_PLANT_DAIRY = re.compile(
    r"\b(coconut|oat|almond|cashew|soy|rice|cocoa|shea|peanut|nut|seed|plant-based|vegan|"
    r"animal-free|non-dairy|dairy-free|hemp|pea|macadamia|pistachio|sunflower)\s+"
    r"(milk|cheese|butter|cream|whey|yogurt)s?\b|\bcream of tartar\b|\bbutter flavou?r\b",
    re.IGNORECASE,
)


def upc_check_digit(digits11: str) -> int:
    """UPC-A check digit of the first 11 digits (3 x odd positions + even positions)."""
    if len(digits11) != 11 or not digits11.isdigit():
        raise ValueError(f"UPC-A needs 11 digits before the check digit, got {digits11!r}")
    odd = sum(int(d) for d in digits11[0::2])
    even = sum(int(d) for d in digits11[1::2])
    return (10 - (3 * odd + even) % 10) % 10


def is_valid_upc(code: str) -> bool:
    return len(code) == 12 and code.isdigit() and upc_check_digit(code[:11]) == int(code[11])


def mentions_dairy(text: str) -> bool:
    """True when an ingredient list names an animal dairy ingredient (plant 'milks' excluded)."""
    return bool(_DAIRY_TERMS.search(_PLANT_DAIRY.sub(" ", text)))


@dataclass
class Product:
    category: str
    base: str
    code: int
    year: int
    subset: str
    is_reference: bool
    brand: str
    upc: str
    ingredient_list: str
    manually_cleaned: str
    serving_size_g: float | None
    servings_per_container: float | None
    nutrients: dict[str, float | None]
    has_meat: bool
    has_dairy: bool
    product_type: str
    image_source: Path | None
    branded_text: bool = False
    source_row: int | None = None  # row of the public products.csv the features came from
    label_items: list[str] = field(default_factory=list)
    manual_items: list[str] = field(default_factory=list)

    @property
    def join_key(self) -> str:
        return f"{self.year}_{self.category}_{self.code}"


def _coined(rng: np.random.Generator) -> str:
    name = (
        _SYL_START[rng.integers(len(_SYL_START))]
        + _SYL_MID[rng.integers(len(_SYL_MID))]
        + _SYL_END[rng.integers(len(_SYL_END))]
    )
    if rng.random() < 0.4:
        name = f"{name} {_BRAND_SUFFIX[rng.integers(len(_BRAND_SUFFIX))]}"
    return name


def _place(rng: np.random.Generator) -> str:
    a = _PLACE_A[rng.integers(len(_PLACE_A))]
    b = _PLACE_B[rng.integers(len(_PLACE_B))]
    return f"{a} {b} {_PLACE_KIND[rng.integers(len(_PLACE_KIND))]}"


def make_brands(rng: np.random.Generator, n: int, maker) -> list[str]:
    """``n`` distinct fake brand names (no real brand as a substring, none inside another)."""
    names: list[str] = []
    for _ in range(100 * n):
        name = maker(rng)
        low = name.lower()
        if any(d in low for d in _DENY):
            continue
        if any(low in x.lower() or x.lower() in low for x in names):
            continue
        names.append(name)
        if len(names) == n:
            return names
    raise RuntimeError("could not generate enough brand names")


class _UpcFactory:
    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.prefix: dict[str, str] = {}
        self.used: set[str] = set()

    def __call__(self, brand: str) -> str:
        if brand not in self.prefix:
            system = "00086617"[self.rng.integers(8)]  # number-system digit; 0 is the commonest
            while True:
                prefix = system + "".join(str(d) for d in self.rng.integers(0, 10, 6))
                if prefix not in self.prefix.values():
                    break
            self.prefix[brand] = prefix
        while True:
            body = self.prefix[brand] + "".join(str(d) for d in self.rng.integers(0, 10, 4))
            code = body + str(upc_check_digit(body))
            if code not in self.used:
                self.used.add(code)
                return code


def _branded(raw: str, brand: str, base: str, subset: str) -> str:
    """A label whose first ingredients are wrapped in a branded blend, as some real labels do
    (e.g. "<Brand> Plant-Based Pork Blend (Water, ...)")."""
    items = split_top_level(raw)
    k = min(3, len(items))
    kind = "Plant-Based" if subset == "meat" else "Dairy-Free"
    noun = REFERENCES[base].noun.title()
    head = f"{brand} {kind} {noun} Blend ({', '.join(items[:k])})"
    return ", ".join([head, *items[k:]])


def _missing(v: object) -> bool:
    """A missing public value: null, or a float NaN."""
    return v is None or (isinstance(v, float) and math.isnan(v))


def _nutrient_dict(row: dict[str, object]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for col in NUTRIENT_COLUMNS:
        v = row.get(col)
        out[col] = None if _missing(v) else float(v)
    return out


def _servings(rng: np.random.Generator, base: str, serving: float | None) -> float | None:
    if serving is None or not serving > 0:
        return None
    package = REFERENCES[base].package_g * float(rng.uniform(0.8, 1.25))
    return float(max(1.0, round(2.0 * package / serving) / 2.0))


def _image_source(row: dict[str, object], public: PublicInputs) -> Path | None:
    """The public competition photo of the product row this simulated product borrows, if any."""
    image = row.get("image_path")
    if isinstance(image, str) and image:
        return public.images_dir / Path(image).relative_to("images")
    return None


@dataclass
class _Draws:
    """The seeded sources every product of a bundle draws from."""

    rng: np.random.Generator
    upc: _UpcFactory
    plant_brands: list[str]
    plant_weights: np.ndarray
    animal_brands: list[str]
    public: PublicInputs
    rows: list[dict[str, object]]  # one dict per public product row, in file order

    @classmethod
    def from_seed(cls, seed: int, public: PublicInputs) -> _Draws:
        plant_brands = make_brands(stream(seed, "brand-names"), 70, _coined)
        weights = 1.0 / np.arange(1, len(plant_brands) + 1) ** 0.7  # a few big brands
        weights /= weights.sum()
        return cls(
            rng=stream(seed, "products"),
            upc=_UpcFactory(stream(seed, "upc")),
            plant_brands=plant_brands,
            plant_weights=weights,
            animal_brands=make_brands(stream(seed, "animal-brand-names"), 20, _place),
            public=public,
            rows=public.products.to_dicts(),
        )


def _source_rows(cat: Category, pub_category: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Public product rows lending their features, one per analog then per reference."""
    rows = np.flatnonzero(pub_category == cat.base)
    if rows.size == 0:
        raise ValueError(f"no public competition product for category {cat.base!r}")
    n_needed = len(cat.analog_codes) + len(cat.reference_codes)
    order = rng.permutation(rows)
    if order.size < n_needed:
        order = np.concatenate([order, rng.choice(rows, n_needed - order.size)])
    return order


def _product(
    cat: Category,
    code: int,
    brand: str,
    raw: str,
    row: dict[str, object],
    draws: _Draws,
    **fields: object,
) -> Product:
    """A product of ``cat`` labelled from ``raw``; ``fields``: its remaining fields."""
    cleaned = clean_ingredient_list(raw)
    return Product(
        category=cat.name,
        base=cat.base,
        code=code,
        year=cat.year,
        subset=cat.subset,
        brand=brand,
        upc=draws.upc(brand),
        ingredient_list=raw,
        manually_cleaned=cleaned,
        image_source=_image_source(row, draws.public),
        label_items=label_items(raw),
        manual_items=manual_label_items(cleaned),
        **fields,
    )


def _analog(cat: Category, code: int, source_row: int, draws: _Draws) -> Product:
    """An analog: the features of a public product row, a weighted fake plant-based brand."""
    rng = draws.rng
    row = draws.rows[source_row]
    brand = draws.plant_brands[int(rng.choice(len(draws.plant_brands), p=draws.plant_weights))]
    raw = str(row["Ingredient List"])
    branded = bool(rng.random() < BRANDED_SHARE)
    if branded:
        raw = _branded(raw, brand, cat.base, cat.subset)
    serving = row.get("Serving Size (g)")
    serving = None if _missing(serving) else float(serving)
    return _product(
        cat,
        code,
        brand,
        raw,
        row,
        draws,
        is_reference=False,
        serving_size_g=serving,
        servings_per_container=_servings(rng, cat.base, serving),
        nutrients=_nutrient_dict(row),
        has_meat=False,
        has_dairy=cat.subset == "meat" and mentions_dairy(raw),
        product_type=f"plant-based {REFERENCES[cat.base].noun}",
        branded_text=branded,
        source_row=source_row,
    )


def _reference(cat: Category, j: int, photo_row: int, draws: _Draws) -> Product:
    """Reference ``j`` of ``cat``: a template animal label, a fake animal brand, a public photo."""
    serving, raw, values = REFERENCES[cat.base].labels[j]
    row = draws.rows[photo_row]
    brand = draws.animal_brands[int(draws.rng.integers(len(draws.animal_brands)))]
    return _product(
        cat,
        cat.reference_codes[j],
        brand,
        raw,
        row,
        draws,
        is_reference=True,
        serving_size_g=float(serving),
        servings_per_container=_servings(draws.rng, cat.base, float(serving)),
        nutrients={
            c: (None if v is None else float(v))
            for c, v in zip(NUTRIENT_COLUMNS, values, strict=True)
        },
        has_meat=cat.subset == "meat",
        has_dairy=cat.subset != "meat" or mentions_dairy(raw),
        product_type=f"animal {REFERENCES[cat.base].noun}",
        source_row=None,
    )


def _ensure_branded(products: list[Product]) -> None:
    """Guarantee the de-identification guards have a branded ingredient list to catch."""
    if any(p.branded_text for p in products):
        return
    first = next(p for p in products if not p.is_reference)
    first.ingredient_list = _branded(first.ingredient_list, first.brand, first.base, first.subset)
    first.manually_cleaned = clean_ingredient_list(first.ingredient_list)
    first.label_items = label_items(first.ingredient_list)
    first.manual_items = manual_label_items(first.manually_cleaned)
    first.branded_text = True


def build_products(cats: list[Category], public: PublicInputs, seed: int) -> list[Product]:
    """One product record per analog and reference of every category, sorted by key."""
    draws = _Draws.from_seed(seed, public)
    pub_category = public.products["Category"].to_numpy()
    out: list[Product] = []
    for cat in cats:
        order = _source_rows(cat, pub_category, draws.rng)
        n_analogs = len(cat.analog_codes)
        for i, code in enumerate(cat.analog_codes):
            out.append(_analog(cat, code, int(order[i]), draws))
        for j in range(len(cat.reference_codes)):
            out.append(_reference(cat, j, int(order[n_analogs + j]), draws))
    _ensure_branded(out)
    out.sort(key=lambda p: (p.category, p.code))
    return out


def feature_signal(products: list[Product], kind: str) -> dict[tuple[str, int], float]:
    """The feature a ``plant_signal`` target depends on, per analog.

    ``nutrition``: protein per 100 g (``Protein (g)`` / ``Serving Size (g)`` x 100; missing -> 0,
    as the nutrition block does). ``text``: minus the number of top-level ingredients of the
    cleaned label (shorter, 'cleaner' labels score higher).
    """
    out: dict[tuple[str, int], float] = {}
    for p in products:
        if p.is_reference:
            continue
        if kind == "nutrition":
            protein = p.nutrients.get("Protein (g)")
            if protein is None or not p.serving_size_g:
                value = 0.0
            else:
                value = 100.0 * protein / p.serving_size_g
        elif kind == "text":
            value = -float(len(p.label_items))
        else:
            raise ValueError(f"plant_signal must be None, 'nutrition' or 'text', got {kind!r}")
        out[(p.category, p.code)] = value
    return out
