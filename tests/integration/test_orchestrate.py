"""The Dagster definitions (the `orchestrate` extra): they load, a materialization of the dbt
assets runs in-process on the fixture bundle, and the sensor fires on a new or changed bundle
only."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from tests.integration.ops_helpers import copy_warehouse
from warehouse.simulate.batch import add_year_batch

dg = pytest.importorskip("dagster", reason="the orchestrate extra (make install installs it)")
pytestmark = pytest.mark.integration
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "nectar_mini"


@pytest.fixture(scope="module")
def definitions():
    from warehouse.orchestrate import definitions

    return definitions


def test_definitions_load(definitions) -> None:
    defs = definitions.defs
    dg.Definitions.validate_loadable(defs)
    job = defs.resolve_job_def("tastebench_build")
    assert defs.resolve_schedule_def("tastebench_daily").cron_schedule == "0 3 * * *"
    assert defs.resolve_sensor_def("nectar_bundle_sensor").job_name == job.name
    keys = set(definitions.tastebench_dbt_assets.keys)
    assert {
        dg.AssetKey(["staging", "stg_nectar__ratings"]),
        dg.AssetKey(["marts", "fct_panel_means"]),
        dg.AssetKey(["marts", "agg_model_metrics"]),
        dg.AssetKey(["nectar", "nectar_consolidated_sensory_rating"]),  # a raw table
    } <= keys


def test_every_check_is_on_a_materializable_asset_keyed_by_dagster_dbt(definitions) -> None:
    """Issue #21 item 2: the checks attach to the assets dagster-dbt names (full keys, from its
    own helper), every checked asset is materialized by the build, and there is no stub or
    external asset in the definitions."""
    from dagster_dbt import build_dbt_asset_specs

    graph = definitions.defs.resolve_asset_graph()
    nodes = {n.key: n for n in graph.asset_nodes}
    assert nodes and all(n.is_materializable and n.is_executable for n in nodes.values())
    assert not [n.key for n in nodes.values() if n.is_external], "external or stub assets"
    specs = definitions.check_specs()
    assert len(specs) == 31
    for spec in specs:
        assert spec.asset_key in nodes and nodes[spec.asset_key].is_materializable, spec
    checked = {(c.asset_key, c.name) for c in specs}
    # dagster-dbt's own view of the project: the keys of its specs and of their dbt sources
    dbt = {
        s.key.path[-1]: s
        for s in build_dbt_asset_specs(
            manifest=definitions.MANIFEST, dagster_dbt_translator=definitions.TRANSLATOR
        )
    }
    stg, panel, dim = dbt["stg_nectar__ratings"], dbt["fct_panel_means"], dbt["dim_categories"]
    assert stg.key == dg.AssetKey(["staging", "stg_nectar__ratings"])
    assert (stg.key, "gx_suite") in checked and (panel.key, "gx_suite") in checked
    assert (dim.key, "deidentification_guards") in checked
    # the raw table stg reads: its dbt source, as dagster-dbt keys it
    (raw,) = {d.asset_key for d in stg.deps if d.asset_key.path[-1].startswith("nectar_")}
    assert raw == dg.AssetKey(["nectar", "nectar_consolidated_sensory_rating"])
    assert (raw, "gx_suite") in checked
    for relation in ("staging.stg_nectar__ratings", "marts.dim_products", "raw.nectar_images"):
        key = definitions.check_key(relation)
        assert key is not None and key.path[-1] == relation.split(".")[1] and key in nodes


def test_dagster_manifest_names_the_warehouse_database(definitions) -> None:
    """The relations Dagster shows are the warehouse's own (``tastebench.marts.…``), not those
    of the temporary file the manifest was parsed with."""
    import json

    nodes = json.loads(definitions.MANIFEST.read_text())["nodes"].values()
    assert {n["database"] for n in nodes if n.get("database")} == {"tastebench"}


def test_a_materialization_runs_in_process(definitions, fixture_warehouse, tmp_path, monkeypatch):
    settings = copy_warehouse(fixture_warehouse[0], tmp_path / "build")
    for key, value in settings.as_env().items():
        monkeypatch.setenv(key, value)
    bundle = tmp_path / "bundle2027"
    shutil.copytree(FIXTURE, bundle)
    add_year_batch(bundle, 2027)
    config = definitions.BuildConfig(nectar=str(bundle))
    job = definitions.defs.resolve_job_def("tastebench_build")  # the scheduled job itself
    result = job.execute_in_process(run_config=dg.RunConfig(ops={"tastebench_dbt": config}))
    assert result.success
    materialized = {
        e.event_specific_data.materialization.asset_key.path[-1]
        for e in result.all_events
        if e.event_type_value == "ASSET_MATERIALIZATION"
    }
    assert {"stg_nectar__ratings", "fct_panel_means"} <= materialized
    assert "dim_ml_fits" not in materialized, "an incremental run materializes what it rebuilt"
    evaluations = [
        e.event_specific_data
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION"
    ]
    checked = {(ev.asset_key.path[-1], ev.check_name) for ev in evaluations}
    assert ("fct_panel_means", "gx_suite") in checked
    assert ("dim_categories", "deidentification_guards") in checked
    assert all(ev.passed for ev in evaluations)
    con = duckdb.connect(str(settings.db_path), read_only=True)  # no handle left open in-process
    try:
        years = dict(
            con.execute(
                "select rating_year, count(*) from staging.stg_nectar__ratings group by 1"
            ).fetchall()
        )
    finally:
        con.close()
    assert years[2027] > 0


def test_the_sensor_fires_on_a_new_or_changed_bundle_only(definitions, tmp_path, monkeypatch):
    watch = tmp_path / "watch"
    watch.mkdir()
    monkeypatch.setenv(definitions.ENV_WATCH_DIR, str(watch))
    sensor = definitions.nectar_bundle_sensor

    def evaluate(cursor):
        context = dg.build_sensor_context(cursor=cursor)
        return sensor(context), context.cursor

    empty, _ = evaluate(None)
    assert isinstance(empty, dg.SkipReason)
    shutil.copytree(FIXTURE, watch / "nectar_2026")
    first, cursor = evaluate(None)
    assert isinstance(first, dg.RunRequest)
    assert first.run_key == cursor == definitions.bundle_hash(watch / "nectar_2026")
    assert first.tags["nectar_bundle"] == str(watch / "nectar_2026")
    unchanged, same = evaluate(cursor)
    assert isinstance(unchanged, dg.SkipReason) and same == cursor
    add_year_batch(watch / "nectar_2026", 2027)
    changed, new_cursor = evaluate(cursor)
    assert isinstance(changed, dg.RunRequest) and new_cursor != cursor
    assert changed.run_key == new_cursor
