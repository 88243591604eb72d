"""Readers for the public sources: FartDB, FoodAtlas (v1 extracts, KGv2 seed, v4.0 bundle layout)
and the TasteBench public artifacts. Values are kept as stored; each reader checks the registry's
row counts (and FartDB's per-class counts) and raises DataValidationError naming the file.
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from warehouse.config import Settings
from warehouse.errors import DataValidationError
from warehouse.sources import registry
from warehouse.sources.seeds import category_lookup

TASTE_CLASSES = ("sweet", "bitter", "sour", "umami", "undefined")
FEATURE_SET = re.compile(r"^[SNCTI]+$")
LLM_INPUTS = ("ingredients_image", "ingredients", "image", "text")


@dataclass
class RawTable:
    """A frame destined for ``raw.<name>`` with its lineage."""

    name: str
    frame: pd.DataFrame
    source_file: str
    data_origin: str


def _check_rows(key: str, path: Path, frame: pd.DataFrame) -> None:
    expected = registry.get(key).rows
    if expected is not None and len(frame) != expected:
        raise DataValidationError(
            str(path),
            f"{len(frame)} data rows, the registry pins {expected} for dataset '{key}'",
            "restore the pinned file (its sha256 is in warehouse/sources/datasets.toml)",
        )


def _read(key: str, settings: Settings, **kwargs) -> tuple[Path, pd.DataFrame]:
    path = registry.resolve(key, settings)
    frame = pd.read_csv(path, **kwargs)
    _check_rows(key, path, frame)
    return path, frame


def read_fartdb(settings: Settings) -> list[RawTable]:
    frames = []
    for split in ("train", "val", "test"):
        key = f"fartdb_{split}"
        path, frame = _read(key, settings, dtype={"Canonicalized Taste": str})
        frame = frame.rename(columns={"Unnamed: 0": "file_row_id"})
        # 1-based data row in the split file (header excluded): the order models are trained and
        # scored in. ``file_row_id`` is an index into the unsplit FART table, not file order.
        frame["_file_row"] = np.arange(1, len(frame) + 1, dtype=np.int64)
        labels = frame["Canonicalized Taste"]
        unknown = ~labels.isin(TASTE_CLASSES)
        if unknown.any():
            i = int(unknown.to_numpy().nonzero()[0][0]) + 1
            raise DataValidationError(
                str(path),
                f"unknown taste class {labels[unknown].iloc[0]!r}",
                f"classes are {', '.join(TASTE_CLASSES)}",
                row=i,
                column="Canonicalized Taste",
            )
        expected = registry.get(key).class_counts
        actual = labels.value_counts().to_dict()
        if expected and {k: int(actual.get(k, 0)) for k in expected} != expected:
            raise DataValidationError(
                str(path),
                f"per-class counts {actual} differ from the published {expected}",
                "restore the pinned split file",
                column="Canonicalized Taste",
            )
        frame.insert(0, "split", split)
        frames.append((path, frame))
    combined = pd.concat([f for _, f in frames], ignore_index=True)
    combined["_source_file"] = [str(p) for p, f in frames for _ in range(len(f))]
    return [RawTable("fartdb_molecules", combined, "", "fartdb")]


def read_foodatlas_v1(settings: Settings) -> list[RawTable]:
    tables = []
    for kind in ("data", "evidence"):
        parts = []
        for food in ("cocoa", "garlic"):
            key = f"foodatlas_v1_{kind}_{food}"
            path, frame = _read(key, settings, dtype=str, keep_default_na=False, na_values=[""])
            frame.insert(0, "extract_food", food)
            frame["_source_file"] = str(path)
            parts.append(frame)
        name = "foodatlas_v1_triples" if kind == "data" else "foodatlas_v1_evidence"
        tables.append(RawTable(name, pd.concat(parts, ignore_index=True), "", "foodatlas"))
    for key, name in (
        ("foodatlas_kgv2_pubchem_compound", "foodatlas_kgv2_pubchem_compounds"),
        ("foodatlas_kgv2_fdc_cids", "foodatlas_kgv2_fdc_nutrient_cids"),
    ):
        path, frame = _read(
            key, settings, sep="\t", dtype=str, keep_default_na=False, na_values=[""]
        )
        tables.append(RawTable(name, frame, str(path), "foodatlas"))
    return tables


# FoodAtlas v4.0 bundle layout: file -> required columns (from the FoodAtlas code; PROVENANCE.md).
FOODATLAS_V4_SCHEMA: dict[str, tuple[str, ...]] = {
    "entities": (
        "foodatlas_id",
        "entity_type",
        "common_name",
        "scientific_name",
        "synonyms",
        "external_ids",
        "attributes",
    ),
    "triplets": ("head_id", "relationship_id", "tail_id", "source", "attestation_ids"),
    "relationships": ("foodatlas_id", "name"),
    "evidence": ("evidence_id", "source_type", "reference"),
    "attestations": (
        "attestation_id",
        "evidence_id",
        "source",
        "head_name_raw",
        "tail_name_raw",
        "conc_value",
        "conc_unit",
        "conc_value_raw",
        "conc_unit_raw",
        "food_part",
        "food_processing",
        "filter_score",
        "validated",
        "validated_correct",
        "head_candidates",
        "tail_candidates",
    ),
}
_V4_ALIASES = {"attestations": {"quality_score": "filter_score"}}


def _v4_root(path: Path, settings: Settings) -> Path:
    if path.suffix == ".zip":
        registry.verify(registry.get("foodatlas_v4_bundle"), path)
        target = settings.build_dir / "foodatlas_v4"
        with zipfile.ZipFile(path) as zf:
            zf.extractall(target)
        found = sorted(target.rglob("entities.parquet"))
        if not found:
            raise DataValidationError(
                str(path),
                "no entities.parquet inside the zip",
                "pass the official foodatlas-v4.0.zip",
            )
        return found[0].parent
    return path


def read_foodatlas_v4(path: Path | None, settings: Settings) -> list[RawTable]:
    """The official v4.0 bundle (folder or zip). Without one, empty tables with the same schema are
    written so downstream models always compile."""
    tables = []
    root = _v4_root(path, settings) if path is not None else None
    for name, columns in FOODATLAS_V4_SCHEMA.items():
        if root is None:
            frame = pd.DataFrame({c: pd.Series(dtype="string") for c in columns})
            source = ""
        else:
            file = root / f"{name}.parquet"
            if not file.exists():
                raise DataValidationError(
                    str(file),
                    "FoodAtlas v4 bundle file is missing",
                    "point TASTEBENCH_FOODATLAS_V4 at the unzipped foodatlas-v4.0/ folder, which "
                    f"holds {', '.join(f'{n}.parquet' for n in FOODATLAS_V4_SCHEMA)}",
                )
            frame = pd.read_parquet(file).rename(columns=_V4_ALIASES.get(name, {}))
            missing = [c for c in columns if c not in frame.columns]
            if missing:
                raise DataValidationError(
                    str(file),
                    f"missing column(s) {missing}",
                    "use the official v4.0 bundle",
                    column=missing[0],
                )
            frame = frame[list(columns)]
            # nested values (lists/dicts) are stored as JSON text in raw
            for col in frame.columns:
                if frame[col].map(lambda v: isinstance(v, (list, dict))).any():
                    import json

                    frame[col] = frame[col].map(
                        lambda v: (
                            json.dumps(v.tolist() if hasattr(v, "tolist") else v)
                            if v is not None
                            else None
                        )
                    )
            source = str(file)
        tables.append(
            RawTable(
                f"foodatlas_v4_{name}",
                frame,
                source,
                "foodatlas" if root is not None else "foodatlas_absent",
            )
        )
    return tables


def parse_oof_name(stem: str) -> tuple[str, str | None, bool]:
    """``<model>_<feature set>[_bench]`` -> (model, feature_set, is_bench); LLM files carry their
    inputs (e.g. ``ingredients_image``) as the feature set."""
    is_bench = stem.endswith("_bench")
    base = stem[: -len("_bench")] if is_bench else stem
    head, _, last = base.rpartition("_")
    if head and FEATURE_SET.match(last):
        return head, last, is_bench
    if base.startswith("llm_"):
        for inputs in LLM_INPUTS:
            if base.endswith("_" + inputs):
                return base[: -len(inputs) - 1], inputs, is_bench
    return base, None, is_bench


def _check_categories(path: Path, frame: pd.DataFrame, column: str) -> None:
    lookup = category_lookup()
    unknown = ~frame[column].isin(list(lookup))
    if unknown.any():
        i = int(unknown.to_numpy().nonzero()[0][0]) + 1
        raise DataValidationError(
            str(path),
            f"unknown category {frame[column][unknown].iloc[0]!r}",
            "use a canonical category from seeds/categories.csv or add the spelling to "
            "seeds/category_aliases.csv",
            row=i,
            column=column,
        )


def read_oof_predictions(settings: Settings) -> list[RawTable]:
    parts = []
    for key in sorted(k for k in registry.load_registry() if k.startswith("tastebench_oof_")):
        path, frame = _read(key, settings)
        required = {"category", "product_code", "predicted_score"}
        if missing := required - set(frame.columns):
            raise DataValidationError(
                str(path),
                f"missing column(s) {sorted(missing)}",
                "prediction files need category, product_code, predicted_score",
                column=sorted(missing)[0],
            )
        if "true_rank" not in frame.columns and "true_score" not in frame.columns:
            raise DataValidationError(str(path), "no gold column", "add true_rank or true_score")
        _check_categories(path, frame, "category")
        model, feature_set, is_bench = parse_oof_name(path.stem)
        parts.append(
            pd.DataFrame(
                {
                    "file_stem": path.stem,
                    "model_name": model,
                    "feature_set": feature_set,
                    "is_bench_variant": is_bench,
                    "category": frame["category"],
                    "product_code": frame["product_code"].astype("int64"),
                    "true_rank": frame.get(
                        "true_rank", pd.Series([None] * len(frame), dtype="float64")
                    ),
                    "true_score": frame.get(
                        "true_score", pd.Series([None] * len(frame), dtype="float64")
                    ),
                    "predicted_score": frame["predicted_score"].astype("float64"),
                    "_source_file": str(path),
                }
            )
        )
    return [
        RawTable(
            "tastebench_oof_predictions",
            pd.concat(parts, ignore_index=True),
            "",
            "tastebench_public",
        )
    ]


def read_tastebench_public(settings: Settings) -> list[RawTable]:
    out = []
    for key, name, check_col in (
        ("tastebench_gold_pairs", "tastebench_gold_pairs", "category"),
        ("tastebench_panelist_block_accuracy", "tastebench_panelist_block_accuracy", "category"),
        ("tastebench_split_half_iterations", "tastebench_split_half_iterations", None),
        ("tastebench_alpha_coincidence", "tastebench_alpha_coincidence", "category"),
        ("tastebench_block_group_stats", "tastebench_block_group_stats", None),
        ("tastebench_competition_products", "tastebench_competition_products", "Category"),
        ("tastebench_competition_images_source", "tastebench_competition_images", None),
    ):
        path, frame = _read(key, settings)
        if check_col:
            _check_categories(path, frame, check_col)
        out.append(RawTable(name, frame, str(path), "tastebench_public"))
    # the photo folder itself: verified as a tree, recorded as a manifest of files
    images_root = registry.resolve("tastebench_competition_images", settings)
    images = out[-1].frame
    images["local_path"] = [
        str(images_root / Path(p).relative_to("images")) for p in images["image_path"]
    ]
    out.extend(read_oof_predictions(settings))
    return out
