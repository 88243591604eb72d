"""Rich rendering of an evaluate result for the terminal."""

from __future__ import annotations

from collections.abc import Mapping

from warehouse.metrics.bootstrap import BOOT_METRICS
from warehouse.metrics.core import METRIC_NAMES

_SHORT = {
    "pairwise_accuracy": "pairwise",
    "spearman": "Spearman",
    "kendall_tau": "Kendall",
    "recall_at_1": "R@1",
    "recall_at_2": "R@2",
    "recall_at_3": "R@3",
    "pairwise_accuracy_macro": "macro",
    "pairwise_accuracy_pooled": "pooled",
}


def _fmt(iv: Mapping[str, object] | None, ci: bool = True) -> str:
    if not iv or iv.get("point") is None:
        return "-"
    text = f"{iv['point']:.3f}"
    if ci and iv.get("ci_lo") is not None and iv.get("ci_hi") is not None:
        text += f" [{iv['ci_lo']:.3f}, {iv['ci_hi']:.3f}]"
        if iv.get("is_degenerate"):
            text += " (degenerate)"
    return text


def _label(result: Mapping[str, object]) -> str:
    conv = result.get("ci", {}).get("convention", "published_bca")
    return "published BCa" if conv == "published_bca" else "default methods, docs/statistics.md"


def render_table(result: Mapping[str, object], per_category: bool = False):
    """Rich renderables for ``result``: the main table (models, then trivial policies), the
    paired comparisons, the difficulty slices, optionally the per-category table, and notes."""
    from rich.console import Group
    from rich.text import Text

    parts = [
        Text(
            f"gold: {result['gold']}   data_origin: {result['data_origin']}   "
            f"bootstrap: {result['bootstrap']['n_boot']} replicates, "
            f"seed {result['bootstrap']['seed']}"
        )
    ]
    if result["data_origin"] == "simulation":
        parts.append(
            Text("SIMULATED gold: these numbers are not real results.", style="bold yellow")
        )
    parts.append(_main_table(result))
    if result["comparisons"]:
        parts.append(_comparisons_table(result))
    parts.extend(_slices_parts(result))
    if per_category:
        parts.append(_per_category_table(result))
    parts.extend(Text(f"note: {note}", style="yellow") for note in result.get("notes", []))
    parts.extend(_policy_notes(result["trivial_policies"]))
    return Group(*parts)


def _main_table(result: Mapping[str, object]):
    """Models, then the trivial policies."""
    from rich.table import Table

    main = Table(title=f"TasteBench metrics (point [95% CI: {_label(result)}])", show_lines=False)
    main.add_column("model")
    main.add_column("n", justify="right")
    main.add_column("coverage", justify="right")
    for m in METRIC_NAMES:
        main.add_column(_SHORT[m], justify="right")
    for model in result["models"]:
        main.add_row(
            model["name"],
            str(model["n_products"]),
            f"{model['coverage']:.3f}",
            *[_fmt(model["metrics"][m], m in BOOT_METRICS) for m in METRIC_NAMES],
        )
    main.add_section()
    for pol in result["trivial_policies"]:
        flag = " (!)" if pol["differs_from_chance"] else ""
        main.add_row(
            f"policy: {pol['name']}{flag}",
            "" if pol.get("n_products") is None else str(pol["n_products"]),
            "",
            *[_fmt(pol["metrics"].get(m)) for m in METRIC_NAMES],
            style="bold red" if pol["differs_from_chance"] else "dim",
        )
    return main


def _comparisons_table(result: Mapping[str, object]):
    from rich.table import Table

    method = result.get("ci", {}).get("comparisons", "pair_bootstrap")
    comp = Table(title=f"Paired comparisons (pairwise accuracy, {method}, Holm-corrected)")
    for col in ("model a", "model b", "pairs", "diff [95% CI]", "p", "p Holm", "resolved"):
        comp.add_column(col, justify="left" if col.startswith("model") else "right")
    for c in result["comparisons"]:
        diff = (
            "-" if c["diff"] is None else f"{c['diff']:+.3f} [{c['ci_lo']:+.3f}, {c['ci_hi']:+.3f}]"
        )
        comp.add_row(
            c["model_a"],
            c["model_b"],
            str(c["n_pairs"]),
            diff,
            "-" if c["p_value"] is None else f"{c['p_value']:.4f}",
            "-" if c["p_holm"] is None else f"{c['p_holm']:.4f}",
            "yes" if c["is_resolved"] else "no",
        )
    return comp


