"""Release, verify and competition on the default (simulated) build (issue #6 items 4-5 "Must
show"): release -> verify round-trips with identical numbers; the release passes every guard
(no forbidden column, no panel mean, no row-order leak, no cross-file link); tampering makes
verify fail naming the file; the code map stays gated and is reused (identical outputs); every
table has a Parquet twin that DuckDB and pyarrow read with the Croissant types (issue #10); the
competition's audits sit at chance, its solution stays gated and its decoys have Jaccard < 0.8."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from functools import partial
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import polars as pl
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from tests.conftest import built_once
from warehouse.cli import app
from warehouse.human.baseline import ACCURACY_COLUMNS
from warehouse.quality.guards import GatedContext, check_forbidden_columns, guard_release_dir
from warehouse.release import competition as comp
from warehouse.release.gated import CODE_MAP
from warehouse.release.public_db import db_name, public_db_problems
from warehouse.release.tables import (
    ARROW_TYPES,
    CROISSANT_TYPES,
    PUBLIC_DB,
    ReleaseError,
    write_manifest,
)
from warehouse.release.verify import release_specs
from warehouse.sources.readonly import connect_read_only

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def built(tmp_path_factory, default_warehouse):
    """The session's default (simulated) warehouse, read-only; outputs go to a fresh folder."""
    settings, result = default_warehouse
    assert result.data_origin == "simulation"
    return tmp_path_factory.mktemp("release"), settings


def _invoke(*args: str):
    result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def release(default_release):
    """The session's release of the default warehouse (tests copy it before changing a file)."""
    return default_release


@pytest.fixture(scope="module")
def con(built):
    # as the exports open it (one configuration per file and process, docs/release.md)
    c = connect_read_only(built[1].db_path)
    yield c
    c.close()


def _csv(path: Path) -> pd.DataFrame:
    return pd.read_csv(path)


def _verify(out: Path, root: Path) -> str:
    return _invoke("verify", str(out)).output


def test_release_then_verify_round_trips_with_identical_numbers(
    release, con, tmp_path_factory
) -> None:
    """`verify` runs once and is kept between runs while nothing it depends on changed
    (``built_once``); so do the tampered copy's and the Croissant clients' below."""
    out, _ = release
    assert "release verified" in built_once(tmp_path_factory, "verify", partial(_verify, out))
    metrics = _csv(out / "metrics" / "model_metrics.csv").set_index("model_metric_key")
    mart = con.sql("select * from marts.agg_model_metrics").df().set_index("model_metric_key")
    # (9 public files + the warehouse's own fits) x (7 + 7 + 1) rows (both conventions) + 22
    # trivial-policy rows
    n_fits = con.sql("select count(*) from marts.dim_food_fits").fetchall()[0][0]
    assert n_fits == 18
    assert set(metrics.index) == set(mart.index) and len(mart) == (9 + n_fits) * 15 + 22
    for col in ("point", "ci_lo", "ci_hi", "chance_value"):
        a = metrics.loc[mart.index, col].to_numpy(float)
        assert np.array_equal(a, mart[col].to_numpy(float), equal_nan=True), col
    summary = _csv(out / "human_baseline" / "summary.csv").set_index("metric")["value"]
    human = con.sql("select metric, warehouse_value from marts.agg_human_baseline").df()
    for metric, value in zip(human["metric"], human["warehouse_value"], strict=True):
        assert summary[metric] == value, metric
    assert (out / "README.md").read_text().count("SIMULATED") >= 1


def _gated_ctx(con, gated: Path) -> GatedContext:
    cmap = pd.read_csv(gated / CODE_MAP)
    return GatedContext.from_warehouse(con, code_map=cmap)


def test_release_passes_every_guard(release, con) -> None:
    out, gated = release
    assert guard_release_dir(out, _gated_ctx(con, gated)) == []


