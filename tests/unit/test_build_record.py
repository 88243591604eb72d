"""Issue #21 item 3: the build record lives beside each warehouse file (like its lock), so
`status --db A` describes A whatever was built last and wherever; a file without a record says so;
the data mirror a later command reuses is the one that built the warehouse it reads."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest
from typer.testing import CliRunner

from warehouse.cli import app
from warehouse.config import BUILD_RECORD, build_record_path, load_settings, read_build_record
from warehouse.pipeline.record import write_build_record


def _warehouse(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path))
    con.execute("create schema marts; create table marts.dim_categories as select 'Milk' as c")
    con.close()
    return path


def _result(db: Path, origin: str) -> SimpleNamespace:
    return SimpleNamespace(
        nectar_bundle=db.parent / "bundle", data_origin=origin, raw_counts={"ratings": 1},
        timings={"dbt": 1.0}, mode="full", reasons=[f"built {db.name}"], reloaded_tables=[],
        selection=None, rebuilt_models=["dim_categories"], quality=None, recomputed=[],
    )  # fmt: skip


@pytest.fixture
def two(tmp_path: Path, monkeypatch) -> dict[str, Path]:
    """Warehouses A and B built with one build folder (the repo's build/ stand-in), B last; C a
    file no build wrote."""
    build_dir = tmp_path / "build"
    monkeypatch.setenv("TASTEBENCH_BUILD_DIR", str(build_dir))
    paths = {k: _warehouse(tmp_path / k.lower() / f"{k}.duckdb") for k in "ABC"}
    for key, mirror in (("A", tmp_path / "mirror_a"), ("B", tmp_path / "mirror_b")):
        mirror.mkdir()
        settings = load_settings(db_path=paths[key], mirror=mirror)
        write_build_record(settings, _result(paths[key], f"origin_{key}"), duration_s=1.0)
    return paths | {"build": build_dir, "tmp": tmp_path}


def _status(db: Path, *extra: str) -> str:
    result = CliRunner().invoke(app, ["status", "--db", str(db), "--no-freshness", *extra])
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def test_status_describes_the_file_it_is_given(two) -> None:
    for key, other in (("A", "B"), ("B", "A")):
        info = json.loads(_status(two[key], "--json"))
        assert info["warehouse"] == str(two[key]) == info["published"]["path"]
        assert info["last_build"]["db_path"] == str(two[key])
        assert info["last_build"]["data_origin"] == f"origin_{key}"
        assert info["build_record"] == str(build_record_path(two[key]))
        text = _status(two[key])
        assert str(two[key]) in text and str(two[other]) not in text
        assert f"built {key}.duckdb" in text


def test_the_record_sits_beside_its_file_not_in_the_build_folder(two) -> None:
    assert build_record_path(two["A"]) == two["A"].parent / "A.duckdb.last_build.json"
    assert build_record_path(two["A"]).is_file() and build_record_path(two["B"]).is_file()
    assert not (two["build"] / BUILD_RECORD).exists()


def test_a_file_without_a_record_says_so(two) -> None:
    info = json.loads(_status(two["C"], "--json"))
    assert info["last_build"] is None and info["published"]["path"] == str(two["C"])
    text = " ".join(_status(two["C"]).split())
    assert f"no build record for {two['C']}" in text


def test_an_old_record_in_the_build_folder_counts_only_for_the_file_it_names(two) -> None:
    old = {"db_path": str(two["C"]), "result": "success", "settings": {}}
    two["build"].mkdir()
    (two["build"] / BUILD_RECORD).write_text(json.dumps(old))
    assert read_build_record(two["C"], two["build"])["db_path"] == str(two["C"])
    assert read_build_record(two["A"], two["build"])["data_origin"] == "origin_A"
    elsewhere = _warehouse(two["tmp"] / "d" / "D.duckdb")
    assert read_build_record(elsewhere, two["build"]) is None


def test_the_recorded_mirror_follows_the_warehouse(two, monkeypatch) -> None:
    monkeypatch.delenv("TASTEBENCH_DATA_MIRROR", raising=False)  # a fresh shell
    assert load_settings(db_path=two["A"]).mirror == two["tmp"] / "mirror_a"
    assert load_settings(db_path=two["B"]).mirror == two["tmp"] / "mirror_b"


def test_a_failed_build_keeps_the_last_success_of_its_own_file(two) -> None:
    settings = load_settings(db_path=two["A"])
    write_build_record(settings, None, error=RuntimeError("disk full\nmore"))
    record = read_build_record(two["A"])
    assert record["result"] == "failed" and record["error"] == "RuntimeError: disk full"
    assert record["last_success"]["data_origin"] == "origin_A"
    assert read_build_record(two["B"])["result"] == "success"
