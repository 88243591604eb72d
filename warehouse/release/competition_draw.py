"""How the competition is drawn (docs/release.md, "Competition"): decoys, the within-category
pairs, the gated state (codes, sides, split) and the hidden solution. Frames are polars.

* A candidate is a **decoy** only when its ingredient set has Jaccard < 0.8 with every rated
  product (analogs and references) of its category; ingredient set = the lower-cased, stripped,
  comma-split tokens of the published (redacted) ingredient list, empty tokens dropped (two empty
  sets count as identical).
* **Codes**: one cryptographically random permutation (``secrets``) of all products to 1..N;
  **sides**: a fair ``secrets`` coin per pair; **split**: about half the categories Private.
  Drawn together and redrawn until both audits sit at chance, both splits have scored pairs and
  the codes pass the guards' permutation and row-order rules.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.release import derive
from warehouse.release.gated import GatedStateError, read_private_csv, write_private_csv
from warehouse.release.leaderboard import audit_pairs
from warehouse.release.schema import COMP_PRODUCTS
from warehouse.release.tables import ReleaseError, as_frame

JACCARD_MAX = 0.8
MAX_DRAWS = 500
STATE_COLUMNS = ("public_code", "category", "kind", "product_code", "competition_product_code")


# --- decoys -------------------------------------------------------------------------------------
def ingredient_tokens(text: object) -> frozenset[str]:
    """Lower-cased, stripped, comma-split tokens (empty ones dropped); None -> empty set."""
    if not isinstance(text, str):
        return frozenset()
    return frozenset(t for t in (p.strip().lower() for p in text.split(",")) if t)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a & b| / |a | b|; two empty sets are identical (1.0)."""
    union = a | b
    return 1.0 if not union else len(a & b) / len(union)


def max_jaccard(text: object, others: list[frozenset[str]]) -> float:
    t = ingredient_tokens(text)
    return max((jaccard(t, o) for o in others), default=0.0)


def select_decoys(rated, candidates, threshold: float = JACCARD_MAX) -> pl.DataFrame:
    """Candidates (category, ingredient_list, ...) whose ingredient set has Jaccard < threshold
    with every rated product (category, ingredient_list) of the same category; adds
    ``max_jaccard``. Candidates of a category without rated products are dropped."""
    rated, candidates = as_frame(rated), as_frame(candidates)
    sets: dict[str, list[frozenset[str]]] = {}
    for cat, text in rated.select("category", "ingredient_list").iter_rows():
        sets.setdefault(cat, []).append(ingredient_tokens(text))
    cand = candidates.filter(pl.col("category").is_in(list(sets)))
    scores = [
        max_jaccard(t, sets[c]) for c, t in cand.select("category", "ingredient_list").iter_rows()
    ]
    cand = cand.with_columns(max_jaccard=pl.Series(scores, dtype=pl.Float64))
    return cand.filter(pl.col("max_jaccard") < threshold)


