"""The ten analyst questions of docs/analysts.md, run read-only against the default build, and
again while a build holds the lock on a copy of it, and the doc's query of the release's DuckDB
file against a real release (the SQL is read from the doc: one source)."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import duckdb
import pytest

from tests.integration.ops_helpers import copy_warehouse, hold_paused, start_build
from warehouse.config import REPO_ROOT
from warehouse.pipeline.lock import is_locked

pytestmark = pytest.mark.integration
DOC = REPO_ROOT / "docs" / "analysts.md"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "nectar_mini"


def analyst_queries() -> list[str]:
    return re.findall(r"```sql\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


def _run_all(db: Path) -> list[list[tuple]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [con.execute(q).fetchall() for q in analyst_queries()]
    finally:
        con.close()


def release_query() -> str:
    """The doc's example query of the release's DuckDB file (the `duckdb -c "..."` block)."""
    found = re.findall(r'tastebench_release\.duckdb -c "\n(.*?)"\n```', DOC.read_text(), re.S)
    assert len(found) == 1, "docs/analysts.md lost its release example"
    return found[0]


def test_the_doc_holds_ten_questions_each_with_one_query() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert len(re.findall(r"^## \d+\. ", text, re.M)) == 10
    assert len(analyst_queries()) == 10


def test_the_ten_queries_answer_on_the_default_build(default_warehouse) -> None:
    results = _run_all(default_warehouse[0].db_path)
    assert all(results), [i + 1 for i, r in enumerate(results) if not r]
    con = duckdb.connect(str(default_warehouse[0].db_path), read_only=True)
    n_categories = con.execute("select count(*) from marts.dim_categories").fetchone()[0]
    con.close()
    best_analog, winners = results[0], results[1]
    assert len(best_analog) == n_categories == len(winners)  # one answer per category
    assert len({r[0] for r in best_analog}) == n_categories


def test_the_ten_queries_answer_while_a_build_runs(default_warehouse, tmp_path: Path) -> None:
    settings = copy_warehouse(default_warehouse[0], tmp_path / "build")
    expected = _run_all(settings.db_path)
    proc = start_build(settings, "--nectar", str(FIXTURE), "--full-refresh")
    try:
        hold_paused(settings, proc, staging=True)
        assert is_locked(settings.db_path)
        assert _run_all(settings.db_path) == expected
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(60)


def test_the_release_example_returns_one_row_a_model(default_release, tmp_path: Path) -> None:
    """On a real release file (the session's release of the default warehouse), through DuckDB
    and through `tastebench sql -f`: one row per model (both interval conventions are released;
    the query keeps the default one)."""
    from typer.testing import CliRunner

    from warehouse.cli import app

    out, _ = default_release
    runner = CliRunner()
    public = out / "tastebench_release.duckdb"
    con = duckdb.connect(str(public), read_only=True)
    try:
        rows = con.execute(release_query()).fetchall()
        models = con.execute(
            "select count(distinct model_id) from metrics.model_metrics "
            "where metric = 'pairwise_accuracy' and scope = 'all'"
        ).fetchall()[0][0]
    finally:
        con.close()
    assert len(rows) == len({r[0] for r in rows}) == models > 1
    query = tmp_path / "query.sql"
    query.write_text(release_query())
    printed = runner.invoke(app, ["sql", "-f", str(query), "--db", str(public), "--format", "csv"])
    assert printed.exit_code == 0, (printed.output, printed.exception)
    assert len(printed.output.splitlines()) == len(rows) + 1
