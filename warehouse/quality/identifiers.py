"""One matcher for text identifiers, used by redaction and by refusal alike (docs/quality.md,
"Text identifiers").

Two kinds of gated identifiers hide in free text:

* **names** (brands, product names, bundle join keys): text and names are *folded* to the same
  canonical skeleton (:mod:`warehouse.quality.skeleton`): invisible characters (format, bidi,
  tag, fillers) removed, tag characters read as the ASCII they spell, compatibility decomposition,
  accents dropped ("Crème" = "Creme"), the Unicode confusables map (Cyrillic "а" = "a", small
  capital "ᴀ" = "a"), a few letters without a decomposition mapped (ø→o, ł→l, đ→d, æ→ae, œ→oe),
  case folded, quote/apostrophe and dash variants mapped to ``'`` and ``-``, ``™ ® © ℠`` read as
  spaces, ``&`` read as ``and``. Then
  every separator is squeezed out: a name matches wherever its letters and digits appear in a row
  **with any or no separator between them** ("Stone Bend" = "StoneBend" = "stone-bend" =
  "STONE_BEND") **starting at a word start and ending at a word end** (so "Havtra" is not found
  inside "Havtrax"). Names of at most :data:`SHORT_NAME` letters/digits in one word are matched
  only as a whole word written in one piece.
* **digit identifiers** (UPC-A, EAN-13, GTIN-14): runs of digits whose groups are separated by at
  most three of ``space - . / _ : ·`` are collapsed to one digit string ("638/355/531/452",
  "6 38355 53145 2"), which matches a gated code written as UPC-A or EAN-13, with or without its
  check digit, with or without leading zeros.

:func:`find` returns the matches of both kinds with their positions in the *original* text;
:func:`redact` removes them (and a possessive ``'s`` after a name), and the guards refuse any text
in which :func:`find` still finds something. A text holding a bidi control is also read reversed
(an override displays "artvah" as "havtra"). Messages never quote what was found:
:func:`fingerprint` gives a short hash of the folded value instead.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from warehouse.quality.skeleton import (
    DASHES,
    MARKS,
    QUOTES,
    decode_tags,
    has_bidi_control,
    letter_like,
    skeleton_char,
    strip_invisible,
    tag_text,
)

SHORT_NAME = 3  # names of <= 3 letters/digits in one word: whole word, in one piece
MIN_ID_DIGITS = 8  # shorter digit runs are never identifiers
DIGIT_SEPARATORS = frozenset(" -./_:\u00b7")
fold_char = skeleton_char  # the folded form of one character: its skeleton


def fold(text: str) -> str:
    """Folded text (the skeleton, :mod:`warehouse.quality.skeleton`), ``&`` kept as ``&``."""
    return "".join(fold_char(c) for c in text)


def _is_word(c: str) -> bool:
    return c.isalnum()


@dataclass(frozen=True)
class Folded:
    """A text folded for matching: ``chars`` (folded, ``&`` expanded to `` and ``) with the
    original index of each folded character, and the squeezed letters/digits with their index in
    ``chars``."""

    chars: str
    origin: tuple[int, ...]
    squeezed: str
    where: tuple[int, ...]

    @classmethod
    def of(cls, text: str, symbols_as_letters: bool = False) -> Folded:
        """``symbols_as_letters``: a symbol that looks like a letter (``|`` for ``l``) between two
        letters or digits is read as that letter (else it is a separator)."""
        chars: list[str] = []
        origin: list[int] = []
        in_tags = False
        for i, c in enumerate(text):
            f = fold_char(c)
            if f == "&":
                f = " and "
            elif symbols_as_letters and letter_like(c) and _inside_word(text, i):
                f = letter_like(c) or f
            tag = tag_text(c) is not None
            if tag != in_tags:  # a run of tag characters is a hidden text of its own
                f, in_tags = " " + f, tag
            for x in f:
                chars.append(x)
                origin.append(i)
        s = "".join(chars)
        where = tuple(k for k, c in enumerate(s) if _is_word(c))
        return cls(s, tuple(origin), "".join(s[k] for k in where), where)

    def word_start(self, k: int) -> bool:
        """Squeezed position ``k`` starts a word of the folded text."""
        i = self.where[k]
        return i == 0 or not _is_word(self.chars[i - 1])

    def word_end(self, k: int) -> bool:
        i = self.where[k]
        return i == len(self.chars) - 1 or not _is_word(self.chars[i + 1])


def _inside_word(text: str, i: int) -> bool:
    """The nearest visible characters on both sides of ``text[i]`` that are not letter-like
    symbols themselves are letters or digits."""

    def nearest(chars) -> str:
        return next((fold_char(c) for c in chars if fold_char(c) and not letter_like(c)), "")

    before, after = nearest(reversed(text[:i])), nearest(text[i + 1 :])
    return bool(before and after and _is_word(before[-1]) and _is_word(after[0]))


def _symbol_inside_word(text: str) -> bool:
    if text.isascii() and "|" not in text:
        return False
    return any(letter_like(c) and _inside_word(text, i) for i, c in enumerate(text))


def name_key(name: str) -> str:
    """The squeezed folded form a name is matched by ("Ben & Jerry's" -> "benandjerrys")."""
    return Folded.of(name).squeezed


def fingerprint(value: object) -> str:
    """A short, stable, non-reversible stand-in for a gated value in messages:
    ``sha256:<8 hex>`` of its squeezed folded form (variants of one value share it)."""
    key = name_key(str(value)) or str(value)
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]


def digits_key(value: object) -> str:
    """The digits of an identifier without leading zeros ("0 87177-84271 8" -> "87177842718")."""
    return "".join(c for c in str(value) if c.isdigit()).lstrip("0")


def identifier_keys(code: object) -> frozenset[str]:
    """Digit keys under which a gated UPC-A / EAN-13 / GTIN-14 is found: the code and the code
    without its check digit, leading zeros dropped (a UPC-A and its EAN-13 share both)."""
    digits = "".join(c for c in str(code) if c.isdigit())
    if len(digits) < MIN_ID_DIGITS:
        return frozenset()
    keys = {digits.lstrip("0"), digits[:-1].lstrip("0")}
    return frozenset(k for k in keys if len(k) >= MIN_ID_DIGITS - 1)


def _digit_separator(c: str) -> bool:
    f = fold_char(c)
    return f in DIGIT_SEPARATORS or not f


def digit_runs(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, digits)`` of every run of digits in ``text`` whose digit groups are separated
    by at most three separator characters (after folding); positions are in the original text."""
    out = []
    n = len(text)
    i = 0
    while i < n:
        if not text[i].isdecimal():
            i += 1
            continue
        start, digits, j, end = i, [], i, i
        while j < n:
            c = text[j]
            if c.isdecimal():
                digits.append(str(unicodedata.decimal(c)))
                end = j + 1
                j += 1
                continue
            k = j
            while k < n and k - j < 4 and _digit_separator(text[k]):
                k += 1
            if k > j and k - j <= 3 and k < n and text[k].isdecimal():
                j = k
                continue
            break
        out.append((start, end, "".join(digits)))
        i = max(end, i + 1)
    return out


