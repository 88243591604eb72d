"""The design every food-ranking model reads (docs/benchmark.md §3).

A :class:`Design` holds, for the analogs (the ranked products):

* ``keys``: a polars frame ``category, product_code, subset, hbt_group``, sorted by
  ``(category, product_code)`` (the LOOCV row order: fold ``r`` holds out row ``r``);
* ``target``: the panel mean per analog (float64);
* ``blocks``: ``name -> float64 matrix`` with rows aligned to ``keys``. Names are the block letters
  ``S, N, C, T, I`` and *variants* ``<letter>:<variant>`` (e.g. ``C:max`` for an aggregation rule
  or ``C:dmpnn`` for an encoder swap) that a :class:`FeatureSet` can put in the letter's place;

and, for the MMRF distance baselines, the same blocks for the reference (animal) products plus the
per-subset nutrition columns (``seeds/nutrition_subset_columns.csv``).

Conventions: analog blocks must be finite (a supervised model cannot use an absent block; the
features side imputes or flags, :func:`design_from_frames` refuses or zero-fills on request);
reference rows may be NaN (= modality absent, skipped by the distance baselines). An analog row
that :func:`design_from_frames` zero-filled (``missing='zero'``) is marked in ``absent`` (block name
-> bool per analog): the supervised models read the zero row, the distance baselines skip the
modality for that analog as for a NaN reference row. Preprocessing
(scaling, PCA) never happens here: it is fitted inside each fold (:mod:`.preprocess`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
import polars as pl

from warehouse.errors import WarehouseError
from warehouse.sources.seeds import nutrient_columns

BLOCK_LETTERS = ("S", "N", "C", "T", "I")
"""Block letters in concatenation order."""

CONTENT_LETTERS = ("N", "C", "T", "I")
"""The blocks an ablation switches on and off (S is always in a supervised feature set)."""

SUBSET_ORDER = ("meat", "nonsweet_dairy", "cheese", "sweet_dairy")
"""One-hot order of the S block (docs/benchmark.md §2)."""

NUTRITION_COLUMNS = nutrient_columns()
"""Columns of the N block, in order (``marts.fct_nutrition_per_100g``; dbt var
``nutrition_block``)."""

KEY_COLUMNS = ("category", "product_code", "subset", "hbt_group")

_FS_RE = re.compile(r"^([SNCTI]+)(?:\[([^\]]*)\])?$")


class DesignError(WarehouseError):
    """A design (keys, target, blocks) violates its contract."""


# --------------------------------------------------------------------------- feature sets


@dataclass(frozen=True)
class FeatureSet:
    """Which blocks a model sees, in :data:`BLOCK_LETTERS` order, with optional variants.

    ``FeatureSet.parse("SNCTI")``; ``FeatureSet.parse("SNCTI[C=max]")`` uses the block ``C:max``
    in place of ``C``. The name is the canonical spelling (letters in block order, variants
    sorted), used in model ids and fit keys.
    """

    letters: str
    variants: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        bad = [c for c in self.letters if c not in BLOCK_LETTERS]
        if bad or not self.letters or len(set(self.letters)) != len(self.letters):
            raise DesignError(
                f"feature set {self.letters!r}: use distinct letters from {''.join(BLOCK_LETTERS)}"
            )
        ordered = "".join(c for c in BLOCK_LETTERS if c in self.letters)
        object.__setattr__(self, "letters", ordered)
        for letter, variant in self.variants:
            if letter not in self.letters or not variant or not re.match(r"^[\w.-]+$", variant):
                raise DesignError(
                    f"feature set {self.letters!r}: variant {letter}={variant!r} must name a "
                    "letter of the set and a variant spelled with letters, digits, '_', '.', '-'"
                )
        object.__setattr__(self, "variants", tuple(sorted(dict(self.variants).items())))

    @classmethod
    def parse(cls, spec: str | FeatureSet) -> FeatureSet:
        if isinstance(spec, FeatureSet):
            return spec
        m = _FS_RE.match(spec.strip())
        if not m:
            raise DesignError(
                f"feature set {spec!r}: expected letters from SNCTI with optional variants, "
                "e.g. 'SNCTI' or 'SNCTI[C=max]'"
            )
        variants = []
        if m.group(2):
            for part in m.group(2).split(","):
                letter, _, variant = part.strip().partition("=")
                variants.append((letter.strip(), variant.strip()))
        return cls(m.group(1), tuple(variants))

    @property
    def name(self) -> str:
        if not self.variants:
            return self.letters
        return self.letters + "[" + ",".join(f"{k}={v}" for k, v in self.variants) + "]"

    @property
    def block_names(self) -> tuple[str, ...]:
        """Design block names in concatenation order (``C:max`` where a variant applies)."""
        var = dict(self.variants)
        return tuple(f"{c}:{var[c]}" if c in var else c for c in self.letters)

    def __str__(self) -> str:
        return self.name


def ablation_feature_sets(prefix: str = "S") -> list[FeatureSet]:
    """``prefix`` + each of the 15 non-empty subsets of {N, C, T, I}, by size then block order
    (S+N, S+C, ..., S+NCTI). ``prefix=""`` gives the distance baselines' 15 sets."""
    from itertools import combinations

    out = []
    for r in range(1, len(CONTENT_LETTERS) + 1):
        for combo in combinations(CONTENT_LETTERS, r):
            out.append(FeatureSet(prefix + "".join(combo)))
    return out


