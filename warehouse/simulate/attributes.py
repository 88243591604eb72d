"""The non-similarity rating columns, correlated with the simulated similarity.

* ``appearance, flavor, liking, nutrition_purchase_intent, texture``: integers 1..7,
  ``clip(rint(mu + u_p + lambda * (similarity - 4) + sigma * eps))`` with a product effect
  ``u_p``; about 0.4 % missing (null).
* ``purchase_intent``: 5-point buying-intent scale driven by liking.
* Just-about-right attributes (``meatiness`` ... ``breading_flavor``): 5 levels, more "Just about
  right" the more similar the product; only where the category asks them (crispiness and
  breading_flavor only for breaded categories, meat attributes only for meat, ...), null
  elsewhere. ``aftertaste_strength`` (stronger when less similar) and
  ``aftertaste_pleasantness`` (follows liking) everywhere.
* Missing answers to asked text questions are the literal ``"No response"`` (about 1.5 %);
  questions a category does not ask are null (empty field).
* ``brand``: the product's brand name (the real ratings file carries brand names; the guards must
  catch it).
"""

from __future__ import annotations

import numpy as np

from warehouse.simulate.schema import LIKERT_COLUMNS, TEXT_RATING_COLUMNS

NO_RESPONSE = "No response"
LIKERT_MISSING_RATE = 0.004
TEXT_MISSING_RATE = 0.015

# column: (mean, slope on similarity, noise sd)
LIKERT_MODEL = {
    "appearance": (4.6, 0.35, 1.2),
    "flavor": (4.1, 0.60, 1.1),
    "liking": (4.2, 0.65, 1.0),
    "nutrition_purchase_intent": (3.9, 0.30, 1.3),
    "texture": (4.2, 0.50, 1.1),
}
PURCHASE_INTENT = (
    "Definitely would not buy",
    "Probably would not buy",
    "Might or might not buy",
    "Probably would buy",
    "Definitely would buy",
)
_JAR = (
    "Much too little",
    "Slightly too little",
    "Just about right",
    "Slightly too much",
    "Much too much",
)
SCALES = {
    "meatiness": _JAR,
    "greasiness": _JAR,
    "color": (
        "Much too light",
        "Slightly too light",
        "Just about right",
        "Slightly too dark",
        "Much too dark",
    ),
    "smokiness": _JAR,
    "sweetness": _JAR,
    "saltiness": _JAR,
    "juiciness": (
        "Much too dry",
        "Slightly too dry",
        "Just about right",
        "Slightly too juicy",
        "Much too juicy",
    ),
    "firmness": (
        "Much too soft",
        "Slightly too soft",
        "Just about right",
        "Slightly too firm",
        "Much too firm",
    ),
    "aftertaste_strength": ("None", "Weak", "Moderate", "Strong", "Very strong"),
    "aftertaste_pleasantness": (
        "Very unpleasant",
        "Somewhat unpleasant",
        "Neither pleasant nor unpleasant",
        "Somewhat pleasant",
        "Very pleasant",
    ),
    "crispiness": (
        "Not nearly crispy enough",
        "Not quite crispy enough",
        "Just about right",
        "Slightly too crispy",
        "Much too crispy",
    ),
    "breading_flavor": _JAR,
}
JAR_COLUMNS = tuple(
    c
    for c in TEXT_RATING_COLUMNS
    if c not in ("purchase_intent", "brand", "aftertaste_strength", "aftertaste_pleasantness")
)

_MEAT_COMMON = {"meatiness", "greasiness", "color", "saltiness", "juiciness", "firmness"}
_SMOKY = {
    "Bacon",
    "Bratwurst",
    "Deli_Ham",
    "Deli_Turkey",
    "Hot_Dogs",
    "Pulled_Pork",
    "Breakfast_Sausages",
}
_SWEET_MEAT = {"Bacon", "Breakfast_Sausages", "Pulled_Pork", "Deli_Ham"}
_BREADED = {"Nuggets", "Breaded_Chicken_Filet"}
_DAIRY_SWEET = {"Barista_Milk", "Creamer", "Milk", "Ice_Cream_Hard_Serve", "Yogurt"}
_DAIRY_SALTY = {"Butter", "Cheddar_Cheese", "Mozzarella", "Cream_Cheese", "Sour_Cream"}
_DAIRY_FIRM = {
    "Butter",
    "Cheddar_Cheese",
    "Mozzarella",
    "Cream_Cheese",
    "Ice_Cream_Hard_Serve",
    "Yogurt",
    "Sour_Cream",
}
_DAIRY_GREASY = {"Butter", "Cheddar_Cheese", "Mozzarella"}


