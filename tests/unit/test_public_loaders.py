"""Public-source readers: pinned counts, FartDB classes, OOF names, FoodAtlas v4 layout, declared
schemas and file row numbers."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from unittest import mock

import polars as pl
import pytest

from warehouse.config import load_settings
from warehouse.errors import DataValidationError
from warehouse.sources import public, registry


@pytest.fixture(scope="module")
def settings(data_mirror: Path):
    return load_settings(mirror=data_mirror)


def _counts(values: pl.Series) -> dict:
    return dict(values.value_counts().iter_rows())


def _csv_records(path: Path, delimiter: str = ",") -> list[dict[str, str]]:
    """The file's records by the standard library's reader: an oracle independent of polars."""
    csv.field_size_limit(1 << 30)  # PubChem synonym lists exceed the default 128 KiB
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter=delimiter))


def _bypass_pins():
    """Edited copies of pinned files change their hash: skip the pin to reach the later checks."""
    return mock.patch.object(registry, "verify", lambda d, p: p)


def _mirror_copy(data_mirror: Path, tmp_path: Path, key: str) -> Path:
    d = registry.get(key)
    (tmp_path / d.path).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(data_mirror / d.path, tmp_path / d.path)
    return tmp_path / d.path


def test_fartdb_counts_and_classes(settings) -> None:
    (table,) = public.read_fartdb(settings)
    frame = table.frame
    assert _counts(frame["split"]) == {"train": 10517, "val": 2254, "test": 2254}
    test_counts = _counts(frame.filter(pl.col("split") == "test")["Canonicalized Taste"])
    assert test_counts == registry.get("fartdb_test").class_counts
    assert test_counts["umami"] == 6


def test_fartdb_rows_keep_their_file_position(settings, data_mirror: Path) -> None:
    (table,) = public.read_fartdb(settings)
    frame = table.frame
    for split in ("train", "val", "test"):
        part = frame.filter(pl.col("split") == split)
        on_disk = _csv_records(data_mirror / "fartdb" / f"fart_{split}.csv")
        assert part["_file_row"].to_list() == list(range(1, len(on_disk) + 1))
        assert part["file_row_id"].to_list() == [int(r[""]) for r in on_disk]
        assert part["Canonicalized SMILES"].to_list() == [
            r["Canonicalized SMILES"] for r in on_disk
        ]
    # the file's own index is not file order in val/test: it cannot order predictions
    assert not frame.filter(pl.col("split") == "val")["file_row_id"].is_sorted()


def test_fartdb_unknown_class_label(data_mirror: Path, tmp_path: Path) -> None:
    for split in ("train", "val", "test"):
        _mirror_copy(data_mirror, tmp_path, f"fartdb_{split}")
    # a wrong label also changes the hash: bypass the pin to reach the label check
    path = tmp_path / registry.get("fartdb_val").path
    text = path.read_text().splitlines()
    text[3] = text[3].replace(",sweet,", ",salty,")
    path.write_text("\n".join(text) + "\n")
    assert [r["Canonicalized Taste"] for r in _csv_records(path)].count("salty") == 1
    with _bypass_pins(), pytest.raises(DataValidationError) as err:
        public.read_fartdb(load_settings(mirror=tmp_path))
    assert "unknown taste class 'salty'" in str(err.value)
    assert err.value.column == "Canonicalized Taste" and err.value.row == 3


@pytest.mark.parametrize(
    ("stem", "expected"),
    [
        ("dist_pred_l2_NCI", ("dist_pred_l2", "NCI", False)),
        ("hierarchical_bt_SNCTI_bench", ("hierarchical_bt", "SNCTI", True)),
        (
            "llm_gemini_3_1_pro_preview_ingredients_image",
            ("llm_gemini_3_1_pro_preview", "ingredients_image", False),
        ),
        ("nested_bt_gemini_nnls", ("nested_bt_gemini_nnls", None, False)),
    ],
)
def test_parse_oof_name(stem, expected) -> None:
    assert public.parse_oof_name(stem) == expected


def test_oof_predictions_have_215_rows_per_file(settings) -> None:
    (table,) = public.read_oof_predictions(settings)
    counts = _counts(table.frame["file_stem"])
    assert len(counts) == 9 and set(counts.values()) == {215}
    assert table.frame["true_rank"].null_count() == 0


def _write_v4_fixture(root: Path) -> None:
    root.mkdir(parents=True)
    entities = pl.DataFrame(
        {
            "foodatlas_id": ["e1", "e2", "e3"],
            "entity_type": ["food", "chemical", "chemical"],
            "common_name": ["soybean", "genistein", "sucrose"],
            "scientific_name": ["Glycine max", None, None],
            "synonyms": [json.dumps(["soy"]), json.dumps([]), json.dumps(["sugar"])],
            "external_ids": [
                json.dumps({"foodon": ["FOODON_1"]}),
                json.dumps({"pubchem_compound": [5280961]}),
                json.dumps({"pubchem_compound": [5988], "chebi": [17992]}),
            ],
            "attributes": [json.dumps({})] * 3,
        }
    )
    triplets = pl.DataFrame(
        {
            "head_id": ["e1", "e1"],
            "relationship_id": ["r1", "r1"],
            "tail_id": ["e2", "e3"],
            "source": ["fdc", "lit2kg"],
            "attestation_ids": [json.dumps(["a1"]), json.dumps(["a2"])],
        }
    )
    relationships = pl.DataFrame({"foodatlas_id": ["r1", "r2"], "name": ["contains", "is_a"]})
    evidence = pl.DataFrame(
        {
            "evidence_id": ["ev1"],
            "source_type": ["database"],
            "reference": [json.dumps({"url": "https://example.org"})],
        }
    )
    attestations = pl.DataFrame(
        {
            "attestation_id": ["a1", "a2"],
            "evidence_id": ["ev1", "ev1"],
            "source": ["fdc", "x"],
            "head_name_raw": ["soy", "soy"],
            "tail_name_raw": ["genistein", "sucrose"],
            "conc_value": [1.5, None],
            "conc_unit": ["mg/100g", None],
            "conc_value_raw": ["1.5", None],
            "conc_unit_raw": ["mg/100 g", None],
            "food_part": [None, None],
            "food_processing": [None, None],
            "quality_score": [0.9, 0.4],
            "validated": [True, False],
            "validated_correct": [True, None],
            "head_candidates": ["[]", "[]"],
            "tail_candidates": ["[]", "[]"],
        },
        schema_overrides={"food_part": pl.String, "food_processing": pl.String},
    )
    for name, frame in [
        ("entities", entities),
        ("triplets", triplets),
        ("relationships", relationships),
        ("evidence", evidence),
        ("attestations", attestations),
    ]:
        frame.write_parquet(root / f"{name}.parquet")


def test_foodatlas_v4_layout_loads(tmp_path: Path, settings) -> None:
    root = tmp_path / "foodatlas-v4.0"
    _write_v4_fixture(root)
    tables = {t.name: t for t in public.read_foodatlas_v4(root, settings)}
    assert set(tables) == {f"foodatlas_v4_{n}" for n in public.FOODATLAS_V4_SCHEMA}
    att = tables["foodatlas_v4_attestations"].frame
    assert "filter_score" in att.columns  # quality_score alias accepted
    assert att["conc_value"].to_list() == [1.5, None]  # values as stored, typed as stored
    assert att["_file_row"].to_list() == [1, 2]
    assert tables["foodatlas_v4_entities"].data_origin == "foodatlas"
    # evidence.parquet is part of the bundle but not read: no model uses it
    assert "foodatlas_v4_evidence" not in tables


def test_foodatlas_v4_nested_values_become_json_text(tmp_path: Path, settings) -> None:
    root = tmp_path / "foodatlas-v4.0"
    _write_v4_fixture(root)
    nested = pl.read_parquet(root / "entities.parquet").with_columns(
        synonyms=pl.Series([["soy", "soya"], [], None], dtype=pl.List(pl.String)),
        external_ids=pl.Series(
            [{"pubchem_compound": None}, {"pubchem_compound": [5280961]}, None],
            dtype=pl.Struct({"pubchem_compound": pl.List(pl.Int64)}),
        ),
    )
    nested.write_parquet(root / "entities.parquet")
    tables = {t.name: t for t in public.read_foodatlas_v4(root, settings)}
    entities = tables["foodatlas_v4_entities"].frame
    assert entities["synonyms"].dtype == pl.String
    assert [None if v is None else json.loads(v) for v in entities["synonyms"]] == [
        ["soy", "soya"],
        [],
        None,
    ]
    assert json.loads(entities["external_ids"][1]) == {"pubchem_compound": [5280961]}
    assert entities["external_ids"][2] is None


def test_foodatlas_v4_missing_file(tmp_path: Path, settings) -> None:
    root = tmp_path / "foodatlas-v4.0"
    _write_v4_fixture(root)
    (root / "triplets.parquet").unlink()
    with pytest.raises(DataValidationError, match="triplets.parquet"):
        public.read_foodatlas_v4(root, settings)


def test_foodatlas_v4_absent_gives_empty_tables(settings) -> None:
    tables = public.read_foodatlas_v4(None, settings)
    assert all(len(t.frame) == 0 for t in tables)
    assert {t.data_origin for t in tables} == {"foodatlas_absent"}
    for t in tables:
        name = t.name.removeprefix("foodatlas_v4_")
        assert t.frame.columns == [*public.FOODATLAS_V4_SCHEMA[name], "_file_row"]


def _public_tables(settings) -> list:
    return [
        *public.read_fartdb(settings),
        *public.read_foodatlas_v1(settings),
        *public.read_tastebench_public(settings),
    ]


def test_every_public_table_numbers_its_file_rows(settings, data_mirror: Path) -> None:
    """``_file_row`` is the 1-based record number inside each source file, in file order."""
    pinned = {str(data_mirror / d.path): d for d in registry.load_registry().values() if d.rows}
    seen = set()
    for table in _public_tables(settings):
        frame = table.frame.with_columns(
            pl.col("_source_file").fill_null(table.source_file)
            if "_source_file" in table.frame.columns
            else pl.lit(table.source_file).alias("_source_file")
        )
        for (source,), part in frame.group_by("_source_file", maintain_order=True):
            d = pinned[source]
            assert part["_file_row"].to_list() == list(range(1, d.rows + 1)), (table.name, d.key)
            seen.add(d.key)
    assert {"tastebench_gold_pairs", "foodatlas_v1_data_garlic", "fartdb_val"} <= seen
    assert len([k for k in seen if k.startswith("tastebench_oof_")]) == 9


def test_public_tables_follow_their_declared_schemas(settings, data_mirror: Path) -> None:
    tables = {t.name: t.frame for t in _public_tables(settings)}
    for key, name, schema, _ in public.TASTEBENCH_FILES:
        frame = tables[name]
        assert {c: frame.schema[c] for c in schema} == schema, key
        assert frame.schema["_file_row"] == pl.Int64
    # values as in the file (the standard library reads the same cells)
    path = data_mirror / registry.get("tastebench_panelist_block_accuracy").path
    records = _csv_records(path)
    frame = tables["tastebench_panelist_block_accuracy"]
    assert frame["spearman"].to_list() == [
        float(r["spearman"]) if r["spearman"] else None for r in records
    ]
    assert frame["category"].to_list() == [r["category"] for r in records]
    compounds = tables["foodatlas_kgv2_pubchem_compounds"]
    tsv = _csv_records(data_mirror / registry.get("foodatlas_kgv2_pubchem_compound").path, "\t")
    assert compounds["CanonicalSmiles"].to_list() == [r["CanonicalSmiles"] or None for r in tsv]


def test_public_value_of_the_wrong_type_names_row_and_column(data_mirror, tmp_path) -> None:
    path = _mirror_copy(data_mirror, tmp_path, "tastebench_gold_pairs")
    lines = path.read_text().splitlines(keepends=True)
    lines[3] = "4x," + lines[3].split(",", 1)[1]  # data row 3
    path.write_text("".join(lines))
    with _bypass_pins(), pytest.raises(DataValidationError) as err:
        public.read_registered(
            "tastebench_gold_pairs", load_settings(mirror=tmp_path), public.TASTEBENCH_FILES[0][2]
        )
    e = err.value
    assert (e.row, e.column) == (3, "pair_id")
    assert "'4x' is not an integer" in str(e) and str(path) in str(e)


def test_public_file_with_an_undeclared_column(data_mirror, tmp_path) -> None:
    path = _mirror_copy(data_mirror, tmp_path, "tastebench_split_half_iterations")
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0] + ",extra", *(x + ",1" for x in lines[1:])]) + "\n")
    key, _, schema, _ = public.TASTEBENCH_FILES[2]
    assert key == "tastebench_split_half_iterations"
    with _bypass_pins(), pytest.raises(DataValidationError) as err:
        public.read_registered(key, load_settings(mirror=tmp_path), schema)
    assert err.value.column == "extra" and "unknown column" in str(err.value)
