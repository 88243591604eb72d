"""``tastebench competition OUT_DIR``: the leaderboard export (docs/release.md, "Competition").

Construction:

* **Products**: the rated analogs of the warehouse, interleaved with unrated **decoys** of the
  same category taken from the public competition products
  (``staging.stg_tastebench__competition_products``). A candidate is a decoy only when its
  ingredient set has Jaccard < 0.8 with every rated product (analogs and references) of its
  category; ingredient set = the lower-cased, stripped, comma-split tokens of the published
  (brand-redacted) ingredient list, empty tokens dropped (two empty sets count as identical).
* **Features only**: ingredient list (brand names of the gated products table removed with
  :func:`warehouse.quality.guards.redact_names`) and the 18 label nutrition values per serving;
  no target, no origin flag.
* **Codes**: ONE cryptographically random permutation (``secrets``) of all products, every
  category together, to 1..N.
* **Pairs**: every within-category pair of products; which one is listed first is a fair coin
  from ``secrets``; ``ranking_pairs.csv`` has ``pair_id, category, public_code_1,
  public_code_2`` and no winner.
* **Solution** (gated folder only): winner of every pair of two rated, untied analogs; the rest
  are ``Ignored``. About half the categories (drawn with ``secrets``) are ``Private``.
* Codes, sides and split are drawn together and redrawn until the position audit ("slot 1
  wins") and the code-leak audit ("lower code wins") both have a 95% exact binomial CI that
  contains 0.5, and the codes pass the guards' permutation and row-order rules. They are stored
  in the gated folder and reused by later exports (same files). Scores are rounded to 2
  decimals.
"""

from __future__ import annotations

import secrets
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import pandas as pd

from warehouse import __version__
from warehouse.errors import DataValidationError
from warehouse.metrics import slot1_wins_accuracy
from warehouse.release import derive
from warehouse.release.croissant import build_croissant, write_croissant
from warehouse.release.gated import (
    COMPETITION,
    GatedStateError,
    check_out_dir,
    ensure_separate,
    write_private_bytes,
    write_private_csv,
)
from warehouse.release.schema import (
    COMP_PAIRS,
    COMP_PRODUCTS,
    COMP_SAMPLE,
    COMP_SOLUTION,
    COMPETITION_TABLES,
    NUTRIENT_COLUMNS,
)
from warehouse.release.tables import (
    ReleaseError,
    read_table,
    table_bytes,
    write_manifest,
    write_table,
)

JACCARD_MAX = 0.8
MAX_DRAWS = 500
USAGES = ("Public", "Private", "Ignored")
NUTRIENTS = [n for n, _ in NUTRIENT_COLUMNS]
STATE_COLUMNS = ("public_code", "category", "kind", "product_code", "competition_product_code")


# --- decoys -------------------------------------------------------------------------------------
def ingredient_tokens(text: object) -> frozenset[str]:
    """Lower-cased, stripped, comma-split tokens (empty ones dropped); None/NaN -> empty set."""
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


def select_decoys(
    rated: pd.DataFrame, candidates: pd.DataFrame, threshold: float = JACCARD_MAX
) -> pd.DataFrame:
    """Candidates (category, ingredient_list, ...) whose ingredient set has Jaccard < threshold
    with every rated product (category, ingredient_list) of the same category; adds
    ``max_jaccard``. Candidates of a category without rated products are dropped."""
    sets = {
        cat: [ingredient_tokens(t) for t in g["ingredient_list"]]
        for cat, g in rated.groupby("category")
    }
    cand = candidates[candidates["category"].isin(sets)].copy()
    cand["max_jaccard"] = [
        max_jaccard(t, sets[c])
        for c, t in zip(cand["category"], cand["ingredient_list"], strict=True)
    ]
    return cand[cand["max_jaccard"] < threshold].reset_index(drop=True)


# --- pairs, audits, scores ----------------------------------------------------------------------
def within_category_pairs(products: pd.DataFrame) -> pd.DataFrame:
    """Every within-category pair of ``products`` (category, public_code): category, lo < hi."""
    rows = []
    for cat, g in products.groupby("category", sort=True):
        codes = np.sort(g["public_code"].to_numpy(np.int64))
        i, j = np.triu_indices(len(codes), k=1)
        rows.append(
            pd.DataFrame({"category": cat, "public_code_lo": codes[i], "public_code_hi": codes[j]})
        )
    cols = ["category", "public_code_lo", "public_code_hi"]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=cols)


