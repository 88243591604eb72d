"""Scaled simulated bundles: the category copies `<Category>_s<k>` are accepted explicitly (k up to
the bundle's declared scale), never silently."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from warehouse.errors import DataValidationError
from warehouse.sources.nectar import _canonical_categories, simulation_scale
from warehouse.sources.seeds import category_lookup

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "nectar_mini"


def test_lookup_adds_copies_of_every_spelling_up_to_the_scale() -> None:
    base = category_lookup()
    scaled = category_lookup(3)
    assert "Bacon_s2" not in base
    assert scaled["Bacon_s2"] == "Bacon_s2" and scaled["Bacon_s3"] == "Bacon_s3"
    assert scaled["Salted_Butter_s3"] == "Butter_s3"  # an alias's copy maps to the copy
    assert "Bacon_s4" not in scaled
    assert len(scaled) == 3 * len(base)


def test_copies_are_refused_beyond_the_declared_scale() -> None:
    values = pl.Series(["Bacon", "Bacon_s2"])
    assert _canonical_categories(Path("x.csv"), values, "category", scale=2).to_list() == [
        "Bacon",
        "Bacon_s2",
    ]
    with pytest.raises(DataValidationError, match="simulation_manifest.json declares scale"):
        _canonical_categories(Path("x.csv"), values, "category")
    with pytest.raises(DataValidationError, match="copies <Category>_s2 .. _s2 are accepted"):
        _canonical_categories(Path("x.csv"), pl.Series(["Bacon_s3"]), "category", scale=2)


def test_scale_comes_from_a_simulation_manifest_only(tmp_path: Path) -> None:
    assert simulation_scale(FIXTURE) == 1  # a fixture bundle never has copies
    bundle = tmp_path / "sim"
    bundle.mkdir()
    (bundle / "simulation_manifest.json").write_text(json.dumps({"scale": 10}))
    assert simulation_scale(bundle) == 10
    (bundle / "simulation_manifest.json").write_text(json.dumps({"scale": "ten"}))
    with pytest.raises(DataValidationError, match="not a positive integer"):
        simulation_scale(bundle)
    real = tmp_path / "real"
    shutil.copytree(FIXTURE, real)
    (real / "FIXTURE.md").unlink()
    (real / "simulation_manifest.json").unlink(missing_ok=True)
    assert simulation_scale(real) == 1
