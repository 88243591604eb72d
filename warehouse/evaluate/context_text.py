"""Rich rendering of the in-context sections (``context``, ``human_scale``) for the terminal."""

from __future__ import annotations

from collections.abc import Mapping


def _acc(iv: Mapping[str, object]) -> str:
    if iv.get("point") is None:
        return "-"
    text = f"{iv['point']:.3f}"
    if iv.get("ci_lo") is not None and iv.get("ci_hi") is not None:
        text += f" [{iv['ci_lo']:.3f}, {iv['ci_hi']:.3f}]"
    return text


def _rank(r: Mapping[str, object]) -> str:
    if r["rank"] is None:
        return r["note"]
    text = f"{r['rank']} of {r['n_models']} [{r['rank_ci_lo']}, {r['rank_ci_hi']}]"
    return text if r["is_resolved"] else text + " (not resolved)"


def render_context(result: Mapping[str, object]):
    """Your model in context: rank with interval, human scale, k*, resolved comparisons."""
    from rich.console import Group
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    ctx, human = result["context"], result["human_scale"]
    parts = []
    if human["is_simulated"]:
        parts.append(Text("SIMULATED human scale: the panels are simulated.", style="bold yellow"))
    scale = "within blocks" if human["is_within_block"] else "all pairs (blocks not public)"
    pan = human["panelist_accuracy"]
    table = Table(
        title=f"In context: rank among {len(ctx['files']) - len(ctx['user_models'])} context "
        f"models; human scale over {scale}; median LOO panelist accuracy "
        f"{pan['median'] if pan['median'] is None else format(pan['median'], '.3f')}"
    )
    for col in (
        "model",
        "rank [95% interval]",
        "human-scale accuracy",
        "k* [interval]",
        "resolved wins / losses / unresolved",
    ):
        table.add_column(col)
    placed = {m["name"]: m for m in human["models"]}
    for r in ctx["ranks"]:
        m = placed[r["name"]]
        comps = [c for c in ctx["comparisons"] if c["model_a"] == r["name"]]
        wins = sum(c["winner"] == r["name"] for c in comps)
        losses = sum(c["is_resolved"] and c["winner"] != r["name"] for c in comps)
        k, lo, hi = (m[f]["label"] for f in ("k_star", "k_star_ci_lo", "k_star_ci_hi"))
        kstar = k if lo == hi == k else f"{k} [interval: {lo} ... {hi}]"
        cells = (
            r["name"],
            _rank(r),
            _acc(m["accuracy"]),
            kstar,
            f"{wins} / {losses} / {len(comps) - wins - losses}",
        )
        table.add_row(*(escape(c) for c in cells))
    parts.append(table)
    parts.append(Text(human["note"], style="dim"))
    return Group(*parts)
