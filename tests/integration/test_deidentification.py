"""De-identification hardening (issue #15 "Must show"), end to end: each leak class is planted
into a copy of the default (simulated) bundle, the copy is built with ``--db`` elsewhere, then
exported with the CLI; the test fails if the planted value reaches a public file (or an export
that must refuse does not).

The assertions read only the exported files and the CLI's exit status and message, so the same
tests run against the code before the fix (where they fail) and after it.

Two planted warehouses are built once per session:

* ``text``: brand spellings, Unicode disguises (confusables, a filler inside the word, an
  override around the reversed brand, tag characters), brands the bundle does not list and
  separated UPCs in the ingredient lists of rated analogs -> the competition and the release
  exports must succeed and no exported file (CSV, JSON, Markdown, Parquet, the DuckDB file) may
  hold any of them, read through the skeleton;
* ``target``: per-product near-copies of the panel mean -> the competition export must refuse
  (``test_deidentification_target.py``: a file of its own, so the two builds run in parallel).
"""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path
from unittest import mock

import duckdb
import polars as pl
import pytest
from typer.testing import CliRunner

import warehouse.pipeline.run as build_module
from tests.conftest import built_once
from warehouse.cli import app
from warehouse.config import environment, load_settings
from warehouse.pipeline.run import build
from warehouse.quality import governance
from warehouse.quality.guards import GatedContext, guard_release_dir
from warehouse.quality.guards.folders import read_db_file
from warehouse.quality.identifiers import Matcher
from warehouse.quality.skeleton import first_unreadable, skeleton

pytestmark = pytest.mark.integration

INGREDIENTS = "nectar_consolidated_ingredients_nutrition.csv"
RATINGS = "nectar_consolidated_sensory_rating.csv"


# --- planting -----------------------------------------------------------------------------------
def _analogs(settings) -> pl.DataFrame:
    """Rated analogs of the default build with their brand and UPC (one row per product)."""
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        return con.sql(
            "select p.category, p.product_code, any_value(s.brand) as brand, "
            "any_value(s.upc) as upc, any_value(m.panel_mean) as panel_mean, "
            "any_value(m.n_ratings) as n_ratings from marts.dim_products p "
            "join staging.stg_nectar__products s on s.product_key = p.product_key "
            "join marts.fct_panel_means m on m.product_key = p.product_key "
            "where p.is_analog group by 1, 2 order by 1, 2"
        ).pl()
    finally:
        con.close()


