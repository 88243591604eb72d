"""The simulated study design: categories, products, blocks and respondents.

Everything here is calibrated to public, de-identified TasteBench artifacts only:

* analogs and their gold order: ``food_similarity/results/oof_predictions/ridge_SNCTI_bench.csv``
  (``category, product_code, true_rank``; all published OOF files carry the same gold);
* block structure: ``human_baseline/results/individual_loo_accuracy.csv`` (per category and
  ``block_id``: rows = respondents, ``n_analogs`` = analogs in the block);
* rating marginal (for the ordinal cut points): ``human_baseline/results/verification/
  alpha_coincidence.csv``.

Which analog sits in which block is not public; it is drawn here (seeded), keeping tied products
together (so equal means are possible over equal rater counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

MEAT_CATEGORIES = (
    "Bacon",
    "Bratwurst",
    "Breakfast_Sausages",
    "Burgers",
    "Chicken_Strips",
    "Breaded_Chicken_Filet",
    "Unbreaded_Chicken_Breast",
    "Deli_Ham",
    "Deli_Turkey",
    "Hot_Dogs",
    "Meatballs",
    "Nuggets",
    "Pulled_Pork",
    "Steak",
)
NONSWEET_DAIRY = ("Butter", "Cream_Cheese", "Sour_Cream", "Creamer", "Milk", "Barista_Milk")
CHEESE = ("Cheddar_Cheese", "Mozzarella")
SWEET_DAIRY = ("Ice_Cream_Hard_Serve", "Yogurt")
SUBSET_OF = {
    **dict.fromkeys(MEAT_CATEGORIES, "meat"),
    **dict.fromkeys(NONSWEET_DAIRY, "nonsweet_dairy"),
    **dict.fromkeys(CHEESE, "cheese"),
    **dict.fromkeys(SWEET_DAIRY, "sweet_dairy"),
}
YEAR_MEAT, YEAR_DAIRY = 2025, 2026

# Known spelling variants (docs/benchmark.md §1) used for image folder names only, so the loader's
# category mapping has something to do. CSV category columns stay canonical.
IMAGE_FOLDER_VARIANTS = {
    "Butter": "Salted_Butter",
    "Cheddar_Cheese": "Cheddar_Cheese_Slices",
    "Chicken_Strips": "Unbreaded_chicken_strips_and_chunks",
    "Mozzarella": "Mozzarella_Cheese",
    "Yogurt": "Plain_Greek_Yogurt",
}
# 24 categories + 8 second references = 32 references (docs/benchmark.md §1: 247 = 215 + 32).
TWO_REFERENCE_CATEGORIES = (
    "Bacon",
    "Burgers",
    "Hot_Dogs",
    "Deli_Turkey",
    "Milk",
    "Creamer",
    "Yogurt",
    "Ice_Cream_Hard_Serve",
)
MIN_RATERS_PER_PRODUCT = 100  # Croissant RAI: every product rated by at least 100 panelists
BLOCK_MIN_RESPONDENTS = 20  # docs/benchmark.md §2 block filter
BASE_RESPONDENT_POOL = 627  # published distinct panelists in blocks

GOLD_FILE = "food_similarity/results/oof_predictions/ridge_SNCTI_bench.csv"
LOO_FILE = "human_baseline/results/individual_loo_accuracy.csv"
ALPHA_FILE = "human_baseline/results/verification/alpha_coincidence.csv"
PRODUCTS_FILE = "kaggle_tastebench/generate_data/dataset/products.csv"
IMAGES_DIR = "kaggle_tastebench/generate_data/dataset/images_256"


def stream(seed: int, name: str) -> np.random.Generator:
    """An independent generator per concern, so changing one part does not shift the others."""
    key = [int(b) for b in name.encode()]
    return np.random.default_rng(np.random.SeedSequence([int(seed), *key]))


@dataclass
class Block:
    """A group of respondents who all rated exactly ``codes`` (analogs and references)."""

    block_id: int  # published block id (descending respondent count), -1 for filler groups
    n_respondents: int
    codes: tuple[int, ...]
    respondents: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def is_filler(self) -> bool:
        return self.block_id < 0


@dataclass
class Category:
    name: str  # as written to the CSVs (canonical; copies get a ``_s<k>`` suffix)
    base: str  # canonical public category
    copy: int  # 1 for the public category, k for the ``_s<k>`` copy
    year: int
    subset: str
    gold_rank: dict[int, float]  # analog code -> public true_rank (higher = more similar)
    reference_codes: tuple[int, ...]
    blocks: list[Block]  # published blocks first (by block_id), then filler groups

    @property
    def analog_codes(self) -> tuple[int, ...]:
        return tuple(sorted(self.gold_rank))

    @property
    def image_folder(self) -> str:
        base = IMAGE_FOLDER_VARIANTS.get(self.base, self.base)
        return base if self.copy == 1 else f"{base}_s{self.copy}"


@dataclass(frozen=True)
class PublicInputs:
    gold: pl.DataFrame  # category, product_code, true_rank
    block_sizes: pl.DataFrame  # category, block_id, n_respondents, n_analogs
    rating_marginal: np.ndarray  # P(rating = 1..7) over block analog ratings
    products: pl.DataFrame  # public competition products (features)
    images_dir: Path


def _read_csv(path: Path) -> pl.DataFrame:
    """A public CSV with every column's type inferred from all its rows (no sampling)."""
    return pl.read_csv(path, infer_schema_length=None)


