"""A build names what went wrong: a full disk is a resource failure (not a bug) and keeps the
previous warehouse byte for byte; a failed dbt node brings its own error line; the summary counts
cache entries recomputed after a failed checksum. Failures are injected, no disk is filled."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from warehouse.config import ENV_DB, build_record_path, environment, load_settings
from warehouse.errors import ResourceError, resource_error
from warehouse.pipeline import dbt as dbt_mod
from warehouse.pipeline import plan as planning
from warehouse.pipeline import run as build_mod
from warehouse.pipeline import state
from warehouse.sources import load, nectar


@pytest.fixture
def settings(tmp_path: Path):
    settings = load_settings(build_dir=tmp_path / "build")
    settings.build_dir.mkdir(parents=True)
    con = duckdb.connect(str(settings.db_path))
    con.execute("create schema marts; create table marts.t as select 42 as answer")
    con.close()
    return settings


def _stub_the_build_up_to_the_raw_load(monkeypatch, tmp_path: Path, failure: Exception) -> None:
    bundle = tmp_path / "bundle"
    bundle.mkdir()

    def full_disk(con, tables):
        raise failure

    monkeypatch.setattr(build_mod, "_nectar_bundle", lambda *a: bundle)
    monkeypatch.setattr(nectar, "detect_origin", lambda b: "simulation")
    monkeypatch.setattr(nectar, "simulation_scale", lambda b: 1)
    monkeypatch.setattr(state, "fingerprint", lambda *a: None)
    monkeypatch.setattr(state, "read_state", lambda p: None)
    monkeypatch.setattr(planning, "plan_build", lambda *a, **k: planning.Plan("full", ["a test"]))
    monkeypatch.setattr(planning, "describe", lambda plan, log: None)
    monkeypatch.setattr(load, "read_sources", lambda *a, **k: {})
    monkeypatch.setattr(load, "write_raw", full_disk)


@pytest.mark.parametrize(
    "failure",
    [
        duckdb.IOException('IO Error: Could not write file "x.duckdb": No space left on device'),
        duckdb.TransactionException("Failed to commit: No space left on device"),
        OSError(errno.ENOSPC, "No space left on device"),
    ],
    ids=["duckdb-io", "duckdb-commit", "oserror"],
)
def test_a_full_disk_in_the_raw_load_is_named_and_keeps_the_warehouse(
    settings, tmp_path, monkeypatch, failure
) -> None:
    before = settings.db_path.read_bytes()
    _stub_the_build_up_to_the_raw_load(monkeypatch, tmp_path, failure)
    with pytest.raises(ResourceError) as info:
        build_mod.build(settings, log=lambda m: None)
    message = str(info.value)
    staging = settings.db_path.with_name(f".{settings.db_path.name}.building")
    assert message.startswith(f"no space left on device while writing {staging}")
    assert "free space or point TASTEBENCH_BUILD_DIR elsewhere" in message
    assert "bug" not in message
    assert settings.db_path.read_bytes() == before  # the previous warehouse, byte for byte
    assert not staging.exists()
    record = json.loads(build_record_path(settings.db_path).read_text())
    assert record["result"] == "failed" and "ResourceError" in record["error"]


def test_other_errors_are_not_resource_errors() -> None:
    assert resource_error(ValueError("bad value")) is None
    assert resource_error(OSError(errno.ENOENT, "No such file")) is None
    chained = RuntimeError("wrapped")
    chained.__cause__ = OSError(errno.ENOSPC, "No space left on device", "/tmp/f")
    assert "while writing /tmp/f" in str(resource_error(chained))
    assert str(resource_error(MemoryError())).startswith("out of memory")


def test_the_cli_names_a_full_disk_instead_of_calling_it_a_bug() -> None:
    code = (
        "import errno, sys; import warehouse.cli as c\n"
        "def boom():\n"
        "    raise OSError(errno.ENOSPC, 'No space left on device', '/data/x.parquet')\n"
        "c.app.registered_commands.clear(); c.app.command('boom')(boom)\n"
        "sys.argv = ['tastebench', 'boom']; c.main()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "no space left on device while writing /data/x.parquet" in proc.stderr
    assert "bug in tastebench" not in proc.stderr


def _run_results(target: Path, message: str) -> None:
    (target / "target").mkdir(parents=True)
    results = [
        {"unique_id": "model.tastebench.fct_compound_embeddings", "status": "error",
         "message": message},
        {"unique_id": "test.tastebench.unique_dim_products_key.abc", "status": "fail",
         "message": "Got 3 results, configured to fail if != 0"},
        {"unique_id": "model.tastebench.dim_products", "status": "success", "message": "OK"},
    ]  # fmt: skip
    (target / "target" / "run_results.json").write_text(json.dumps({"results": results}))


def test_a_failed_dbt_node_brings_its_own_error_line(tmp_path: Path) -> None:
    _run_results(tmp_path, "Runtime Error in model x\n  Python model failed:\n  boom: bad input\n")
    err = dbt_mod.dbt_failure("build", tmp_path, tmp_path / "w.duckdb")
    assert isinstance(err, dbt_mod.BuildError)
    assert "failed fct_compound_embeddings (error): boom: bad input" in str(err)
    assert "unique_dim_products_key (fail): Got 3 results" in str(err)
    assert "dim_products (success)" not in str(err)


def test_a_failed_dbt_unit_test_is_named_with_its_model(tmp_path: Path) -> None:
    (tmp_path / "target").mkdir(parents=True)
    diff = (  # dbt's message for a unit test whose rows differ: coloured, a table after a headline
        "\n\n\x1b[32mactual\x1b[0m differs from \x1b[31mexpected\x1b[0m:\n\n"
        "\x1b[0;1m@@\x1b[0m,product_key,panel_mean\r\n\u2192,Bacon:1,6.0\u21924.75\n"
    )
    results = [
        {"unique_id": "unit_test.tastebench.fct_panel_means.panel_means_use_benchmark_years",
         "status": "fail", "message": diff},
        {"unique_id": "unit_test.tastebench.dim_blocks.blocks_count", "status": "error",
         "message": "Runtime Error\n  Binder Error: Referenced column \"category\" not found\n"},
    ]  # fmt: skip
    (tmp_path / "target" / "run_results.json").write_text(json.dumps({"results": results}))
    err = str(dbt_mod.dbt_failure("build", tmp_path, tmp_path / "w.duckdb"))
    assert (
        "fct_panel_means::panel_means_use_benchmark_years (fail): actual differs from expected"
        in err
    )
    assert 'dim_blocks::blocks_count (error): Binder Error: Referenced column "category"' in err
    assert "\x1b" not in err and "Bacon:1" not in err  # no colour codes; the table stays in dbt.log


def test_a_full_disk_inside_dbt_is_a_resource_error(tmp_path: Path) -> None:
    line = 'IO Error: Could not write file "/b/.w.duckdb.building": No space left on device'
    _run_results(tmp_path, f"Runtime Error in model fct_compound_embeddings\n  {line}")
    err = dbt_mod.dbt_failure("build", tmp_path, tmp_path / "w.duckdb")
    assert isinstance(err, ResourceError)
    assert str(err).startswith(f"no space left on device while writing {tmp_path / 'w.duckdb'}")
    assert f"fct_compound_embeddings (error): {line}" in str(err)


def test_the_build_summary_counts_recomputed_cache_entries(settings, monkeypatch) -> None:
    from rich.console import Console

    from warehouse.files import record_recomputed
    from warehouse.orchestrate.status import render_build

    def a_build_that_meets_a_corrupted_fit(s, *args):
        record_recomputed(s.fits_dir / "ab" / "entry.npz", "sha256 differs", s.fits_dir)
        return build_mod.BuildResult(s.db_path, Path("bundle"), "test", {}, mode="full")

    monkeypatch.setattr(build_mod, "_build_locked", a_build_that_meets_a_corrupted_fit)
    monkeypatch.setattr("warehouse.orchestrate.status._print_human_baseline", lambda *a: None)
    result = build_mod.build(settings, log=lambda m: None)
    entry = str(settings.fits_dir / "ab" / "entry.npz")
    assert result.recomputed == [entry]
    record = json.loads(build_record_path(settings.db_path).read_text())
    assert record["recomputed_cache_entries"] == [entry]
    console = Console(record=True, width=300)
    render_build(console, result)
    assert (
        f"1 entry failed its checksum and was recomputed (first: {entry}" in console.export_text()
    )
    again = build_mod.build(settings, log=lambda m: None)  # a line of an earlier build is not
    assert again.recomputed == [entry]  # ... counted twice: this build appended its own


def test_a_full_disk_inside_dbt_keeps_the_nodes_line_through_the_build(
    settings, tmp_path, monkeypatch
) -> None:
    """The build does not re-word an error that is already named (the dbt node's line stays)."""
    _stub_the_build_up_to_the_raw_load(monkeypatch, tmp_path, failure=None)
    monkeypatch.setattr(load, "write_raw", lambda con, tables: {})
    line = "IO Error: Could not write file: No space left on device"

    def dbt(args, s, db_path):
        _run_results(tmp_path / "dbt", f"Runtime Error\n  {line}")
        raise dbt_mod.dbt_failure(args[0], tmp_path / "dbt", db_path)

    with pytest.raises(ResourceError, match=f"fct_compound_embeddings \\(error\\): {line}"):
        build_mod.build(settings, log=lambda m: None, dbt_runner=dbt)


def test_a_new_build_folder_starts_dbt_from_the_last_parse_of_its_kind(
    tmp_path: Path, monkeypatch
) -> None:
    """dbt's partial-parse file is kept in the fit store per database file name and vars: a new
    folder's first dbt command starts from it (dbt checks it and re-parses what changed); another
    database name or other vars start from nothing (dbt-duckdb names the database after the
    file, which dbt's own check does not see)."""
    settings = load_settings(build_dir=tmp_path / "build", fits_dir=tmp_path / "fits")
    seen: list[bytes | None] = []

    def fake_dbt(cmd, **kwargs):
        target = Path(cmd[cmd.index("--target-path") + 1])
        parsed = target / "partial_parse.msgpack"
        seen.append(parsed.read_bytes() if parsed.exists() else None)
        target.mkdir(parents=True, exist_ok=True)
        parsed.write_bytes(f"parse {len(seen)}".encode())
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(subprocess, "run", fake_dbt)
    db = tmp_path / "tastebench.duckdb"
    dbt_mod.run_dbt(["parse"], settings, db, tmp_path / "a")
    dbt_mod.run_dbt(["parse"], settings, db, tmp_path / "b")
    dbt_mod.run_dbt(["parse"], settings, tmp_path / "other.duckdb", tmp_path / "c")
    dbt_mod.run_dbt(["build", "--vars", '{"x": 1}'], settings, db, tmp_path / "d")
    dbt_mod.run_dbt(["parse"], settings, db, tmp_path / "e")
    assert seen == [None, b"parse 1", None, None, b"parse 2"]


def test_a_dbt_child_gets_the_settings_but_not_line_coverage(tmp_path: Path, monkeypatch) -> None:
    """The dbt child gets the build's settings and the profile's file, and not the variables
    that start coverage in every Python child of a measured process (dbt's code is not ours)."""
    settings = load_settings(build_dir=tmp_path / "build", fits_dir=tmp_path / "fits")
    for name in dbt_mod.NOT_INHERITED:
        monkeypatch.setenv(name, "measure me")
    monkeypatch.setenv("SOMETHING_ELSE", "")
    envs: list[dict] = []

    def fake_dbt(cmd, env, **kwargs):
        envs.append(env)
        return subprocess.CompletedProcess(cmd, 0)

    monkeypatch.setattr(subprocess, "run", fake_dbt)
    dbt_mod.run_dbt(["parse"], settings, tmp_path / "tastebench.duckdb", tmp_path / "a")
    (env,) = envs
    assert not set(dbt_mod.NOT_INHERITED) & set(env)
    assert env[ENV_DB] == "tastebench.duckdb" and env["SOMETHING_ELSE"] == ""
    given = {k: v for k, v in settings.as_env().items() if k != ENV_DB}
    assert given.items() <= env.items()
    with environment(dbt_mod.child_env(settings, "x.duckdb")):  # the Dagster op's way
        assert not set(dbt_mod.NOT_INHERITED) & set(os.environ) and os.environ[ENV_DB] == "x.duckdb"
    assert {os.environ[name] for name in dbt_mod.NOT_INHERITED} == {"measure me"}
