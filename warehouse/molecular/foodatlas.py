"""Resolve SMILES for FoodAtlas chemicals from what the public mirror actually contains.

Only the KGv2 initialization seed (``_pubchem_compound.tsv``, 140 CIDs) carries structures;
the v1 cocoa/garlic extracts (``data_*.csv``) carry ``pubchem_id`` and ``inchikey`` but no
SMILES. So a v1 chemical resolves only when its CID is in the seed; every other CID is kept in
the output with ``resolved = False`` and counted (never silently dropped).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from warehouse.molecular.featurize import InvalidSmilesError, canonical_smiles
from warehouse.molecular.labels import to_pandas

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


def compound_smiles_from_foodatlas(pubchem_compound_df, data_v1_df=None) -> pd.DataFrame:
    """One row per PubChem CID seen in the KGv2 seed or the v1 data rows.

    Columns: ``pubchem_cid``, ``smiles`` (the seed's PubChem CanonicalSmiles; None when
    unresolved), ``isomeric_smiles``, ``rdkit_canonical_smiles``, ``inchikey`` (seed, else
    v1), ``in_seed``, ``in_v1``, ``n_v1_rows``, ``v1_inchikey_matches`` (seed vs v1 InChIKey,
    None when not both), ``resolved`` and ``unresolved_reason``. ``df.attrs`` holds
    ``n_resolved`` / ``n_unresolved`` / ``n_v1_cids`` / ``n_v1_resolved``; the unresolved
    count is also logged. ``data_v1_df`` may be one frame (e.g. cocoa and garlic concatenated).
    """
    seed = to_pandas(pubchem_compound_df)
    cid_col = "CID" if "CID" in seed.columns else "Id"
    seed_rows: dict[int, dict[str, object]] = {}
    for rec in seed.to_dict("records"):
        cid = _cid(rec.get(cid_col))
        if cid is None or cid in seed_rows:
            continue
        seed_rows[cid] = {
            "smiles": _clean(rec.get("CanonicalSmiles")),
            "isomeric_smiles": _clean(rec.get("IsomericSmiles")),
            "inchikey": _clean(rec.get("InChIKey")),
        }
    v1_counts: dict[int, int] = {}
    v1_keys: dict[int, str | None] = {}
    n_v1_missing_cid = 0
    if data_v1_df is not None:
        v1 = to_pandas(data_v1_df)
        for rec in v1.to_dict("records"):
            cid = _cid(rec.get("pubchem_id"))
            if cid is None:
                n_v1_missing_cid += 1
                continue
            v1_counts[cid] = v1_counts.get(cid, 0) + 1
            v1_keys.setdefault(cid, _clean(rec.get("inchikey")))
    rows = []
    for cid in sorted(set(seed_rows) | set(v1_counts)):
        s = seed_rows.get(cid)
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
        rows.append(
            {
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
        )
    out = pd.DataFrame(rows)
    if out.empty:
        out = pd.DataFrame(columns=["pubchem_cid", "smiles", "resolved", "unresolved_reason"])
    out["pubchem_cid"] = out["pubchem_cid"].astype("int64")
    n_unresolved = int((~out["resolved"].astype(bool)).sum())
    v1_mask = out.get("in_v1", pd.Series(False, index=out.index)).astype(bool)
    out.attrs.update(
        {
            "n_resolved": int(out["resolved"].astype(bool).sum()),
            "n_unresolved": n_unresolved,
            "n_v1_cids": int(v1_mask.sum()),
            "n_v1_resolved": int((v1_mask & out["resolved"].astype(bool)).sum()),
            "n_v1_rows_without_cid": n_v1_missing_cid,
        }
    )
    if n_unresolved:
        log.warning(
            "FoodAtlas: %d of %d CIDs have no reachable SMILES (kept with resolved=False)",
            n_unresolved,
            len(out),
        )
    return out
