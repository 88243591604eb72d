"""Issue #20 item 2 and #21 item 4: `tastebench sql` (and every connection the CLI opens for a
user) is truly read-only, and prints what an analyst needs. Each statement that would touch the
host is refused with one line saying what and why, through the helper and through the CLI, and
leaves the file system as it was; ordinary SELECTs work, against a real DuckDB file."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from rich.console import Console
from typer.testing import CliRunner

from warehouse.cli import app
from warehouse.errors import WarehouseError
from warehouse.evaluate.query import print_query
from warehouse.sources.readonly import connect_read_only, refusal

N_ROWS = 189


@pytest.fixture(scope="module")
def tiny_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("ro") / "tiny.duckdb"
    con = duckdb.connect(str(path))
    con.execute(
        "create schema marts; "
        "create table marts.dim_categories as select 'Milk' as category, 1 as n; "
        f"create table marts.many as select range as i from range({N_ROWS})"
    )
    con.close()
    return path


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """Files on the host a query must not reach: a secret to read, a file to overwrite."""
    (tmp_path / "secret.txt").write_text("TOPSECRET\n")
    (tmp_path / "victim.csv").write_text("untouched\n")
    return tmp_path


# statement kind -> (SQL with {h} = the host folder, what the refusal names)
REFUSED = {
    "copy_to": ("COPY (select * from marts.dim_categories) TO '{h}/victim.csv'", "COPY"),
    "copy_new": ("COPY marts.dim_categories TO '{h}/new.csv'", "COPY"),
    "export": ("EXPORT DATABASE '{h}/dump'", "EXPORT DATABASE"),
    "read_text": ("select * from read_text('{h}/secret.txt')", "reading the file"),
    "read_csv_auto": ("select * from read_csv_auto('{h}/secret.txt')", "reading the file"),
    "read_parquet": ("select * from read_parquet('{h}/x.parquet')", "reading the file"),
    "glob": ("select * from glob('{h}/*')", "reading the file"),
    "attach": ("ATTACH '{h}/other.duckdb' AS other", "ATTACH"),
    "install": ("INSTALL httpfs", "INSTALL"),
    "load": ("LOAD httpfs", "LOAD"),
    "set": ("SET threads = 1", "SET threads"),
    "set_access": ("SET enable_external_access = true", "SET enable_external_access"),
    "pragma": ("PRAGMA threads = 1", "PRAGMA threads"),
    "reset": ("RESET lock_configuration", "RESET lock_configuration"),
}  # fmt: skip


def _assert_host_untouched(host: Path) -> None:
    assert sorted(p.name for p in host.iterdir()) == ["secret.txt", "victim.csv"]
    assert (host / "victim.csv").read_text() == "untouched\n"


def _assert_one_refusal_line(line: str, named: str) -> None:
    assert line.startswith("tastebench sql is read-only: "), line
    assert named in line and "was refused (" in line and "Fix:" in line, line
    assert "\n" not in line and "Traceback" not in line


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_the_helper_refuses_each_statement_kind(kind, tiny_db, host) -> None:
    sql, named = REFUSED[kind]
    sql = sql.format(h=host)
    con = connect_read_only(tiny_db)
    try:
        with pytest.raises(duckdb.Error) as caught:
            con.execute(sql).fetchall()
        assert con.execute("select count(*) from marts.many").fetchall()[0][0] == N_ROWS
    finally:
        con.close()
    _assert_one_refusal_line(refusal(caught.value, sql), named)
    _assert_host_untouched(host)


@pytest.mark.parametrize("kind", sorted(REFUSED))
def test_the_cli_refuses_each_statement_kind_in_one_line(kind, tiny_db, host) -> None:
    sql, named = REFUSED[kind]
    result = CliRunner().invoke(app, ["sql", sql.format(h=host), "--db", str(tiny_db)])
    assert isinstance(result.exception, WarehouseError), result.output
    _assert_one_refusal_line(str(result.exception), named)
    assert "TOPSECRET" not in result.output
    _assert_host_untouched(host)


def test_ordinary_selects_and_harmless_session_statements_work(tiny_db) -> None:
    con = connect_read_only(tiny_db)
    try:
        assert con.sql("select category, n from marts.dim_categories").fetchall() == [("Milk", 1)]
        con.sql("set search_path = 'marts'")  # a session's own search path is no host access
        assert con.execute("select count(*) from many").fetchall()[0][0] == N_ROWS
        with pytest.raises(duckdb.Error, match="read-only"):
            con.sql("create table marts.x as select 1")
    finally:
        con.close()
    assert refusal(duckdb.CatalogException("Catalog Error: no table"), "select 1") is None


def test_a_missing_warehouse_is_named(tmp_path: Path) -> None:
    with pytest.raises(WarehouseError, match="no warehouse at .*none.duckdb"):
        connect_read_only(tmp_path / "none.duckdb")


def test_duckdbs_whole_message_is_kept(tiny_db) -> None:
    result = CliRunner().invoke(app, ["sql", "select * from dim_categorie", "--db", str(tiny_db)])
    message = str(result.exception)
    assert isinstance(result.exception, WarehouseError)
    assert 'Did you mean "marts.dim_categories"?' in message and "Fix:" in message
    bad = CliRunner().invoke(app, ["sql", "select nope from marts.many", "--db", str(tiny_db)])
    assert "Candidate bindings" in str(bad.exception)


def _cli(tiny_db: Path, *args: str, stdin: str | None = None) -> str:
    result = CliRunner().invoke(app, ["sql", *args, "--db", str(tiny_db)], input=stdin)
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def test_piped_output_prints_every_row_in_every_format(tiny_db) -> None:
    query = "select i from marts.many order by i"
    table = _cli(tiny_db, query)  # CliRunner's stdout is not a terminal: piped
    assert f"│ {N_ROWS - 1} " in table and "showing" not in table
    assert _cli(tiny_db, query, "--format", "csv").splitlines() == [
        "i",
        *map(str, range(N_ROWS)),
    ]
    assert len(json.loads(_cli(tiny_db, query, "--format", "json"))) == N_ROWS
    assert len(_cli(tiny_db, query, "--format", "markdown").splitlines()) == N_ROWS + 2
    assert len(_cli(tiny_db, query, "--format", "csv", "--limit", "7").splitlines()) == 8


def test_a_terminal_table_says_how_many_rows_it_shows(tiny_db) -> None:
    console = Console(record=True, width=100)
    print_query(tiny_db, "select * from marts.many", "table", None, console, terminal=True)
    text = console.export_text()
    assert f"showing 50 of {N_ROWS} rows (--limit N or --format csv for all)" in text
    assert "│ 49 " in text and "│ 50 " not in text
    console = Console(record=True, width=100)
    print_query(tiny_db, "select * from marts.many", "table", 500, console, terminal=True)
    assert "showing" not in console.export_text()


def test_sql_from_a_file_or_standard_input(tiny_db, tmp_path: Path) -> None:
    query = tmp_path / "query.sql"
    query.write_text("-- how many?\nselect count(*) as n\nfrom marts.many;\n")
    assert _cli(tiny_db, "-f", str(query), "--format", "csv") == f"n\n{N_ROWS}\n"
    piped = _cli(tiny_db, "-f", "-", "--format", "csv", stdin=query.read_text())
    assert piped == f"n\n{N_ROWS}\n"
    both = CliRunner().invoke(app, ["sql", "select 1", "-f", str(query), "--db", str(tiny_db)])
    assert "not both" in str(both.exception)
    (tmp_path / "empty.sql").write_text("-- nothing yet\n")
    empty = CliRunner().invoke(
        app, ["sql", "-f", str(tmp_path / "empty.sql"), "--db", str(tiny_db)]
    )
    assert "no SQL statement to run" in str(empty.exception)
    missing = CliRunner().invoke(app, ["sql", "-f", str(tmp_path / "no.sql")])
    assert f"cannot read the SQL file {tmp_path / 'no.sql'}" in str(missing.exception)


def test_a_planted_view_over_a_host_file_is_refused_unread(tmp_path: Path, host) -> None:
    """A release's DuckDB file is untrusted input to `tastebench verify` and the guards: a view
    that reads a host file is refused with its name, and the file's content never appears."""
    from warehouse.quality.guards import GuardError
    from warehouse.quality.guards.folders import read_db_file
    from warehouse.release.public_db import public_db_problems
    from warehouse.release.tables import PUBLIC_DB

    release = tmp_path / "release"
    release.mkdir()
    con = duckdb.connect(str(release / PUBLIC_DB))
    con.execute(
        "create schema benchmark; create table benchmark.products as select 1 as public_code; "
        f"create view benchmark.leak as select * from read_text('{host}/secret.txt')"
    )
    con.close()
    with pytest.raises(GuardError, match="benchmark.leak reads outside its DuckDB file") as caught:
        read_db_file(release / PUBLIC_DB, PUBLIC_DB)
    assert "TOPSECRET" not in str(caught.value)
    problems = public_db_problems(release, [])
    assert any("view benchmark.leak is not a released table" in p for p in problems), problems


def test_two_read_only_connections_in_one_process(tmp_path: Path) -> None:
    """A second connection to the same file shares the first one's locked instance: it opens, is
    just as read-only, and a plain read-only connection after both are closed still opens."""
    db = tmp_path / "two.duckdb"
    duckdb.connect(str(db)).execute("create table t as select 1 as a").close()
    first = connect_read_only(db)
    second = connect_read_only(db)
    assert second.execute("select a from t").fetchall() == [(1,)]
    with pytest.raises(duckdb.Error):
        second.execute("SET enable_external_access = true")
    first.close()
    second.close()
    duckdb.connect(str(db), read_only=True).close()