def _binomial(first: np.ndarray, winner: np.ndarray) -> dict[str, object]:
    """Share of pairs whose winner is ``first`` with the exact 95% CI of
    :func:`warehouse.metrics.slot1_wins_accuracy`."""
    if len(winner) == 0:
        return {
            "point": None,
            "ci_lo": None,
            "ci_hi": None,
            "n_pairs": 0,
            "n_wins": 0,
            "includes_chance": False,
        }
    r = slot1_wins_accuracy(pd.DataFrame({"product_code_1": first, "higher_rated_product": winner}))
    return {
        "point": float(r["point"]),
        "ci_lo": float(r["lo"]),
        "ci_hi": float(r["hi"]),
        "n_pairs": int(r["n_pairs"]),
        "n_wins": int(r["n_wins"]),
        "includes_chance": bool(r["lo"] <= 0.5 <= r["hi"]),
    }


def audit_pairs(solution: pd.DataFrame) -> dict[str, object]:
    """Position and code-leak audits on the scored pairs of a solution frame (public_code_1,
    public_code_2, public_code_winner, usage): share of winners listed first ("slot 1 wins"),
    share of winners with the lower code ("lower code wins"), each with an exact binomial 95%
    CI (Clopper-Pearson, the metrics library's slot-1 policy). ``at_chance``: both CIs hold 0.5."""
    s = solution[solution["usage"] != "Ignored"]
    w = s["public_code_winner"].astype(np.int64).to_numpy()
    c1 = s["public_code_1"].astype(np.int64).to_numpy()
    lo = np.minimum(c1, s["public_code_2"].astype(np.int64).to_numpy())
    slot1, lower = _binomial(c1, w), _binomial(lo, w)
    return {
        "n_scored_pairs": len(s),
        "slot1_wins": slot1,
        "lower_code_wins": lower,
        "at_chance": bool(slot1["includes_chance"] and lower["includes_chance"]),
    }


def _solution_frame(solution: pd.DataFrame | str | Path) -> pd.DataFrame:
    if isinstance(solution, pd.DataFrame):
        return solution
    return read_table(Path(solution), COMP_SOLUTION)


def audit_competition(out_dir: Path, solution: pd.DataFrame | str | Path) -> dict[str, object]:
    """The audits of :func:`audit_pairs` with the sides as published in
    ``out_dir/ranking_pairs.csv`` (the solution only supplies the winners)."""
    pairs = read_table(Path(out_dir) / COMP_PAIRS.path, COMP_PAIRS)
    sol = _solution_frame(solution)
    m = pairs.merge(sol, on="pair_id", how="outer", suffixes=("", "_sol"), indicator=True)
    bad = (m["_merge"] != "both") | (m["public_code_1"] != m["public_code_1_sol"])
    bad |= m["public_code_2"] != m["public_code_2_sol"]
    if bad.any():
        raise ReleaseError(
            f"{COMP_PAIRS.path} and the solution disagree on pair {m.loc[bad, 'pair_id'].iloc[0]}"
            ". Fix: audit a competition folder with its own solution."
        )
    return audit_pairs(m[["public_code_1", "public_code_2", "public_code_winner", "usage"]])


