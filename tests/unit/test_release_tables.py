"""Byte-stable serialization, the manifest, the gated store and the Croissant checks of
warehouse.release on tiny frames."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest

from warehouse.release.croissant import (
    build_croissant,
    check_croissant,
    duplicate_ids,
    write_croissant,
)
from warehouse.release.croissant_load import mlcroissant_problems
from warehouse.release.gated import (
    GatedStateError,
    GatedStore,
    check_out_dir,
    ensure_separate,
)
from warehouse.release.tables import (
    MANIFEST_NAME,
    Column,
    ReleaseError,
    TableSpec,
    format_value,
    parquet_bytes,
    parquet_problems,
    parse_manifest,
    read_table,
    table_bytes,
    write_manifest,
    write_table,
)
from warehouse.release.verify import check_manifest, describe_diff

SPEC = TableSpec(
    "t/x.csv",
    "tiny",
    (
        Column("category", "str", "c"),
        Column("code", "int", "k"),
        Column("flag", "bool", "f"),
        Column("value", "float", "v"),
    ),
    ("category", "code"),
)


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "category": ["b", "a", "a", "b"],
            "code": [2, 3, 1, 1],
            "flag": [True, False, True, None],
            "value": [0.1, -0.0, 1 / 3, float("nan")],
            "ignored": ["x", "y", "z", "w"],
        }
    )


def test_format_rules() -> None:
    assert format_value(0.1, "float") == "0.1"
    assert format_value(-0.0, "float") == "0.0"
    assert format_value(float("nan"), "float") == ""
    assert format_value(None, "int") == ""
    assert format_value(pd.NA, "bool") == ""
    assert format_value(np.float64(1 / 3), "float") == repr(1 / 3)
    assert format_value(3.0, "int") == "3"
    assert format_value(np.bool_(True), "bool") == "true"
    with pytest.raises(ValueError):
        format_value(2.5, "int")
    with pytest.raises(ValueError):
        format_value(math.inf, "float")


def test_rows_sorted_by_released_columns_only_and_columns_selected() -> None:
    text = table_bytes(frame(), SPEC).decode()
    assert text.splitlines() == [
        "category,code,flag,value",
        "a,1,true,0.3333333333333333",
        "a,3,false,0.0",
        "b,1,,",
        "b,2,true,0.1",
    ]
    # input row order does not matter
    shuffled = frame().sample(frac=1, random_state=3)
    assert table_bytes(shuffled, SPEC) == table_bytes(frame(), SPEC)


def test_read_then_write_is_byte_identical(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    f = pd.DataFrame(
        {
            "category": rng.choice(["x", "y, z", 'q"uote'], 50),
            "code": np.arange(50),
            "flag": rng.random(50) > 0.5,
            "value": rng.normal(size=50) * 10.0 ** rng.integers(-8, 8, 50),
        }
    )
    path = write_table(tmp_path, f, SPEC)
    back = read_table(path, SPEC)
    assert isinstance(back, pl.DataFrame)
    assert table_bytes(back, SPEC) == path.read_bytes()
    merged = f.sort_values(["category", "code"]).reset_index(drop=True)
    assert np.array_equal(back["value"].to_numpy(), merged["value"].to_numpy(float))
    # the Parquet twin holds the same rows with the spec's types
    twin = pq.read_table(tmp_path / SPEC.parquet_path)
    assert [str(t) for t in twin.schema.types] == ["string", "int64", "bool", "double"]
    assert pl.from_arrow(twin).equals(back)
    assert parquet_problems(tmp_path, SPEC) == []
    assert parquet_bytes(back, SPEC) == (tmp_path / SPEC.parquet_path).read_bytes()


def test_read_rejects_a_wrong_header(tmp_path: Path) -> None:
    (tmp_path / "x.csv").write_text("category,code\na,1\n")
    with pytest.raises(ValueError, match="header"):
        read_table(tmp_path / "x.csv", SPEC)


def test_missing_column_is_an_error() -> None:
    with pytest.raises(ReleaseError, match="lacks column"):
        table_bytes(frame().drop(columns="flag"), SPEC)


def test_manifest_sorted_and_checked(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "z.csv").write_text("1\n")
    (tmp_path / "a.md").write_text("hello\n")
    write_manifest(tmp_path)
    listed = parse_manifest((tmp_path / MANIFEST_NAME).read_text())
    assert list(listed) == ["a.md", "b/z.csv"]
    assert check_manifest(tmp_path) == []
    (tmp_path / "b" / "z.csv").write_text("2\n")
    (tmp_path / "new.txt").write_text("x\n")
    (tmp_path / "a.md").unlink()
    problems = check_manifest(tmp_path)
    assert any(p.startswith("b/z.csv: sha256 differs") for p in problems)
    assert any(p.startswith("new.txt: not listed") for p in problems)
    assert any(p.startswith("a.md: listed") for p in problems)


def test_describe_diff_names_line_and_column() -> None:
    a = b"k,v,w\n1,0.5,x\n2,0.25,y\n"
    b = b"k,v,w\n1,0.5,x\n2,0.75,y\n"
    (msg,) = describe_diff("m.csv", a, b)
    assert "line 3" in msg and "column v" in msg and "'0.25'" in msg and "'0.75'" in msg


def test_out_dir_and_gated_dir_rules(tmp_path: Path) -> None:
    check_out_dir(tmp_path / "new")
    check_out_dir(tmp_path)  # empty
    (tmp_path / "f").write_text("x")
    with pytest.raises(ReleaseError, match="not empty"):
        check_out_dir(tmp_path)
    with pytest.raises(ReleaseError, match="overlap"):
        ensure_separate(tmp_path / "rel", tmp_path / "rel" / "gated")
    with pytest.raises(ReleaseError, match="overlap"):
        ensure_separate(tmp_path / "gated" / "rel", tmp_path / "gated")
    ensure_separate(tmp_path / "rel", tmp_path / "gated")


def test_gated_code_map_roundtrip_and_mismatch(tmp_path: Path) -> None:
    products = pd.DataFrame(
        {"category": ["A"] * 3, "product_code": [10, 11, 12], "is_analog": [True, True, False]}
    )
    store = GatedStore(tmp_path / "gated")
    assert store.load_code_map(products) is None
    cmap = products.assign(public_code=[2, 1, 3])
    path = store.save_code_map(cmap)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    back = store.load_code_map(products)
    assert back.sort("product_code")["public_code"].to_list() == [2, 1, 3]
    # a map written by an earlier version (pandas: True/False, float codes) still loads
    path.write_text(
        "category,product_code,is_analog,public_code\nA,10.0,True,2\nA,11.0,True,1\n"
        "A,12.0,False,3\n"
    )
    assert store.load_code_map(products)["public_code"].to_list() == [2, 1, 3]
    other = products.assign(product_code=[10, 11, 13])
    with pytest.raises(GatedStateError, match="other products"):
        store.load_code_map(other)
    bad = GatedStore(tmp_path / "bad")
    bad.save_code_map(products.assign(public_code=[3, 1, 2]))  # reference inside 1..n_c
    with pytest.raises(GatedStateError, match="not analogs 1..n_c"):
        bad.load_code_map(products)


def _croissant(root: Path) -> dict:
    write_table(root, frame(), SPEC)
    (root / "README.md").write_text("readme\n")
    return build_croissant(
        root,
        name="t",
        description="d",
        tables=[SPEC],
        other_files={"README.md": "r"},
        data_origin="simulation",
        version="0",
        date_published="2026-01-02T03:04:05Z",
    )


def test_croissant_describes_every_file_and_detects_changes(tmp_path: Path) -> None:
    doc = _croissant(tmp_path)
    write_croissant(tmp_path, doc)
    assert check_croissant(tmp_path, "simulation") == []
    data = json.loads((tmp_path / "croissant.json").read_text())
    assert data["conformsTo"] == "http://mlcommons.org/croissant/1.0"
    assert data["rai:hasSyntheticData"] is True and "SIMULATED" in data["rai:dataCollection"]
    rs, rs_parquet = data["recordSet"]
    assert [f["name"] for f in rs["field"]] == SPEC.names
    assert rs["@id"] == "t/x" and rs_parquet["@id"] == "t/x_parquet"
    assert data["datePublished"] == "2026-01-02T03:04:05Z"
    assert [f["dataType"] for f in rs_parquet["field"]] == [f["dataType"] for f in rs["field"]]
    assert {d["@id"] for d in data["distribution"]} == {"t/x.csv", "t/x.parquet", "README.md"}
    assert {f["dataType"] for f in rs["field"]} == {
        "sc:Text",
        "sc:Integer",
        "sc:Boolean",
        "sc:Float",
    }
    (tmp_path / "t" / "x.csv").write_text("category,code,flag,value\n")
    (tmp_path / "t" / "y.csv").write_text("a\n1\n")
    problems = check_croissant(tmp_path, "simulation")
    assert any("sha256 of t/x.csv" in p for p in problems)
    assert any("no recordSet describes t/y.csv" in p for p in problems)
    # a Parquet column whose type differs from the Croissant record set is named
    pq.write_table(
        pl.DataFrame({"category": ["a"], "code": [1.5], "flag": [True], "value": [1.0]}).to_arrow(),
        tmp_path / "t" / "x.parquet",
    )
    problems = check_croissant(tmp_path, "simulation")
    assert any("recordSet of t/x.parquet" in p and "sc:Float" in p for p in problems)


def test_croissant_opens_in_mlcroissant_and_every_record_set_loads(tmp_path: Path) -> None:
    """The reference client validates the file without a warning and loads both record sets
    with the table's rows; a wrong count and a reused ``@id`` are named."""
    doc = _croissant(tmp_path)
    write_croissant(tmp_path, doc)
    n = len(frame())
    assert mlcroissant_problems(tmp_path, {"t/x.csv": n}) == []
    wrong = mlcroissant_problems(tmp_path, {"t/x.csv": n + 1})
    assert len(wrong) == 2 and all(f"has {n + 1} row(s)" in p for p in wrong)
    assert "record set t/x_parquet" in wrong[1]
    doc["recordSet"][1]["@id"] = "t/x.parquet"  # the id of its file object (the old defect)
    assert duplicate_ids(doc) == ["t/x.parquet"]
    write_croissant(tmp_path, doc)
    assert any("@id used by several nodes: t/x.parquet" in p for p in check_croissant(tmp_path))
    rejected = mlcroissant_problems(tmp_path, {"t/x.csv": n})
    assert len(rejected) == 1 and "mlcroissant rejects it" in rejected[0], rejected


