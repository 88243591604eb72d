"""The feature block: one matrix row per product, aligned with a fixed key order.

Every block (S, N, C, T, I; docs/benchmark.md §2) is a :class:`FeatureBlock`. ``keys`` holds
``category, product_code`` sorted by (category, product_code), the row order the models use
(docs/benchmark.md §3: rows sorted by category, code); ``matrix`` row *i* belongs to ``keys``
row *i*.

Conventions (docs/features.md):

* A product without the block has ``has_block = False`` and a zero row; its row is never invented.
* A product whose row was filled from other products (image k-NN imputation) has
  ``has_block = True`` and ``is_imputed = True``.
* A block absent for every product (:attr:`FeatureBlock.is_absent`) keeps its shape and names so
  that joins and schemas stay stable; consumers drop it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from warehouse.errors import WarehouseError

BLOCK_NAMES = ("S", "N", "C", "T", "I")
KEY_COLUMNS = ("category", "product_code")
# columns that to_frame writes itself; extra columns may not reuse them
_RESERVED = {
    "product_key",
    "category",
    "product_code",
    "block",
    "vector",
    "dim",
    "has_block",
    "is_imputed",
    "encoder",
    "encoder_version",
    "data_origin",
}


class FeatureError(WarehouseError):
    """Bad input to a feature function (the message names the table, column and the fix)."""


def sort_keys(frame: pl.DataFrame, table: str) -> pl.DataFrame:
    """``frame`` sorted by (category, product_code), after checking the key columns.

    Raises :class:`FeatureError` naming ``table`` when a key column is missing or null, or a
    product appears twice.
    """
    missing = [c for c in KEY_COLUMNS if c not in frame.columns]
    if missing:
        raise FeatureError(
            f"{table}: missing key column(s) {missing}. Fix: pass a frame with "
            "category and product_code (one row per product)"
        )
    frame = frame.with_columns(
        pl.col("category").cast(pl.String), pl.col("product_code").cast(pl.Int32)
    )
    nulls = frame.filter(pl.col("category").is_null() | pl.col("product_code").is_null())
    if nulls.height:
        raise FeatureError(
            f"{table}: {nulls.height} row(s) with a null category or product_code. "
            "Fix: every product needs both keys"
        )
    dup = frame.group_by(KEY_COLUMNS).len().filter(pl.col("len") > 1)
    if dup.height:
        first = dup.sort(KEY_COLUMNS).row(0)
        raise FeatureError(
            f"{table}: product ({first[0]}, {first[1]}) appears {first[2]} times. "
            "Fix: pass one row per product (e.g. marts.dim_products)"
        )
    return frame.sort(KEY_COLUMNS)


@dataclass(frozen=True, eq=False)
class FeatureBlock:
    """One feature block for a fixed, sorted set of products (see module doc)."""

    name: str
    keys: pl.DataFrame
    matrix: np.ndarray
    feature_names: tuple[str, ...]
    encoder: str
    encoder_version: str
    has_block: np.ndarray
    is_imputed: np.ndarray
    data_origin: tuple[str, ...]
    extra: pl.DataFrame = field(default_factory=pl.DataFrame)

    def __post_init__(self) -> None:
        if self.name not in BLOCK_NAMES:
            raise FeatureError(f"block name {self.name!r} is not one of {BLOCK_NAMES}")
        if tuple(self.keys.columns) != KEY_COLUMNS:
            raise FeatureError(
                f"block {self.name}: keys must have exactly the columns {KEY_COLUMNS}, "
                f"got {self.keys.columns}"
            )
        if not self.keys.equals(self.keys.sort(KEY_COLUMNS)):
            raise FeatureError(
                f"block {self.name}: keys are not sorted by (category, product_code). "
                "Fix: build keys with features.block.sort_keys"
            )
        n = self.keys.height
        m = self.matrix
        if not isinstance(m, np.ndarray) or m.dtype != np.float64 or m.ndim != 2:
            raise FeatureError(f"block {self.name}: matrix must be a 2-d float64 numpy array")
        if m.shape != (n, len(self.feature_names)):
            raise FeatureError(
                f"block {self.name}: matrix shape {m.shape} does not match "
                f"{n} products x {len(self.feature_names)} feature names"
            )
        if not np.isfinite(m).all():
            raise FeatureError(f"block {self.name}: matrix has NaN or infinite values")
        for flag in ("has_block", "is_imputed"):
            arr = getattr(self, flag)
            if arr.dtype != np.bool_ or arr.shape != (n,):
                raise FeatureError(f"block {self.name}: {flag} must be a bool array of length {n}")
        if (self.is_imputed & ~self.has_block).any():
            raise FeatureError(f"block {self.name}: a row is imputed but has no block")
        if m.size and np.abs(m[~self.has_block]).sum() != 0:
            raise FeatureError(f"block {self.name}: a row without the block is not all zeros")
        if len(self.data_origin) != n:
            raise FeatureError(f"block {self.name}: one data_origin per product expected")
        if self.extra.width and self.extra.height != n:
            raise FeatureError(f"block {self.name}: extra has {self.extra.height} rows, not {n}")
        clash = _RESERVED & set(self.extra.columns)
        if clash:
            raise FeatureError(f"block {self.name}: extra reuses reserved columns {sorted(clash)}")

    @property
    def n_products(self) -> int:
        return self.keys.height

    @property
    def dim(self) -> int:
        return self.matrix.shape[1]

    @property
    def is_absent(self) -> bool:
        """True when no product has the block (record it as absent; never fill it)."""
        return not bool(self.has_block.any())

    def to_frame(self) -> pl.DataFrame:
        """One row per product: ``product_key`` ('<category>:<code>'), keys, ``block``,
        ``vector`` (list<double>), ``dim``, ``has_block``, ``is_imputed``, the extra columns,
        ``encoder``, ``encoder_version``, ``data_origin``; in key order."""
        vectors = pl.Series("vector", self.matrix, dtype=pl.Array(pl.Float64, self.dim)).cast(
            pl.List(pl.Float64)
        )
        base = self.keys.select(
            (pl.col("category") + ":" + pl.col("product_code").cast(pl.String)).alias(
                "product_key"
            ),
            pl.col("category"),
            pl.col("product_code"),
        ).with_columns(
            pl.lit(self.name).alias("block"),
            vectors,
            pl.lit(self.dim, dtype=pl.Int32).alias("dim"),
            pl.Series("has_block", self.has_block),
            pl.Series("is_imputed", self.is_imputed),
        )
        tail = pl.DataFrame(
            {
                "encoder": [self.encoder] * self.n_products,
                "encoder_version": [self.encoder_version] * self.n_products,
                "data_origin": list(self.data_origin),
            },
            schema={"encoder": pl.String, "encoder_version": pl.String, "data_origin": pl.String},
        )
        parts = [base, self.extra, tail] if self.extra.width else [base, tail]
        return pl.concat(parts, how="horizontal")

    @classmethod
    def from_frame(
        cls, frame: pl.DataFrame, feature_names: Sequence[str] | None = None
    ) -> FeatureBlock:
        """Inverse of :meth:`to_frame` (e.g. a feature mart read back from the warehouse).
        ``feature_names`` defaults to ``<block>_0 .. <block>_{d-1}``."""
        needed = {"block", "vector", "has_block", "is_imputed", "encoder", "encoder_version"}
        missing = sorted(needed - set(frame.columns))
        if missing:
            raise FeatureError(
                f"feature frame: missing column(s) {missing}. Fix: pass a frame written by "
                "FeatureBlock.to_frame (a features mart)"
            )
        frame = sort_keys(frame, "feature frame")
        names = frame["block"].unique().to_list()
        if len(names) != 1:
            raise FeatureError(f"feature frame: one block expected, got {sorted(map(str, names))}")
        for col in ("encoder", "encoder_version"):
            if frame[col].n_unique() != 1:
                raise FeatureError(f"feature frame: column {col} must be constant")
        dims = frame["vector"].list.len().unique().to_list()
        if len(dims) > 1:
            raise FeatureError(f"feature frame: vectors of different lengths {sorted(dims)}")
        d = int(dims[0]) if dims else 0
        matrix = (
            np.asarray(frame["vector"].to_list(), dtype=np.float64).reshape(frame.height, d)
            if frame.height
            else np.zeros((0, d))
        )
        names_out = (
            tuple(feature_names) if feature_names else tuple(f"{names[0]}_{j}" for j in range(d))
        )
        origin = (
            tuple(frame["data_origin"].to_list())
            if "data_origin" in frame.columns
            else ("unknown",) * frame.height
        )
        extra = frame.drop([c for c in frame.columns if c in _RESERVED])
        return cls(
            name=str(names[0]),
            keys=frame.select(KEY_COLUMNS),
            matrix=np.ascontiguousarray(matrix),
            feature_names=names_out,
            encoder=str(frame["encoder"][0]),
            encoder_version=str(frame["encoder_version"][0]),
            has_block=frame["has_block"].to_numpy().astype(bool),
            is_imputed=frame["is_imputed"].to_numpy().astype(bool),
            data_origin=origin,
            extra=extra,
        )
