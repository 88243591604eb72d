"""The Unicode skeleton (warehouse.quality.skeleton) behind the text matcher, property-tested: a
generated brand disguised with any combination of look-alike letters (Cyrillic, Greek, Armenian,
Cherokee, small capitals), symbols that look like letters, invisible format characters, blank
fillers, tag spelling, a right-to-left override around the reversed brand and separators is still
found and redacted, and refused as unreadable where it leaves the declared scripts or holds an
invisible character; ordinary ingredient text is neither matched nor refused."""

from __future__ import annotations

import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warehouse.quality.identifiers import Matcher, brand_names
from warehouse.quality.skeleton import (
    DECLARED_SCRIPTS,
    first_unreadable,
    prototypes,
    skeleton,
    strip_invisible,
)

# derandomized: the same examples every run, no example database
PROPERTY = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# look-alikes written out here, independently of the data the skeleton reads (the test's oracle)
LOOK_ALIKES: dict[str, dict[str, str]] = {
    "cyrillic": dict(zip("aceopxyijshABCEHKMOPTXSI", "асеорхуіјѕһАВСЕНКМОРТХЅІ", strict=True)),
    "greek": dict(zip("aovuiABEHIKMNOPTXYZ", "αονυιΑΒΕΗΙΚΜΝΟΡΤΧΥΖ", strict=True)),
    "armenian": dict(zip("ouhnqgSUO", "օսհոզցՏՍՕ", strict=True)),
    "cherokee": dict(zip("ABCDEGHJKMPRSTVWZaswv", "ᎪᏴᏟᎠᎬᏀᎻᎫᏦᎷᏢᎡᏚᎢᏙᎳᏃꭺꮪꮃꮩ", strict=True)),
    "small_capitals": dict(
        zip("abcdefghijklmnopqrstuvwyz", "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘꞯʀꜱᴛᴜᴠᴡʏᴢ", strict=True)
    ),
}
FORMAT = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u200e", "\u200f",
          "\u2066", "\u2067", "\u2068", "\u2069", "\u180e", "\U000e0001", "\u061c"]  # fmt: skip
FILLERS = ["\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u034f", "\u2028", "\u2029"]
SYMBOLS = {"l": "|", "c": "\u00a2", "x": "\u00d7", "y": "\u00a5", "t": "\u22a4"}  # | ¢ × ¥ ⊤
SEPARATORS = [" ", "-", "_", ".", "\u00a0", "\u2013", "/", " - "]
BEFORE = ["", "Water, ", "(", "Contains: ", "Salt | ", "Pea Protein "]
AFTER = ["", " Plant-Based Blend (Water)", ", Salt", ")", " 2%", "."]
BRANDS = ["Havtra", "Stone Bend Provisions", "Oatly", "Miyoko's Creamery", "Quorvel Farms"]
MATCHER = Matcher(dict.fromkeys(brand_names(BRANDS), "brand"))


def _tags(text: str) -> str:
    return "".join(chr(0xE0000 + ord(c)) for c in text)


@st.composite
def brands(draw) -> str:
    """A brand of one or two words of 4-9 ASCII letters, capitalized or not."""
    words = draw(
        st.lists(st.text(string.ascii_lowercase, min_size=4, max_size=9), min_size=1, max_size=2)
    )
    return " ".join(w.capitalize() if draw(st.booleans()) else w for w in words)


def _letter(draw, c: str, scripts: list[str]) -> tuple[str, str | None]:
    """A spelling of letter ``c``: a look-alike from one of ``scripts`` (and which), or a case."""
    for script in scripts:
        table = LOOK_ALIKES[script]
        for form in (c, c.lower(), c.upper()):
            if form in table and draw(st.booleans()):
                return table[form], script
    return draw(st.sampled_from([c, c.upper(), c.lower()])), None


