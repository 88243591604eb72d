"""De-identification hardening, the ``target`` leak class (see test_deidentification.py, whose
planting helpers this file uses): per-product near-copies of the panel mean planted into the
nutrition of a copy of the default bundle make the competition export refuse. A file of its own so
that its planted build runs on another xdist worker than the ``text`` one."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import built_once
from tests.integration.test_deidentification import _analogs, _build_planted, _invoke

pytestmark = pytest.mark.integration


@pytest.fixture(scope="session")
def planted_target(tmp_path_factory, default_warehouse):
    """protein_g = panel mean + N(0, .03) noise (r ~ .999, within .1); potassium_mg = the sum of
    the product's ratings (the panel mean times its number of ratings). Built once per run, kept
    between runs (``built_once``)."""
    make = partial(_planted_target, default_warehouse)
    return built_once(tmp_path_factory, "planted_target", make, code=[_build_planted])


def _planted_target(default_warehouse, root: Path):
    settings, _ = default_warehouse
    analogs = _analogs(settings)
    noise = np.random.default_rng(42).normal(0, 0.03, len(analogs))
    edits = []
    for row, eps in zip(analogs.iter_rows(named=True), noise, strict=True):
        edits.append(
            (
                row,
                {
                    "Protein (g)": round(row["panel_mean"] + eps, 2),
                    "Potassium (mg)": round(row["panel_mean"] * row["n_ratings"]),
                },
            )
        )
    planted, _ = _build_planted(root, settings, edits)
    return planted, analogs


# --- near-copies of the target ---------------------------------------------------------------
def test_near_copies_of_the_panel_mean_make_the_competition_refuse(planted_target, tmp_path):
    settings, _ = planted_target
    out = tmp_path / "competition"
    res = _invoke("competition", str(out), "--db", str(settings.db_path))
    assert res.exit_code != 0, "the competition export published near-copies of the target"
    message = " ".join(f"{res.exception}\n{res.output}".split())  # the console wraps lines
    for column in ("protein_g", "potassium_mg"):
        assert f"column {column}: rule target_near_copy" in message, message
    assert "table products.csv" in message and "table products.parquet" in message
    assert not out.exists() or not any(out.iterdir())  # nothing published
