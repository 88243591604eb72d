"""The gated folder: secrets drawn once and reused, never written into a public folder.

Default ``<build_dir>/gated/`` (``tastebench release|competition --gated-dir``)::

    public_code_map.csv          category, product_code (raw), is_analog, public_code
    gold_pair_sides.csv          category, product_code_a < product_code_b (raw), a_in_slot_1
    competition/code_map.csv     public_code, category, kind (rated|decoy), product_code (raw,
                                 rated only), competition_product_code (decoys only)
    competition/pair_sides.csv   public_code_lo < public_code_hi, lo_in_slot_1
    competition/split.csv        category, usage (Public|Private)
    competition/solution.csv     the hidden solution (schema.COMP_SOLUTION)

Files are written atomically (temporary file + ``os.replace``) with mode 0600 in a 0700 folder.
A stored file is reused only when it describes exactly the products of the warehouse at hand;
otherwise :class:`GatedStateError` says which products differ and how to proceed.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

import pandas as pd

from warehouse.release.tables import ReleaseError

CODE_MAP = "public_code_map.csv"
PAIR_SIDES = "gold_pair_sides.csv"
COMPETITION = "competition"


class GatedStateError(ReleaseError):
    """A stored gated file does not fit the warehouse (different products)."""


def default_gated_dir(build_dir: Path) -> Path:
    return Path(build_dir) / "gated"


def ensure_separate(out_dir: Path, gated_dir: Path) -> None:
    """The gated folder may be neither inside OUT_DIR nor contain it."""
    out, gated = Path(out_dir).resolve(), Path(gated_dir).resolve()
    if out == gated or gated.is_relative_to(out) or out.is_relative_to(gated):
        raise ReleaseError(
            f"OUT_DIR {out} and the gated folder {gated} overlap. Fix: write the public folder "
            "outside the gated area (and never put gated files into a public folder)."
        )


def check_out_dir(out_dir: Path) -> Path:
    """OUT_DIR must not exist, or be an empty folder."""
    out = Path(out_dir).resolve()
    if out.exists():
        if not out.is_dir():
            raise ReleaseError(f"OUT_DIR {out} is a file. Fix: name a new or empty folder.")
        if any(out.iterdir()):
            raise ReleaseError(
                f"OUT_DIR {out} is not empty. Fix: name a new or empty folder (a release is "
                "never written over another)."
            )
    return out


def write_private_csv(path: Path, frame: pd.DataFrame) -> Path:
    """Atomic write of a gated CSV (0600, folder 0700)."""
    return write_private_bytes(path, frame.to_csv(index=False, lineterminator="\n").encode())


def write_private_bytes(path: Path, data: bytes) -> Path:
    """Atomic write of a gated file (0600, folder 0700)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(path.parent, 0o700)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)
    return path


def _key_set(frame: pd.DataFrame, cols: list[str]) -> set[tuple]:
    return set(frame[cols].astype(str).itertuples(index=False, name=None))


class GatedStore:
    """Reads and writes the gated files of one gated folder."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()

    @property
    def competition_dir(self) -> Path:
        return self.root / COMPETITION

    # --- public code map ---------------------------------------------------------------------
    def load_code_map(self, products: pd.DataFrame) -> pd.DataFrame | None:
        """The stored map when it covers exactly ``products`` (category, product_code,
        is_analog), None when there is none."""
        path = self.root / CODE_MAP
        if not path.exists():
            return None
        cmap = pd.read_csv(path)
        need = {"category", "product_code", "is_analog", "public_code"}
        if not need <= set(cmap.columns):
            raise GatedStateError(f"{path} lacks column(s) {sorted(need - set(cmap.columns))}")
        cmap["is_analog"] = cmap["is_analog"].astype(bool)
        ours = _key_set(products, ["category", "product_code", "is_analog"])
        stored = _key_set(cmap, ["category", "product_code", "is_analog"])
        if ours != stored:
            extra, missing = sorted(stored - ours)[:3], sorted(ours - stored)[:3]
            raise GatedStateError(
                f"the stored public-code map {path} belongs to other products (in the map only: "
                f"{extra}; in the warehouse only: {missing}). Fix: pass --gated-dir for this "
                "warehouse's gated folder, or move the old map away to draw new codes (codes "
                "then change for every product)."
            )
        _check_code_layout(cmap, path)
        return cmap[["category", "product_code", "is_analog", "public_code"]]

    def save_code_map(self, cmap: pd.DataFrame) -> Path:
        out = cmap[["category", "product_code", "is_analog", "public_code"]]
        out = out.sort_values(["category", "product_code"]).reset_index(drop=True)
        return write_private_csv(self.root / CODE_MAP, out)

    # --- gold pair sides ---------------------------------------------------------------------
    def load_pair_sides(self, pairs: pd.DataFrame) -> pd.DataFrame | None:
        """Stored sides (category, product_code_a, product_code_b, a_in_slot_1) when they cover
        exactly ``pairs`` (category, product_code_a, product_code_b)."""
        path = self.root / PAIR_SIDES
        if not path.exists():
            return None
        sides = pd.read_csv(path)
        cols = ["category", "product_code_a", "product_code_b"]
        if _key_set(sides, cols) != _key_set(pairs, cols):
            raise GatedStateError(
                f"the stored pair sides {path} belong to other products. Fix: use this "
                "warehouse's gated folder (--gated-dir) or move the file away to draw new sides."
            )
        sides["a_in_slot_1"] = sides["a_in_slot_1"].astype(bool)
        return sides[[*cols, "a_in_slot_1"]]

    def save_pair_sides(self, sides: pd.DataFrame) -> Path:
        cols = ["category", "product_code_a", "product_code_b", "a_in_slot_1"]
        out = sides[cols].sort_values(cols[:3]).reset_index(drop=True)
        return write_private_csv(self.root / PAIR_SIDES, out)


def _check_code_layout(cmap: pd.DataFrame, path: Path) -> None:
    """Analogs 1..n_c, references n_c+1.. per category."""
    for cat, g in cmap.groupby("category"):
        n = int(g["is_analog"].sum())
        analog = sorted(g.loc[g["is_analog"], "public_code"].astype(int))
        ref = sorted(g.loc[~g["is_analog"], "public_code"].astype(int))
        if analog != list(range(1, n + 1)) or ref != list(range(n + 1, n + 1 + len(ref))):
            raise GatedStateError(
                f"{path}: category {cat} codes are not analogs 1..n_c then references. Fix: "
                "move the file away to draw a new map."
            )


__all__ = [
    "CODE_MAP",
    "COMPETITION",
    "PAIR_SIDES",
    "GatedStateError",
    "GatedStore",
    "check_out_dir",
    "default_gated_dir",
    "ensure_separate",
    "write_private_bytes",
    "write_private_csv",
]