@st.composite
def disguised(draw) -> tuple[str, str, set[str]]:
    """(brand, a sentence holding it disguised, the disguise classes it uses)."""
    brand = draw(brands())
    scripts = draw(st.lists(st.sampled_from(sorted(LOOK_ALIKES)), unique=True, max_size=5))
    kinds = ["format", "filler", "tags", "override", "symbols"]
    hidden = draw(st.sets(st.sampled_from(kinds), max_size=3))
    used: set[str] = set()
    words = []
    for word in brand.split(" "):
        chars = []
        for i, c in enumerate(word):
            look, script = _letter(draw, c, scripts)
            if 0 < i < len(word) - 1 and "symbols" in hidden and c.lower() in SYMBOLS:
                look, script = SYMBOLS[c.lower()], "symbols"  # "Oat|y": | for l inside a word
            chars.append(look)
            used |= {script} if script else set()
            for kind, pool in (("format", FORMAT), ("filler", FILLERS)):
                if 0 < i < len(word) - 1 and kind in hidden and draw(st.integers(0, 2)) == 0:
                    chars.append(draw(st.sampled_from(pool)))
                    used.add(kind)
        words.append("".join(chars))
    spelled = draw(st.sampled_from(SEPARATORS)).join(words)
    if "tags" in hidden:
        spelled, used = _tags(brand), {"tags"}
    elif "override" in hidden:
        spelled = "\u202e" + spelled[::-1] + draw(st.sampled_from(["\u202c", ""]))
        used.add("override")
    text = draw(st.sampled_from(BEFORE)) + spelled + draw(st.sampled_from(AFTER))
    return brand, text, used


@PROPERTY
@given(disguised())
def test_no_disguised_brand_escapes_the_matcher(case) -> None:
    brand, text, used = case
    matcher = Matcher({brand: "brand"})
    assert matcher.find(text), (brand, text, used)
    redacted = matcher.redact(text)
    assert matcher.find(redacted) == [], (brand, text, redacted)
    assert skeleton(brand).replace(" ", "") not in skeleton(redacted).replace(" ", "")
    assert first_unreadable(redacted) is None, (text, redacted)
    if used - {"small_capitals", "symbols"}:  # another script or invisible: refused as is
        assert first_unreadable(text) is not None, (text, used)


INGREDIENTS = [
    "Water", "Pea Protein", "Crème fraîche", "Purée de tomates", "Jalapeño", "Açaí", "Naïve Oats",
    "Coconut Oil (24%)", "Salt & Pepper", "Mono- and Diglycerides (E471)", "Citric Acid E 330",
    "Vitamin B12", "Methylcellulose", "Sunflower Lecithin", "Rice-Flour", "0.5% Yeast Extract",
    "Natural Flavors*", "Calcium Carbonate, Vitamin D2", "Soy Sauce (Water, Wheat, Salt)",
    "Beet Juice Color", "Canola Oil; Shea Butter", "Spices: Paprika, Cumin", "Müsli",
    "Smoked Paprika 1/2 tsp", "Glucono-Delta-Lactone", "5 µg Folate", "Modified Corn Starch",
]  # fmt: skip


@PROPERTY
@given(
    st.lists(st.sampled_from(INGREDIENTS), min_size=1, max_size=12),
    st.sampled_from([", ", "; ", " | "]),
)
def test_ordinary_ingredient_text_is_not_flagged(items, sep) -> None:
    text = "Ingredients: " + sep.join(items) + "."
    assert MATCHER.find(text) == [], text
    assert first_unreadable(text) is None, text
    assert MATCHER.redact(text) == " ".join(text.split())


# --- examples -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("H\u0430vtr\u0430", "havtra"),  # Cyrillic а
        ("\u0397\u0391VTRA", "havtra"),  # Greek capitals: Η is an H, not an n
        ("ʜᴀᴠᴛʀᴀ", "havtra"),  # small capitals: ᴀ <- Cherokee ꭺ, whose case fold Ꭺ is an A
        ("Ꮋꭺvtrꭺ", "havtra"),  # Cherokee
        ("Hav\u3164tra", "havtra"),  # Hangul filler inside the word
        ("Hav\u200dtr\u00ada", "havtra"),  # joiner, soft hyphen
        (_tags("Havtra"), "havtra"),  # tag characters read as what they spell
        ("OIL oil", "oll oll"),  # one case-insensitive skeleton although the map sends I to l
    ],
)
def test_skeleton_examples(text, expected) -> None:
    assert skeleton(text) == expected


