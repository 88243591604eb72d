"""Ingredient-list text helpers: top-level splitting and the two cleaning levels."""

from __future__ import annotations

import re

_TAIL = r"\s*(?:of\s*)?(?:each\s+of\s*)?(?:the\s+following\s*)?:?"
_TWO = r"(?<![\d.])(?:2|two)\s*(?:%|percent)"
_LESS_THAN = re.compile(
    r"[.,;]?\s*(?:contains\s+)?(?:(?:less\s+than|<)\s*" + _TWO + r"(?:\s+or\s+less)?"
    r"|" + _TWO + r"\s+or\s+less)" + _TAIL,
    flags=re.IGNORECASE,
)
_ALLERGEN = re.compile(r"[.;]\s*contains\s*:\s*[^()]*$", flags=re.IGNORECASE)
_SPACE = re.compile(r"\s+")


def normalize_space(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def split_top_level(text: str) -> list[str]:
    """Split an ingredient list on commas/semicolons outside brackets; strip each item."""
    items: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        if ch in ",;" and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    out = []
    for item in items:
        item = normalize_space(item).strip(" .*:")
        if item and item.lower() not in {"and", "or"}:
            out.append(item)
    return out


def clean_ingredient_list(raw: str) -> str:
    """The 'Manually Cleaned Ingredients' level: one line, no '2% or less of' phrases, no
    allergen statement, no asterisks or trailing periods, items joined by ', '."""
    text = normalize_space(raw.replace("*", ""))
    text = _ALLERGEN.sub("", text)
    text = _LESS_THAN.sub(",", text)
    text = re.sub(r"\.\s+(?=[A-Z])", ", ", text)
    return ", ".join(split_top_level(text))


def label_items(raw: str) -> list[str]:
    """Ingredients in label order for ``nectar_product_labels.csv`` (lower-cased top level)."""
    return [item.lower() for item in split_top_level(clean_ingredient_list(raw))]


def manual_label_items(cleaned: str) -> list[str]:
    """Hand-cleaned items for ``product_labels_manually_cleaned.csv``: label case kept,
    percentages removed."""
    items = []
    for item in split_top_level(cleaned):
        item = re.sub(r"\s*\(?\d+(?:\.\d+)?\s*%\)?", "", item)
        item = normalize_space(item.replace("()", ""))
        if item:
            items.append(item)
    return items
