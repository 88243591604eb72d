"""The figures of the in-context page (matplotlib, Agg), each returned as a base64 PNG data URI:
the per-category heat map, the CI plot and the models on the group-size curve. User models are
drawn in red (and their labels bold) everywhere."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping

import numpy as np

USER = "#c62828"
OTHER = "#1f5fa8"


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _uri(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, bbox_inches="tight")
    _plt().close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _mark_users(labels, users: set[str]) -> None:
    for t in labels:
        if t.get_text() in users:
            t.set_color(USER)
            t.set_fontweight("bold")


def heatmap(result: Mapping[str, object], order: list[str]) -> str:
    """Models (main-table order) x categories, pairwise accuracy."""
    plt = _plt()
    models = {m["name"]: m for m in result["models"]}
    cats = sorted({c for m in models.values() for c in m["per_category"]})
    values = np.array(
        [
            [
                np.nan
                if (v := models[n]["per_category"].get(c)) is None
                or v["pairwise_accuracy"]["point"] is None
                else v["pairwise_accuracy"]["point"]
                for c in cats
            ]
            for n in order
        ],
        dtype=float,
    )
    fig, ax = plt.subplots(figsize=(min(12, 0.42 * len(cats) + 4), 0.32 * len(order) + 2))
    im = ax.imshow(values, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(cats)), cats, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(order)), order, fontsize=7)
    _mark_users(ax.get_yticklabels(), set(result["context"]["user_models"]))
    for i in range(len(order)):
        for j in range(len(cats)):
            if not np.isnan(values[i, j]):
                ax.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", fontsize=5.5)
    fig.colorbar(im, ax=ax, fraction=0.025, pad=0.01, label="pairwise accuracy")
    ax.set_title("Pairwise accuracy per category (your models in red)")
    return _uri(fig)


def ci_plot(result: Mapping[str, object], order: list[str]) -> str:
    """Pairwise accuracy, point and 95% interval per model, best at the top."""
    plt = _plt()
    models = {m["name"]: m["metrics"]["pairwise_accuracy"] for m in result["models"]}
    users = set(result["context"]["user_models"])
    names = order[::-1]
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(names) + 1.6))
    for y, n in enumerate(names):
        iv = models[n]
        if iv["point"] is None:
            continue
        lo = iv["point"] if iv["ci_lo"] is None else iv["ci_lo"]
        hi = iv["point"] if iv["ci_hi"] is None else iv["ci_hi"]
        color = USER if n in users else OTHER
        ax.errorbar(
            iv["point"],
            y,
            xerr=[[iv["point"] - lo], [hi - iv["point"]]],
            fmt="o",
            color=color,
            capsize=3,
        )
    ax.axvline(0.5, color="#888", linestyle="--", linewidth=1, label="random policy (0.5)")
    ax.set_yticks(range(len(names)), names, fontsize=7)
    _mark_users(ax.get_yticklabels(), users)
    ax.set_xlabel(f"pairwise accuracy, 95% CI ({result['ci']['methods']['pairwise_accuracy']})")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Pairwise accuracy with 95% intervals (your models in red)")
    return _uri(fig)


def curve_plot(human: Mapping[str, object], users: list[str]) -> str:
    """The group-size curve (median and 2.5-97.5% band where known), the median LOO panelist
    accuracy, and each user model's accuracy (with interval) and k*."""
    plt = _plt()
    curve = [c for c in human["curve"] if c["median_accuracy"] is not None]
    k = np.array([c["k"] for c in curve], dtype=float)
    med = np.array([c["median_accuracy"] for c in curve], dtype=float)
    fig, ax = plt.subplots(figsize=(9, 4.6))
    ax.plot(k, med, "o-" if len(k) < 10 else "-", color="#333", label="panels of k: median")
    band = [(c["k"], c["q025"], c["q975"]) for c in curve if c["q025"] is not None]
    if band:
        bk, blo, bhi = (np.array(v, dtype=float) for v in zip(*band, strict=True))
        ax.fill_between(bk, blo, bhi, color="#bbb", alpha=0.5, label="panels of k: 2.5-97.5%")
    pan = human["panelist_accuracy"]["median"]
    if pan is not None:
        ax.axhline(pan, color="#777", linestyle=":", label=f"median LOO panelist ({pan:.3f})")
    placed = {m["name"]: m for m in human["models"]}
    colors = plt.get_cmap("Reds")(np.linspace(0.55, 0.95, max(1, len(users))))
    for u, color in zip(users, colors, strict=False):
        acc = placed[u]["accuracy"]
        if acc["point"] is None:
            continue
        ax.axhline(
            acc["point"],
            color=color,
            linewidth=2,
            label=f"{u}: {acc['point']:.3f}, {placed[u]['k_star']['label']}",
        )
        if acc["ci_lo"] is not None:
            ax.axhspan(acc["ci_lo"], acc["ci_hi"], color=color, alpha=0.12)
        if placed[u]["k_star"]["k_star"] is not None:
            ax.plot([placed[u]["k_star"]["k_star"]], [acc["point"]], "D", color=color)
    ax.set_xlabel("panel size k (respondents)")
    ax.set_ylabel("pairwise accuracy" + (" within blocks" if human["is_within_block"] else ""))
    ax.set_xlim(0.5, max(k.max() if k.size else 1, 5) + 0.5)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    title = "Your models on the group-size curve"
    if human["is_simulated"]:
        title += " (SIMULATED panels)"
    ax.set_title(title)
    return _uri(fig)