def asked_attributes(base: str, subset: str) -> set[str]:
    """The just-about-right questions a category's questionnaire asks."""
    if subset == "meat":
        asked = set(_MEAT_COMMON)
        if base in _SMOKY:
            asked.add("smokiness")
        if base in _SWEET_MEAT:
            asked.add("sweetness")
        if base in _BREADED:
            asked |= {"crispiness", "breading_flavor"}
        return asked
    asked = {"color"}
    if base in _DAIRY_SWEET:
        asked.add("sweetness")
    if base in _DAIRY_SALTY:
        asked.add("saltiness")
    if base in _DAIRY_FIRM:
        asked.add("firmness")
    if base in _DAIRY_GREASY:
        asked.add("greasiness")
    return asked


def _levels(x: np.ndarray, cuts: tuple[float, ...]) -> np.ndarray:
    return np.searchsorted(np.asarray(cuts), x, side="right")


def _likert(
    sim: np.ndarray, product_index: np.ndarray, n_prod: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """The 1..7 Likert columns other than similarity: float arrays, NaN = null."""
    n = sim.size
    out: dict[str, np.ndarray] = {}
    for col in LIKERT_COLUMNS:
        if col == "similarity":
            continue
        mu, slope, sd = LIKERT_MODEL[col]
        u = 0.35 * rng.standard_normal(n_prod)
        y = np.rint(mu + u[product_index] + slope * (sim - 4.0) + sd * rng.standard_normal(n))
        y = np.clip(y, 1, 7)
        y[rng.random(n) < LIKERT_MISSING_RATE] = np.nan
        out[col] = y
    return out


def _purchase_intent(liking: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The 5-point buying intent, driven by liking; "No response" where liking is null."""
    n = liking.size
    pi = np.clip(
        np.rint((np.nan_to_num(liking, nan=4.0) - 1.0) * 4.0 / 6.0 + 0.6 * rng.standard_normal(n)),
        0,
        4,
    ).astype(int)
    pi_text = np.array(PURCHASE_INTENT, dtype=object)[pi]
    pi_text[np.isnan(liking) | (rng.random(n) < TEXT_MISSING_RATE)] = NO_RESPONSE
    return pi_text


def _jar(
    sim: np.ndarray,
    product_index: np.ndarray,
    product_base: list[str],
    product_subset: list[str],
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """The just-about-right columns: text where the category asks them, None elsewhere."""
    n, n_prod = sim.size, len(product_base)
    asked = [asked_attributes(b, s) for b, s in zip(product_base, product_subset, strict=True)]
    out: dict[str, np.ndarray] = {}
    for col in JAR_COLUMNS:
        scale = np.array(SCALES[col], dtype=object)
        bias = 0.5 * rng.standard_normal(n_prod)
        spread = np.clip(1.25 - 0.08 * (sim - 4.0), 0.6, None)
        d = bias[product_index] + spread * rng.standard_normal(n)
        text = scale[_levels(d, (-1.5, -0.6, 0.6, 1.5))]
        text[rng.random(n) < TEXT_MISSING_RATE] = NO_RESPONSE
        is_asked = np.array([col in a for a in asked], dtype=bool)[product_index]
        text[~is_asked] = None
        out[col] = text
    return out


def _aftertaste(
    sim: np.ndarray, liking: np.ndarray, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Aftertaste strength (stronger when less similar) and pleasantness (follows liking)."""
    n = sim.size
    strength = np.clip(np.rint(2.0 - 0.35 * (sim - 4.0) + 0.9 * rng.standard_normal(n)), 0, 4)
    st = np.array(SCALES["aftertaste_strength"], dtype=object)[strength.astype(int)]
    st[rng.random(n) < TEXT_MISSING_RATE] = NO_RESPONSE
    pleas = np.clip(
        np.rint(2.0 + 0.4 * (np.nan_to_num(liking, nan=4.0) - 4.0) + 0.9 * rng.standard_normal(n)),
        0,
        4,
    )
    pl = np.array(SCALES["aftertaste_pleasantness"], dtype=object)[pleas.astype(int)]
    pl[np.isnan(liking) | (rng.random(n) < TEXT_MISSING_RATE)] = NO_RESPONSE
    return {"aftertaste_strength": st, "aftertaste_pleasantness": pl}


def attribute_columns(
    similarity: np.ndarray,
    product_index: np.ndarray,
    product_base: list[str],
    product_subset: list[str],
    product_brand: list[str],
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """All rating columns except the keys and ``similarity``, for long-format rating rows.

    ``similarity``: int ratings; ``product_index``: row -> product index into the per-product
    lists. Likert columns are float arrays (NaN = null); text columns object arrays (None = null).
    The draws happen in this order (one generator), so the columns are seed-stable.
    """
    sim = similarity.astype(float)
    out = _likert(sim, product_index, len(product_base), rng)
    liking = out["liking"]
    out["purchase_intent"] = _purchase_intent(liking, rng)
    out["brand"] = np.array(product_brand, dtype=object)[product_index]
    out |= _jar(sim, product_index, product_base, product_subset, rng)
    out |= _aftertaste(sim, liking, rng)
    return out
