"""``tastebench evaluate`` in context (the default; ``--alone`` is :func:`evaluate_files` on the
given files only): the user's files scored beside the nine published out-of-fold models (resolved
through the registry, hash-checked) and, with ``--gold warehouse``, the warehouse's own fits;
the user's paired comparisons (Holm over the user's comparisons only), the rank of each user
model with its interval (:mod:`.ranks`) and every model on the human scale (:mod:`.human_scale`).
The result is the JSON contract of docs/evaluate.md plus the ``context`` and ``human_scale``
sections.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.config import Settings
from warehouse.errors import DataValidationError, WarehouseError
from warehouse.evaluate import human_scale as hs
from warehouse.evaluate.files import (
    PredictionFile,
    Reference,
    _scored_frame,
    evaluate_files,
    load_predictions,
    load_reference,
    resolve_gold_mode,
)
from warehouse.evaluate.ranks import RANK_METHOD, model_ranks
from warehouse.metrics.compare import holm
from warehouse.metrics.scoring import ALPHA, json_float, pair_table


def published_files(settings) -> list[tuple[PredictionFile, dict[str, object]]]:
    """The nine published out-of-fold files, resolved and hash-checked through the registry."""
    from warehouse.sources import registry

    out = []
    for key in sorted(k for k in registry.load_registry() if k.startswith("tastebench_oof_")):
        path = registry.resolve(key, settings)
        ds = registry.get(key)
        f = load_predictions(path)
        prov = {
            "name": f.name,
            "role": "published",
            "source_file": str(path),
            "sha256": ds.sha256,
            "registry_key": key,
        }
        out.append((f, prov))
    return out


def warehouse_fits(db_path: Path) -> list[tuple[PredictionFile, dict[str, object]]]:
    """The warehouse's own fits (``marts.fct_oof_predictions``, ``source = 'warehouse_fit'``)."""
    import duckdb

    from warehouse.sources.readonly import connect_read_only

    con = connect_read_only(Path(db_path))
    try:
        rows = con.sql(
            "select model_id, fit_id, category, cast(product_code as varchar) as product_code, "
            "cast(predicted_score as varchar) as predicted_score from marts.fct_oof_predictions "
            "where source = 'warehouse_fit' order by model_id, category, product_code"
        ).pl()
    except (duckdb.CatalogException, duckdb.BinderException):
        return []
    finally:
        con.close()
    out = []
    for (model_id,), g in rows.group_by("model_id", maintain_order=True):
        name = str(model_id)
        f = PredictionFile(
            name=name,
            path=Path(f"{db_path}#{name}"),
            frame=g.select("category", "product_code", "predicted_score"),
            gold_column=None,
            has_confidence=False,
        )
        prov = {
            "name": name,
            "role": "warehouse_fit",
            "source_file": f"{db_path}: marts.fct_oof_predictions",
            "sha256": None,
            "fit_id": g["fit_id"][0],
        }
        out.append((f, prov))
    return out


def _user_files(paths: Sequence[str | Path]) -> list[PredictionFile]:
    if not paths:
        raise WarehouseError("no prediction files given. Fix: pass one or more CSV paths.")
    return [load_predictions(p, max_rows=1) for p in paths]  # structure first


def _context_models(
    users: list[PredictionFile], ref: Reference, settings, db_path: Path | None, notes: list[str]
) -> list[tuple[PredictionFile, dict[str, object]]]:
    """Context files not already given by the user (same bytes), each checked against ``ref``."""
    from warehouse.files import sha256_file

    user_sha = {sha256_file(f.path): f for f in users}
    user_names = {f.name: f for f in users}
    found = published_files(settings)
    if ref.mode == "warehouse":
        found += warehouse_fits(Path(db_path) if db_path else settings.db_path)
    elif db_path is not None:
        notes.append(
            "the warehouse's own fits are left out: their gold is the warehouse's panel means, "
            "not the files' gold (score with --gold warehouse to rank among them)"
        )
    kept = []
    for f, prov in found:
        if prov["sha256"] in user_sha:
            notes.append(f"{user_sha[prov['sha256']].path} is the published model {f.name}")
            continue
        if f.name in user_names:
            raise WarehouseError(
                f"{user_names[f.name].path} shares its name '{f.name}' with a context model "
                f"({prov['source_file']}) but not its content. Fix: rename your file."
            )
        try:
            _scored_frame(f, ref)
        except DataValidationError as exc:
            notes.append(f"context model {f.name} left out: it does not match this gold ({exc})")
            continue
        kept.append((f, prov))
    return kept


