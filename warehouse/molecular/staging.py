"""FartDB staging: RDKit-canonical molecules (``stg_fartdb__molecules``) and the per-split frames
every fit is trained and scored on, in split-file order."""

from __future__ import annotations

import polars as pl
from rdkit import rdBase

from warehouse.errors import DataValidationError
from warehouse.molecular.baselines import SPLITS
from warehouse.molecular.labels import LABEL_COLUMN, SMILES_COLUMN


def stage_fartdb_molecules(raw: pl.DataFrame) -> pl.DataFrame:
    """FartDB rows in snake_case with RDKit-canonical SMILES and a flag where it differs.

    Rows follow the split order (train, val, test) and then the file row. A SMILES RDKit cannot
    parse is an error naming the source file, split and row: FartDB rows are never silently
    dropped.
    """
    from warehouse.molecular.featurize import InvalidSmilesError, canonical_smiles

    split_order = pl.col("split").replace_strict(
        {"train": 0, "val": 1, "test": 2}, default=None, return_dtype=pl.Int64
    )
    raw = raw.sort(split_order, pl.col("_file_row"), nulls_last=True, maintain_order=True)
    canonical, differs = [], []
    for i, smi in enumerate(raw["Canonicalized SMILES"].to_list()):
        try:
            c, d = canonical_smiles(smi)
        except InvalidSmilesError as exc:
            row = raw.row(i, named=True)
            raise DataValidationError(
                str(row["_source_file"]),
                f"RDKit cannot parse SMILES {smi!r} ({exc})",
                "correct or remove the molecule upstream and re-pin the file",
                row=int(row["_file_row"]),
                column="Canonicalized SMILES",
            ) from exc
        canonical.append(c)
        differs.append(d)
    return raw.select(
        molecule_row_key=pl.col("split") + ":" + pl.col("file_row_id").cast(pl.String),
        split=pl.col("split"),
        file_row_id=pl.col("file_row_id").cast(pl.Int64),
        file_row_number=pl.col("_file_row").cast(pl.Int64),
        smiles_file=pl.col("Canonicalized SMILES"),
        standardized_smiles=pl.col("Standardized SMILES"),
        canonical_smiles=pl.Series(canonical, dtype=pl.String),
        is_canonical_smiles_changed=pl.Series(differs, dtype=pl.Boolean),
        taste_class=pl.col("Canonicalized Taste"),
        original_labels=pl.col("Original Labels"),
        source_database=pl.col("Source"),
        is_multiclass=pl.col("is_multiclass").cast(pl.Boolean),
        rdkit_version=pl.lit(rdBase.rdkitVersion, dtype=pl.String),
        data_origin=pl.col("data_origin"),
    )


def split_rows(molecules: pl.DataFrame, split: str) -> pl.DataFrame:
    """One split of stg_fartdb__molecules in split-file order (``file_row_number``), the order
    every fit's per-split arrays follow."""
    part = molecules.filter(pl.col("split") == split)
    return part.sort("file_row_number", maintain_order=True)


def split_frames(molecules: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """stg_fartdb__molecules -> per split, in the library's column names (SMILES + class only;
    ``original_labels`` never reaches a model), in split-file order."""
    return {
        split: split_rows(molecules, split).select(
            "molecule_row_key",
            "file_row_number",
            pl.col("canonical_smiles").alias(SMILES_COLUMN),
            pl.col("taste_class").alias(LABEL_COLUMN),
        )
        for split in SPLITS
    }
