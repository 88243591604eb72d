"""The gated folder: secrets drawn once and reused, never written into a public folder.

Default ``gated/`` beside the warehouse file (:func:`gated_dir_for`: ``build/gated/`` for the
default ``build/tastebench.duckdb``, ``<dir of X>/gated/`` for ``--db X``), or
``--gated-dir`` (``tastebench release|competition``)::

    public_code_map.csv          category, product_code (raw), is_analog, public_code
    gold_pair_sides.csv          category, product_code_a < product_code_b (raw), a_in_slot_1
    competition/code_map.csv     public_code, category, kind (rated|decoy), product_code (raw,
                                 rated only), competition_product_code (decoys only)
    competition/pair_sides.csv   public_code_lo < public_code_hi, lo_in_slot_1
    competition/split.csv        category, usage (Public|Private)
    competition/solution.csv     the hidden solution (schema.COMP_SOLUTION)

Files are written atomically (temporary file + ``os.replace``) with mode 0600 in a 0700 folder,
as CSV (polars; booleans ``true``/``false``; files of earlier versions with ``True``/``False`` and
float-formatted codes still load).
A stored file is reused only when it describes exactly the products of the warehouse at hand;
otherwise :class:`GatedStateError` says which products differ and how to proceed.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import polars as pl

from warehouse.files import atomic_write
from warehouse.release.tables import ReleaseError, as_frame

CODE_MAP = "public_code_map.csv"
PAIR_SIDES = "gold_pair_sides.csv"
COMPETITION = "competition"


class GatedStateError(ReleaseError):
    """A stored gated file does not fit the warehouse (different products)."""


def gated_dir_for(db_path: Path) -> Path:
    """The gated folder of a warehouse: ``gated/`` beside its DuckDB file, so that ``--db X``
    never reads or writes another warehouse's secrets (nor the repository's ``build/``)."""
    return Path(db_path).expanduser().resolve().parent / "gated"


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


def write_private_csv(path: Path, frame) -> Path:
    """Atomic write of a gated CSV (0600, folder 0700)."""
    return write_private_bytes(path, as_frame(frame).write_csv(line_terminator="\n").encode())


def read_private_csv(
    path: Path, *, ints: tuple[str, ...] = (), bools: tuple[str, ...] = ()
) -> pl.DataFrame:
    """A gated CSV with ``ints`` as Int64 (``12`` or ``12.0``, empty = null) and ``bools`` as
    Boolean (``true``/``True``)."""
    try:
        frame = pl.read_csv(path, infer_schema_length=0)  # every column as text
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise GatedStateError(f"{path} cannot be read ({exc}). Fix: restore or move it.") from exc
    missing = [c for c in (*ints, *bools) if c not in frame.columns]
    if missing:
        raise GatedStateError(f"{path} lacks column(s) {missing}")
    try:
        return frame.with_columns(
            *(pl.col(c).cast(pl.Float64).cast(pl.Int64) for c in ints),
            *(
                pl.col(c).str.to_lowercase().replace_strict({"true": True, "false": False})
                for c in bools
            ),
        )
    except pl.exceptions.PolarsError as exc:
        raise GatedStateError(f"{path}: a value is not of its type ({exc})") from exc


def write_private_bytes(path: Path, data: bytes) -> Path:
    """Atomic write of a gated file (0600, folder 0700)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(path.parent, 0o700)
    atomic_write(path, data, mode=0o600)
    return path


def _key_set(frame, cols: list[str]) -> set[tuple]:
    f = as_frame(frame).select(cols)
    return set(f.select(pl.all().cast(pl.String)).iter_rows())


class GatedStore:
    """Reads and writes the gated files of one gated folder."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()

    @property
    def competition_dir(self) -> Path:
        return self.root / COMPETITION

    # --- public code map ---------------------------------------------------------------------
    def load_code_map(self, products) -> pl.DataFrame | None:
        """The stored map when it covers exactly ``products`` (category, product_code,
        is_analog), None when there is none."""
        path = self.root / CODE_MAP
        if not path.exists():
            return None
        cmap = read_private_csv(path, ints=("product_code", "public_code"), bools=("is_analog",))
        ours = _key_set(_typed_products(products), ["category", "product_code", "is_analog"])
        stored = _key_set(cmap, ["category", "product_code", "is_analog"])
        if ours != stored:
            extra, missing = sorted(stored - ours)[:3], sorted(ours - stored)[:3]
            raise GatedStateError(
                f"the stored public-code map {path} belongs to other products (in the map only: "
                f"{len(stored - ours)} products, e.g. {[e[0] for e in extra]}; in the warehouse "
                f"only: {len(ours - stored)}, e.g. {[m[0] for m in missing]}). Fix: pass "
                "--gated-dir for this warehouse's gated folder, or move the old map away to draw "
                "new codes (codes then change for every product)."
            )
        _check_code_layout(cmap, path)
        return cmap.select("category", "product_code", "is_analog", "public_code")

    def save_code_map(self, cmap) -> Path:
        out = as_frame(cmap).select("category", "product_code", "is_analog", "public_code")
        out = _typed_products(out).sort("category", "product_code")
        return write_private_csv(self.root / CODE_MAP, out)

    # --- gold pair sides ---------------------------------------------------------------------
    def load_pair_sides(self, pairs) -> pl.DataFrame | None:
        """Stored sides (category, product_code_a, product_code_b, a_in_slot_1) when they cover
        exactly ``pairs`` (category, product_code_a, product_code_b)."""
        path = self.root / PAIR_SIDES
        if not path.exists():
            return None
        cols = ["category", "product_code_a", "product_code_b"]
        sides = read_private_csv(path, ints=tuple(cols[1:]), bools=("a_in_slot_1",))
        pairs = as_frame(pairs).with_columns(pl.col(c).cast(pl.Int64) for c in cols[1:])
        if _key_set(sides, cols) != _key_set(pairs, cols):
            raise GatedStateError(
                f"the stored pair sides {path} belong to other products. Fix: use this "
                "warehouse's gated folder (--gated-dir) or move the file away to draw new sides."
            )
        return sides.select(*cols, "a_in_slot_1")

    def save_pair_sides(self, sides) -> Path:
        cols = ["category", "product_code_a", "product_code_b", "a_in_slot_1"]
        out = as_frame(sides).select(cols).sort(cols[:3])
        return write_private_csv(self.root / PAIR_SIDES, out)


def _typed_products(frame) -> pl.DataFrame:
    f = as_frame(frame)
    return f.with_columns(
        pl.col("category").cast(pl.String),
        pl.col("product_code").cast(pl.Int64),
        pl.col("is_analog").cast(pl.Boolean),
        *([pl.col("public_code").cast(pl.Int64)] if "public_code" in f.columns else []),
    )


def _check_code_layout(cmap: pl.DataFrame, path: Path) -> None:
    """Analogs 1..n_c, references n_c+1.. per category."""
    for (cat,), g in cmap.sort("category").group_by("category", maintain_order=True):
        n = int(g["is_analog"].sum())
        analog = sorted(g.filter(pl.col("is_analog"))["public_code"].to_list())
        ref = sorted(g.filter(~pl.col("is_analog"))["public_code"].to_list())
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
    "ensure_separate",
    "gated_dir_for",
    "read_private_csv",
    "write_private_bytes",
    "write_private_csv",
]
