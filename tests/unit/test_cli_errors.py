"""Every `tastebench` subcommand meets broken input as a person would: one clear paragraph on
stderr (what is wrong, where, the fix), a non-zero exit, and never a Python traceback. Each command
runs in a real subprocess, so what is asserted is exactly what a user sees."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

TASTEBENCH = Path(sys.executable).with_name("tastebench")


@pytest.fixture(scope="module")
def tiny_db(tmp_path_factory) -> Path:
    """A stand-in warehouse file with one table: enough for a query to fail for its own reason."""
    path = tmp_path_factory.mktemp("cli") / "tiny.duckdb"
    con = duckdb.connect(str(path))
    con.execute("create schema marts; create table marts.dim_categories as select 'Milk' as c")
    con.close()
    return path


@pytest.fixture(scope="module")
def broken_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli") / "predictions.csv"
    path.write_text("category,product_code\nMilk,1\n")
    path.with_name("header_only.csv").write_text("category,product_code,predicted_score\n")
    return path


def run(args: list[str], tmp_path: Path, mirror: Path) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "TASTEBENCH_BUILD_DIR": str(tmp_path / "build"),
        "TASTEBENCH_DATA_MIRROR": str(mirror),
        "COLUMNS": "80",
    }
    env.pop("TASTEBENCH_DEBUG", None)
    return subprocess.run(
        [str(TASTEBENCH), *args], capture_output=True, text=True, env=env, timeout=120
    )


CASES = [
    ("build", ["build", "--nectar", "{tmp}/none", "--db", "{tmp}/w.duckdb"], "no NECTAR bundle"),
    ("build-wait", ["build", "--wait", "-1", "--db", "{tmp}/w.duckdb"], "--wait must be zero"),
    ("simulate", ["simulate", "{csv}"], "not a folder"),
    ("sql-bad-query", ["sql", "select nope from marts.dim_categories", "--db", "{db}"], "failed"),
    ("sql-no-warehouse", ["sql", "select 1", "--db", "{tmp}/none.duckdb"], "no warehouse"),
    ("sql-format", ["sql", "select 1", "--db", "{db}", "--format", "xml"], "unknown --format"),
    ("evaluate-missing", ["evaluate", "{tmp}/none.csv"], "file not found"),
    ("evaluate-malformed", ["evaluate", "{csv}"], "missing column 'predicted_score'"),
    ("evaluate-header-only", ["evaluate", "{header}"], "header_only.csv, line 2: no data rows"),
    ("evaluate-directory", ["evaluate", "{tmp}"], "a directory, not a file"),
    ("evaluate-json-dir", ["evaluate", "{csv}", "--json", "{tmp}"], "is a directory, not a file"),
    ("report", ["report", "--db", "{tmp}/none.duckdb", "--out", "{tmp}/r.html"], "no warehouse"),
    ("quality", ["quality", "--db", "{tmp}/none.duckdb"], "no warehouse"),
    ("release", ["release", "{tmp}/rel", "--db", "{tmp}/none.duckdb"], "no warehouse"),
    ("verify", ["verify", "{tmp}/no_release"], "not a folder"),
    ("competition", ["competition", "{tmp}/comp", "--db", "{tmp}/none.duckdb"], "no warehouse"),
    ("docs", ["docs", "--db", "{tmp}/none.duckdb"], "no warehouse"),
    ("status", ["status", "--db", "{tmp}/none.duckdb"], "nothing to report"),
    ("snapshot", ["snapshot", "--db", "{db}", "--compare", "{tmp}/none.json"], "no snapshot"),
    ("registry-verify", ["registry", "verify", "--mirror", "{tmp}/none"], "missing from"),
    ("train", ["train", "molecular", "--config", "nope"], "unknown --config"),
]  # fmt: skip


@pytest.mark.parametrize(("args", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_broken_input_gets_one_clear_paragraph(
    args, expected, tmp_path, tiny_db, broken_csv, data_mirror
):
    header = broken_csv.with_name("header_only.csv")
    argv = [a.format(tmp=tmp_path, db=tiny_db, csv=broken_csv, header=header) for a in args]
    proc = run(argv, tmp_path, data_mirror)
    assert proc.returncode != 0, proc.stdout
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.stderr.startswith("error: "), proc.stderr
    assert expected in proc.stderr
    assert "Fix:" in proc.stderr or "unknown --format" in proc.stderr
    if argv[0] == "sql" and "failed" in expected:  # DuckDB's whole message, candidates included
        assert 'Candidate bindings: "c"' in proc.stderr
        return
    assert len(proc.stderr.strip().splitlines()) == 1  # one paragraph, on one line when piped


def test_every_subcommand_is_covered() -> None:
    """A new subcommand must get a broken-input case here."""
    from warehouse.cli import app, registry_app, train_app

    commands = {c.name or c.callback.__name__ for c in app.registered_commands}
    groups = {g.name for g in app.registered_groups}
    covered = {c[1][0] for c in CASES}
    assert commands | groups <= covered, sorted(commands | groups - covered)
    assert registry_app.registered_commands and train_app.registered_commands


def test_an_unexpected_error_is_one_paragraph_too(tmp_path, tiny_db) -> None:
    """A bug (not a user error) still prints no traceback unless TASTEBENCH_DEBUG=1 asks for one."""
    code = (
        "import sys; import warehouse.cli as c; "
        "c.app.registered_commands.clear(); "
        "c.app.command('boom')(lambda: 1 / 0); sys.argv = ['tastebench', 'boom']; c.main()"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "unexpected ZeroDivisionError" in proc.stderr and "TASTEBENCH_DEBUG=1" in proc.stderr
    debug = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "TASTEBENCH_DEBUG": "1"},
    )
    assert "Traceback" in debug.stderr


def test_a_missing_dbt_project_names_the_setting(tmp_path) -> None:
    """A regular (non-editable) install has no dbt project beside the package: the commands that
    need it say where they looked and which setting fixes it; help still works."""
    env = {**os.environ, "TASTEBENCH_PROJECT_DIR": str(tmp_path), "COLUMNS": "80"}
    env["TASTEBENCH_BUILD_DIR"] = str(tmp_path / "build")
    for args in (["build"], ["docs"]):
        proc = subprocess.run([str(TASTEBENCH), *args], capture_output=True, text=True, env=env)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert f"TASTEBENCH_PROJECT_DIR names {tmp_path}" in proc.stderr
        assert "Fix: set TASTEBENCH_PROJECT_DIR" in proc.stderr
    assert not (tmp_path / "build").exists()  # refused before anything ran
    help_ = subprocess.run([str(TASTEBENCH), "build", "--help"], capture_output=True, env=env)
    assert help_.returncode == 0