def _user_comparisons(comparisons: list[dict], users: set[str], alpha: float) -> list[dict]:
    """Comparisons involving a user model, the user model first, Holm over these only."""
    rows = []
    for c in comparisons:
        if c["model_a"] not in users and c["model_b"] not in users:
            continue
        r = dict(c)
        if r["model_a"] not in users:
            neg = lambda v: None if v is None else -v  # noqa: E731
            r.update(
                model_a=c["model_b"],
                model_b=c["model_a"],
                acc_a=c["acc_b"],
                acc_b=c["acc_a"],
                diff=neg(c["diff"]),
                ci_lo=neg(c["ci_hi"]),
                ci_hi=neg(c["ci_lo"]),
            )
        rows.append(r)
    p = np.array([np.nan if r["p_value"] is None else r["p_value"] for r in rows], dtype=float)
    adj = np.full(len(rows), np.nan)
    ok = np.isfinite(p)
    adj[ok] = holm(p[ok])
    for r, ph in zip(rows, adj, strict=True):
        lo, hi = r["ci_lo"], r["ci_hi"]
        r["p_holm"] = json_float(ph)
        r["is_resolved"] = bool(
            np.isfinite(ph) and ph < alpha and lo is not None and (lo > 0 or hi < 0)
        )
        r["winner"] = (
            (r["model_a"] if r["diff"] > 0 else r["model_b"]) if r["is_resolved"] else None
        )
    return rows


def _human_scale(
    result: dict, frames: dict[str, pl.DataFrame], ref: Reference, settings, db_path, n_boot, seed
) -> dict[str, object]:
    """Every model on the human scale: within blocks from the warehouse, else what the published
    aggregates allow (:mod:`.human_scale`)."""
    if ref.mode == "warehouse":
        side, in_blocks = hs.warehouse_human_side(Path(db_path) if db_path else settings.db_path)
        acc = {}
        for name, df in frames.items():
            pairs = pair_table(df["category"], df["product_code"], df["gold"], df["pred"])
            acc[name] = hs.within_block_accuracy(pairs, in_blocks, n_boot, seed)
        origin = result["data_origin"]
    else:
        side = hs.public_human_side(settings)
        acc = {
            m["name"]: {
                k: m["metrics"]["pairwise_accuracy"][k]
                for k in ("point", "ci_lo", "ci_hi", "ci_method")
            }
            | {"n_pairs": m["n_pairs"]}
            for m in result["models"]
        }
        origin = "tastebench_public"
    out = hs.place_models(side, acc)
    out["data_origin"] = origin
    out["is_simulated"] = origin == "simulation"
    return out


def evaluate_in_context(
    paths: Sequence[str | Path],
    gold: str | None = None,
    n_boot: int = 10000,
    seed: int = 42,
    db_path: str | Path | None = None,
    *,
    settings: Settings,
    alpha: float = ALPHA,
    ci: str = "default",
) -> dict[str, object]:
    """Score ``paths`` in context; the contract of docs/evaluate.md with ``context`` and
    ``human_scale``. Bad user files raise before any scoring (as :func:`evaluate_files`)."""
    db = Path(db_path) if db_path else None
    users = _user_files(paths)
    mode = resolve_gold_mode(gold, users)
    ref = load_reference(mode, db, settings)
    # at most one row more than there are known products (a longer file has an unknown or
    # duplicate row among them): memory follows the product set, not the file's size
    users = [load_predictions(f.path, max_rows=ref.known.height + 1) for f in users]
    frames = {f.name: _scored_frame(f, ref)[0] for f in users}  # bad input fails here, first
    notes: list[str] = []
    context = _context_models(users, ref, settings, db, notes)
    result = evaluate_files(
        [*users, *(f for f, _ in context)],
        gold=mode,
        n_boot=n_boot,
        seed=seed,
        db_path=db,
        settings=settings,
        alpha=alpha,
        ci=ci,
    )
    ctx_frames = {f.name: _scored_frame(f, ref)[0] for f, _ in context}
    roles = {f.name: p["role"] for f, p in context} | {f.name: "user" for f in users}
    for m in result["models"]:
        m["role"] = roles[m["name"]]
    result["context"] = _context_section(
        result, users, context, (frames, ctx_frames), notes, (n_boot, seed, alpha)
    )
    result["human_scale"] = _human_scale(
        result, {**frames, **ctx_frames}, ref, settings, db, n_boot, seed
    )
    result["notes"] += notes
    return result


def _context_section(
    result: dict,
    users: Sequence[PredictionFile],
    context: Sequence[tuple[PredictionFile, dict]],
    frames: tuple[dict[str, pl.DataFrame], dict[str, pl.DataFrame]],
    notes: list[str],
    boot: tuple[int, int, float],
) -> dict[str, object]:
    """The ``context`` section: the files and their roles, the user's comparisons under their
    own Holm, and the rank of each user model among the context models. ``frames``: the user
    files' and the context models' scored rows; ``boot``: ``(n_boot, seed, alpha)``."""
    from warehouse.files import sha256_file

    user_frames, ctx_frames = frames
    n_boot, seed, alpha = boot
    user_names = [f.name for f in users]
    files = [
        {"name": f.name, "role": "user", "source_file": str(f.path), "sha256": sha256_file(f.path)}
        for f in users
    ]
    ranks = []
    for u in user_names:
        table = {u: user_frames[u], **ctx_frames}
        ranks.append(model_ranks(table, [u], n_boot=n_boot, seed=seed, alpha=alpha)[0])
    return {
        "user_models": user_names,
        "files": files + [p for _, p in context],
        "comparisons": _user_comparisons(result["comparisons"], set(user_names), alpha),
        "comparison_holm_over": "the user's comparisons",
        "ranks": ranks,
        "rank_method": RANK_METHOD,
        "rank_scope": "each user model among the context models (other user files not counted), "
        "pairwise accuracy on the products all of them cover",
        "notes": notes,
    }
