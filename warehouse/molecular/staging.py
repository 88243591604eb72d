"""FartDB staging: RDKit-canonical molecules (``stg_fartdb__molecules``) and the per-split frames
every fit is trained and scored on, in split-file order."""

from __future__ import annotations

import pandas as pd
from rdkit import rdBase

from warehouse.errors import DataValidationError
from warehouse.molecular.baselines import SPLITS
from warehouse.molecular.labels import LABEL_COLUMN, SMILES_COLUMN


def stage_fartdb_molecules(raw: pd.DataFrame) -> pd.DataFrame:
    """FartDB rows in snake_case with RDKit-canonical SMILES and a flag where it differs.

    A SMILES RDKit cannot parse is an error naming the source file, split and row: FartDB rows are
    never silently dropped.
    """
    from warehouse.molecular.featurize import InvalidSmilesError, canonical_smiles

    split_order = raw["split"].map({"train": 0, "val": 1, "test": 2})
    raw = raw.assign(_split_order=split_order).sort_values(["_split_order", "_file_row"])
    raw = raw.drop(columns="_split_order").reset_index(drop=True)
    canonical, differs = [], []
    for i, smi in enumerate(raw["Canonicalized SMILES"].tolist()):
        try:
            c, d = canonical_smiles(smi)
        except InvalidSmilesError as exc:
            row = raw.iloc[i]
            raise DataValidationError(
                str(row["_source_file"]),
                f"RDKit cannot parse SMILES {smi!r} ({exc})",
                "correct or remove the molecule upstream and re-pin the file",
                row=int(row["_file_row"]),
                column="Canonicalized SMILES",
            ) from exc
        canonical.append(c)
        differs.append(d)
    return pd.DataFrame(
        {
            "molecule_row_key": raw["split"] + ":" + raw["file_row_id"].astype(str),
            "split": raw["split"],
            "file_row_id": raw["file_row_id"].astype("int64"),
            "file_row_number": raw["_file_row"].astype("int64"),
            "smiles_file": raw["Canonicalized SMILES"],
            "standardized_smiles": raw["Standardized SMILES"],
            "canonical_smiles": canonical,
            "is_canonical_smiles_changed": differs,
            "taste_class": raw["Canonicalized Taste"],
            "original_labels": raw["Original Labels"],
            "source_database": raw["Source"],
            "is_multiclass": raw["is_multiclass"].astype(bool),
            "rdkit_version": rdBase.rdkitVersion,
            "data_origin": raw["data_origin"],
        }
    )


def split_rows(molecules: pd.DataFrame, split: str) -> pd.DataFrame:
    """One split of stg_fartdb__molecules in split-file order (``file_row_number``), the order
    every fit's per-split arrays follow."""
    return molecules[molecules["split"] == split].sort_values("file_row_number", kind="stable")


def split_frames(molecules: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """stg_fartdb__molecules -> per split, in the library's column names (SMILES + class only;
    ``original_labels`` never reaches a model), in split-file order."""
    out = {}
    for split in SPLITS:
        part = split_rows(molecules, split)
        out[split] = pd.DataFrame(
            {
                "molecule_row_key": part["molecule_row_key"].to_numpy(),
                "file_row_number": part["file_row_number"].to_numpy(),
                SMILES_COLUMN: part["canonical_smiles"].to_numpy(),
                LABEL_COLUMN: part["taste_class"].to_numpy(),
            }
        )
    return out
