"""Ingredient parsing and FoodAtlas food matching for block C (docs/benchmark.md §2).

Parsing: ``cleaned_ingredients`` is split on "|" (the NECTAR " | " separator) in label order;
each item loses bracketed parts ("Protein Blend (Rice Flour, ...)" -> "Protein Blend", nested
and unclosed brackets included), percentages ("Cocoa 12%") and lead-ins such as "Contains 2% or
less of:"; surrounding punctuation and marks ("*", "†", ".") go too. Empty items are dropped.

Matching, first rule that finds a food wins (``match_rule``):

1. ``exact``: the item, case-folded with whitespace collapsed, equals a food's name or one of
   its FoodAtlas synonyms (case-folded);
2. ``normalized``: :func:`normalize_name` of both sides are equal (ASCII-folded, lower case,
   punctuation to spaces, each word singular: "Tomatoes" = "tomato");
3. ``modifier_stripped``: the normalized item without the words in :data:`MODIFIERS`
   ("Pea Protein Isolate" -> "pea", "Garlic Powder" -> "garlic") equals a food's normalized name;
4. ``synonym``: the normalized item (or its modifier-stripped form) is an ``ingredient_name`` of
   the curated seed (seeds/foodatlas_food_synonyms.csv), whose ``food_name`` is then looked up
   with rules 1-3.

A name shared by several food entities (FoodAtlas v1 files every cocoa or garlic part under the
food's name; v4 may repeat a name) matches all of them: their ``contains`` edges are pooled.
Whole words only: "Coconut Oil" never matches "cocoa".
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import polars as pl

from warehouse.features.block import FeatureError

# Words that name a form or fraction of a food rather than the food (rule 3). Starches, sugars,
# gums and salts are left alone: they are refined near-pure compounds, not their plant.
MODIFIERS = frozenset(
    {
        "isolate", "concentrate", "flour", "protein", "powder", "extract", "gluten", "oil",
        "organic", "natural", "dried", "dry", "dehydrated", "granulated", "minced", "chopped",
        "diced", "sliced", "roasted", "toasted", "ground", "whole", "fresh", "raw", "textured",
        "hydrolyzed", "hydrolysed", "defatted", "pure", "filtered", "puree", "paste", "flake",
        "granule", "meal", "crushed", "cold", "pressed", "expeller", "virgin", "extra",
        "refined", "unrefined", "vital", "rehydrated", "fermented", "cultured", "juice",
        "high", "oleic", "powdered", "isolated", "concentrated", "of",
    }
)  # fmt: skip
_NO_SINGULAR = ("ss", "us", "is", "ous")
_IRREGULAR = {"leaves": "leaf", "loaves": "loaf", "halves": "half"}
_LEAD_IN = re.compile(
    r"^\s*(?:and\s+)?(?:contains\s+)?(?:(?:less\s+than|under)\s+)?"
    r"\d+(?:[.,]\d+)?\s*%\s*(?:or\s+less\s+)?(?:of\s*)?:?\s*",
    re.IGNORECASE,
)
_PERCENT = re.compile(r"\d+(?:[.,]\d+)?\s*%")
_EDGE_PUNCT = re.compile(r"^[\s*†‡§.,;:!?\-]+|[\s*†‡§.,;:!?\-]+$")
_SPACES = re.compile(r"\s+")


def _strip_brackets(text: str) -> str:
    """Remove (...), [...] and {...} with their content, innermost first; an unclosed opening
    bracket cuts the rest of the item, a stray closing one is dropped."""
    prev = None
    while prev != text:
        prev = text
        text = re.sub(r"[(\[{][^()\[\]{}]*[)\]}]", " ", text)
    cut = re.search(r"[(\[{]", text)
    if cut:
        text = text[: cut.start()]
    return re.sub(r"[)\]}]", " ", text)


def clean_ingredient(item: str) -> str:
    """One label item -> the ingredient name used for matching ('' when nothing is left)."""
    text = _strip_brackets(item)
    text = _LEAD_IN.sub("", text)
    text = _PERCENT.sub(" ", text)
    text = _SPACES.sub(" ", text)
    return _EDGE_PUNCT.sub("", text).strip()


def parse_ingredients(text: str | None) -> list[str]:
    """``cleaned_ingredients`` -> cleaned names in label order (empty items dropped)."""
    if text is None:
        return []
    items = (clean_ingredient(part) for part in text.split("|"))
    return [item for item in items if item]


def _singular(word: str) -> str:
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if len(word) <= 3 or word.endswith(_NO_SINGULAR):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("oes", "ches", "shes", "xes", "sses")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def _casefold(text: str) -> str:
    return _SPACES.sub(" ", text.casefold()).strip()


def normalize_name(text: str) -> str:
    """ASCII-folded, lower case, punctuation -> spaces, '&' -> 'and', each word singular."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    folded = folded.lower().replace("&", " and ")
    words = re.sub(r"[^a-z0-9]+", " ", folded).split()
    return " ".join(_singular(w) for w in words)


