"""Taste classes, label validation, FartDB column access and the keyword leakage audit."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

import numpy as np
import polars as pl

TASTE_CLASSES: tuple[str, ...] = ("sweet", "bitter", "sour", "umami", "undefined")
CLASS_INDEX: dict[str, int] = {c: i for i, c in enumerate(TASTE_CLASSES)}

#: FartDB column names (upstream CSV header); snake_case aliases are accepted for loader output.
SMILES_COLUMN = "Canonicalized SMILES"
LABEL_COLUMN = "Canonicalized Taste"
LEAKY_COLUMN = "Original Labels"
#: (``warehouse.molecular.staging.stage_fartdb_molecules`` names them smiles_file / taste_class /
#: original_labels; the file's SMILES string is preferred over the RDKit-canonical one).
_ALIASES: dict[str, tuple[str, ...]] = {
    SMILES_COLUMN: ("smiles_file", "canonicalized_smiles", "canonical_smiles", "smiles"),
    LABEL_COLUMN: ("taste_class", "canonicalized_taste", "taste", "label"),
    LEAKY_COLUMN: ("original_labels",),
}
#: columns that must never be model inputs (the class itself and its free-text source)
FORBIDDEN_FEATURE_COLUMNS: frozenset[str] = frozenset(
    {LABEL_COLUMN, LEAKY_COLUMN, *_ALIASES[LABEL_COLUMN], *_ALIASES[LEAKY_COLUMN]}
)


def as_polars(df) -> pl.DataFrame:
    """The polars frame every molecular function takes; anything else is a ``TypeError``."""
    if isinstance(df, pl.DataFrame):
        return df
    raise TypeError(f"expected a polars DataFrame, got {type(df).__name__}")


def resolve_column(df: pl.DataFrame, name: str) -> str:
    """The column of ``df`` holding ``name`` (upstream header or one of its snake_case aliases)."""
    for candidate in (name, *_ALIASES.get(name, ())):
        if candidate in df.columns:
            return candidate
    raise KeyError(f"column {name!r} not found; columns are {list(df.columns)}")


def validate_labels(labels: Sequence[str]) -> np.ndarray:
    """Check every label is one of :data:`TASTE_CLASSES`; return integer codes in that order.

    Raises ``ValueError`` naming the first offending row and label (exact, case-sensitive match;
    missing values are rejected too).
    """
    if isinstance(labels, str):
        raise TypeError("expected a sequence of labels, got a single string")
    if hasattr(labels, "to_list"):
        labels = labels.to_list()
    codes = np.empty(len(labels), dtype=np.int64)
    for i, label in enumerate(labels):
        code = CLASS_INDEX.get(label) if isinstance(label, str) else None
        if code is None:
            raise ValueError(
                f"unknown taste label {label!r} at row {i}; expected one of {TASTE_CLASSES}"
            )
        codes[i] = code
    return codes


def labels_from_codes(codes: np.ndarray) -> np.ndarray:
    return np.asarray(TASTE_CLASSES, dtype=object)[np.asarray(codes, dtype=np.int64)]


# Keyword rules for the leakage audit, first match wins.
#
# "class_names" (the documented audit, ~.887 test accuracy): the first class name of
# TASTE_CLASSES (sweet, bitter, sour, umami) found as a substring of the lower-cased text, else
# "undefined".
#
# "refined" (~.993 test accuracy): written from the *train* split's label strings, not tuned on
# test: tastelessness markers first, then the pKa rule of the IUPAC sour source ("pka between 2
# and 7"), then umami, sour, bitter, sweet; anything else "undefined". It shows the column
# leaks almost the whole class, not just .88 of it.
_CLASS_NAME_RULES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (c, re.compile(re.escape(c))) for c in TASTE_CLASSES if c != "undefined"
)
_REFINED_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("undefined", re.compile(r"non-sweet|tasteless|odorless|odourless")),
    ("sour", re.compile(r"\bpka\b")),
    ("umami", re.compile(r"umami")),
    ("sour", re.compile(r"\bsour")),
    ("bitter", re.compile(r"bitter")),
    ("sweet", re.compile(r"sweet")),
)
KEYWORD_RULESETS = {"class_names": _CLASS_NAME_RULES, "refined": _REFINED_RULES}


def keyword_leakage_baseline(
    original_labels: Sequence[str], rules: Literal["class_names", "refined"] = "class_names"
) -> np.ndarray:
    """Predict the class from FartDB's free-text ``Original Labels`` by keyword rules.

    This is a LEAKAGE AUDIT: it shows how much of the class is written in that column (about .887
    test accuracy with the default class-name match, .993 with the ``"refined"`` rules). It is
    reported as an audit row and must never be used as a model feature. Returns an object array
    of class names.
    """
    try:
        ruleset = KEYWORD_RULESETS[rules]
    except KeyError:
        choices = sorted(KEYWORD_RULESETS)
        raise ValueError(f"rules must be one of {choices}, got {rules!r}") from None
    if hasattr(original_labels, "to_list"):
        original_labels = original_labels.to_list()
    out = np.empty(len(original_labels), dtype=object)
    for i, text in enumerate(original_labels):
        s = text.lower() if isinstance(text, str) else ""
        out[i] = next((cls for cls, pat in ruleset if pat.search(s)), "undefined")
    return out
