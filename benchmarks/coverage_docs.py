"""The ``ci-coverage`` block of ``benchmarks/results/ci_coverage.md``: sections, idempotent
rewrite, kept rows.

The block runs from ``<!-- ci-coverage:begin -->`` to ``<!-- ci-coverage:end -->`` and holds
one section per :data:`SECTIONS` entry, each between ``<!-- ci-coverage:NAME -->`` and
``<!-- ci-coverage:NAME:end -->``. ``benchmarks/ci_coverage.py --write-docs`` replaces the
sections it measured and keeps the others; writing twice gives the same file, and anything
between the sections (such as a repeated end marker) is dropped.
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from warehouse.metrics.intervals import CI_METHODS, INTERVAL_METRICS  # noqa: E402

DOCS = REPO_ROOT / "benchmarks" / "results" / "ci_coverage.md"
BEGIN, END = "<!-- ci-coverage:begin -->", "<!-- ci-coverage:end -->"
SECTIONS = ("legend", *INTERVAL_METRICS, "per_category", "paired")
"""Sections of the block; a run with ``--metrics`` rewrites only its own."""


def _marker(name: str, end: bool = False) -> str:
    return f"<!-- ci-coverage:{name}{':end' if end else ''} -->"


def split_block(text: str) -> tuple[str, dict[str, str], str]:
    """``(head, sections, tail)`` of a document holding one coverage block.

    The block runs from the single :data:`BEGIN` to the LAST :data:`END`; only section
    markers inside it are read, so a stray or repeated end marker (an earlier writer's
    leftover) is dropped on the next write instead of surviving in the tail.
    """
    if text.count(BEGIN) != 1 or END not in text.split(BEGIN, 1)[1]:
        raise SystemExit(f"{DOCS} needs exactly one {BEGIN} followed by {END}")
    head, rest = text.split(BEGIN, 1)
    block, tail = rest.rsplit(END, 1)
    sections = {}
    for name in SECTIONS:
        begin, end = _marker(name), _marker(name, end=True)
        if begin in block:
            if end not in block.split(begin, 1)[1]:
                raise SystemExit(f"{DOCS}: {begin} has no {end}")
            sections[name] = block.split(begin, 1)[1].split(end, 1)[0].strip("\n")
    return head, sections, tail


def merge_block(text: str, sections: dict[str, str]) -> str:
    """``text`` with the given sections replaced (the others kept); idempotent."""
    head, current, tail = split_block(text)
    current.update(sections)
    missing = [name for name in SECTIONS if name not in current]
    if missing:
        raise SystemExit(f"{DOCS} lacks sections {missing}: run the study without --metrics")
    body = "\n\n".join(
        f"{_marker(name)}\n{current[name]}\n{_marker(name, end=True)}" for name in SECTIONS
    )
    return f"{head}{BEGIN}\n{body}\n{END}{tail}"


def kept_rows(sections: dict[str, str], computed: set[str]) -> dict[str, dict[str, list[str]]]:
    """Per metric, the cells of the table rows in ``sections`` (the current docs) of methods
    NOT in ``computed``: a run with ``--groups`` keeps them (they are deterministic)."""
    out: dict[str, dict[str, list[str]]] = {}
    for metric in INTERVAL_METRICS:
        for line in sections.get(metric, "").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            name = cells[0].strip("*")
            if line.startswith("| ") and name in CI_METHODS and name not in computed:
                out.setdefault(metric, {})[name] = cells[1:]
    return out