def test_build_croissant_refuses_a_reused_id(tmp_path: Path) -> None:
    write_table(tmp_path, frame(), SPEC)
    clash = SPEC.with_path("t/x_parquet.csv")  # a second record set t/x_parquet
    write_table(tmp_path, frame(), clash)
    with pytest.raises(ReleaseError, match="@id used by several nodes: t/x_parquet"):
        build_croissant(
            tmp_path, name="t", description="d", tables=[SPEC, clash], other_files={},
            data_origin="simulation", version="0", date_published="2026-01-02",
        )  # fmt: skip


def test_public_duckdb_file_holds_the_tables_and_is_checked_by_content(tmp_path: Path) -> None:
    """The release's DuckDB file: one table per CSV (``t.x`` for ``t/x.csv``) with its types,
    rows and order, outside the manifest; a changed row or an extra table is reported."""
    import duckdb

    from warehouse.release.public_db import db_name, public_db_problems, write_public_db
    from warehouse.release.tables import PUBLIC_DB, release_files

    spec = SPEC.with_path("t/x.csv", "it's tiny")  # a quote in the comment
    write_table(tmp_path, frame(), spec)
    write_public_db(tmp_path, [spec])
    assert db_name(spec) == ("t", "x") and PUBLIC_DB not in release_files(tmp_path)
    assert public_db_problems(tmp_path, [spec]) == []
    con = duckdb.connect(str(tmp_path / PUBLIC_DB), read_only=True)
    try:
        rows = con.execute("select category, code, flag, value from t.x").fetchall()
        comment = con.execute("select comment from duckdb_tables() where table_name = 'x'")
        assert comment.fetchone()[0] == "it's tiny"
    finally:
        con.close()
    assert rows == [("a", 1, True, 1 / 3), ("a", 3, False, 0.0), ("b", 1, None, None),
                    ("b", 2, True, 0.1)]  # fmt: skip
    con = duckdb.connect(str(tmp_path / PUBLIC_DB))
    try:
        con.execute("update t.x set value = 0.2 where code = 2")
        con.execute("create view t.y as select 1 as one")
    finally:
        con.close()
    assert public_db_problems(tmp_path, [spec]) == [
        f"{PUBLIC_DB}: view t.y is not a released table",
        f"{PUBLIC_DB}: rows of table t.x differ from t/x.csv",
    ]
    (tmp_path / PUBLIC_DB).unlink()
    assert "missing" in public_db_problems(tmp_path, [spec])[0]