def _slices_parts(result: Mapping[str, object]) -> list:
    """The difficulty-slice table, and the note on the clear/ambiguous slice when it is absent."""
    from rich.table import Table
    from rich.text import Text

    slices = Table(title="Difficulty slices (pairwise accuracy)")
    slices.add_column("model")
    first = result["models"][0]["slices"]
    delta_of = first["delta_quintiles"]["delta_of"]
    for b in range(1, 6):
        slices.add_column(f"|d {delta_of}| Q{b}", justify="right")
    has_clear = first.get("clear_vs_ambiguous") is not None
    if has_clear:
        slices.add_column("clear", justify="right")
        slices.add_column("ambiguous", justify="right")
    has_ece = any(m.get("calibration") for m in result["models"])
    if has_ece:
        slices.add_column("ECE", justify="right")
    for model in result["models"]:
        slices.add_row(*_slice_row(model, has_clear, has_ece))
    if has_clear:
        return [slices]
    return [slices, Text(f"clear vs ambiguous: {first['clear_vs_ambiguous_note']}", style="dim")]


def _slice_row(model: Mapping[str, object], has_clear: bool, has_ece: bool) -> list[str]:
    bins = {b["bin"]: b for b in model["slices"]["delta_quintiles"]["bins"]}
    row = [model["name"]]
    for b in range(1, 6):
        acc = bins.get(b, {}).get("accuracy")
        row.append("-" if acc is None else f"{acc:.3f} (n={bins[b]['n_pairs']})")
    if has_clear:
        ca = {s["slice"]: s for s in model["slices"]["clear_vs_ambiguous"] or []}
        for name in ("clear", "ambiguous"):
            s = ca.get(name)
            row.append(
                "-" if not s or s["accuracy"] is None else f"{s['accuracy']:.3f} (n={s['n_pairs']})"
            )
    if has_ece:
        cal = model.get("calibration")
        row.append("-" if not cal or cal["ece"] is None else f"{cal['ece']:.3f}")
    return row


def _per_category_table(result: Mapping[str, object]):
    from rich.table import Table

    models = result["models"]
    cats = sorted({c for m in models for c in m["per_category"]})
    pc = Table(title=f"Per-category pairwise accuracy (point [95% CI: {_label(result)}])")
    pc.add_column("category")
    pc.add_column("n", justify="right")
    for m in models:
        pc.add_column(m["name"], justify="right")
    for c in cats:
        n = next((m["per_category"][c]["n_products"] for m in models if c in m["per_category"]), 0)
        pc.add_row(
            c,
            str(n),
            *[_fmt(m["per_category"].get(c, {}).get("pairwise_accuracy")) for m in models],
        )
    return pc


def _policy_notes(policies: list[Mapping[str, object]]) -> list:
    """One line per trivial policy that beats chance, is below it, or flags a metric."""
    from rich.text import Text

    parts = []
    for p in policies:
        if p["beats_chance"]:
            parts.append(
                Text(
                    f"(!) trivial policy {p['name']} beats chance on pairwise accuracy (CI above "
                    "chance): a construction artifact",
                    style="bold red",
                )
            )
        elif p["differs_from_chance"]:
            parts.append(
                Text(
                    f"(!) trivial policy {p['name']} is below chance beyond its CI: its mirror "
                    "image beats chance (a construction artifact to report)",
                    style="bold red",
                )
            )
        elif p["flagged_metrics"]:
            parts.append(
                Text(
                    f"trivial policy {p['name']}: CI above chance for "
                    f"{', '.join(p['flagged_metrics'])} only (Recall replicates are biased "
                    "downward; read with the pairwise flag, which is at chance)",
                    style="yellow",
                )
            )
    return parts
