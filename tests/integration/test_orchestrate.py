"""The Dagster definitions (the `orchestrate` extra): they load, a materialization of the dbt
assets runs in-process on the fixture bundle, and the sensor fires on a new or changed bundle
only."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import built_once
from warehouse.pipeline.dbt import NOT_INHERITED
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


def test_a_second_load_reads_the_manifest_back_without_parsing(definitions, monkeypatch) -> None:
    """What the webserver's code server and each `dagster … start` do on loading the module: the
    manifest the first load parsed is current (no project file is newer, it names the warehouse's
    database), so no dbt runs."""

    def no_parse(*args, **kwargs):
        raise AssertionError(f"dbt ran again: {args}")

    monkeypatch.setattr(definitions, "run_dbt", no_parse)
    assert definitions.project_manifest() == definitions.MANIFEST


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
    nodes = json.loads(definitions.MANIFEST.read_text())["nodes"].values()
    assert {n["database"] for n in nodes if n.get("database")} == {"tastebench"}


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


GRAPH_QUERY = """
{
  workspaceOrError { ... on Workspace { locationEntries {
    name loadStatus
    locationOrLoadError { __typename ... on PythonError { message } }
  } } }
  assetNodes {
    assetKey { path } isMaterializable isExecutable opNames
    assetChecksOrError { ... on AssetChecks { checks { name } } }
    metadataEntries { label ... on TextMetadataEntry { text } }
  }
  repositoriesOrError { ... on RepositoryConnection { nodes {
    schedules { name cronSchedule scheduleState { status } }
    sensors { name sensorState { status } }
  } } }
}
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _graphql(url: str, query: str) -> dict:
    request = urllib.request.Request(
        url,
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        body = json.loads(response.read())
    assert "errors" not in body, body["errors"]
    return body["data"]


def _wait_for_location(url: str, proc, deadline_s: float) -> dict:
    """Poll the webserver until its code location is loaded (bounded; not a timing check)."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        assert proc.poll() is None, "dagster-webserver exited before serving"
        try:
            data = _graphql(url, GRAPH_QUERY)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
            continue
        entries = data["workspaceOrError"]["locationEntries"]
        if entries and all(e["loadStatus"] == "LOADED" for e in entries):
            errors = [e["locationOrLoadError"] for e in entries]
            assert all(e["__typename"] == "RepositoryLocation" for e in errors), errors
            return data
        time.sleep(0.5)
    raise AssertionError(f"dagster-webserver did not load the code location in {deadline_s} s")


@pytest.fixture(scope="module")
def webserver(definitions, tmp_path_factory) -> dict:
    """What Dagster's own webserver served, run once and kept between runs while nothing it
    depends on changed (``built_once``): see :func:`_serve`."""
    return built_once(tmp_path_factory, "webserver", _serve)


def _serve(root: Path) -> dict:
    """`dagster-webserver -m warehouse.orchestrate.definitions` on 127.0.0.1 (a free port, a
    temporary DAGSTER_HOME), as docs/operations.md starts it: its asset graph once the code
    location loaded; then the schedule and the sensor started with the commands the docs give
    (state kept in DAGSTER_HOME) and the graph again; stopped by its process group."""
    home = root / "dagster_home"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    port = _free_port()
    exe = Path(sys.executable).with_name("dagster-webserver")
    cmd = [str(exe), "-m", "warehouse.orchestrate.definitions", "-h", "127.0.0.1", "-p", str(port)]
    # Dagster's processes are not measured by coverage (NOT_INHERITED): they run Dagster's code;
    # the module they load is imported, and its sensor run, in-process here
    env = {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}
    env["DAGSTER_HOME"] = str(home)
    url = f"http://127.0.0.1:{port}/graphql"
    with (root / "webserver.log").open("w") as log:
        proc = subprocess.Popen(
            cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            served = _wait_for_location(url, proc, deadline_s=300)
            dagster = Path(sys.executable).with_name("dagster")
            started = []
            for kind, name in (
                ("schedule", "tastebench_daily"),
                ("sensor", "nectar_bundle_sensor"),
            ):
                start = [
                    str(dagster),
                    kind,
                    "start",
                    name,
                    "-m",
                    "warehouse.orchestrate.definitions",
                ]
                done = subprocess.run(start, env=env, capture_output=True, text=True, timeout=600)
                started.append((kind, done.returncode, done.stderr))
            after = _graphql(url, GRAPH_QUERY)
        finally:
            _stop_group(proc)
    return {"served": served, "started": started, "after": after}


def _stop_group(proc: subprocess.Popen) -> None:
    """SIGTERM the webserver's process group (SIGKILL if it lingers), then check that no process
    of the group (the webserver, its code server) is left."""
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    for _ in range(30):
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(1)
    os.killpg(proc.pid, signal.SIGKILL)
    raise AssertionError(f"processes of the webserver's group {proc.pid} outlived it")


def test_the_webserver_serves_the_asset_graph_with_checks_on_the_dbt_assets(
    definitions, webserver
) -> None:
    """Issue #21 item 2: Dagster's own webserver loads the definitions; its GraphQL asset graph
    has only materializable assets, the gate's checks on the real dbt assets (full keys), the
    warehouse's database in the relation names, and the schedule and sensor (stopped)."""
    data = webserver["served"]
    nodes = {tuple(n["assetKey"]["path"]): n for n in data["assetNodes"]}
    assert nodes and all(n["isMaterializable"] and n["isExecutable"] for n in nodes.values())
    assert all(n["opNames"] == ["tastebench_dbt"] for n in nodes.values())  # no stubs
    checks = {
        (path, c["name"])
        for path, n in nodes.items()
        for c in n["assetChecksOrError"].get("checks", [])
    }
    expected = {(tuple(c.asset_key.path), c.name) for c in definitions.check_specs()}
    assert checks == expected and len(checks) == 31
    assert (("marts", "fct_panel_means"), "gx_suite") in checks
    assert (("marts", "dim_categories"), "deidentification_guards") in checks
    relation = {
        e["label"]: e.get("text") for e in nodes[("marts", "dim_products")]["metadataEntries"]
    }["dagster/table_name"]
    assert relation == "tastebench.marts.dim_products"
    (repo,) = data["repositoriesOrError"]["nodes"]
    schedules = {s["name"]: s for s in repo["schedules"]}
    assert schedules["tastebench_daily"]["cronSchedule"] == "0 3 * * *"
    assert schedules["tastebench_daily"]["scheduleState"]["status"] == "STOPPED"  # docs say so
    sensors = {s["name"]: s["sensorState"]["status"] for s in repo["sensors"]}
    assert sensors == {"nectar_bundle_sensor": "STOPPED"}
    # the commands docs/operations.md gives start them (state kept in DAGSTER_HOME)
    for kind, returncode, stderr in webserver["started"]:
        assert returncode == 0, (kind, stderr)
    (repo,) = webserver["after"]["repositoriesOrError"]["nodes"]
    assert [s["scheduleState"]["status"] for s in repo["schedules"]] == ["RUNNING"]
    assert [s["sensorState"]["status"] for s in repo["sensors"]] == ["RUNNING"]


def test_dbt_docs_name_the_warehouse_database(fixture_warehouse, fixture_dbt_docs) -> None:
    """`tastebench docs` documents a copy of the warehouse named like it: the page shows the
    warehouse's database (``tastebench.marts.…``), not the copy's."""
    settings = fixture_warehouse[0]
    page = fixture_dbt_docs[0].read_text(encoding="utf-8")
    databases = set(re.findall(r'"database": ?"([^"]*)"', page))
    assert databases == {settings.db_path.name.split(".")[0]} == {"tastebench"}


@pytest.fixture(scope="module")
def materialization(operations) -> dict:
    """The scheduled job run in-process, as the build after a killed one in test_operations.py
    (run once there and kept between runs, ``built_once``): on a copy of the fixture warehouse
    that a 2027 batch changed, back to the fixture bundle; the events the test reads, as plain
    data (tests/integration/ops_helpers.py: ``run_build_job``)."""
    return operations["killed"]["job"]


def test_a_materialization_runs_in_process(definitions, materialization, operations) -> None:
    assert materialization["success"]
    materialized = materialization["materialized"]
    assert {"stg_nectar__ratings", "fct_panel_means"} <= materialized
    assert "nectar_consolidated_sensory_rating" in materialized  # the raw table it reloaded
    assert "dim_ml_fits" not in materialized, "an incremental run materializes what it rebuilt"
    evaluations = materialization["checks"]
    checked = {(asset, check) for asset, check, _ in evaluations}
    assert ("fct_panel_means", "gx_suite") in checked
    assert ("dim_categories", "deidentification_guards") in checked
    assert len(evaluations) == len(definitions.check_specs()) == 31  # rebuilt or not
    assert all(passed for *_, passed in evaluations)
    # it published the bundle it was given: the fixture's years, the 2027 batch gone
    assert materialization["years"] == dict(operations["contended"]["before"])
    assert 2027 not in materialization["years"]