def test_public_duckdb_file_answers_sql_and_a_leak_planted_in_it_fails(
    release, con, tmp_path: Path
) -> None:
    """Issue #12 item 4: the release's DuckDB file holds every released table (queryable
    read-only with SQL); a table planted in it fails the release guards and verify."""
    out, gated = release
    specs = release_specs(out)
    pub = duckdb.connect(str(out / PUBLIC_DB), read_only=True)
    try:
        tables = set(pub.execute(
            "select schema_name, table_name from duckdb_tables() where not internal"
        ).fetchall())  # fmt: skip
        n_products = pub.execute("select count(*) from benchmark.products").fetchone()[0]
        n_metrics = pub.execute(
            "select count(*) from metrics.model_metrics m join metrics.upstream_files u "
            "on u.model_id = m.model_id"
        ).fetchone()[0]
    finally:
        pub.close()
    assert tables == {db_name(s) for s in specs.values()} and len(tables) == len(specs)
    assert n_products == len(pl.read_csv(out / "benchmark" / "products.csv"))
    assert n_metrics > 0  # the published models' metrics join their upstream files
    bad = tmp_path / "planted"
    shutil.copytree(out, bad)
    cmap = pl.read_csv(gated / CODE_MAP).select(
        "category", pl.col("product_code").cast(pl.Int64), "public_code"
    )
    means = con.sql(
        "select p.category, p.product_code::bigint as product_code, m.panel_mean as score "
        "from marts.dim_products p join marts.fct_panel_means m using (product_key)"
    ).pl()
    leak = cmap.join(means, on=["category", "product_code"]).select(
        "category", "public_code", pl.col("score").round(6)
    )
    pub = duckdb.connect(str(bad / PUBLIC_DB))
    try:
        pub.register("leak", leak.to_arrow())
        pub.execute("create table benchmark.product_scores as select * from leak")
    finally:
        pub.close()
    v = guard_release_dir(bad, _gated_ctx(con, gated))
    where = f"{PUBLIC_DB}:benchmark.product_scores"
    assert {x.rule for x in v if x.table == where} >= {"panel_mean_shape"}, v
    assert all(x.table == where for x in v), v  # the released tables in the file stay clean
    # that `verify` refuses a table planted in the file: test_tampering_makes_verify_fail_naming_it


def test_no_forbidden_column_no_panel_mean_no_panelist_key(release) -> None:
    out, _ = release
    for path in sorted(out.rglob("*.csv")):
        frame = _csv(path)
        assert check_forbidden_columns(path.name, frame) == [], path
        assert not {"panel_mean", "panelist_number", "panelist_block_key", "respondent_id"} & set(
            frame.columns
        )
    products = _csv(out / "benchmark" / "products.csv")
    analogs = products[~products["is_reference"]]
    for _, g in analogs.groupby("category"):
        n = len(g)
        assert sorted(g["public_code"]) == list(range(1, n + 1))
        assert g["true_rank"].sum() == n * (n + 1) / 2  # ranks, not means
        assert ((g["true_rank"] * 2) % 1 == 0).all()
    refs = products[products["is_reference"]]
    assert refs["true_rank"].isna().all() and len(products) == 247


def test_row_order_is_a_function_of_released_columns(release) -> None:
    out, _ = release
    keys = {
        "benchmark/products.csv": ["category", "public_code"],
        "benchmark/gold_pairs.csv": ["category", "public_code_1", "public_code_2"],
        # the public panelist rows drop the respondent key
        "human_baseline/panelist_block_accuracy.csv": [
            c for c in ACCURACY_COLUMNS if c != "respondent_id"
        ],
    }
    for rel, cols in keys.items():
        f = _csv(out / rel)
        resorted = f.sort_values(cols, kind="mergesort", na_position="last").reset_index(drop=True)
        pd.testing.assert_frame_equal(f, resorted)


