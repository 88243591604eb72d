"""`dbt source freshness` on the default build: every source is fresh right after a build; a load
older than 2 days warns and one older than 8 days errors (thresholds in dbt_project.yml)."""

from __future__ import annotations

import contextlib
import json
import shutil
from functools import partial
from pathlib import Path

import duckdb
import pytest

from tests.conftest import built_once
from warehouse.pipeline.dbt import BuildError, copy_name, run_dbt

pytestmark = pytest.mark.integration


def _freshness(default_warehouse, stale: dict[str, int], tmp_path: Path) -> dict[str, str]:
    """Status per source table on a copy of the default build whose ``_loaded_at`` is moved
    ``stale[table]`` days into the past."""
    settings, result = default_warehouse
    db = copy_name(result.db_path, tmp_path)  # so dbt starts from the build's parse
    shutil.copyfile(result.db_path, db)
    con = duckdb.connect(str(db))
    for table, days in stale.items():
        con.execute(f"update raw.{table} set _loaded_at = _loaded_at - interval {days} day")
    con.close()
    # an error status fails the command (BuildError); the statuses below say which
    with contextlib.suppress(BuildError):
        run_dbt(["source", "freshness"], settings, db, tmp_path)
    sources = json.loads((tmp_path / "dbt" / "target" / "sources.json").read_text())
    return {r["unique_id"].split(".")[-1]: r["status"] for r in sources["results"]}


def _kept(tmp_path_factory, name: str, default_warehouse, stale: dict[str, int]) -> dict:
    """The statuses, computed once and kept between runs while nothing they depend on changed
    (``built_once``; kept builds expire before a load stamp ages into a warning)."""
    return built_once(tmp_path_factory, name, partial(_freshness, default_warehouse, stale))


def test_every_source_is_fresh_after_a_build(default_warehouse, tmp_path_factory) -> None:
    status = _kept(tmp_path_factory, "freshness", default_warehouse, {})
    con = duckdb.connect(str(default_warehouse[1].db_path), read_only=True)
    loaded = {
        r[0]
        for r in con.sql(
            "select table_name from duckdb_tables() where schema_name in ('raw', 'reports')"
        ).fetchall()
    }
    con.close()
    # every raw table (and the quality gate's report) is a declared source, and each is checked
    assert set(status) == loaded and "rpt_data_quality" in status
    assert set(status.values()) == {"pass"}


def test_stale_loads_warn_then_error(default_warehouse, tmp_path_factory) -> None:
    stale = {"tastebench_gold_pairs": 3, "fartdb_molecules": 9, "foodatlas_v1_triples": 9}
    status = _kept(tmp_path_factory, "freshness_stale", default_warehouse, stale)
    assert status.pop("tastebench_gold_pairs") == "warn"
    assert status.pop("fartdb_molecules") == "error"
    assert status.pop("foodatlas_v1_triples") == "error"
    # without a v4 bundle the empty v4 tables age with the same load's stamp on the v1 triples
    for name in ("entities", "triplets", "relationships", "attestations"):
        assert status.pop(f"foodatlas_v4_{name}") == "error"
    assert set(status.values()) == {"pass"}
