"""Resolve SMILES for FoodAtlas chemicals from what the public mirror actually contains.

Only the KGv2 initialization seed (``_pubchem_compound.tsv``, 140 CIDs) carries structures;
the v1 cocoa/garlic extracts (``data_*.csv``) carry ``pubchem_id`` and ``inchikey`` but no
SMILES. So a v1 chemical resolves only when its CID is in the seed; every other CID is kept in
the output with ``resolved = False`` and counted (never silently dropped).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import polars as pl

from warehouse.molecular.featurize import InvalidSmilesError, canonical_smiles
from warehouse.molecular.labels import as_polars

log = logging.getLogger(__name__)

_MISSING = ("", "NoneElement(attributes={})", "nan", "None")


def _clean(value: object) -> str | None:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    s = str(value).strip()
    return None if s in _MISSING else s


def _cid(value: object) -> int | None:
    s = _clean(value)
    if s is None:
        return None
    try:
        return int(float(s))
    except ValueError:
        return None


@dataclass(frozen=True)
class FoodAtlasSmiles:
    """:func:`compound_smiles_from_foodatlas`: the per-CID ``table`` and its counts."""

    table: pl.DataFrame
    n_resolved: int
    n_unresolved: int
    n_v1_cids: int
    n_v1_resolved: int
    n_v1_rows_without_cid: int


_COLUMNS = {"pubchem_cid": pl.Int64, "smiles": pl.String, "isomeric_smiles": pl.String}
_COLUMNS |= {"rdkit_canonical_smiles": pl.String, "inchikey": pl.String, "in_seed": pl.Boolean}
_COLUMNS |= {"in_v1": pl.Boolean, "n_v1_rows": pl.Int64, "v1_inchikey_matches": pl.Boolean}
_COLUMNS |= {"resolved": pl.Boolean, "unresolved_reason": pl.String}


def _seed_rows(seed: pl.DataFrame) -> dict[int, dict[str, object]]:
    """CID -> SMILES, isomeric SMILES and InChIKey of the KGv2 seed (first row per CID)."""
    cid_col = "CID" if "CID" in seed.columns else "Id"
    seed_rows: dict[int, dict[str, object]] = {}
    for rec in seed.iter_rows(named=True):
        cid = _cid(rec.get(cid_col))
        if cid is None or cid in seed_rows:
            continue
        seed_rows[cid] = {
            "smiles": _clean(rec.get("CanonicalSmiles")),
            "isomeric_smiles": _clean(rec.get("IsomericSmiles")),
            "inchikey": _clean(rec.get("InChIKey")),
        }
    return seed_rows


def _v1_cids(data_v1_df) -> tuple[dict[int, int], dict[int, str | None], int]:
    """Of the v1 data rows: rows per CID, each CID's first InChIKey, rows without a CID."""
    v1_counts: dict[int, int] = {}
    v1_keys: dict[int, str | None] = {}
    n_v1_missing_cid = 0
    if data_v1_df is not None:
        v1 = as_polars(data_v1_df)
        for rec in v1.iter_rows(named=True):
            cid = _cid(rec.get("pubchem_id"))
            if cid is None:
                n_v1_missing_cid += 1
                continue
            v1_counts[cid] = v1_counts.get(cid, 0) + 1
            v1_keys.setdefault(cid, _clean(rec.get("inchikey")))
    return v1_counts, v1_keys, n_v1_missing_cid


def _cid_row(cid: int, s: dict[str, object] | None, v1_counts, v1_keys) -> dict[str, object]:
    """One CID's row of the table (``s``: its seed row, if any), resolved or with the reason."""
    smiles = s["smiles"] if s else None
    rdkit_smiles, reason = None, None
    if s is None:
        reason = "CID not in the KGv2 seed (v1 data rows carry no SMILES)"
    elif smiles is None:
        reason = "seed row has no CanonicalSmiles"
    else:
        try:
            rdkit_smiles, _ = canonical_smiles(smiles)
        except InvalidSmilesError as exc:
            reason = f"RDKit rejects the seed SMILES ({exc.reason})"
    key_seed = s["inchikey"] if s else None
    key_v1 = v1_keys.get(cid)
    return {
        "pubchem_cid": cid,
        "smiles": smiles if reason is None else None,
        "isomeric_smiles": s["isomeric_smiles"] if s and reason is None else None,
        "rdkit_canonical_smiles": rdkit_smiles,
        "inchikey": key_seed or key_v1,
        "in_seed": s is not None,
        "in_v1": cid in v1_counts,
        "n_v1_rows": v1_counts.get(cid, 0),
        "v1_inchikey_matches": (key_seed == key_v1) if key_seed and key_v1 else None,
        "resolved": reason is None,
        "unresolved_reason": reason,
    }


def compound_smiles_from_foodatlas(pubchem_compound_df, data_v1_df=None) -> FoodAtlasSmiles:
    """One row per PubChem CID seen in the KGv2 seed or the v1 data rows (polars frames in).

    ``table`` columns: ``pubchem_cid``, ``smiles`` (the seed's PubChem CanonicalSmiles; null when
    unresolved), ``isomeric_smiles``, ``rdkit_canonical_smiles``, ``inchikey`` (seed, else
    v1), ``in_seed``, ``in_v1``, ``n_v1_rows``, ``v1_inchikey_matches`` (seed vs v1 InChIKey,
    null when not both), ``resolved`` and ``unresolved_reason``; the result also holds
    ``n_resolved`` / ``n_unresolved`` / ``n_v1_cids`` / ``n_v1_resolved``; the unresolved
    count is also logged. ``data_v1_df`` may be one frame (e.g. cocoa and garlic concatenated).
    """
    seed_rows = _seed_rows(as_polars(pubchem_compound_df))
    v1_counts, v1_keys, n_v1_missing_cid = _v1_cids(data_v1_df)
    rows = [
        _cid_row(cid, seed_rows.get(cid), v1_counts, v1_keys)
        for cid in sorted(set(seed_rows) | set(v1_counts))
    ]
    out = pl.DataFrame(rows, schema=_COLUMNS)
    n_unresolved = int((~out["resolved"]).sum())
    n_v1_resolved = int((out["in_v1"] & out["resolved"]).sum())
    if n_unresolved:
        log.warning(
            "FoodAtlas: %d of %d CIDs have no reachable SMILES (kept with resolved=False)",
            n_unresolved,
            out.height,
        )
    return FoodAtlasSmiles(
        table=out,
        n_resolved=int(out["resolved"].sum()),
        n_unresolved=n_unresolved,
        n_v1_cids=int(out["in_v1"].sum()),
        n_v1_resolved=n_v1_resolved,
        n_v1_rows_without_cid=n_v1_missing_cid,
    )