def test_true_rank_and_gold_pairs_match_the_public_gold(release, con, public_dir: Path) -> None:
    """The simulation keeps the public gold order (raw codes = original public codes), so our
    true_rank, mapped back through the gated map, equals the published true_rank of the upstream
    file (referenced by hash in metrics/upstream_files.csv, not re-published)."""
    out, gated = release
    cmap = pd.read_csv(gated / CODE_MAP)
    ours = _csv(out / "benchmark" / "products.csv").merge(cmap, on=["category", "public_code"])
    upstream = _csv(out / "metrics" / "upstream_files.csv")
    assert len(upstream) == 10 and set(upstream["role"]) == {"oof", "gold_pairs"}
    assert not (out / "tastebench_public_oof").exists()
    tb = _csv(
        public_dir / "food_similarity" / "results" / "oof_predictions" / "ridge_SNCTI_bench.csv"
    )
    m = tb.merge(ours, on=["category", "product_code"], suffixes=("_tb", ""))
    assert len(m) == 215 and (m["true_rank_tb"] == m["true_rank"]).all()
    gold = _csv(out / "benchmark" / "gold_pairs.csv")
    assert len(gold) == 932 and set(gold["data_origin"]) == {"simulation"}
    audits = _csv(out / "metrics" / "release_audits.csv")
    acc = audits[audits["metric"] == "pairwise_accuracy"].set_index("policy")
    for policy in ("slot1_wins", "lower_code_wins"):
        assert acc.loc[policy, "ci_lo"] <= 0.5 <= acc.loc[policy, "ci_hi"], policy


def _tampered_verify(out: Path, root: Path) -> subprocess.CompletedProcess:
    bad = root / "tampered"
    shutil.copytree(out, bad)
    path = bad / "metrics" / "model_metrics.csv"
    lines = path.read_text().splitlines(keepends=True)
    cells = lines[1].split(",")
    cells[4] = repr(float(cells[4]) + 0.01)  # one metric point
    lines[1] = ",".join(cells)
    path.write_text("".join(lines))
    write_manifest(bad)  # even with a recomputed manifest the re-derivation catches it
    # a data file: swap the ranks of the first two products that differ
    products = bad / "benchmark" / "products.csv"
    rows = [line.split(",") for line in products.read_text().splitlines()]
    j = next(
        i for i in range(2, len(rows)) if rows[i][0] == rows[1][0] and rows[i][3] != rows[1][3]
    )
    rows[1][3], rows[j][3] = rows[j][3], rows[1][3]
    products.write_text("".join(",".join(r) + "\n" for r in rows))
    # a table planted in the public DuckDB file (its content is the guards' business:
    # test_public_duckdb_file_answers_sql_and_a_leak_planted_in_it_fails)
    pub = duckdb.connect(str(bad / PUBLIC_DB))
    try:
        pub.execute("create table benchmark.product_scores as from benchmark.products limit 3")
    finally:
        pub.close()
    # one verify of the three tamperings, by the command: it exits non-zero and names every one
    proc = subprocess.run(
        [sys.executable, "-m", "warehouse.cli", "verify", str(bad)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "1000"},
    )  # fmt: skip
    return proc


def test_tampering_makes_verify_fail_naming_it(release, tmp_path_factory) -> None:
    proc = built_once(tmp_path_factory, "tampered", partial(_tampered_verify, release[0]))
    assert proc.returncode != 0
    named = [x for x in proc.stderr.splitlines() if "metrics/model_metrics.csv: line 2" in x]
    assert named and "column point" in named[0], proc.stderr
    err = " ".join(proc.stderr.split())
    assert "benchmark/products.csv: sha256 differs" in err
    assert "benchmark/gold_pairs.csv: line" in err
    # of the DuckDB file: the planted table and the twins of the two tampered CSVs, nothing else
    on_db = {x.strip(" -") for x in proc.stderr.splitlines() if f"{PUBLIC_DB}:" in x}
    assert on_db == {
        f"{PUBLIC_DB}: table benchmark.product_scores is not a released table",
        f"{PUBLIC_DB}: rows of table benchmark.products differ from benchmark/products.csv",
        f"{PUBLIC_DB}: rows of table metrics.model_metrics differ from metrics/model_metrics.csv",
    }, err
    assert "VerifyError" not in err  # a message, not a traceback