def strip_modifiers(normalized: str) -> str:
    return " ".join(w for w in normalized.split() if w not in MODIFIERS)


@dataclass(frozen=True)
class FoodMatch:
    rule: str  # exact | normalized | modifier_stripped | synonym | none
    food_name: str | None
    food_entity_ids: tuple[str, ...]


NO_MATCH = FoodMatch("none", None, ())


class FoodMatcher:
    """Match ingredient names to FoodAtlas foods with the rules of the module doc.

    ``foods``: ``food_entity_id, food_name, synonyms`` (list of strings, may be null).
    ``synonyms``: the curated seed, ``ingredient_name, food_name``.
    """

    def __init__(self, foods: pl.DataFrame, synonyms: pl.DataFrame) -> None:
        for table, frame, cols in (
            ("foods", foods, ("food_entity_id", "food_name", "synonyms")),
            ("seeds.foodatlas_food_synonyms", synonyms, ("ingredient_name", "food_name")),
        ):
            missing = [c for c in cols if c not in frame.columns]
            if missing:
                raise FeatureError(f"{table}: missing column(s) {missing}")
        self._exact: dict[str, dict[str, set[str]]] = {}
        self._norm: dict[str, dict[str, set[str]]] = {}
        for fid, name, syns in foods.select("food_entity_id", "food_name", "synonyms").iter_rows():
            if not name:
                continue
            for alias in [name, *(syns or [])]:
                if alias:
                    self._exact.setdefault(_casefold(alias), {}).setdefault(name, set()).add(fid)
                    key = normalize_name(alias)
                    if key:
                        self._norm.setdefault(key, {}).setdefault(name, set()).add(fid)
        self._seed: dict[str, str] = {}
        for ing, target in synonyms.select("ingredient_name", "food_name").iter_rows():
            key = normalize_name(ing or "")
            if not key or not target:
                raise FeatureError(
                    f"seeds.foodatlas_food_synonyms: row ({ing!r}, {target!r}) has an empty "
                    "name. Fix: fill both ingredient_name and food_name"
                )
            if key in self._seed and self._seed[key] != target:
                raise FeatureError(
                    f"seeds.foodatlas_food_synonyms: {ing!r} maps to both "
                    f"{self._seed[key]!r} and {target!r}. Fix: keep one row per ingredient"
                )
            self._seed[key] = target
        self._memo: dict[str, FoodMatch] = {}

    @staticmethod
    def _pick(hits: dict[str, set[str]], rule: str) -> FoodMatch:
        # several display names can share a key ("Soybean" and "soybean"): pool them, report
        # the first name in sorted order so the result does not depend on row order
        ids = sorted(set().union(*hits.values()))
        return FoodMatch(rule, sorted(hits)[0], tuple(ids))

    def _direct(self, name: str) -> FoodMatch:
        hits = self._exact.get(_casefold(name))
        if hits:
            return self._pick(hits, "exact")
        norm = normalize_name(name)
        hits = self._norm.get(norm)
        if hits:
            return self._pick(hits, "normalized")
        stripped = strip_modifiers(norm)
        hits = self._norm.get(stripped) if stripped else None
        if hits:
            return self._pick(hits, "modifier_stripped")
        return NO_MATCH

    def match(self, name: str) -> FoodMatch:
        if name in self._memo:
            return self._memo[name]
        found = self._direct(name)
        if found.rule == "none":
            norm = normalize_name(name)
            target = self._seed.get(norm) or self._seed.get(strip_modifiers(norm))
            if target is not None:
                via = self._direct(target)
                if via.rule != "none":
                    found = FoodMatch("synonym", via.food_name, via.food_entity_ids)
        self._memo[name] = found
        return found
