"""The dbt project's governance on the default build (issue #10): every model and column an analyst
sees is described, every model has a primary-key test, analyst-facing SQL marts have enforced
contracts, every model declares public/gated, the exposures are declared, and `dbt source
freshness` runs on the built file."""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest

from warehouse.build import run_dbt
from warehouse.quality import governance

pytestmark = pytest.mark.integration

EXPOSURES = {
    "public_release",
    "competition_export",
    "evaluate_cli",
    "results_report",
    "quality_report",
}


@pytest.fixture(scope="module")
def manifest(default_warehouse) -> dict:
    settings, _ = default_warehouse
    return json.loads(governance.manifest_path(settings.build_dir).read_text())


@pytest.fixture(scope="module")
def columns(default_warehouse) -> dict[str, list[str]]:
    """relation -> columns, as built."""
    _, result = default_warehouse
    con = duckdb.connect(str(result.db_path), read_only=True)
    try:
        rows = con.execute(
            "select table_schema || '.' || table_name, column_name "
            "from information_schema.columns order by table_schema, table_name, ordinal_position"
        ).fetchall()
    finally:
        con.close()
    out: dict[str, list[str]] = {}
    for relation, column in rows:
        out.setdefault(relation, []).append(column)
    return out


def _models(manifest: dict) -> list[dict]:
    return [n for n in manifest["nodes"].values() if n["resource_type"] == "model"]


def test_every_model_and_column_is_described(manifest, columns) -> None:
    undocumented = []
    for node in _models(manifest):
        relation = f"{node['schema']}.{node['alias']}"
        assert node["description"].strip(), f"{relation} has no description"
        described = {c for c, v in node["columns"].items() if v.get("description", "").strip()}
        undocumented += [f"{relation}.{c}" for c in columns[relation] if c not in described]
    assert not undocumented, f"columns without a description in their YAML: {undocumented}"


def test_every_model_has_a_primary_key_test(manifest) -> None:
    tested: dict[str, set[str]] = {}
    for node in manifest["nodes"].values():
        if node["resource_type"] != "test":
            continue
        kind = node.get("test_metadata", {}).get("name")
        if kind in ("unique", "unique_combination_of_columns"):
            for parent in node["depends_on"]["nodes"]:
                tested.setdefault(parent, set()).add(kind)
    missing = [n["name"] for n in _models(manifest) if n["unique_id"] not in tested]
    assert not missing, f"models without a unique (primary-key) test: {missing}"


def test_sql_marts_have_enforced_contracts_with_types(manifest) -> None:
    sql_marts = [n for n in _models(manifest) if n["schema"] == "marts" and n["language"] == "sql"]
    assert len(sql_marts) >= 8
    for node in sql_marts:
        assert node["config"]["contract"]["enforced"], node["name"]
        assert all(c.get("data_type") for c in node["columns"].values()), node["name"]


def test_the_gate_guarded_exactly_the_models_declared_public(default_warehouse, manifest) -> None:
    settings, result = default_warehouse
    for node in _models(manifest):
        assert node["config"]["meta"].get("data_access") in governance.TIERS, node["name"]
    public = governance.public_relations(
        governance.read_access(governance.manifest_path(settings.build_dir))
    )
    con = duckdb.connect(str(result.db_path), read_only=True)
    try:
        guarded = {
            m
            for (m,) in con.execute(
                "select distinct model from reports.rpt_data_quality "
                "where kind = 'guard' and model like 'marts.%'"
            ).fetchall()
        }
    finally:
        con.close()
    assert guarded == set(public) and "marts.agg_model_metrics" in guarded
    assert "marts.fct_panel_means" not in guarded


def test_exposures_are_declared(manifest) -> None:
    names = {e["name"] for e in manifest["exposures"].values()}
    assert names >= EXPOSURES
    quality = next(e for e in manifest["exposures"].values() if e["name"] == "quality_report")
    assert "source.tastebench.reports.rpt_data_quality" in quality["depends_on"]["nodes"]


def test_source_freshness_runs_on_the_default_build(default_warehouse, tmp_path) -> None:
    settings, result = default_warehouse
    copy = tmp_path / "fresh.duckdb"  # dbt opens its database for writing: never the live file
    shutil.copyfile(result.db_path, copy)
    run_dbt(["source", "freshness"], settings, copy, tmp_path)
    sources = json.loads((tmp_path / "dbt" / "target" / "sources.json").read_text())["results"]
    assert sources and {r["status"] for r in sources} == {"pass"}
    assert any(r["unique_id"].endswith("reports.rpt_data_quality") for r in sources)
