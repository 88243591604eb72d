"""The competition's leaderboard side (docs/release.md, "Competition"): the position and code-leak
audits of a solution and the scoring of a submission. Frames are polars; the exact binomial
interval comes from :func:`warehouse.metrics.slot1_wins_accuracy`."""

from __future__ import annotations

import csv
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.errors import DataValidationError
from warehouse.metrics import slot1_wins_accuracy
from warehouse.release.schema import COMP_PAIRS, COMP_SAMPLE, COMP_SOLUTION
from warehouse.release.tables import ReleaseError, as_frame, read_table


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
    r = slot1_wins_accuracy(pl.DataFrame({"product_code_1": first, "higher_rated_product": winner}))
    return {
        "point": float(r["point"]),
        "ci_lo": float(r["lo"]),
        "ci_hi": float(r["hi"]),
        "n_pairs": int(r["n_pairs"]),
        "n_wins": int(r["n_wins"]),
        "includes_chance": bool(r["lo"] <= 0.5 <= r["hi"]),
    }


def audit_pairs(solution) -> dict[str, object]:
    """Position and code-leak audits on the scored pairs of a solution frame (public_code_1,
    public_code_2, public_code_winner, usage): share of winners listed first ("slot 1 wins"),
    share of winners with the lower code ("lower code wins"), each with an exact binomial 95%
    CI (Clopper-Pearson, the metrics library's slot-1 policy). ``at_chance``: both CIs hold 0.5."""
    s = as_frame(solution).filter(pl.col("usage") != "Ignored")
    w = s["public_code_winner"].cast(pl.Int64).to_numpy()
    c1 = s["public_code_1"].cast(pl.Int64).to_numpy()
    lo = np.minimum(c1, s["public_code_2"].cast(pl.Int64).to_numpy())
    slot1, lower = _binomial(c1, w), _binomial(lo, w)
    return {
        "n_scored_pairs": len(s),
        "slot1_wins": slot1,
        "lower_code_wins": lower,
        "at_chance": bool(slot1["includes_chance"] and lower["includes_chance"]),
    }


def solution_frame(solution) -> pl.DataFrame:
    if isinstance(solution, str | Path):
        return read_table(Path(solution), COMP_SOLUTION)
    return as_frame(solution)


def audit_competition(out_dir: Path, solution) -> dict[str, object]:
    """The audits of :func:`audit_pairs` with the sides as published in
    ``out_dir/ranking_pairs.csv`` (the solution only supplies the winners)."""
    pairs = read_table(Path(out_dir) / COMP_PAIRS.path, COMP_PAIRS)
    sol = solution_frame(solution).select(
        "pair_id",
        pl.col("public_code_1").alias("sol_1"),
        pl.col("public_code_2").alias("sol_2"),
        "public_code_winner",
        "usage",
    )
    m = pairs.join(sol, on="pair_id", how="full", coalesce=True)
    bad = m.filter(
        pl.col("public_code_1").is_null()
        | pl.col("sol_1").is_null()
        | (pl.col("public_code_1") != pl.col("sol_1"))
        | (pl.col("public_code_2") != pl.col("sol_2"))
    )
    if len(bad):
        raise ReleaseError(
            f"{COMP_PAIRS.path} and the solution disagree on pair {bad['pair_id'][0]}. Fix: "
            "audit a competition folder with its own solution."
        )
    return audit_pairs(m.select("public_code_1", "public_code_2", "public_code_winner", "usage"))