def load_public(public_dir: Path) -> PublicInputs:
    """The public inputs of the simulation.

    The rating marginal sums each rating value's coincidences with :func:`math.fsum` (the
    correctly rounded sum, so the cut points do not depend on the summation order)."""
    public_dir = Path(public_dir)
    gold = _read_csv(public_dir / GOLD_FILE).select("category", "product_code", "true_rank")
    loo = _read_csv(public_dir / LOO_FILE)
    sizes = (
        loo.group_by("category", "block_id", maintain_order=True)
        .agg(n_respondents=pl.len(), n_analogs=pl.col("n_analogs").first())
        .sort("category", "block_id")
    )
    coinc = _read_csv(public_dir / ALPHA_FILE)
    value = coinc["value_a"].to_numpy()
    share = coinc["coincidence"].to_numpy().astype(float)
    marg = np.array([math.fsum(share[value == v]) for v in range(1, 8)], dtype=float)
    products = _read_csv(public_dir / PRODUCTS_FILE)
    return PublicInputs(
        gold=gold,
        block_sizes=sizes,
        rating_marginal=marg / marg.sum(),
        products=products,
        images_dir=public_dir / IMAGES_DIR,
    )


def _tie_units(gold_rank: dict[int, float]) -> list[tuple[int, ...]]:
    """Analogs grouped by equal gold rank (a tie must sit in one block)."""
    by_rank: dict[float, list[int]] = {}
    for code, rank in sorted(gold_rank.items()):
        by_rank.setdefault(rank, []).append(code)
    return [tuple(v) for _, v in sorted(by_rank.items())]


def assign_block_analogs(
    gold_rank: dict[int, float], sizes: list[int], rng: np.random.Generator
) -> list[tuple[int, ...]]:
    """Analog codes per block: a seeded partition; blocks beyond the partition reuse the analogs
    of the block before them (the real Hot_Dogs block 2 rated 4 of block 1's analogs).
    Tied analogs always share their blocks."""
    units = _tie_units(gold_rank)
    n_c = len(gold_rank)
    for _attempt in range(1000):
        order = [units[i] for i in rng.permutation(len(units))]
        blocks: list[list[int]] = []
        ok = True
        for b, size in enumerate(sizes):
            chosen: list[int] = []
            rest = []
            for unit in order:
                if len(chosen) + len(unit) <= size:
                    chosen.extend(unit)
                else:
                    rest.append(unit)
            order = rest
            if len(chosen) < size:
                if b == 0:
                    ok = False
                    break
                prev_units = [
                    u for u in units if set(u) <= set(blocks[b - 1]) and not set(u) & set(chosen)
                ]
                prev_units = [prev_units[i] for i in rng.permutation(len(prev_units))]
                for unit in prev_units:
                    if len(chosen) + len(unit) <= size:
                        chosen.extend(unit)
                if len(chosen) < size:
                    ok = False
                    break
            blocks.append(sorted(chosen))
        covered = {c for blk in blocks for c in blk} if ok else set()
        if ok and len(covered) == n_c and len({tuple(b) for b in blocks}) == len(blocks):
            return [tuple(b) for b in blocks]
    raise ValueError(f"cannot place {n_c} analogs into blocks of sizes {sizes}")


