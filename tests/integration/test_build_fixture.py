"""End to end: `build` on the hand-written NECTAR fixture + the public mirror + a FoodAtlas v4
fixture, then check staging against the registry pins and the atomic-publish guarantee."""

from __future__ import annotations

import dataclasses
import shutil
from functools import partial
from pathlib import Path

import duckdb
import pandas as pd
import pytest

from tests.conftest import built_once
from tests.unit.test_public_loaders import _write_v4_fixture
from warehouse.errors import DataValidationError
from warehouse.pipeline.dbt import BuildError
from warehouse.pipeline.run import build
from warehouse.sources import registry

pytestmark = pytest.mark.integration
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "nectar_mini"


@pytest.fixture(scope="module")
def built(fixture_warehouse):
    return fixture_warehouse


def _count(db: Path, sql: str) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def test_build_publishes_one_duckdb_file(built) -> None:
    settings, result = built
    assert result.db_path == settings.db_path and result.db_path.exists()
    assert result.data_origin == "test_fixture"
    assert [p.name for p in settings.db_path.parent.glob("*.duckdb")] == ["tastebench.duckdb"]
    assert not list(settings.build_dir.glob(".*building*"))


@pytest.mark.parametrize(
    ("sql", "key"),
    [
        ("select count(*) from staging.stg_fartdb__molecules where split='train'", "fartdb_train"),
        ("select count(*) from staging.stg_fartdb__molecules where split='val'", "fartdb_val"),
        ("select count(*) from staging.stg_fartdb__molecules where split='test'", "fartdb_test"),
        ("select count(*) from staging.stg_tastebench__gold_pairs", "tastebench_gold_pairs"),
        (
            "select count(*) from staging.stg_tastebench__panelist_block_accuracy",
            "tastebench_panelist_block_accuracy",
        ),
        (
            "select count(*) from staging.stg_tastebench__competition_products",
            "tastebench_competition_products",
        ),
        (
            "select count(*) from staging.stg_foodatlas__pubchem_compounds",
            "foodatlas_kgv2_pubchem_compound",
        ),
    ],
)
def test_staging_counts_equal_registry_pins(built, sql, key) -> None:
    assert _count(built[0].db_path, sql) == registry.get(key).rows


def test_every_oof_file_has_215_rows(built) -> None:
    con = duckdb.connect(str(built[0].db_path), read_only=True)
    counts = con.sql(
        "select model_file_stem, count(*) from staging.stg_tastebench__oof_predictions group by 1"
    ).fetchall()
    con.close()
    oof_keys = [k for k in registry.load_registry() if k.startswith("tastebench_oof_")]
    assert len(counts) == len(oof_keys) == 9
    assert {n for _, n in counts} == {215}


def test_fartdb_class_counts_in_staging(built) -> None:
    con = duckdb.connect(str(built[0].db_path), read_only=True)
    rows = con.sql(
        "select split, taste_class, count(*) from staging.stg_fartdb__molecules group by all"
    ).fetchall()
    con.close()
    for split in ("train", "val", "test"):
        got = {c: n for s, c, n in rows if s == split}
        assert got == registry.get(f"fartdb_{split}").class_counts


def test_staging_maps_aliases_and_no_response(built) -> None:
    db = built[0].db_path
    assert (
        _count(
            db,
            "select count(*) from staging.stg_nectar__images where category='Butter' "
            "and category_folder='Salted_Butter'",
        )
        == 1
    )
    assert (
        _count(
            db,
            "select count(*) from staging.stg_nectar__ratings "
            "where purchase_intent = 'No response' or brand_response is not null",
        )
        == 0
    )
    assert (
        _count(
            db,
            "select count(distinct category) from staging.stg_nectar__ratings "
            "where respondent_id = 101",
        )
        == 2
    )


def test_foodatlas_v1_and_v4_are_unioned(built) -> None:
    db = built[0].db_path
    assert (
        _count(db, "select count(*) from staging.stg_foodatlas__edges where kg_version='v1'")
        == registry.get("foodatlas_v1_data_cocoa").rows
        + registry.get("foodatlas_v1_data_garlic").rows
    )
    assert (
        _count(
            db,
            "select count(*) from staging.stg_foodatlas__edges where kg_version='v4' "
            "and relationship='contains'",
        )
        == 2
    )
    assert (
        _count(
            db, "select pubchem_cid from staging.stg_foodatlas__entities where entity_id='v4:e3'"
        )
        == 5988
    )