def test_code_map_is_gated_and_reused(release, built) -> None:
    out, gated = release
    root, settings = built
    assert (gated / CODE_MAP).is_file() and not (gated / CODE_MAP).is_relative_to(out)
    assert not any("map" in p.name or "gated" in p.name for p in out.rglob("*"))
    again = root / "public" / "release_again"
    _invoke("release", str(again), "--db", str(settings.db_path), "--gated-dir", str(gated))
    files = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    for rel in files:
        if rel.as_posix() == PUBLIC_DB:  # not byte-stable: the same tables and rows instead
            assert public_db_problems(again, release_specs(out).values()) == []
            continue
        assert (out / rel).read_bytes() == (again / rel).read_bytes(), rel
    with pytest.raises(ReleaseError, match="not empty"):
        CliRunner().invoke(
            app, ["release", str(out), "--db", str(settings.db_path), "--gated-dir", str(gated)],
            catch_exceptions=False,
        )  # fmt: skip
    with pytest.raises(ReleaseError, match="overlap"):
        CliRunner().invoke(
            app, ["release", str(root / "x"), "--db", str(settings.db_path),
                  "--gated-dir", str(root / "x" / "gated")],
            catch_exceptions=False,
        )  # fmt: skip


@pytest.fixture(scope="module")
def competition(built, tmp_path_factory):
    """`competition` of the default warehouse, made once and kept (``built_once``)."""
    return built_once(tmp_path_factory, "competition", partial(_competition, built[1]))


def _competition(settings, root: Path) -> tuple[Path, Path]:
    gated = root / "gated_competition"
    out = root / "public" / "competition"
    _invoke("competition", str(out), "--db", str(settings.db_path), "--gated-dir", str(gated))
    return out, gated / "competition" / "solution.csv"


def test_competition_solution_stays_gated(competition) -> None:
    out, solution = competition
    assert solution.is_file() and not solution.is_relative_to(out)
    assert sorted(p.name for p in out.iterdir()) == [
        "MANIFEST.sha256", "README.md", "croissant.json", "products.csv", "products.parquet",
        "ranking_pairs.csv", "ranking_pairs.parquet", "sample_submission.csv",
        "sample_submission.parquet",
    ]  # fmt: skip
    pairs = _csv(out / "ranking_pairs.csv")
    assert list(pairs.columns) == ["pair_id", "category", "public_code_1", "public_code_2"]
    products = _csv(out / "products.csv")
    assert not {"true_rank", "panel_mean", "data_origin"} & set(products.columns)
    assert sorted(products["public_code"]) == list(range(1, len(products) + 1))


def test_competition_audits_at_chance(competition) -> None:
    out, solution = competition
    audit = comp.audit_competition(out, solution)
    assert audit["at_chance"] and audit["n_scored_pairs"] == 932
    for name in ("slot1_wins", "lower_code_wins"):
        a = audit[name]
        assert a["ci_lo"] <= 0.5 <= a["ci_hi"], name
        assert 0.4 < a["point"] < 0.6
    scores = comp.score_submission(out / "sample_submission.csv", solution)
    assert scores["n_public_pairs"] + scores["n_private_pairs"] == 932
    for key in ("public_score", "private_score"):
        assert 0.35 < scores[key] < 0.65 and round(scores[key], 2) == scores[key]


def test_competition_decoys_below_jaccard_and_guards_pass(competition, con) -> None:
    out, solution = competition
    gated_map = pl.read_csv(solution.parent / "code_map.csv", infer_schema_length=None)
    products = _csv(out / "products.csv").merge(gated_map.select("public_code", "kind").to_pandas())
    assert set(products["kind"]) == {"rated", "decoy"}
    assert (products["kind"] == "rated").sum() == 215
    for _, g in products.groupby("category"):
        rated = [comp.ingredient_tokens(t) for t in g.loc[g.kind == "rated", "ingredient_list"]]
        for text in g.loc[g.kind == "decoy", "ingredient_list"]:
            assert comp.max_jaccard(text, rated) < 0.8
    ctx = GatedContext.from_warehouse(con, code_map=comp.guard_ctx_map(gated_map))
    assert guard_release_dir(out, ctx) == []