def _filler_groups(cat: Category, tie_codes: set[int]) -> list[Block]:
    """Small groups of respondents (< 20 each, so no block) who rated a block's products minus
    one, lifting every product to at least 100 raters as in the real panel."""
    counts: dict[int, int] = {}
    for blk in cat.blocks:
        for code in blk.codes:
            counts[code] = counts.get(code, 0) + blk.n_respondents
    known = {blk.codes for blk in cat.blocks}
    groups: list[Block] = []
    for blk in [b for b in cat.blocks if not b.is_filler]:
        need = max(MIN_RATERS_PER_PRODUCT - counts[c] for c in blk.codes)
        if need <= 0:
            continue
        ref = set(cat.reference_codes)
        droppable = [c for c in blk.codes if c not in ref and c not in tie_codes]
        sets = []
        for drop in droppable:
            codes = tuple(c for c in blk.codes if c != drop)
            analogs_left = [c for c in codes if c not in ref]
            if codes not in known and len(analogs_left) >= 2:
                sets.append((drop, codes))
        if len(sets) < 2:
            continue
        size = int(min(BLOCK_MIN_RESPONDENTS - 1, -(-need // (len(sets) - 1))))
        for _drop, codes in sets:
            known.add(codes)
            groups.append(Block(block_id=-1, n_respondents=size, codes=codes))
            for c in codes:
                counts[c] += size
    return groups


def build_categories(public: PublicInputs, seed: int, scale: int) -> list[Category]:
    """Categories (with ``scale - 1`` suffixed copies each), products, blocks and fillers."""
    rng = stream(seed, "blocks")
    gold = public.gold
    out: list[Category] = []
    for copy in range(1, scale + 1):
        for base in sorted(gold["category"].unique().to_list()):
            if base not in SUBSET_OF:
                raise ValueError(f"category {base!r} has no subset (docs/benchmark.md §2)")
            g = gold.filter(pl.col("category") == base)
            pairs = zip(g["product_code"], g["true_rank"], strict=True)
            gold_rank = {int(c): float(r) for c, r in pairs}
            n_c = len(gold_rank)
            n_ref = 2 if base in TWO_REFERENCE_CATEGORIES else 1
            refs = tuple(range(n_c + 1, n_c + 1 + n_ref))
            sz = public.block_sizes.filter(pl.col("category") == base).sort("block_id")
            analog_sets = assign_block_analogs(gold_rank, sz["n_analogs"].to_list(), rng)
            blocks = []
            for (bid, n_resp), analogs in zip(
                zip(sz["block_id"], sz["n_respondents"], strict=True), analog_sets, strict=True
            ):
                # the first reference sits in every block, the second in block 0 only
                block_refs = refs if int(bid) == 0 else refs[:1]
                codes = tuple(sorted(analogs + block_refs))
                blocks.append(Block(block_id=int(bid), n_respondents=int(n_resp), codes=codes))
            subset = SUBSET_OF[base]
            cat = Category(
                name=base if copy == 1 else f"{base}_s{copy}",
                base=base,
                copy=copy,
                year=YEAR_MEAT if subset == "meat" else YEAR_DAIRY,
                subset=subset,
                gold_rank=gold_rank,
                reference_codes=refs,
                blocks=blocks,
            )
            ties = {c for u in _tie_units(gold_rank) if len(u) > 1 for c in u}
            cat.blocks.extend(_filler_groups(cat, ties))
            out.append(cat)
    _assign_respondents(out, rng, BASE_RESPONDENT_POOL * scale)
    return out


def _assign_respondents(cats: list[Category], rng: np.random.Generator, pool: int) -> None:
    """Respondent ids: one bundle-wide pool of integers; each category draws its respondents
    without replacement (nobody sits in two groups of one category), so the same id recurs
    across categories as in the real panel (627 ids over 4,664 panelist-block rows)."""
    for cat in cats:
        total = sum(b.n_respondents for b in cat.blocks)
        if total > pool:
            raise ValueError(f"{cat.name}: {total} respondents exceed the pool of {pool}")
        ids = np.sort(rng.choice(pool, size=total, replace=False)) + 1
        ids = ids[rng.permutation(total)]
        start = 0
        for blk in cat.blocks:
            blk.respondents = np.sort(ids[start : start + blk.n_respondents]).astype(np.int64)
            start += blk.n_respondents