def test_the_look_alike_tables_are_confusables() -> None:
    """Every look-alike the property test uses has the skeleton of the letter it imitates, and
    the data behind it is the UTS #39 file (thousands of entries, not a hand-typed table)."""
    assert len(prototypes()) > 6000
    for script, table in LOOK_ALIKES.items():
        for letter, look in table.items():
            assert skeleton(look) == skeleton(letter), (script, letter, look)


def test_reversed_brand_under_an_override_is_found_at_its_place() -> None:
    text = "Water, \u202eartvaH\u202c Oil"
    (m,) = MATCHER.find(text)
    assert text[m.start : m.end] == "artvaH"
    assert MATCHER.redact(text) == "Water, Oil"
    assert MATCHER.find("Water, artvaH Oil") == []  # no override: not read backwards


@pytest.mark.parametrize("text", ["Oat|y Oat Base", "O\u00a2tly", "Water|Oatly", "Oatly|Salt"])
def test_symbols_that_look_like_letters(text) -> None:
    """A symbol whose confusables prototype is a letter reads as that letter inside a word (``|``
    for ``l``, ``¢`` for ``c``) and as a separator elsewhere."""
    matcher = Matcher({"Oatly": "brand", "Octly": "brand"})
    assert matcher.find(text), text
    assert matcher.find(matcher.redact(text)) == []


def test_tag_spelled_brand_is_a_word_of_its_own() -> None:
    text = "Salt" + _tags("Havtra") + " Oil"
    (m,) = MATCHER.find(text)
    assert (m.start, m.end) == (4, 10)
    assert MATCHER.redact(text) == "Salt Oil"


def test_digit_identifiers_are_matched_on_the_digits_not_the_skeleton() -> None:
    m = Matcher({}, {"087177842718": "UPC"})
    assert [x.kind for x in m.find("UPC 0 87177 84271 8")] == ["identifier"]
    assert m.find("UPC O 87l77 8427l 8") == []  # letters that look like digits are not digits
    (hit,) = m.find("UPC" + _tags("0 87177 84271 8") + ".")  # digits spelled in tag characters
    assert (hit.kind, hit.start, hit.end) == ("identifier", 3, 18)


@pytest.mark.parametrize(
    ("text", "code_point", "reason"),
    [
        ("H\u0430vtra Blend", "U+0430 CYRILLIC SMALL LETTER A", "mixed-script word"),
        ("Water, Салат", "U+0421 CYRILLIC CAPITAL LETTER ES", "outside the declared scripts"),
        ("Pea\u200b Protein", "U+200B ZERO WIDTH SPACE", "invisible"),
        ("Salt\U000e0048", "U+E0048 TAG LATIN CAPITAL LETTER H", "invisible"),
        ("Hav\u3164tra", "U+3164 HANGUL FILLER", "invisible"),
        ("Oil\x07", "U+0007", "control"),
    ],
)
def test_unreadable_text_names_the_code_point(text, code_point, reason) -> None:
    found = first_unreadable(text)
    assert found is not None and str(found).startswith(code_point) and reason in str(found)


def test_readable_text_and_invisible_stripping() -> None:
    assert set(DECLARED_SCRIPTS) == {"Latin", "Common", "Inherited"}
    for text in ("Crème Brûlée (2%), E471 & Salt — 5 µg", "Tab\tand\nnewline", ""):
        assert first_unreadable(text) is None, text
    assert strip_invisible("Pe\u200ba\u3164 \u2028Protein") == "Pea Protein"