def _croissant(out: Path, root: Path) -> dict:
    """What mlcroissant, the reference client, makes of ``out``: issues, the publication date
    and, per record set, its source file, field ids and the records it loads (count, first
    record's keys)."""
    import mlcroissant as mlc

    dataset = mlc.Dataset(jsonld=str(out / "croissant.json"))
    sets = []
    for record_set in dataset.metadata.record_sets:
        records = list(dataset.records(record_set=record_set.uuid))
        sources = {f.source.file_object for f in record_set.fields}
        fields = {f.uuid for f in record_set.fields}
        sets.append(
            (record_set.uuid, sources, fields, len(records), set(records[0]) if records else None)
        )
    issues = dataset.metadata.ctx.issues
    return {"errors": set(issues.errors), "warnings": set(issues.warnings),
            "published": dataset.metadata.date_published, "sets": sets}  # fmt: skip


@pytest.mark.parametrize("which", ["release", "competition"])
def test_croissant_opens_in_mlcroissant_and_every_record_set_loads(
    which, release, competition, con, tmp_path_factory
) -> None:
    """Issue #21 item 1: the reference client validates the Croissant file without an error or a
    warning, and loads every record set with the rows of the CSV it (or its Parquet twin)
    describes; ``@id``s are unique; ``datePublished`` is the warehouse's build time."""
    out = release[0] if which == "release" else competition[0]
    doc = json.loads((out / "croissant.json").read_text())
    client = built_once(tmp_path_factory, f"croissant_{which}", partial(_croissant, out))
    assert client["errors"] == set()
    assert client["warnings"] == set()
    built = con.execute("select max(run_at) from reports.rpt_data_quality").fetchone()[0]
    assert client["published"].replace(tzinfo=None) == built.replace(microsecond=0)
    ids = [n["@id"] for n in doc["distribution"] + doc["recordSet"]]
    ids += [f["@id"] for rs in doc["recordSet"] for f in rs["field"]]
    assert len(ids) == len(set(ids))
    csvs = sorted(out.rglob("*.csv"))
    assert len(client["sets"]) == 2 * len(csvs)  # a CSV and its Parquet twin each
    for uuid, sources, fields, n_records, first in client["sets"]:
        (source,) = sources
        rows = len(pl.read_csv(out / Path(source).with_suffix(".csv"), infer_schema_length=0))
        assert n_records == rows, uuid
        if n_records:
            assert first == fields


@pytest.mark.parametrize("which", ["release", "competition"])
def test_parquet_twins_load_in_duckdb_and_pyarrow_with_the_croissant_types(
    which, release, competition
) -> None:
    out = release[0] if which == "release" else competition[0]
    doc = json.loads((out / "croissant.json").read_text())
    sets = {
        rs["field"][0]["source"]["fileObject"]["@id"]: {
            f["name"]: f["dataType"] for f in rs["field"]
        }
        for rs in doc["recordSet"]
    }
    by_arrow = {str(ARROW_TYPES[t]): c for t, c in CROISSANT_TYPES.items()}
    by_duckdb = {"VARCHAR": "sc:Text", "BIGINT": "sc:Integer", "DOUBLE": "sc:Float",
                 "BOOLEAN": "sc:Boolean"}  # fmt: skip
    files = {d["@id"] for d in doc["distribution"]}
    csvs = sorted(out.rglob("*.csv"))
    assert csvs
    for path in csvs:
        rel = path.relative_to(out).as_posix()
        twin = path.with_suffix(".parquet")
        twin_rel = twin.relative_to(out).as_posix()
        assert twin.is_file() and twin_rel in files, twin_rel
        types = sets[twin_rel]
        assert types == sets[rel]  # the same types as the CSV's record set
        arrow = pq.read_table(twin)
        assert {f.name: by_arrow[str(f.type)] for f in arrow.schema} == types
        con = duckdb.connect()
        try:
            described = con.execute(f"describe select * from read_parquet('{twin}')").fetchall()
            n = con.execute(f"select count(*) from read_parquet('{twin}')").fetchone()[0]
        finally:
            con.close()
        assert {name: by_duckdb[t] for name, t, *_ in described} == types
        csv = pl.read_csv(path, infer_schema_length=0)
        assert n == len(csv) == arrow.num_rows
        # same rows: the Parquet values written as text are the CSV's cells
        back = pl.from_arrow(arrow)
        assert back.columns == csv.columns