@dataclass(frozen=True)
class Match:
    """One identifier in a text: ``[start, end)`` in the original text, the kind (``name`` or
    ``identifier``), the source of the gated value (e.g. ``bundle brand``) and its fingerprint."""

    start: int
    end: int
    kind: str
    source: str
    fingerprint: str


@dataclass
class Matcher:
    """Finds gated names and digit identifiers in text.

    ``names``: ``{name: source}`` (e.g. ``{"Stone Bend Provisions": "bundle brand"}``);
    ``identifiers``: ``{code: source}`` for digit codes (UPC-A, EAN-13...)."""

    names: Mapping[str, str] = field(default_factory=dict)
    identifiers: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        keys: dict[str, tuple[str, str, bool]] = {}
        for name, source in sorted(self.names.items()):
            f = Folded.of(str(name))
            if not f.squeezed:
                continue
            one_word = all(_is_word(f.chars[k]) for k in range(f.where[0], f.where[-1] + 1))
            short = len(f.squeezed) <= SHORT_NAME and one_word
            keys.setdefault(f.squeezed, (source, fingerprint(name), short))
        # longest first, so that a longer name wins an overlap
        self._names = sorted(keys.items(), key=lambda kv: (-len(kv[0]), kv[0]))
        # a quick test for "no name anywhere" (most texts), before the exact per-name search
        self._any = re.compile("|".join(re.escape(k) for k, _ in self._names)) if keys else None
        self._cache: dict[str, list[Match]] = {}
        ids: dict[str, tuple[str, str]] = {}
        for code, source in sorted(self.identifiers.items()):
            for key in identifier_keys(code):
                ids.setdefault(key, (source, fingerprint(digits_key(code))))
        self._ids = ids

    def __bool__(self) -> bool:
        return bool(self._names or self._ids)

    @property
    def id_keys(self) -> frozenset[str]:
        """Digit keys of the identifiers (:func:`identifier_keys`)."""
        return frozenset(self._ids)

    def find(self, text: str) -> list[Match]:
        """Every gated name and identifier in ``text`` (positions in ``text``), sorted; overlaps
        keep the longer match."""
        if not isinstance(text, str) or not text:
            return []
        if text in self._cache:
            return list(self._cache[text])
        found = self._find(text)
        if len(self._cache) < 200_000:
            self._cache[text] = found
        return list(found)

    def _find(self, text: str) -> list[Match]:
        found = self._readings(text)
        if has_bidi_control(text):  # an override may display the text reversed: read it so too
            n = len(text)
            for m in self._readings(text[::-1]):
                found.append(Match(n - m.end, n - m.start, m.kind, m.source, m.fingerprint))
        return _without_overlaps(found)

    def _readings(self, text: str) -> list[Match]:
        found = self._find_in_order(text)
        if self._names and _symbol_inside_word(text):  # "Oat|y": read the | as an l too
            found += self._find_in_order(text, symbols_as_letters=True)
        return found

    def _find_in_order(self, text: str, symbols_as_letters: bool = False) -> list[Match]:
        found: list[Match] = []
        if self._names:
            f = Folded.of(text, symbols_as_letters)
            sq = f.squeezed
        if self._names and self._any is not None and self._any.search(sq):
            for key, (source, fp, short) in self._names:
                pos = sq.find(key)
                while pos >= 0:
                    last = pos + len(key) - 1
                    ok = f.word_start(pos) and f.word_end(last)
                    if ok and short:
                        ok = f.where[last] - f.where[pos] == len(key) - 1
                    if ok:
                        start = f.origin[f.where[pos]]
                        end = f.origin[f.where[last]] + 1
                        found.append(Match(start, end, "name", source, fp))
                    pos = sq.find(key, pos + 1)
        if self._ids and not symbols_as_letters:
            for start, end, digits in digit_runs(decode_tags(text)):
                key = digits.lstrip("0")
                if len(digits) >= MIN_ID_DIGITS and key in self._ids:
                    source, fp = self._ids[key]
                    found.append(Match(start, end, "identifier", source, fp))
        return found

    def redact(self, text: object) -> object:
        """``text`` with every match removed (a possessive ``'s`` after a name too), then every
        invisible character (:func:`~warehouse.quality.skeleton.strip_invisible`), whitespace
        collapsed; repeated until nothing is found (a removal may join two halves of a name).
        Non-strings are returned as they are."""
        if not isinstance(text, str):
            return text
        out = " ".join(text.replace("\u2028", "").replace("\u2029", "").split())
        for _ in range(10):
            matches = self.find(out)
            clean = strip_invisible(out)
            if not matches and clean == out:
                return out
            if not matches:
                out = " ".join(clean.split())
                continue
            pieces, pos = [], 0
            for m in matches:
                pieces.append(out[pos : m.start])
                pos = _after_possessive(out, m.end) if m.kind == "name" else m.end
            pieces.append(out[pos:])
            out = " ".join(_join(pieces).split())
        raise ValueError("redaction did not converge (a text keeps producing gated names)")


