"""Readers for the public sources: FartDB, FoodAtlas (v1 extracts, KGv2 seed, v4.0 bundle layout)
and the TasteBench public artifacts.

Every CSV/TSV is read with polars under the schema declared here (column -> dtype, never inferred;
conventions in ``warehouse/sources/typed_csv.py``); values are kept as stored. Each table carries
``_file_row``, the 1-based data row of the record in its source file (header excluded), so staging
keys never depend on scan order. Each reader checks the registry's row counts (and FartDB's
per-class counts) and raises DataValidationError naming the file.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from warehouse.config import Settings
from warehouse.errors import DataValidationError
from warehouse.sources import registry
from warehouse.sources.seeds import category_lookup, label_nutrients
from warehouse.sources.typed_csv import Schema, first_row, read_typed, with_file_row

TASTE_CLASSES = ("sweet", "bitter", "sour", "umami", "undefined")
FEATURE_SET = re.compile(r"^[SNCTI]+$")
LLM_INPUTS = ("ingredients_image", "ingredients", "image", "text")

TEXT, INTEGER, FLOAT = pl.String(), pl.Int64(), pl.Float64()

# FartDB splits: the first column has an empty header (the index into the unsplit FART table).
FARTDB_SCHEMA: Schema = {
    "": INTEGER,
    "Canonicalized SMILES": TEXT,
    "Standardized SMILES": TEXT,
    "Canonicalized Taste": TEXT,
    "Original Labels": TEXT,
    "Source": TEXT,
    "is_multiclass": INTEGER,
}
# FoodAtlas files are kept as text (Python reprs, ids with prefixes); staging types what it uses.
FOODATLAS_V1_DATA_SCHEMA: Schema = dict.fromkeys(
    (
        "head",
        "relation",
        "tail",
        "foodatlas_id",
        "type",
        "name",
        "synonyms",
        "other_db_ids",
        "pubchem_id",
        "mesh_id",
        "inchikey",
        "inchikey_structure_code",
    ),
    TEXT,
)
PUBCHEM_COMPOUND_SCHEMA: Schema = dict.fromkeys(
    [
        "Item",
        "Id",
        "CID",
        "SourceNameList",
        "SourceIDList",
        "SourceCategoryList",
        "CreateDate",
        "SynonymList",
        "MeSHHeadingList",
        "MeSHTermList",
        "PharmActionList",
        "CommentList",
        "IUPACName",
        "CanonicalSmiles",
        "IsomericSmiles",
        "RotatableBondCount",
        "MolecularFormula",
        "MolecularWeight",
        "TotalFormalCharge",
        "XLogP",
        "HydrogenBondDonorCount",
        "HydrogenBondAcceptorCount",
        "Complexity",
        "HeavyAtomCount",
        "AtomChiralCount",
        "AtomChiralDefCount",
        "AtomChiralUndefCount",
        "BondChiralCount",
        "BondChiralDefCount",
        "BondChiralUndefCount",
        "IsotopeAtomCount",
        "CovalentUnitCount",
        "TautomerCount",
        "SubstanceIDList",
        "TPSA",
        "AssaySourceNameList",
        "MinAC",
        "MaxAC",
        "MinTC",
        "MaxTC",
        "ActiveAidCount",
        "InactiveAidCount",
        "TotalAidCount",
        "InChIKey",
        "InChI",
    ],
    TEXT,
)
LABEL_NUTRIENTS = tuple(n["label"] for n in label_nutrients())  # serving size first
# TasteBench public files: (registry key, raw table, schema, category column checked or None).
TASTEBENCH_FILES: tuple[tuple[str, str, Schema, str | None], ...] = (
    (
        "tastebench_gold_pairs",
        "tastebench_gold_pairs",
        {
            "pair_id": INTEGER,
            "category": TEXT,
            "product_code_1": INTEGER,
            "product_code_2": INTEGER,
            "higher_rated_product": INTEGER,
        },
        "category",
    ),
    (
        "tastebench_panelist_block_accuracy",
        "tastebench_panelist_block_accuracy",
        {
            "category": TEXT,
            "block_id": INTEGER,
            "n_analogs": INTEGER,
            "n_pairs": INTEGER,
            "pairwise_accuracy": FLOAT,
            "spearman": FLOAT,
            "recall_at_1": FLOAT,
            "recall_at_3": FLOAT,
        },
        "category",
    ),
    (
        "tastebench_split_half_iterations",
        "tastebench_split_half_iterations",
        {"iteration": INTEGER, "split_half_pairwise_agreement": FLOAT},
        None,
    ),
    (
        "tastebench_alpha_coincidence",
        "tastebench_alpha_coincidence",
        {
            "category": TEXT,
            "block_id": INTEGER,
            "value_a": INTEGER,
            "value_b": INTEGER,
            "coincidence": FLOAT,
        },
        "category",
    ),
    (
        "tastebench_block_group_stats",
        "tastebench_block_group_stats",
        {"unit": TEXT, "group": INTEGER, "n": INTEGER, "mean_centered": FLOAT, "sd": FLOAT},
        None,
    ),
    (
        "tastebench_competition_products",
        "tastebench_competition_products",
        {
            "Product code": INTEGER,
            "Category": TEXT,
            "Ingredient List": TEXT,
            **dict.fromkeys(LABEL_NUTRIENTS, FLOAT),
            "image_path": TEXT,
        },
        "Category",
    ),
    (
        "tastebench_competition_images_source",
        "tastebench_competition_images",
        {
            "image_path": TEXT,
            "original_width": INTEGER,
            "original_height": INTEGER,
            "original_sha256": TEXT,
        },
        None,
    ),
)
# Out-of-fold prediction files: one of the two gold columns (true_rank or true_score).
OOF_SCHEMA: Schema = {
    "category": TEXT,
    "product_code": INTEGER,
    "true_rank": FLOAT,
    "true_score": FLOAT,
    "predicted_score": FLOAT,
}
OOF_REQUIRED = ("category", "product_code", "predicted_score")


@dataclass
class RawTable:
    """A frame destined for ``raw.<name>`` with its lineage."""

    name: str
    frame: pl.DataFrame
    source_file: str
    data_origin: str


def _check_rows(key: str, path: Path, frame: pl.DataFrame) -> None:
    expected = registry.get(key).rows
    if expected is not None and frame.height != expected:
        raise DataValidationError(
            str(path),
            f"{frame.height} data rows, the registry pins {expected} for dataset '{key}'",
            "restore the pinned file (its sha256 is in warehouse/sources/datasets.toml)",
        )


def read_registered(
    key: str,
    settings: Settings,
    schema: Schema,
    *,
    separator: str = ",",
    optional: tuple[str, ...] = (),
) -> tuple[Path, pl.DataFrame]:
    """A registered file, resolved and hash-checked, read under ``schema`` with ``_file_row``."""
    path = registry.resolve(key, settings)
    fix = "restore the pinned file (its sha256 is in warehouse/sources/datasets.toml)"
    frame = read_typed(
        path,
        schema,
        separator=separator,
        what=f"the schema declared for dataset '{key}' (warehouse/sources/public.py)",
        fix_missing=fix,
        fix_unknown=fix,
        optional=optional,
    )
    _check_rows(key, path, frame)
    return path, with_file_row(frame)


def read_tastebench_file(key: str, settings: Settings) -> tuple[Path, pl.DataFrame]:
    """One TasteBench public file (``key`` of :data:`TASTEBENCH_FILES`), resolved, hash-checked
    and read under its declared schema, without ``_file_row``: for readers outside the load
    (``tastebench evaluate`` reads the gold pairs this way), so the schema lives here only."""
    schemas = {k: schema for k, _, schema, _ in TASTEBENCH_FILES}
    if key not in schemas:
        raise KeyError(f"{key!r} is not a TasteBench public file; known: {sorted(schemas)}")
    path, frame = read_registered(key, settings, schemas[key])
    return path, frame.drop("_file_row")


def read_fartdb(settings: Settings) -> list[RawTable]:
    frames = []
    for split in ("train", "val", "test"):
        key = f"fartdb_{split}"
        path, frame = read_registered(key, settings, FARTDB_SCHEMA)
        # ``_file_row`` is the order models are trained and scored in. ``file_row_id`` is an
        # index into the unsplit FART table, not file order.
        frame = frame.rename({"": "file_row_id"})
        labels = frame["Canonicalized Taste"]
        unknown = ~labels.is_in(TASTE_CLASSES).fill_null(False)
        if unknown.any():
            raise DataValidationError(
                str(path),
                f"unknown taste class {labels.filter(unknown)[0]!r}",
                f"classes are {', '.join(TASTE_CLASSES)}",
                row=first_row(unknown),
                column="Canonicalized Taste",
            )
        expected = registry.get(key).class_counts
        actual = dict(labels.value_counts(sort=True).iter_rows())
        if expected and {k: int(actual.get(k, 0)) for k in expected} != expected:
            raise DataValidationError(
                str(path),
                f"per-class counts {actual} differ from the published {expected}",
                "restore the pinned split file",
                column="Canonicalized Taste",
            )
        frames.append(
            frame.select(
                pl.lit(split).alias("split"), pl.all(), pl.lit(str(path)).alias("_source_file")
            )
        )
    return [RawTable("fartdb_molecules", pl.concat(frames), "", "fartdb")]


def read_foodatlas_v1(settings: Settings) -> list[RawTable]:
    """The v1 cocoa and garlic triples (stacked, ``extract_food`` first) and the KGv2 PubChem
    seed. The v1 evidence files and the KGv2 FDC-nutrient map are not read: no model uses them."""
    parts = []
    for food in ("cocoa", "garlic"):
        path, frame = read_registered(
            f"foodatlas_v1_data_{food}", settings, FOODATLAS_V1_DATA_SCHEMA
        )
        parts.append(
            frame.select(
                pl.lit(food).alias("extract_food"),
                pl.all(),
                pl.lit(str(path)).alias("_source_file"),
            )
        )
    path, compounds = read_registered(
        "foodatlas_kgv2_pubchem_compound", settings, PUBCHEM_COMPOUND_SCHEMA, separator="\t"
    )
    return [
        RawTable("foodatlas_v1_triples", pl.concat(parts), "", "foodatlas"),
        RawTable("foodatlas_kgv2_pubchem_compounds", compounds, str(path), "foodatlas"),
    ]


# FoodAtlas v4.0 bundle layout: file -> required columns (from the FoodAtlas code; PROVENANCE.md).
# evidence.parquet is not read: no model uses it (attestations carry the evidence ids).
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
_NESTED = (pl.List, pl.Array, pl.Struct)


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


def _as_json_text(column: pl.Series) -> pl.Series:
    """A nested column (list, array, struct) as JSON text, nulls kept."""
    return pl.Series(
        column.name,
        [None if v is None else json.dumps(v) for v in column.to_list()],
        dtype=pl.String,
    )


def read_foodatlas_v4(path: Path | None, settings: Settings) -> list[RawTable]:
    """The official v4.0 bundle (folder or zip). Without one, empty tables with the same schema are
    written so downstream models always compile."""
    tables = []
    root = _v4_root(path, settings) if path is not None else None
    for name, columns in FOODATLAS_V4_SCHEMA.items():
        if root is None:
            frame = pl.DataFrame(schema=dict.fromkeys(columns, pl.String))
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
            frame = pl.read_parquet(file)
            frame = frame.rename(
                {k: v for k, v in _V4_ALIASES.get(name, {}).items() if k in frame.columns}
            )
            missing = [c for c in columns if c not in frame.columns]
            if missing:
                raise DataValidationError(
                    str(file),
                    f"missing column(s) {missing}",
                    "use the official v4.0 bundle",
                    column=missing[0],
                )
            # nested values (lists/dicts) are stored as JSON text in raw
            frame = frame.select(
                _as_json_text(frame[c]) if isinstance(frame.schema[c], _NESTED) else frame[c]
                for c in columns
            )
            source = str(file)
        tables.append(
            RawTable(
                f"foodatlas_v4_{name}",
                with_file_row(frame),
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


def _check_categories(path: Path, frame: pl.DataFrame, column: str) -> None:
    unknown = ~frame[column].is_in(list(category_lookup())).fill_null(False)
    if unknown.any():
        raise DataValidationError(
            str(path),
            f"unknown category {frame[column].filter(unknown)[0]!r}",
            "use a canonical category from seeds/categories.csv or add the spelling to "
            "seeds/category_aliases.csv",
            row=first_row(unknown),
            column=column,
        )


def read_oof_predictions(settings: Settings) -> list[RawTable]:
    parts = []
    for key in sorted(k for k in registry.load_registry() if k.startswith("tastebench_oof_")):
        path, frame = read_registered(key, settings, OOF_SCHEMA, optional=tuple(OOF_SCHEMA))
        if missing := [c for c in OOF_REQUIRED if c not in frame.columns]:
            raise DataValidationError(
                str(path),
                f"missing column(s) {missing}",
                "prediction files need category, product_code, predicted_score",
                column=missing[0],
            )
        if "true_rank" not in frame.columns and "true_score" not in frame.columns:
            raise DataValidationError(str(path), "no gold column", "add true_rank or true_score")
        _check_categories(path, frame, "category")
        model, feature_set, is_bench = parse_oof_name(path.stem)
        parts.append(
            frame.select(
                pl.lit(path.stem).alias("file_stem"),
                pl.lit(model).alias("model_name"),
                pl.lit(feature_set, dtype=pl.String).alias("feature_set"),
                pl.lit(is_bench).alias("is_bench_variant"),
                "category",
                "product_code",
                *(
                    pl.col(c) if c in frame.columns else pl.lit(None, dtype=pl.Float64).alias(c)
                    for c in ("true_rank", "true_score")
                ),
                "predicted_score",
                "_file_row",
                pl.lit(str(path)).alias("_source_file"),
            )
        )
    return [RawTable("tastebench_oof_predictions", pl.concat(parts), "", "tastebench_public")]


def read_tastebench_public(settings: Settings) -> list[RawTable]:
    out = []
    for key, name, schema, check_col in TASTEBENCH_FILES:
        path, frame = read_registered(key, settings, schema)
        if check_col:
            _check_categories(path, frame, check_col)
        out.append(RawTable(name, frame, str(path), "tastebench_public"))
    # the photo folder itself: verified as a tree, recorded as a manifest of files
    images_root = registry.resolve("tastebench_competition_images", settings)
    images = out[-1].frame
    local_path = pl.Series(
        "local_path",
        [str(images_root / Path(p).relative_to("images")) for p in images["image_path"]],
        dtype=pl.String,
    )
    out[-1].frame = images.select(pl.exclude("_file_row"), local_path, "_file_row")
    out.extend(read_oof_predictions(settings))
    return out