def round2(correct: int, n: int) -> float | None:
    """correct / n rounded half-up to 2 decimals (exact decimal arithmetic)."""
    if n == 0:
        return None
    q = (Decimal(correct) / Decimal(n)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return float(q)


def score_submission(
    submission_csv: str | Path, solution: pd.DataFrame | str | Path
) -> dict[str, object]:
    """Leaderboard scores of a submission (``pair_id, public_code_winner``): accuracy on the
    Public and on the Private pairs, rounded to 2 decimals. Every pair id must appear once with
    one of its two codes; a bad file raises :class:`DataValidationError` naming line and column."""
    path = str(submission_csv)
    sol = _solution_frame(solution)
    try:
        sub = pd.read_csv(submission_csv, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise DataValidationError(path, f"cannot be read ({exc})", "submit a CSV file") from exc
    for col in COMP_SAMPLE.names:
        if col not in sub.columns:
            raise DataValidationError(
                path,
                f"missing column {col!r}",
                "use the header of sample_submission.csv",
                column=col,
            )
    values: dict[str, np.ndarray] = {}
    for col in COMP_SAMPLE.names:
        parsed = pd.to_numeric(sub[col].str.strip(), errors="coerce")
        bad = parsed.isna() | (parsed != parsed.round())
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataValidationError(
                path,
                f"{sub[col].iloc[i]!r} is not an integer",
                "write integer codes",
                row=i + 2,
                column=col,
            )
        values[col] = parsed.astype(np.int64).to_numpy()
    ids = pd.Series(values["pair_id"])
    dup = ids.duplicated()
    if dup.any():
        i = int(np.flatnonzero(dup.to_numpy())[0])
        raise DataValidationError(
            path,
            f"pair_id {ids.iloc[i]} appears twice",
            "keep one row per pair",
            row=i + 2,
            column="pair_id",
        )
    known = sol.set_index("pair_id")
    unknown = ~ids.isin(known.index)
    if unknown.any():
        i = int(np.flatnonzero(unknown.to_numpy())[0])
        raise DataValidationError(
            path,
            f"unknown pair_id {ids.iloc[i]}",
            "use the pair ids of ranking_pairs.csv",
            row=i + 2,
            column="pair_id",
        )
    missing = sorted(set(known.index) - set(ids))
    if missing:
        raise DataValidationError(
            path,
            f"{len(missing)} pair(s) missing (e.g. pair_id {missing[0]})",
            "submit one row for every pair of ranking_pairs.csv",
        )
    k = known.loc[values["pair_id"]]
    pred = values["public_code_winner"]
    allowed = (pred == k["public_code_1"].to_numpy(np.int64)) | (
        pred == k["public_code_2"].to_numpy(np.int64)
    )
    if not allowed.all():
        i = int(np.flatnonzero(~allowed)[0])
        raise DataValidationError(
            path,
            f"public_code_winner {pred[i]} is not one of the pair's two products",
            "name public_code_1 or public_code_2 of that pair",
            row=i + 2,
            column="public_code_winner",
        )
    usage = k["usage"].to_numpy()
    winner = pd.to_numeric(k["public_code_winner"]).to_numpy(dtype=float)
    correct = pred.astype(float) == winner
    out: dict[str, object] = {}
    for name in ("Public", "Private"):
        sel = usage == name
        out[f"{name.lower()}_score"] = round2(int(correct[sel].sum()), int(sel.sum()))
        out[f"n_{name.lower()}_pairs"] = int(sel.sum())
    return out


# --- gated state --------------------------------------------------------------------------------
@dataclass
class CompetitionState:
    code_map: pd.DataFrame  # public_code, category, kind, product_code, competition_product_code
    sides: pd.DataFrame  # category, public_code_lo, public_code_hi, lo_in_slot_1
    split: pd.DataFrame  # category, usage

    def save(self, folder: Path) -> None:
        cmap = self.code_map[list(STATE_COLUMNS)].sort_values("public_code")
        write_private_csv(folder / "code_map.csv", cmap)
        write_private_csv(
            folder / "pair_sides.csv",
            self.sides.sort_values(["category", "public_code_lo", "public_code_hi"]),
        )
        write_private_csv(folder / "split.csv", self.split.sort_values("category"))


def _identity(frame: pd.DataFrame) -> set[tuple]:
    cols = ["category", "kind", "product_code", "competition_product_code"]
    f = frame[cols].copy()
    for c in cols[2:]:
        f[c] = pd.to_numeric(f[c]).astype("Int64").astype(str)
    return set(f.itertuples(index=False, name=None))


def load_state(folder: Path, members: pd.DataFrame) -> CompetitionState | None:
    files = [folder / n for n in ("code_map.csv", "pair_sides.csv", "split.csv")]
    if not all(f.exists() for f in files):
        return None
    cmap, sides, split = (pd.read_csv(f) for f in files)
    if _identity(cmap) != _identity(members):
        raise GatedStateError(
            f"the stored competition state in {folder} belongs to other products. Fix: use this "
            "warehouse's gated folder (--gated-dir) or move that folder away to draw a new "
            "competition (codes, sides and split all change)."
        )
    sides["lo_in_slot_1"] = sides["lo_in_slot_1"].astype(bool)
    return CompetitionState(cmap[list(STATE_COLUMNS)], sides, split)


def _guard_ctx_map(cmap: pd.DataFrame) -> pd.DataFrame:
    """The competition codes as a guards code map (decoys have no raw code)."""
    return pd.DataFrame(
        {
            "category": cmap["category"].to_numpy(),
            "product_code": pd.to_numeric(cmap["product_code"]).astype(float).to_numpy(),
            "public_code": cmap["public_code"].astype(np.int64).to_numpy(),
        }
    )


def build_solution(
    state: CompetitionState, gold_pairs: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(ranking pairs, solution) from the state and the gated within-category pairs
    (category, product_code_a, product_code_b, is_tie, winner_product_code)."""
    s = state.sides
    lo, hi = s["public_code_lo"].to_numpy(np.int64), s["public_code_hi"].to_numpy(np.int64)
    first = s["lo_in_slot_1"].to_numpy(bool)
    pairs = pd.DataFrame(
        {
            "category": s["category"].to_numpy(),
            "public_code_1": np.where(first, lo, hi),
            "public_code_2": np.where(first, hi, lo),
        }
    )
    pairs = derive.number_pairs(pairs, "public_code_1", "public_code_2")
    raw = state.code_map.set_index("public_code")["product_code"]
    r1 = pd.to_numeric(raw.reindex(pairs["public_code_1"]).to_numpy())
    r2 = pd.to_numeric(raw.reindex(pairs["public_code_2"]).to_numpy())
    rated = ~np.isnan(r1) & ~np.isnan(r2)
    g = gold_pairs.copy()
    key = pd.DataFrame(
        {
            "category": pairs["category"],
            "product_code_a": np.fmin(r1, r2),
            "product_code_b": np.fmax(r1, r2),
        }
    )
    g["product_code_a"] = g["product_code_a"].astype(float)
    g["product_code_b"] = g["product_code_b"].astype(float)
    m = key.merge(g, on=["category", "product_code_a", "product_code_b"], how="left")
    scored = rated & (m["is_tie"] == False).to_numpy()  # noqa: E712 (NaN -> not scored)
    winner_raw = m["winner_product_code"].to_numpy(dtype=float)
    winner = np.where(winner_raw == r1, pairs["public_code_1"], pairs["public_code_2"])
    usage_by_cat = state.split.set_index("category")["usage"]
    usage = np.where(scored, usage_by_cat.reindex(pairs["category"]).to_numpy(), "Ignored")
    solution = pairs.copy()
    solution["public_code_winner"] = pd.array(np.where(scored, winner, 0), dtype="Int64")
    solution.loc[~scored, "public_code_winner"] = pd.NA
    solution["usage"] = usage
    return pairs, solution


def draw_state(
    members: pd.DataFrame, gold_pairs: pd.DataFrame, ctx, log: Callable[[str], None]
) -> CompetitionState:
    """Codes, sides and split drawn with ``secrets`` until both audits sit at chance, both
    leaderboard splits have scored pairs and the codes pass the guards' permutation and
    row-order rules."""
    from warehouse.quality.guards import guard_frame

    rng = secrets.SystemRandom()
    cats = sorted(members["category"].unique())
    for attempt in range(1, MAX_DRAWS + 1):
        codes = list(range(1, len(members) + 1))
        rng.shuffle(codes)
        cmap = members.copy()
        cmap.insert(0, "public_code", np.asarray(codes, dtype=np.int64))
        pairs = within_category_pairs(cmap)
        sides = pairs.assign(lo_in_slot_1=derive.draw_sides(len(pairs)))
        order = cats.copy()
        rng.shuffle(order)
        private = set(order[: len(order) // 2])
        split = pd.DataFrame(
            {"category": cats, "usage": ["Private" if c in private else "Public" for c in cats]}
        )
        state = CompetitionState(cmap, sides, split)
        _, solution = build_solution(state, gold_pairs)
        audit = audit_pairs(solution)
        counts = solution["usage"].value_counts()
        frame = cmap.sort_values(["category", "public_code"])[["category", "public_code"]]
        bad = guard_frame(
            COMP_PRODUCTS.path,
            frame.reset_index(drop=True),
            ctx.with_code_map(_guard_ctx_map(cmap)),
            rules=["public_code_permutation", "row_order_hidden_id"],
        )
        if audit["at_chance"] and counts.get("Public", 0) and counts.get("Private", 0) and not bad:
            log(f"competition codes, sides and split drawn (attempt {attempt})")
            return state
    raise ReleaseError(f"no competition draw passed the audits in {MAX_DRAWS} attempts")


# --- inputs -------------------------------------------------------------------------------------
def read_members(con, names: tuple[str, ...]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(members: category, kind, product_code, competition_product_code, ingredient_list,
    nutrients; rated frame with every rated product's text; gated pairs)."""
    from warehouse.quality.guards import redact_names

    nutri = ", ".join(f"s.{n}" for n in NUTRIENTS)
    rated_all = con.sql(
        "select p.category, p.product_code, p.is_analog, s.ingredient_list, "
        f"{nutri} from marts.dim_products p join staging.stg_nectar__products s "
        "on s.product_key = p.product_key and s.product_year = p.label_year"
    ).df()
    if rated_all.duplicated(["category", "product_code"]).any():
        raise ReleaseError("stg_nectar__products has two label rows for one product-year")
    cand = con.sql(
        f"select category, competition_product_code, ingredient_list, {', '.join(NUTRIENTS)} "
        "from staging.stg_tastebench__competition_products"
    ).df()
    for f in (rated_all, cand):
        f["ingredient_list"] = redact_names(f["ingredient_list"], names)
    decoys = select_decoys(rated_all[["category", "ingredient_list"]], cand)
    analogs = rated_all[rated_all["is_analog"].astype(bool)]
    members = pd.concat(
        [
            analogs.assign(kind="rated", competition_product_code=np.nan),
            decoys.assign(kind="decoy", product_code=np.nan),
        ],
        ignore_index=True,
    )
    cols = ["category", "kind", "product_code", "competition_product_code", "ingredient_list"]
    members = members[cols + NUTRIENTS]
    pairs = con.sql(
        "select category, product_code_a, product_code_b, is_tie, winner_product_code "
        "from marts.fct_within_category_pairs"
    ).df()
    return members, rated_all, pairs


# --- the export ---------------------------------------------------------------------------------
@dataclass
class CompetitionResult:
    out_dir: Path
    solution_path: Path
    data_origin: str
    n_products: int
    n_rated: int
    n_decoys: int
    n_pairs: int
    n_public_pairs: int
    n_private_pairs: int
    audit: dict[str, object]
    state_reused: bool
    elapsed_s: float
    files: list[str] = field(default_factory=list)


def readme_text(data_origin: str, n_products: int, n_pairs: int) -> str:
    simulated = data_origin == "simulation"
    banner = (
        "> **data_origin = SIMULATED.** The hidden winners come from the calibrated simulation of "
        "the NECTAR panels, not from real ratings: leaderboard scores are not real results.\n"
        if simulated
        else f"> data_origin = `{data_origin}`.\n"
    )
    return f"""# TasteBench competition data (TasteBench Warehouse {__version__})

{banner}
Predict, for each pair of products of the same category, which one a consumer panel rated as
more similar to the animal product it imitates.

| file | rows | what |
|---|---:|---|
| `products.csv` | {n_products} | {COMP_PRODUCTS.description} |
| `ranking_pairs.csv` | {n_pairs} | {COMP_PAIRS.description} |
| `sample_submission.csv` | {n_pairs} | {COMP_SAMPLE.description} |
| `croissant.json` | | Croissant 1.0 metadata |
| `MANIFEST.sha256` | | sha256 of every other file |

Not every product was rated: unrated products are interleaved with the rated ones, and pairs
that involve one are not scored. Product codes are one random permutation of all products;
which product of a pair is listed first is random. The score is the share of scored pairs
whose winner you name (Public and Private leaderboards: disjoint sets of categories), rounded to
2 decimals.

Licences: NECTAR-derived data CC BY-NC 4.0 (non-commercial; attribution: NECTAR and the
TasteBench authors); the product label data are those of the public TasteBench competition
(CC BY-NC 4.0).
"""


def export_competition(
    out_dir: Path,
    *,
    db_path: Path,
    gated_dir: Path,
    log: Callable[[str], None] = lambda m: None,
) -> CompetitionResult:
    """Write the competition folder into ``out_dir`` (new or empty) and the solution into the
    gated folder; raise without writing anything when a guard or an audit fails."""
    import duckdb

    from warehouse.quality.guards import GatedContext, guard_release_dir, raise_for_violations

    t0 = time.perf_counter()
    out_dir = check_out_dir(out_dir)
    gated = Path(gated_dir).resolve()
    ensure_separate(out_dir, gated)
    if not Path(db_path).exists():
        raise ReleaseError(f"no warehouse at {db_path}. Fix: run `tastebench build` first.")
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        ctx = GatedContext.from_warehouse(con)
        members, _, gold_pairs = read_members(con, ctx.names)
        origin = con.sql("select distinct data_origin from marts.dim_products").fetchall()
    finally:
        con.close()
    if len(origin) != 1:
        raise ReleaseError(f"the warehouse mixes data origins {origin}")
    data_origin = str(origin[0][0])
    folder = gated / COMPETITION
    state = load_state(folder, members)
    reused = state is not None
    if state is None:
        state = draw_state(members, gold_pairs, ctx, log)
    ctx = ctx.with_code_map(_guard_ctx_map(state.code_map))
    pairs, solution = build_solution(state, gold_pairs)
    audit = audit_pairs(solution)
    if not audit["at_chance"]:
        raise ReleaseError(f"competition audits not at chance: {audit}")
    key = ["category", "kind", "product_code", "competition_product_code"]
    products = members.merge(
        state.code_map[["public_code", *key]].astype(
            {"product_code": float, "competition_product_code": float}
        ),
        on=key,
        how="left",
        validate="1:1",
    )
    sample = pairs[["pair_id"]].assign(public_code_winner=pairs["public_code_1"])

    tmp = out_dir.parent / f".{out_dir.name}.tmp-{secrets.token_hex(4)}"
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp.mkdir()
    try:
        for spec, frame in ((COMP_PRODUCTS, products), (COMP_PAIRS, pairs), (COMP_SAMPLE, sample)):
            write_table(tmp, frame, spec)
        (tmp / "README.md").write_text(
            readme_text(data_origin, len(products), len(pairs)), encoding="utf-8"
        )
        doc = build_croissant(
            tmp,
            name="tastebench-competition",
            description="TasteBench pairwise similarity competition: product features and "
            "pairs to rank, no labels."
            + (" Hidden labels are SIMULATED." if data_origin == "simulation" else ""),
            tables=COMPETITION_TABLES,
            other_files={"README.md": "Task, files, scoring, licences."},
            data_origin=data_origin,
            version=__version__,
        )
        write_croissant(tmp, doc)
        write_manifest(tmp)
        raise_for_violations(guard_release_dir(tmp, ctx), where=f"the competition for {out_dir}")
        check = audit_competition(tmp, solution)
        if check != audit:
            raise ReleaseError("the written ranking_pairs.csv does not match the solution")
        if not reused:
            state.save(folder)
        solution_path = write_private_bytes(
            folder / COMP_SOLUTION.path, table_bytes(solution, COMP_SOLUTION)
        )
        if out_dir.exists():
            out_dir.rmdir()
        tmp.rename(out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    counts = solution["usage"].value_counts()
    return CompetitionResult(
        out_dir=out_dir,
        solution_path=solution_path,
        data_origin=data_origin,
        n_products=len(products),
        n_rated=int((members["kind"] == "rated").sum()),
        n_decoys=int((members["kind"] == "decoy").sum()),
        n_pairs=len(pairs),
        n_public_pairs=int(counts.get("Public", 0)),
        n_private_pairs=int(counts.get("Private", 0)),
        audit=audit,
        state_reused=reused,
        elapsed_s=time.perf_counter() - t0,
        files=sorted(p.relative_to(out_dir).as_posix() for p in out_dir.rglob("*") if p.is_file()),
    )


__all__ = [
    "CompetitionResult",
    "audit_competition",
    "audit_pairs",
    "export_competition",
    "ingredient_tokens",
    "jaccard",
    "round2",
    "score_submission",
    "select_decoys",
]