def _join(pieces: list[str]) -> str:
    """The pieces left around removed matches, a space between two that would join two words."""
    out = ""
    for p in pieces:
        glue = out and p and out[-1].isalnum() and p[0].isalnum()
        out += (" " if glue else "") + p
    return out


def _after_possessive(text: str, end: int) -> int:
    """Skip a possessive ``'s`` (any apostrophe variant) and the whitespace after a name."""
    i = end
    if (
        i + 1 < len(text)
        and fold_char(text[i]) == "'"
        and text[i + 1] in "sS"
        and (i + 2 == len(text) or not text[i + 2].isalnum())
    ):
        i += 2
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _without_overlaps(matches: list[Match]) -> list[Match]:
    out: list[Match] = []
    for m in sorted(matches, key=lambda m: (m.start, -(m.end - m.start))):
        if out and m.start < out[-1].end:
            if m.end > out[-1].end and (m.end - m.start) > (out[-1].end - out[-1].start):
                out[-1] = m
            continue
        out.append(m)
    return out


# --- brand names --------------------------------------------------------------------------------
NAME_SUFFIXES = frozenset(
    {
        "co", "company", "inc", "llc", "brands", "foods", "food", "kitchen", "pantry", "table",
        "harvest", "provisions", "smokehouse", "dairy", "creamery", "farms", "farm", "meats",
    }
)  # fmt: skip


def brand_names(brands: Iterable[object], *, expand: bool = True) -> tuple[str, ...]:
    """Names to look for: every brand; with ``expand`` also the brand without a generic suffix
    ("Stone Bend Provisions" -> "Stone Bend") when what is left has >= 4 letters/digits, and
    without a trailing possessive ("Miyoko's" -> "Miyoko"). Sorted longest first. The curated
    seed is matched as listed (``expand=False``): it names common-word brands only in a
    distinctive form ("Impossible Foods", not "Impossible")."""
    out: set[str] = set()
    suffixes = {name_key(s) for s in NAME_SUFFIXES}  # skeletons: "farms" is "farrns"
    for brand in brands:
        if brand is None or not isinstance(brand, str):
            continue
        b = " ".join(brand.split())
        if not name_key(b):
            continue
        out.add(b)
        if not expand:
            continue
        tokens = b.split(" ")
        while len(tokens) > 1 and name_key(tokens[-1]) in suffixes:
            tokens = tokens[:-1]
        core = " ".join(tokens)
        if core != b and len(name_key(core)) >= 4:
            out.add(core)
        for form in (b, core):
            folded = fold(form)
            if folded.endswith("'s") and len(name_key(form[:-2])) >= 4:
                out.add(form[:-2])
    return tuple(sorted(out, key=lambda s: (-len(s), s.lower())))


__all__ = [
    "DASHES",
    "MARKS",
    "QUOTES",
    "Folded",
    "Match",
    "Matcher",
    "brand_names",
    "digit_runs",
    "digits_key",
    "fingerprint",
    "fold",
    "fold_char",
    "identifier_keys",
    "name_key",
]