def round2(correct: int, n: int) -> float | None:
    """correct / n rounded half-up to 2 decimals (exact decimal arithmetic)."""
    if n == 0:
        return None
    q = (Decimal(correct) / Decimal(n)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return float(q)


def _read_submission(path: str) -> dict[str, list[str]]:
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise DataValidationError(path, f"cannot be read ({exc})", "submit a CSV file") from exc
    if not rows:
        raise DataValidationError(path, "is empty", "use the header of sample_submission.csv")
    header = [h.strip() for h in rows[0]]
    for col in COMP_SAMPLE.names:
        if col not in header:
            raise DataValidationError(
                path, f"missing column {col!r}", "use the header of sample_submission.csv",
                column=col,
            )  # fmt: skip
    out = {c: [] for c in header}
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise DataValidationError(
                path, f"{len(row)} fields, expected {len(header)}", "write one value per column",
                row=line,
            )  # fmt: skip
        for c, v in zip(header, row, strict=True):
            out[c].append(v)
    return out


def _integer_columns(path: str, sub: dict[str, list[str]]) -> dict[str, np.ndarray]:
    """The submission's columns of sample_submission.csv as int64 (each value an integer)."""
    values: dict[str, np.ndarray] = {}
    for col in COMP_SAMPLE.names:
        parsed = []
        for i, text in enumerate(sub[col]):
            try:
                x = float(text.strip())
            except ValueError:
                x = float("nan")
            if not np.isfinite(x) or x != round(x):
                raise DataValidationError(
                    path, f"{text!r} is not an integer", "write integer codes",
                    row=i + 2, column=col,
                )  # fmt: skip
            parsed.append(int(x))
        values[col] = np.asarray(parsed, dtype=np.int64)
    return values


def _check_pair_ids(path: str, ids: list[int], known: dict) -> None:
    """Every pair id of the solution exactly once, no other."""
    seen: set[int] = set()
    for i, pid in enumerate(ids):
        if pid in seen:
            raise DataValidationError(
                path, f"pair_id {pid} appears twice", "keep one row per pair",
                row=i + 2, column="pair_id",
            )  # fmt: skip
        seen.add(pid)
    for i, pid in enumerate(ids):
        if pid not in known:
            raise DataValidationError(
                path, f"unknown pair_id {pid}", "use the pair ids of ranking_pairs.csv",
                row=i + 2, column="pair_id",
            )  # fmt: skip
    missing = sorted(set(known) - seen)
    if missing:
        raise DataValidationError(
            path,
            f"{len(missing)} pair(s) missing (e.g. pair_id {missing[0]})",
            "submit one row for every pair of ranking_pairs.csv",
        )


def score_submission(submission_csv: str | Path, solution) -> dict[str, object]:
    """Leaderboard scores of a submission (``pair_id, public_code_winner``): accuracy on the
    Public and on the Private pairs, rounded to 2 decimals. Every pair id must appear once with
    one of its two codes; a bad file raises :class:`DataValidationError` naming line and column."""
    path = str(submission_csv)
    sol = solution_frame(solution)
    values = _integer_columns(path, _read_submission(path))
    ids = values["pair_id"].tolist()
    known = {r["pair_id"]: r for r in sol.iter_rows(named=True)}
    _check_pair_ids(path, ids, known)
    rows = [known[pid] for pid in ids]
    pred = values["public_code_winner"]
    for i, (p, r) in enumerate(zip(pred.tolist(), rows, strict=True)):
        if p not in (r["public_code_1"], r["public_code_2"]):
            raise DataValidationError(
                path, f"public_code_winner {p} is not one of the pair's two products",
                "name public_code_1 or public_code_2 of that pair",
                row=i + 2, column="public_code_winner",
            )  # fmt: skip
    usage = np.array([r["usage"] for r in rows], dtype=object)
    winner = np.array(
        [np.nan if r["public_code_winner"] is None else r["public_code_winner"] for r in rows],
        dtype=float,
    )
    correct = pred.astype(float) == winner
    out: dict[str, object] = {}
    for name in ("Public", "Private"):
        sel = usage == name
        out[f"{name.lower()}_score"] = round2(int(correct[sel].sum()), int(sel.sum()))
        out[f"n_{name.lower()}_pairs"] = int(sel.sum())
    return out


__all__ = ["audit_competition", "audit_pairs", "round2", "score_submission", "solution_frame"]