# --- pairs, state, solution ---------------------------------------------------------------------
def within_category_pairs(products) -> pl.DataFrame:
    """Every within-category pair of ``products`` (category, public_code): category, lo < hi."""
    rows = []
    for (cat,), g in as_frame(products).sort("category").group_by("category", maintain_order=True):
        codes = np.sort(g["public_code"].cast(pl.Int64).to_numpy())
        i, j = np.triu_indices(len(codes), k=1)
        rows += [(cat, int(a), int(b)) for a, b in zip(codes[i], codes[j], strict=True)]
    schema = {"category": pl.String, "public_code_lo": pl.Int64, "public_code_hi": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def _typed_map(cmap) -> pl.DataFrame:
    return as_frame(cmap).select(
        pl.col("public_code").cast(pl.Int64),
        pl.col("category").cast(pl.String),
        pl.col("kind").cast(pl.String),
        pl.col("product_code").cast(pl.Float64).cast(pl.Int64),
        pl.col("competition_product_code").cast(pl.Float64).cast(pl.Int64),
    )


@dataclass
class CompetitionState:
    code_map: pl.DataFrame  # public_code, category, kind, product_code, competition_product_code
    sides: pl.DataFrame  # category, public_code_lo, public_code_hi, lo_in_slot_1
    split: pl.DataFrame  # category, usage

    def __post_init__(self) -> None:
        self.code_map = _typed_map(self.code_map)
        self.sides = as_frame(self.sides).with_columns(
            pl.col("public_code_lo").cast(pl.Int64),
            pl.col("public_code_hi").cast(pl.Int64),
            pl.col("lo_in_slot_1").cast(pl.Boolean),
        )
        self.split = as_frame(self.split)

    def save(self, folder: Path) -> None:
        write_private_csv(folder / "code_map.csv", self.code_map.sort("public_code"))
        write_private_csv(
            folder / "pair_sides.csv",
            self.sides.sort("category", "public_code_lo", "public_code_hi"),
        )
        write_private_csv(folder / "split.csv", self.split.sort("category"))


def member_key() -> pl.Expr:
    """One text key per competition member: ``rated:<category>:<code>`` or
    ``decoy:<category>:<competition code>`` (no null keys to join on)."""
    code = (
        pl.when(pl.col("kind") == "rated")
        .then(pl.col("product_code").cast(pl.Int64).cast(pl.String))
        .otherwise(pl.col("competition_product_code").cast(pl.Int64).cast(pl.String))
    )
    return pl.concat_str([pl.col("kind"), pl.col("category"), code], separator=":")


def load_state(folder: Path, members: pl.DataFrame) -> CompetitionState | None:
    files = [folder / n for n in ("code_map.csv", "pair_sides.csv", "split.csv")]
    if not all(f.exists() for f in files):
        return None
    cmap = read_private_csv(
        files[0], ints=("public_code", "product_code", "competition_product_code")
    )
    sides = read_private_csv(
        files[1], ints=("public_code_lo", "public_code_hi"), bools=("lo_in_slot_1",)
    )
    split = read_private_csv(files[2])
    stored = set(_typed_map(cmap).select(member_key()).to_series().to_list())
    ours = set(members.select(member_key()).to_series().to_list())
    if stored != ours:
        raise GatedStateError(
            f"the stored competition state in {folder} belongs to other products. Fix: use this "
            "warehouse's gated folder (--gated-dir) or move that folder away to draw a new "
            "competition (codes, sides and split all change)."
        )
    return CompetitionState(cmap.select(STATE_COLUMNS), sides, split)


def guard_ctx_map(cmap: pl.DataFrame) -> pl.DataFrame:
    """The competition codes as a guards code map (decoys have no raw code)."""
    return cmap.select(
        "category",
        pl.col("product_code").cast(pl.Float64),
        pl.col("public_code").cast(pl.Int64),
    )


def build_solution(state: CompetitionState, gold_pairs) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(ranking pairs, solution) from the state and the gated within-category pairs
    (category, product_code_a, product_code_b, is_tie, winner_product_code)."""
    s = state.sides
    first = pl.col("lo_in_slot_1")
    pairs = s.select(
        "category",
        pl.when(first).then("public_code_lo").otherwise("public_code_hi").alias("public_code_1"),
        pl.when(first).then("public_code_hi").otherwise("public_code_lo").alias("public_code_2"),
    )
    pairs = derive.number_pairs(pairs, "public_code_1", "public_code_2")
    raw = state.code_map.select("public_code", "product_code")
    r1 = raw.rename({"public_code": "public_code_1", "product_code": "r1"})
    r2 = raw.rename({"public_code": "public_code_2", "product_code": "r2"})
    g = as_frame(gold_pairs).select(
        pl.col("category").cast(pl.String),
        pl.col("product_code_a").cast(pl.Int64),
        pl.col("product_code_b").cast(pl.Int64),
        pl.col("is_tie").cast(pl.Boolean),
        pl.col("winner_product_code").cast(pl.Int64),
    )
    usage = state.split.select(pl.col("category").cast(pl.String), "usage")
    r = (
        pairs.join(r1, on="public_code_1", how="left")
        .join(r2, on="public_code_2", how="left")
        .with_columns(
            product_code_a=pl.min_horizontal("r1", "r2"),
            product_code_b=pl.max_horizontal("r1", "r2"),
        )
        .join(g, on=["category", "product_code_a", "product_code_b"], how="left")
        .join(usage, on="category", how="left")
        .sort("pair_id")
    )
    scored = (
        pl.col("r1").is_not_null() & pl.col("r2").is_not_null() & ~pl.col("is_tie")
    ).fill_null(False)
    winner = (
        pl.when(pl.col("winner_product_code") == pl.col("r1"))
        .then(pl.col("public_code_1"))
        .otherwise(pl.col("public_code_2"))
    )
    solution = r.select(
        *pairs.columns,
        pl.when(scored).then(winner).cast(pl.Int64).alias("public_code_winner"),
        pl.when(scored).then(pl.col("usage")).otherwise(pl.lit("Ignored")).alias("usage"),
    )
    return pairs, solution


def draw_state(
    members: pl.DataFrame, gold_pairs, ctx, log: Callable[[str], None]
) -> CompetitionState:
    """Codes, sides and split drawn with ``secrets`` until both audits sit at chance, both
    leaderboard splits have scored pairs and the codes pass the guards' permutation and
    row-order rules."""
    from warehouse.quality.guards import guard_frame

    rng = secrets.SystemRandom()
    cats = sorted(members["category"].unique().to_list())
    for attempt in range(1, MAX_DRAWS + 1):
        codes = list(range(1, len(members) + 1))
        rng.shuffle(codes)
        cmap = members.select(
            pl.Series("public_code", codes, dtype=pl.Int64),
            "category",
            "kind",
            "product_code",
            "competition_product_code",
        )
        pairs = within_category_pairs(cmap)
        sides = pairs.with_columns(lo_in_slot_1=pl.Series(derive.draw_sides(len(pairs))))
        order = cats.copy()
        rng.shuffle(order)
        private = set(order[: len(order) // 2])
        split = pl.DataFrame(
            {"category": cats, "usage": ["Private" if c in private else "Public" for c in cats]}
        )
        state = CompetitionState(cmap, sides, split)
        _, solution = build_solution(state, gold_pairs)
        audit = audit_pairs(solution)
        counts = solution["usage"].value_counts()
        counts = dict(counts.iter_rows())
        frame = state.code_map.sort("category", "public_code").select("category", "public_code")
        bad = guard_frame(
            COMP_PRODUCTS.path,
            frame,
            ctx.with_code_map(guard_ctx_map(state.code_map)),
            rules=["public_code_permutation", "row_order_hidden_id"],
        )
        if audit["at_chance"] and counts.get("Public", 0) and counts.get("Private", 0) and not bad:
            log(f"competition codes, sides and split drawn (attempt {attempt})")
            return state
    raise ReleaseError(f"no competition draw passed the audits in {MAX_DRAWS} attempts")


__all__ = [
    "CompetitionState",
    "build_solution",
    "draw_state",
    "guard_ctx_map",
    "ingredient_tokens",
    "jaccard",
    "load_state",
    "max_jaccard",
    "member_key",
    "select_decoys",
    "within_category_pairs",
]
