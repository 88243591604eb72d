"""Public-source readers: pinned counts, FartDB classes, OOF names, FoodAtlas v4 layout."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from warehouse.config import load_settings
from warehouse.errors import DataValidationError
from warehouse.sources import public, registry


@pytest.fixture(scope="module")
def settings(data_mirror: Path):
    return load_settings(mirror=data_mirror)


def test_fartdb_counts_and_classes(settings) -> None:
    (table,) = public.read_fartdb(settings)
    frame = table.frame
    assert frame["split"].value_counts().to_dict() == {"train": 10517, "val": 2254, "test": 2254}
    test_counts = frame[frame.split == "test"]["Canonicalized Taste"].value_counts().to_dict()
    assert test_counts == registry.get("fartdb_test").class_counts
    assert test_counts["umami"] == 6


def test_fartdb_rows_keep_their_file_position(settings, data_mirror: Path) -> None:
    (table,) = public.read_fartdb(settings)
    frame = table.frame
    for split in ("train", "val", "test"):
        part = frame[frame.split == split]
        on_disk = pd.read_csv(data_mirror / "fartdb" / f"fart_{split}.csv")
        assert part["_file_row"].tolist() == list(range(1, len(on_disk) + 1))
        assert part["file_row_id"].tolist() == on_disk["Unnamed: 0"].tolist()
    # the file's own index is not file order in val/test: it cannot order predictions
    assert not frame[frame.split == "val"]["file_row_id"].is_monotonic_increasing


def test_fartdb_unknown_class_label(data_mirror: Path, tmp_path: Path) -> None:
    for split in ("train", "val", "test"):
        d = registry.get(f"fartdb_{split}")
        (tmp_path / d.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(data_mirror / d.path, tmp_path / d.path)
    # a wrong label also changes the hash: bypass the pin to reach the label check
    path = tmp_path / registry.get("fartdb_val").path
    text = path.read_text().splitlines()
    text[3] = text[3].replace(",sweet,", ",salty,")
    path.write_text("\n".join(text) + "\n")
    frame = pd.read_csv(path)
    assert (frame["Canonicalized Taste"] == "salty").sum() == 1
    from unittest import mock

    with (
        mock.patch.object(registry, "verify", lambda d, p: p),
        pytest.raises(DataValidationError) as err,
    ):
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
    counts = table.frame.groupby("file_stem").size()
    assert len(counts) == 9 and (counts == 215).all()
    assert table.frame["true_rank"].notna().all()


def _write_v4_fixture(root: Path) -> None:
    root.mkdir(parents=True)
    entities = pd.DataFrame(
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
    triplets = pd.DataFrame(
        {
            "head_id": ["e1", "e1"],
            "relationship_id": ["r1", "r1"],
            "tail_id": ["e2", "e3"],
            "source": ["fdc", "lit2kg"],
            "attestation_ids": [json.dumps(["a1"]), json.dumps(["a2"])],
        }
    )
    relationships = pd.DataFrame({"foodatlas_id": ["r1", "r2"], "name": ["contains", "is_a"]})
    evidence = pd.DataFrame(
        {
            "evidence_id": ["ev1"],
            "source_type": ["database"],
            "reference": [json.dumps({"url": "https://example.org"})],
        }
    )
    attestations = pd.DataFrame(
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
        }
    )
    for name, frame in [
        ("entities", entities),
        ("triplets", triplets),
        ("relationships", relationships),
        ("evidence", evidence),
        ("attestations", attestations),
    ]:
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), root / f"{name}.parquet")


def test_foodatlas_v4_layout_loads(tmp_path: Path, settings) -> None:
    root = tmp_path / "foodatlas-v4.0"
    _write_v4_fixture(root)
    tables = {t.name: t for t in public.read_foodatlas_v4(root, settings)}
    assert set(tables) == {f"foodatlas_v4_{n}" for n in public.FOODATLAS_V4_SCHEMA}
    att = tables["foodatlas_v4_attestations"].frame
    assert "filter_score" in att.columns  # quality_score alias accepted
    assert tables["foodatlas_v4_entities"].data_origin == "foodatlas"


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