# --------------------------------------------------------------------------- the design


def _as_matrix(values: object, name: str, n: int, allow_nan: bool) -> np.ndarray:
    arr = np.ascontiguousarray(np.asarray(values, dtype=np.float64))
    if arr.ndim != 2 or arr.shape[0] != n or arr.shape[1] == 0:
        raise DesignError(f"block {name!r}: expected a ({n}, p>0) matrix, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if allow_nan:
        bad = np.isinf(arr) | (np.isnan(arr).any(axis=1) & ~np.isnan(arr).all(axis=1))[:, None]
    if bad.any():
        r = int(np.argwhere(bad)[0, 0])
        what = "partly missing or infinite" if allow_nan else "non-finite"
        raise DesignError(
            f"block {name!r}: row {r} has {what} values; an analog block must be complete "
            "(impute it on the features side, or build with missing='zero')"
        )
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Design:
    """Analog keys, target and feature blocks (+ references for the distance baselines)."""

    keys: pl.DataFrame
    target: np.ndarray
    blocks: Mapping[str, np.ndarray]
    reference_keys: pl.DataFrame | None = None
    reference_blocks: Mapping[str, np.ndarray] = field(default_factory=dict)
    subset_columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    nutrition_columns: tuple[str, ...] = NUTRITION_COLUMNS
    feature_set: str = "SNCTI"
    data_origin: str = "unknown"
    absent: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = [c for c in KEY_COLUMNS if c not in self.keys.columns]
        if missing:
            raise DesignError(f"keys lack column(s) {missing}; expected {list(KEY_COLUMNS)}")
        keys = self.keys.select(
            pl.col("category").cast(pl.String),
            pl.col("product_code").cast(pl.Int64),
            pl.col("subset").cast(pl.String),
            pl.col("hbt_group").cast(pl.String),
        )
        if keys.null_count().sum_horizontal().item():
            raise DesignError(
                "keys have null values; every analog needs category, code, subset, group"
            )
        if keys.select(pl.struct("category", "product_code").is_duplicated().any()).item():
            raise DesignError("keys repeat a (category, product_code)")
        if not keys.equals(keys.sort("category", "product_code")):
            raise DesignError("keys must be sorted by (category, product_code): the LOOCV order")
        object.__setattr__(self, "keys", keys)
        n = keys.height
        y = np.ascontiguousarray(np.asarray(self.target, dtype=np.float64))
        if y.shape != (n,) or not np.isfinite(y).all():
            raise DesignError(f"target must be {n} finite floats aligned with the keys")
        y.setflags(write=False)
        object.__setattr__(self, "target", y)
        sizes = keys.group_by("category").len()
        small = sizes.filter(pl.col("len") < 2)
        if small.height:
            raise DesignError(
                f"categories with fewer than 2 analogs: {small['category'].to_list()}"
            )
        blocks = {}
        for name, mat in self.blocks.items():
            _check_block_name(name)
            blocks[name] = _as_matrix(mat, name, n, allow_nan=False)
        object.__setattr__(self, "blocks", blocks)
        object.__setattr__(self, "absent", _absent_masks(self.absent, blocks, n))
        refs = {}
        if self.reference_blocks:
            if self.reference_keys is None:
                raise DesignError("reference_blocks given without reference_keys")
            for name, mat in self.reference_blocks.items():
                _check_block_name(name)
                refs[name] = _as_matrix(mat, f"reference {name}", self.reference_keys.height, True)
                if name in blocks and refs[name].shape[1] != blocks[name].shape[1]:
                    raise DesignError(f"reference block {name!r} width differs from the analogs'")
        object.__setattr__(self, "reference_blocks", refs)
        if self.reference_keys is not None:
            rk = self.reference_keys.select(
                pl.col("category").cast(pl.String),
                pl.col("product_code").cast(pl.Int64),
                pl.col("subset").cast(pl.String),
            )
            object.__setattr__(self, "reference_keys", rk)
        object.__setattr__(
            self, "subset_columns", {k: tuple(v) for k, v in sorted(self.subset_columns.items())}
        )
        object.__setattr__(self, "nutrition_columns", tuple(self.nutrition_columns))

    # ------------------------------------------------------------------ derived

    @property
    def n(self) -> int:
        return self.keys.height

    @cached_property
    def categories(self) -> np.ndarray:
        """Category per analog row (object array of str)."""
        return np.array(self.keys["category"].to_list(), dtype=object)

    @cached_property
    def category_index(self) -> np.ndarray:
        """Integer category id per row (sorted category order)."""
        _, inv = np.unique(self.categories.astype(str), return_inverse=True)
        return inv.astype(np.int64)

    @cached_property
    def groups(self) -> np.ndarray:
        """Hierarchical-BT group per row (meat / nonsweet_dairy / other_dairy)."""
        return np.array(self.keys["hbt_group"].to_list(), dtype=object)

    def block(self, name: str) -> np.ndarray:
        try:
            return self.blocks[name]
        except KeyError:
            raise DesignError(
                f"the design has no block {name!r} (has {sorted(self.blocks)}); build it on the "
                "features side or drop it from the feature set"
            ) from None

    def analog_rows_for_distance(self, name: str) -> np.ndarray:
        """Block ``name``'s analog rows with NaN where the analog lacks the modality (a
        zero-filled row, :attr:`absent`): what the distance baselines read."""
        mat = self.block(name)
        mask = self.absent.get(name)
        if mask is None or not mask.any():
            return mat
        out = mat.copy()
        out[mask] = np.nan
        return out

    def block_dims(self, feature_set: FeatureSet | str) -> dict[str, int]:
        fs = FeatureSet.parse(feature_set)
        return {b: self.block(b).shape[1] for b in fs.block_names}

    # ------------------------------------------------------------------ hashing

    def fingerprint(self, block_names: Iterable[str] = (), references: bool = False) -> str:
        """sha256 of the rows a fit reads: keys, groups, target and the named blocks (names,
        shapes and float64 bytes); with ``references`` also the reference keys and blocks and the
        per-subset nutrition columns (what the distance baselines read)."""
        h = hashlib.sha256(b"tastebench-ranking-design-v1\n")
        h.update(self.keys.write_csv().encode())
        h.update(self.target.astype("<f8").tobytes())
        for name in sorted(set(block_names)):
            mat = self.block(name)
            h.update(f"\n{name}:{mat.shape}\n".encode())
            h.update(mat.astype("<f8").tobytes())
        if references:
            if self.reference_keys is not None:
                h.update(self.reference_keys.write_csv().encode())
            for name in sorted(set(block_names)):
                if name in self.reference_blocks:
                    mat = self.reference_blocks[name]
                    h.update(f"\nref {name}:{mat.shape}\n".encode())
                    h.update(mat.astype("<f8").tobytes())
            for name in sorted(set(block_names)):
                mask = self.absent.get(name)
                if mask is not None and mask.any():
                    h.update(f"\nabsent {name}:".encode() + np.flatnonzero(mask).tobytes())
            h.update(repr((self.nutrition_columns, sorted(self.subset_columns.items()))).encode())
        return h.hexdigest()

    # ------------------------------------------------------------------ variants

    def with_target(self, target: np.ndarray) -> Design:
        return replace(self, target=np.asarray(target, dtype=np.float64))

    def with_block(
        self,
        name: str,
        matrix: np.ndarray,
        reference: np.ndarray | None = None,
        absent_rows: np.ndarray | None = None,
    ) -> Design:
        """The design with block ``name`` replaced (its :attr:`absent` mask kept unless
        ``absent_rows`` is given)."""
        blocks = dict(self.blocks)
        blocks[name] = matrix
        refs = dict(self.reference_blocks)
        if reference is not None:
            refs[name] = reference
        absent = dict(self.absent)
        if absent_rows is not None:
            absent[name] = absent_rows
        return replace(self, blocks=blocks, reference_blocks=refs, absent=absent)

    def permute_block_within_category(self, name: str, seed: int = 42) -> Design:
        """The design with block ``name``'s rows shuffled inside each category (numpy
        ``default_rng(seed)``, categories in sorted order): destroys any block-target link while
        keeping the block's within-category distribution (the planted-signal control)."""
        rng = np.random.default_rng(seed)
        mat = self.block(name)
        perm = np.arange(self.n)
        for c in np.unique(self.category_index):
            rows = np.flatnonzero(self.category_index == c)
            perm[rows] = rows[rng.permutation(len(rows))]
        mask = self.absent.get(name)
        return self.with_block(name, mat[perm], absent_rows=None if mask is None else mask[perm])


def _absent_masks(absent: Mapping[str, np.ndarray], blocks: Mapping, n: int) -> dict:
    out = {}
    for name, mask in sorted(absent.items()):
        if name not in blocks:
            raise DesignError(f"absent rows given for block {name!r}, which the design lacks")
        arr = np.asarray(mask, dtype=bool).copy()
        if arr.shape != (n,):
            raise DesignError(f"absent rows of block {name!r}: expected {n} booleans")
        if arr.any():
            arr.setflags(write=False)
            out[name] = arr
    return out


def _check_block_name(name: str) -> None:
    letter, _, variant = name.partition(":")
    if letter not in BLOCK_LETTERS or (":" in name and not variant):
        raise DesignError(
            f"block name {name!r}: use a letter from {''.join(BLOCK_LETTERS)}, optionally "
            "followed by ':<variant>' (e.g. 'C:max')"
        )


# --------------------------------------------------------------------------- from frames


def subset_one_hot(subsets: Iterable[str]) -> np.ndarray:
    """The S block: one-hot of the category subset in :data:`SUBSET_ORDER`."""
    subsets = list(subsets)
    unknown = sorted(set(subsets) - set(SUBSET_ORDER))
    if unknown:
        raise DesignError(f"unknown subset(s) {unknown}; expected {list(SUBSET_ORDER)}")
    idx = np.array([SUBSET_ORDER.index(s) for s in subsets], dtype=np.int64)
    out = np.zeros((len(subsets), len(SUBSET_ORDER)))
    out[np.arange(len(subsets)), idx] = 1.0
    return out


def subset_columns_from_seed(seed: pl.DataFrame) -> dict[str, tuple[str, ...]]:
    """``seeds/nutrition_subset_columns.csv`` (subset, column_order, nutrient_column) -> mapping."""
    need = {"subset", "column_order", "nutrient_column"}
    if not need <= set(seed.columns):
        raise DesignError(f"nutrition_subset_columns seed lacks {sorted(need - set(seed.columns))}")
    out: dict[str, tuple[str, ...]] = {}
    for (subset,), rows in seed.sort("subset", "column_order").group_by(
        ["subset"], maintain_order=True
    ):
        out[str(subset)] = tuple(rows["nutrient_column"].to_list())
    return out


def _vectors(
    frame: pl.DataFrame, name: str, keys: pl.DataFrame, missing: str, analog: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Matrix of ``frame.vector`` aligned with ``keys`` (rows absent from ``frame`` or null ->
    error, zeros or NaN) and the mask of those absent rows."""
    for col in ("category", "product_code", "vector"):
        if col not in frame.columns:
            raise DesignError(f"block {name!r} frame lacks column {col!r}")
    src = frame.select(
        pl.col("category").cast(pl.String),
        pl.col("product_code").cast(pl.Int64),
        pl.col("vector").cast(pl.List(pl.Float64)),
    )
    if src.select(pl.struct("category", "product_code").is_duplicated().any()).item():
        raise DesignError(f"block {name!r} repeats a (category, product_code)")
    joined = keys.select("category", "product_code").join(
        src, on=["category", "product_code"], how="left", maintain_order="left"
    )
    lengths = joined["vector"].list.len()
    present = lengths.drop_nulls()
    if present.len() == 0:
        raise DesignError(f"block {name!r} has no vector for any product of the design")
    width = int(present[0])
    if (present != width).any():
        raise DesignError(f"block {name!r}: vectors of different lengths {sorted(set(present))}")
    absent = joined["vector"].is_null().to_numpy()
    mat = np.full((joined.height, width), np.nan)
    if (~absent).any():
        mat[~absent] = np.array(joined.filter(~pl.Series(absent))["vector"].to_list(), dtype=float)
    if absent.any() and analog:
        if missing == "error":
            row = joined.row(int(np.argmax(absent)), named=True)
            raise DesignError(
                f"block {name!r} has no vector for analog {row['category']}:{row['product_code']} "
                f"({int(absent.sum())} analogs absent); impute it on the features side or pass "
                "missing='zero' (recorded in the fit configuration)"
            )
        mat[absent] = 0.0
    return mat, absent


def design_from_frames(
    products: pl.DataFrame,
    panel_means: pl.DataFrame,
    blocks: Mapping[str, pl.DataFrame],
    *,
    categories: pl.DataFrame | None = None,
    subset_columns: Mapping[str, tuple[str, ...]] | pl.DataFrame | None = None,
    nutrition_columns: tuple[str, ...] = NUTRITION_COLUMNS,
    feature_set: str = "SNCTI",
    missing: str = "error",
    data_origin: str | None = None,
) -> Design:
    """Build a :class:`Design` from warehouse frames.

    * ``products``: ``category, product_code, is_analog, subset`` (+ ``hbt_group``, else taken
      from ``categories``, the ``seeds.categories`` frame), e.g. ``marts.dim_products``;
    * ``panel_means``: ``category, product_code, panel_mean`` (``marts.fct_panel_means``);
    * ``blocks``: ``name -> frame(category, product_code, vector)`` for analogs and references
      (a list column per block). ``S`` is derived from the subsets when not given.
    * ``missing``: ``'error'`` (an analog without a vector is an error) or ``'zero'`` (a zero
      row for the supervised models, marked in ``Design.absent`` so that the distance baselines
      skip the modality).
    """
    if missing not in ("error", "zero"):
        raise DesignError(f"missing must be 'error' or 'zero', got {missing!r}")
    prod = _with_hbt_group(products, categories)
    analogs = prod.filter(pl.col("is_analog")).sort("category", "product_code")
    refs = prod.filter(~pl.col("is_analog")).sort("category", "product_code")
    joined = _with_panel_means(analogs, panel_means)
    keys = joined.select(KEY_COLUMNS)
    mats, ref_mats, absent = _block_matrices(blocks, keys, refs, missing)
    if isinstance(subset_columns, pl.DataFrame):
        subset_columns = subset_columns_from_seed(subset_columns)
    return Design(
        keys=keys,
        target=joined["panel_mean"].to_numpy(),
        blocks=mats,
        reference_keys=refs.select("category", "product_code", "subset") if refs.height else None,
        reference_blocks=ref_mats,
        subset_columns=dict(subset_columns or {}),
        nutrition_columns=nutrition_columns,
        feature_set=feature_set,
        data_origin=_data_origin(products, data_origin),
        absent=absent,
    )


def _with_hbt_group(products: pl.DataFrame, categories: pl.DataFrame | None) -> pl.DataFrame:
    """``products`` with ``hbt_group`` (joined from ``categories`` when absent), codes as Int64."""
    prod = products
    if "hbt_group" not in prod.columns:
        if categories is None:
            raise DesignError("products lack hbt_group; pass categories=seeds.categories")
        prod = prod.join(categories.select("category", "hbt_group"), on="category", how="left")
    return prod.with_columns(pl.col("product_code").cast(pl.Int64))


def _with_panel_means(analogs: pl.DataFrame, panel_means: pl.DataFrame) -> pl.DataFrame:
    """``analogs`` (order kept) with their ``panel_mean``; an analog without one is an error."""
    means = panel_means.select(
        pl.col("category").cast(pl.String),
        pl.col("product_code").cast(pl.Int64),
        pl.col("panel_mean").cast(pl.Float64),
    )
    joined = analogs.join(means, on=["category", "product_code"], how="left", maintain_order="left")
    if joined["panel_mean"].is_null().any():
        row = joined.filter(pl.col("panel_mean").is_null()).row(0, named=True)
        raise DesignError(
            f"analog {row['category']}:{row['product_code']} has no panel mean "
            "(marts.fct_panel_means); every analog needs ratings"
        )
    return joined


def _block_matrices(
    blocks: Mapping[str, pl.DataFrame], keys: pl.DataFrame, refs: pl.DataFrame, missing: str
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], dict[str, np.ndarray]]:
    """(analog matrices, reference matrices, absent masks) per block; ``S`` derived from the
    subsets when not given."""
    mats, ref_mats, absent = {}, {}, {}
    for name, frame in sorted(blocks.items()):
        mats[name], absent[name] = _vectors(frame, name, keys, missing, analog=True)
        if refs.height:
            ref_mats[name] = _vectors(frame, name, refs, missing, analog=False)[0]
    if "S" not in mats:
        mats["S"] = subset_one_hot(keys["subset"].to_list())
        if refs.height:
            ref_mats["S"] = subset_one_hot(refs["subset"].to_list())
    return mats, ref_mats, absent


def _data_origin(products: pl.DataFrame, data_origin: str | None) -> str:
    """``data_origin`` if given, else the products' origins joined by ``+`` (or ``unknown``)."""
    origin = data_origin
    if origin is None and "data_origin" in products.columns:
        origins = sorted(set(products["data_origin"].drop_nulls().to_list()))
        origin = "+".join(origins) if origins else "unknown"
    return origin or "unknown"
