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
    keys = {k.path[-1] for k in definitions.tastebench_dbt_assets.keys}
    assert {"stg_nectar__ratings", "fct_panel_means", "agg_model_metrics", "categories"} <= keys
    checks = {(c.asset_key.path[-1], c.name) for c in definitions.check_specs()}
    assert ("stg_nectar__ratings", "gx_suite") in checks
    assert ("nectar_consolidated_sensory_rating", "gx_suite") in checks  # a raw source's suite
    assert any(name == "deidentification_guards" for _, name in checks)


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
