"""The coverage study's docs writer (benchmarks/ci_coverage.py): sectioned, idempotent, and a
repeated end marker does not survive a write."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def cc():
    spec = importlib.util.spec_from_file_location("ci_coverage", ROOT / "benchmarks/ci_coverage.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ci_coverage", module)
    spec.loader.exec_module(module)
    return module


def _doc(cc, sections: dict[str, str], tail: str = "\n\n## After\n") -> str:
    return cc.merge_block(f"# Title\n\n{cc.BEGIN}\n{cc.END}{tail}", sections)


def test_writer_is_idempotent_and_replaces_only_named_sections(cc) -> None:
    full = {name: f"old {name}" for name in cc.SECTIONS}
    doc = _doc(cc, full)
    assert cc.merge_block(doc, {}) == doc
    assert doc.count(cc.BEGIN) == doc.count(cc.END) == 1
    new = cc.merge_block(doc, {"spearman": "new spearman\n\n| row |"})
    assert cc.merge_block(new, {"spearman": "new spearman\n\n| row |"}) == new
    _, sections, tail = cc.split_block(new)
    assert sections["spearman"] == "new spearman\n\n| row |"
    assert sections["kendall_tau"] == "old kendall_tau" and tail == "\n\n## After\n"


def test_a_repeated_end_marker_is_dropped(cc) -> None:
    doc = _doc(cc, {name: name for name in cc.SECTIONS})
    broken = doc.replace(cc.END, f"{cc.END}\n{cc.END}")
    fixed = cc.merge_block(broken, {})
    assert fixed.count(cc.END) == 1 and fixed == doc


def test_partial_write_needs_every_section(cc) -> None:
    with pytest.raises(SystemExit, match="lacks sections"):
        _doc(cc, {"spearman": "x"})


def test_kept_rows_read_other_methods_cells(cc) -> None:
    table = "\n".join(
        [
            "| method | 0.50 |",
            "|---|---|",
            "| **ustat_t** | 95.6 (0.1) |",
            "| published_bca | 91.8 (0.1) |",
        ]
    )
    kept = cc.kept_rows({"pairwise_accuracy": table}, {"ustat_t"})
    assert kept == {"pairwise_accuracy": {"published_bca": ["91.8 (0.1)"]}}