def test_foodatlas_attestations_are_typed(built) -> None:
    con = duckdb.connect(str(built[0].db_path), read_only=True)
    rows = con.sql(
        "select attestation_id, concentration_value, concentration_unit, filter_score, "
        "is_validated, is_validated_correct, file_row_number "
        "from staging.stg_foodatlas__attestations order by attestation_id"
    ).fetchall()
    types = dict(
        con.sql(
            "select column_name, data_type from information_schema.columns "
            "where table_name = 'stg_foodatlas__attestations'"
        ).fetchall()
    )
    con.close()
    assert rows == [
        ("a1", 1.5, "mg/100g", 0.9, True, True, 1),
        ("a2", None, None, 0.4, False, None, 2),
    ]
    assert types["concentration_value"] == "DOUBLE" and types["is_validated"] == "BOOLEAN"


def test_every_raw_table_has_lineage_columns(built) -> None:
    con = duckdb.connect(str(built[0].db_path), read_only=True)
    tables = [
        r[0]
        for r in con.sql(
            "select table_name from information_schema.tables where table_schema='raw'"
        ).fetchall()
    ]
    for t in tables:
        cols = {r[0] for r in con.sql(f'describe raw."{t}"').fetchall()}
        assert {"_source_file", "_loaded_at", "data_origin"} <= cols, t
    origins = dict(
        con.sql(
            "select distinct 'x', data_origin from raw.nectar_consolidated_sensory_rating"
        ).fetchall()
    )
    con.close()
    assert origins == {"x": "test_fixture"}
    assert len(tables) >= 20


def _bad_bundle_setup(built, tmp_path: Path):
    """Settings on the shared warehouse file with their own work folder (the shared build's dbt
    artifacts stay untouched), the file's bytes now, and a copy of the fixture bundle to break."""
    settings = dataclasses.replace(built[0], build_dir=tmp_path / "work")
    bad = tmp_path / "bad"
    shutil.copytree(FIXTURE, bad)
    return settings, settings.db_path.read_bytes(), bad


def test_failed_load_keeps_previous_warehouse(built, tmp_path: Path) -> None:
    settings, before, bad = _bad_bundle_setup(built, tmp_path)
    ratings = bad / "nectar_consolidated_sensory_rating.csv"
    frame = pd.read_csv(ratings, dtype=str, keep_default_na=False)
    frame.loc[0, "similarity"] = "9.0"
    frame.to_csv(ratings, index=False)
    with pytest.raises(DataValidationError, match="similarity"):
        build(settings, nectar=bad, log=lambda m: None)
    assert settings.db_path.read_bytes() == before


@pytest.fixture(scope="module")
def failed_dbt_test(built, tmp_path_factory) -> dict:
    """A build whose bundle loads fine but fails a staging relationship test, run once and kept
    between runs while nothing it depends on changed (``built_once``)."""
    make = partial(_failed_dbt_test, built)
    return built_once(tmp_path_factory, "failed_dbt_test", make, code=[_write_v4_fixture])


def _failed_dbt_test(built, root: Path) -> dict:
    settings, before, bad = _bad_bundle_setup(built, root)
    labels = bad / "nectar_product_labels.csv"
    frame = pd.read_csv(labels, dtype=str, keep_default_na=False)
    frame = frame[~((frame.category == "Bacon") & (frame.product_code == "2"))]
    frame.to_csv(labels, index=False)
    manual = bad / "product_labels_manually_cleaned.csv"
    frame.to_csv(manual, index=False)
    error = None
    try:
        # staging alone is enough to reach the failing test (and keeps this test fast)
        build(
            settings,
            nectar=bad,
            dbt_args=["--select", "resource_type:seed", "staging"],
            log=lambda m: None,
        )
    except BuildError as exc:
        error = str(exc)
    return {
        "error": error,
        "unchanged": settings.db_path.read_bytes() == before,
        "files": [p.name for p in settings.db_path.parent.glob("*.duckdb")],
    }


def test_failed_dbt_test_keeps_previous_warehouse(failed_dbt_test) -> None:
    """Loads fine, but a staging relationship test fails: the old file keeps serving."""
    assert failed_dbt_test["error"] is not None, "the build did not fail"
    assert "relationships_stg_nectar__ratings_product_key" in failed_dbt_test["error"]
    assert failed_dbt_test["unchanged"]
    assert failed_dbt_test["files"] == ["tastebench.duckdb"]