def _soft(word: str) -> str:
    return word[: len(word) // 2] + "\u00ad" + word[len(word) // 2 :]


def _upc_forms(upc: str) -> dict[str, str]:
    return {
        "slashes": f"{upc[:3]}/{upc[3:6]}/{upc[6:9]}/{upc[9:]}",
        "dots": f"{upc[0]}.{upc[1:6]}.{upc[6:11]}.{upc[11]}",
        "spaces": f"{upc[0]} {upc[1:6]} {upc[6:11]} {upc[11]}",
        "ean13": f"0 {upc[:6]} {upc[6:]}",
        "no_check_digit": f"{upc[:1]}-{upc[1:6]}-{upc[6:11]}",
    }


def _fullwidth(c: str) -> str:
    return chr(ord(c) + 0xFEE0) if c.isascii() and c.isalnum() else c


def _tags(text: str) -> str:
    """``text`` spelled in invisible Unicode tag characters (U+E0020-U+E007E)."""
    return "".join(chr(0xE0000 + ord(c)) for c in text)


UNICODE_PLANTS = [  # (leak class, Brand to set, the disguised spelling, the rest of the text)
    ("unicode_confusables", "Korvath Mills", "K\u043erv\u0430th M\u0456lls", "Pea Blend"),
    ("unicode_greek_cherokee", "Velmora", "\u13d9\u0395LM\u039f\u13a1\u13aa", "Soy Blend"),
    ("unicode_filler", "Tamsel", "Tam\u3164sel", "Oat Blend"),
    ("unicode_rlo_reversed", "Brindle Oak", "\u202e" + "Brindle Oak"[::-1] + "\u202c", "Rye Blend"),
    ("unicode_tag_spelled", "Quillon", _tags("Quillon"), "Rice Blend"),
    ("unicode_small_capitals", "Dorvik", "\u1d05\u1d0f\u0280\u1d20\u026a\u1d0b", "Bean Blend"),
]


def _text_plants(analogs: pl.DataFrame) -> list[dict]:
    """One plant per leak class: the product (a rated analog), the Brand to set (or None), the
    text prepended to its ingredient list, and the exact string that must never be public."""
    single = analogs.filter(~pl.col("brand").str.contains(" ")).row(0, named=True)
    one = single["brand"]
    multi = "Harbor Lane Provisions"  # set as a Brand: also matched as "Harbor Lane"
    plants = [  # (leak class, product, Brand to set, the leaking spelling, the rest of the text)
        ("words_joined", None, multi, "HarborLaneProvisions", "Plant-Based Blend"),
        ("words_hyphenated", None, multi, "Harbor-Lane", "Seasoned Blend"),
        ("soft_hyphen", single, None, _soft(one), "Plant-Based Bacon Blend"),
        ("zero_width_and_fullwidth", single, None, _fullwidth(one[0]) + one[1:] + "\u200b", "Mix"),
        ("curly_apostrophe", None, "Nora's Kitchen", "Nora\u2019s Kitchen", "Oat Blend"),
        ("dropped_accent", None, "Cr\u00e8me Rivi\u00e8re", "Creme Riviere", "Cashew Base"),
        ("ampersand_as_and", None, "Fenn & Rowe", "Fenn and Rowe", "Smoked Blend"),
        ("short_brand", None, "Qo", "Qo", "Plant Burger Blend"),
        ("seed_brand_not_in_bundle", None, None, "Beyond Meat", "Plant-Based Patty"),
        ("seed_brand_variant", None, None, "Ben and Jerry\u2019s", "Non-Dairy Base"),
    ]
    free = iter(
        r
        for r in analogs.iter_rows(named=True)
        if (r["category"], r["product_code"]) != (single["category"], single["product_code"])
    )
    out = []
    for name, row, brand, leak, rest in plants:
        out.append({"name": name, "row": row or next(free), "brand": brand,
                    "text": f"{leak} {rest} (Water), ", "leak": leak})  # fmt: skip
    for name, brand, leak, rest in UNICODE_PLANTS:
        out.append({"name": name, "row": next(free), "brand": brand,
                    "text": f"{leak} {rest} (Water), ", "leak": leak})  # fmt: skip
    for form in _upc_forms("0" * 12):
        row = next(free)  # each form in its own product, always that product's own UPC
        leak = _upc_forms(row["upc"])[form]
        out.append({"name": f"upc_{form}", "row": row, "brand": None,
                    "text": f"UPC {leak}, Water, ", "leak": leak})  # fmt: skip
    return out


PLANTED_DBT_ARGS = ["--exclude-resource-type", "test", "--exclude-resource-type", "unit_test"]


def _plant(bundle: Path, edits: list[tuple[dict, dict[str, object]]]) -> None:
    """Rewrite the ingredients file: for each (product row, {column: value or callable})."""
    path = bundle / INGREDIENTS
    frame = pl.read_csv(path, infer_schema_length=0)
    for row, changes in edits:
        hit = (pl.col("Category") == row["category"]) & (
            pl.col("Product_Code").cast(pl.Int64) == row["product_code"]
        )
        assert frame.filter(hit).height >= 1, row
        for col, value in changes.items():
            new = value(pl.col(col)) if callable(value) else pl.lit(str(value))
            frame = frame.with_columns(pl.when(hit).then(new).otherwise(pl.col(col)).alias(col))
    frame.write_csv(path)


def _build_planted(root: Path, default_settings, edits) -> tuple:
    bundle = root / "bundle"
    shutil.copytree(default_settings.default_simulation_dir, bundle)
    _plant(bundle, edits)
    # built with --db elsewhere: beside it, never in the session build folder
    settings = load_settings(
        build_dir=root / "build_dir",
        db_path=root / "elsewhere" / "planted.duckdb",
        mirror=default_settings.mirror,
        dmpnn_dir=root / "dmpnn",
    )
    # the planted leaks sit in the inputs and the guards read the exports: the food-ranking
    # stage (minutes of cold fits on changed features) adds nothing to what these builds test,
    # and neither do dbt's data and unit tests (the default and fixture builds run them; the
    # exports' guards and the build's quality gate still run): the models the exports read only
    build(
        settings,
        nectar=bundle,
        dbt_args=PLANTED_DBT_ARGS,
        log=lambda m: None,
        food_models=False,
    )
    return settings, bundle


@pytest.fixture(scope="session")
def planted_text(tmp_path_factory, default_warehouse):
    """The text plants built once per run (kept between runs: ``built_once``)."""
    return built_once(tmp_path_factory, "planted_text", partial(_planted_text, default_warehouse))


def _planted_text(default_warehouse, root: Path):
    settings, _ = default_warehouse
    plants = _text_plants(_analogs(settings))
    edits = []
    for p in plants:
        changes: dict[str, object] = {
            "Ingredient List": lambda c, t=p["text"]: pl.lit(t) + c.fill_null("")
        }
        if p["brand"]:
            changes["Brand"] = p["brand"]
        edits.append((p["row"], changes))
    planted, _ = _build_planted(root, settings, edits)
    return planted, plants


def _invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def _public_texts(folder: Path) -> list[str]:
    """Every text cell of every CSV and Parquet table and every text file of a public folder."""
    out = []
    for path in sorted(folder.rglob("*")):
        if path.suffix == ".csv":
            frame = pl.read_csv(path, infer_schema_length=0)
        elif path.suffix == ".parquet":
            frame = pl.read_parquet(path)
        elif path.suffix in (".md", ".json"):
            out.append(path.read_text())
            continue
        else:
            continue
        for col, dtype in frame.schema.items():
            if dtype == pl.String:
                out += [v for v in frame[col].to_list() if v]
    return out


@pytest.fixture(scope="session")
def text_competition(planted_text, tmp_path_factory):
    settings, plants = planted_text
    out = tmp_path_factory.mktemp("text_competition") / "competition"
    res = _invoke("competition", str(out), "--db", str(settings.db_path))
    assert res.exit_code == 0, res.output
    return out, plants


# --- 1. brand spellings, seed brands, separated identifiers --------------------------------------
TEXT_CLASSES = [
    "curly_apostrophe", "dropped_accent", "ampersand_as_and", "words_joined", "words_hyphenated",
    "soft_hyphen", "short_brand", "zero_width_and_fullwidth", "seed_brand_not_in_bundle",
    "seed_brand_variant", "upc_slashes", "upc_dots", "upc_spaces", "upc_ean13",
    "upc_no_check_digit", *(name for name, *_ in UNICODE_PLANTS),
]  # fmt: skip


def test_no_food_models_reaches_dbt(planted_text) -> None:
    """``build(food_models=False)`` (``--no-food-models``) sets the dbt var that the ranking
    marts read: they are empty, the rest of the warehouse is built."""
    settings, _ = planted_text
    with duckdb.connect(str(settings.db_path), read_only=True) as con:
        n_food = con.execute("select count(*) from marts.fct_food_oof_predictions").fetchone()
        n_public = con.execute(
            "select count(*) from marts.fct_oof_predictions where source = 'tastebench_public'"
        ).fetchone()
    assert n_food == (0,) and n_public[0] > 0


@pytest.mark.parametrize("leak_class", TEXT_CLASSES)
def test_planted_text_identifier_never_reaches_the_competition(text_competition, leak_class):
    out, plants = text_competition
    (plant,) = [p for p in plants if p["name"] == leak_class]
    leak = plant["leak"].casefold()
    texts = _public_texts(out)
    assert texts, "the competition has text"
    assert not [t for t in texts if leak in t.casefold()], (leak_class, plant["leak"])
    # the rest of the planted ingredient text is still published (redacted, not dropped)
    rest = plant["text"].split(plant["leak"], 1)[1].strip(" ,")
    assert any(rest in t for t in texts), rest


@pytest.fixture(scope="session")
def text_release(planted_text, tmp_path_factory):
    """The release exported from the planted warehouse (the same planted build)."""
    settings, _ = planted_text
    return _release(settings, tmp_path_factory.mktemp("text_release"))[0]


def _release(settings, root: Path) -> tuple[Path, Path]:
    """`tastebench release` of ``settings``' warehouse into ``root``: (release, gated) folders."""
    out, gated = root / "release", root / "gated"
    res = _invoke("release", str(out), "--db", str(settings.db_path), "--gated-dir", str(gated))
    assert res.exit_code == 0, res.output
    return out, gated


def _exported_texts(folder: Path) -> dict[str, list[str]]:
    """Every text cell of every table (CSV, Parquet, every table of a DuckDB file) and every text
    file (JSON, Markdown) of an exported folder, by file."""
    out: dict[str, list[str]] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if path.suffix in (".md", ".json"):
            out[rel] = path.read_text(encoding="utf-8").splitlines()
            continue
        if path.suffix == ".csv":
            frames = {rel: pl.read_csv(path, infer_schema_length=0)}
        elif path.suffix == ".parquet":
            frames = {rel: pl.read_parquet(path)}
        elif path.suffix == ".duckdb":
            frames = read_db_file(path, rel)
        else:
            continue
        for name, frame in frames.items():
            cells = [v for c, d in frame.schema.items() if d == pl.String for v in frame[c]]
            out[name] = [v for v in cells if v]
    return out


def test_unicode_disguised_brands_reach_no_exported_file(text_competition, text_release) -> None:
    """Issue #20: every exported file of the competition and of the release, read through the
    skeleton, holds none of the planted brands (nor any text the guards could not read)."""
    out, plants = text_competition
    brands = {p["brand"] for p in plants if p["name"].startswith("unicode_")}
    matcher = Matcher(dict.fromkeys(brands, "planted brand"))
    keys = {skeleton(b).replace(" ", "") for b in brands}
    scanned = {**_exported_texts(out), **{f"release/{k}": v for k, v in
                                          _exported_texts(text_release).items()}}  # fmt: skip
    assert any(".duckdb:" in f for f in scanned), "the release's DuckDB file was scanned"
    for name, cells in scanned.items():
        for cell in cells:
            squeezed = "".join(c for c in skeleton(cell) if c.isalnum())
            assert not [k for k in keys if k in squeezed], (name, cell)
            assert not matcher.find(cell), (name, cell)
            assert first_unreadable(cell) is None, (name, cell)


# --- 2. near-copies of the target: test_deidentification_target.py (its own planted build, which
# another xdist worker can make while this file's runs)
def test_pair_column_equal_to_delta_mean_is_refused(default_release, default_warehouse, tmp_path):
    """A pair-keyed column equal to |delta mean| planted into the exported gold pairs."""
    out, gated = default_release
    settings, _ = default_warehouse
    copy = tmp_path / "release"
    shutil.copytree(out, copy)
    ctx = _context(settings, gated)
    pairs = pl.read_csv(copy / "benchmark" / "gold_pairs.csv")
    cmap = pl.read_csv(gated / "public_code_map.csv", infer_schema_length=None)
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        means = con.sql("select category, product_code, panel_mean from marts.fct_panel_means").pl()
    finally:
        con.close()
    codes = cmap.select("category", "public_code", pl.col("product_code").cast(pl.Int64))
    means = means.with_columns(pl.col("product_code").cast(pl.Int64))

    def mean_of(col: str) -> pl.Series:
        m = pairs.select("category", pl.col(col).alias("public_code")).with_row_index("_r")
        m = m.join(codes, on=["category", "public_code"]).join(
            means, on=["category", "product_code"]
        )
        return m.sort("_r")["panel_mean"]

    margin = (mean_of("public_code_1") - mean_of("public_code_2")).abs().round(4)
    pairs.with_columns(margin=margin).write_csv(copy / "benchmark" / "gold_pairs.csv")
    found = guard_release_dir(copy, ctx)
    assert any(v.table == "benchmark/gold_pairs.csv" and v.column == "margin" for v in found), [
        v.message for v in found
    ]


# --- 3. cross-file linkage ----------------------------------------------------------------------
def _context(settings, gated: Path) -> GatedContext:
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        cmap = pl.read_csv(gated / "public_code_map.csv", infer_schema_length=None)
        return GatedContext.from_warehouse(con, code_map=cmap.to_pandas())
    finally:
        con.close()


def test_linkage_guard_fails_today_layout_and_passes_the_new_one(
    default_release, default_warehouse, public_dir, tmp_path
):
    out, gated = default_release
    settings, _ = default_warehouse
    ctx = _context(settings, gated)
    assert guard_release_dir(out, ctx) == []  # the new layout: upstream files referenced by hash
    assert not (out / "tastebench_public_oof").exists()
    # today's layout: the published OOF files re-published beside products.csv, with true_rank
    old = tmp_path / "old_layout"
    shutil.copytree(out, old)
    (old / "tastebench_public_oof").mkdir()
    for src in sorted(
        (public_dir / "food_similarity" / "results" / "oof_predictions").glob("*.csv")
    ):
        f = pl.read_csv(src).rename({"product_code": "tastebench_public_code"})
        f.write_csv(old / "tastebench_public_oof" / src.name)
    found = [v for v in guard_release_dir(old, ctx) if v.rule == "cross_file_linkage"]
    assert found, "joining products.csv and a published OOF file on (category, true_rank)"
    msg = next(v.message for v in found if v.table == "benchmark/products.csv")
    assert "(category, true_rank)" in msg and "tastebench_public_code" in msg
    assert "reproduce" in msg  # on the simulation the upstream codes are the raw codes


# --- 4. gated paths follow --db -----------------------------------------------------------------
def _tree(path: Path) -> list[tuple[str, int]]:
    return sorted(
        (p.relative_to(path).as_posix(), p.stat().st_mtime_ns) for p in path.rglob("*")
    ) if path.exists() else []  # fmt: skip


def _release_elsewhere(settings, root: Path) -> dict:
    """`release` and `competition` of a copy in another folder, with the build folder set to one
    that stands for the repository's build/ (the default)."""
    repo_build = root / "repo_build"
    repo_build.mkdir()
    (repo_build / "keep.txt").write_text("x")
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    db = elsewhere / "wh.duckdb"
    shutil.copyfile(settings.db_path, db)
    with environment({"TASTEBENCH_BUILD_DIR": str(repo_build)}):
        assert load_settings().build_dir == repo_build.resolve()
        before = _tree(repo_build)
        runs = [
            _invoke(command, str(root / "public" / command), "--db", str(db))
            for command in ("release", "competition")
        ]
    return {
        "codes": [r.exit_code for r in runs], "outputs": [r.output for r in runs],
        "untouched": _tree(repo_build) == before,
        "code_map": (elsewhere / "gated" / "public_code_map.csv").is_file(),
        "solution": (elsewhere / "gated" / "competition" / "solution.csv").is_file(),
    }  # fmt: skip


def test_release_and_competition_with_db_elsewhere_leave_build_untouched(
    default_warehouse, tmp_path_factory
):
    """Run once and kept between runs while nothing it depends on changed (``built_once``)."""
    make = partial(_release_elsewhere, default_warehouse[0])
    done = built_once(tmp_path_factory, "release_elsewhere", make)
    assert done["codes"] == [0, 0], done["outputs"]
    assert done["untouched"] and done["code_map"] and done["solution"]


def _failed_elsewhere(settings, root: Path) -> dict:
    """A build of a copy in another folder whose gate fails (dbt replaced by a copy of the
    default build and a manifest that declares a table with brands and UPCs public)."""
    repo_build = root / "repo_build"
    elsewhere = root / "elsewhere"
    elsewhere.mkdir()
    db = elsewhere / "wh.duckdb"
    shutil.copyfile(settings.db_path, db)

    def fake_dbt(args, settings_, db_path, work_dir=None):
        shutil.copyfile(settings.db_path, db_path)
        manifest = json.loads(governance.manifest_path(settings.build_dir).read_text())
        node = manifest["nodes"]["model.tastebench.stg_nectar__products"]
        node["config"]["meta"]["data_access"] = "public"
        target = governance.manifest_path(settings_.build_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(manifest))

    with (
        environment({"TASTEBENCH_BUILD_DIR": str(repo_build)}),
        mock.patch.object(build_module, "run_dbt", fake_dbt),
    ):
        res = _invoke(
            "build", "--db", str(db), "--mirror", str(settings.mirror),
            "--nectar", str(settings.default_simulation_dir),
        )  # fmt: skip
    report = elsewhere / "reports" / "quality.html"
    history = elsewhere / "quality" / "history.jsonl"
    return {
        "code": res.exit_code, "message": str(res.exception) + res.output,
        "report": report.read_text() if report.is_file() else None,
        "history": history.read_text().splitlines() if history.is_file() else None,
        "repo_build": sorted(p.name for p in repo_build.iterdir()) if repo_build.is_dir() else [],
    }  # fmt: skip


def test_failed_build_with_db_elsewhere_reports_beside_it_without_gated_values(
    default_warehouse, tmp_path_factory
):
    """The gate fails (a table with brands and UPCs declared public): the report and the history
    land beside X, the repository's build/ stays empty, and neither the console message nor the
    report quotes a brand or a UPC. The build runs once and is kept (``built_once``)."""
    settings, _ = default_warehouse
    make = partial(_failed_elsewhere, settings)
    run = built_once(tmp_path_factory, "failed_elsewhere", make)
    assert run["code"] != 0
    assert run["report"] is not None and run["history"] is not None
    assert json.loads(run["history"][-1])["success"] is False
    assert "reports" not in run["repo_build"] and "quality" not in run["repo_build"]
    con = duckdb.connect(str(settings.db_path), read_only=True)
    try:
        brands = [
            b
            for (b,) in con.sql(
                "select distinct brand from staging.stg_nectar__products"
            ).fetchall()
        ]
        upcs = [
            u
            for (u,) in con.sql("select distinct upc from staging.stg_nectar__products").fetchall()
        ]
    finally:
        con.close()
    html = " ".join(run["report"].split())
    message = " ".join(run["message"].split())  # the console wraps lines
    for text in (html, message):
        assert not [b for b in brands if b in text], "a brand is quoted"
        assert not [u for u in upcs if u.lstrip("0") in text], "a UPC is quoted"
