"""What a build rebuilds and why: the published warehouse's state (:mod:`warehouse.pipeline.state`)
against the fingerprints of what this build would read (docs/operations.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from warehouse.pipeline.state import (
    DMPNN_MODELS,
    STATE_VERSION,
    Fingerprints,
    State,
    file_signature,
    python_model_domains,
)


@dataclass
class Plan:
    """What a build does and why. ``mode``: ``full`` (everything, into a fresh file),
    ``incremental`` (a copy of the published file; reload ``reload_sources``, rewrite
    ``rewrite_tables``, ``dbt build --select`` ``select``, gate) or ``current`` (nothing changed:
    the published warehouse stays as it is)."""

    mode: str
    reasons: list[str]
    reload_sources: list[str] = field(default_factory=list)
    rewrite_tables: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    run_gate: bool = True

    def as_record(self) -> dict:
        return asdict(self)


def _dbt_sources_of_tables(manifest: Path) -> dict[str, str]:
    """raw table name -> dbt selector of its source node (``source:<source>.<table>``)."""
    nodes = json.loads(Path(manifest).read_text(encoding="utf-8")).get("sources", {})
    return {
        (n.get("identifier") or n["name"]): f"source:{n['source_name']}.{n['name']}"
        for n in nodes.values()
        if n.get("schema") == "raw"
    }


def selectors_for_tables(tables: list[str], manifest: Path) -> list[str]:
    """``source:<source>.<table>+`` for each raw table that a dbt source declares (a raw table no
    model reads selects nothing)."""
    by_table = _dbt_sources_of_tables(manifest)
    return sorted({f"{by_table[t]}+" for t in tables if t in by_table})


def _full_rebuild_reasons(
    previous: State | None,
    current: Fingerprints,
    db_path: Path,
    full_refresh: bool,
    explicit_dbt_args: bool,
) -> list[str]:
    """Why nothing short of a full rebuild will do (empty: an incremental build may)."""
    full = []
    if full_refresh:
        full.append("--full-refresh requested")
    if explicit_dbt_args:
        full.append("explicit dbt arguments: the caller selects the models")
    if not Path(db_path).exists():
        full.append(f"no published warehouse at {db_path}")
    elif previous is None:
        full.append("no state of the published warehouse (first build with this version)")
    else:
        if previous.version != STATE_VERSION:
            full.append(f"state format {previous.version} -> {STATE_VERSION}")
        if previous.db_signature != file_signature(db_path):
            full.append("the published file changed outside `tastebench build`")
        if previous.fingerprints.environment != current.environment:
            full.append(
                "environment changed (Python or library versions, dbt_project.yml, profiles.yml, "
                "build code, or dbt vars)"
            )
    return full


def _changed_sources(
    previous: State, current: Fingerprints, reasons: list[str]
) -> tuple[list[str], list[str]]:
    """(sources to reload, raw tables to rewrite); a reason per reloaded source."""
    before = previous.fingerprints
    reload = sorted(s for s in current.sources if before.sources.get(s) != current.sources[s])
    rewrite: list[str] = []
    for source in reload:
        if source == "nectar":
            changed = sorted(
                t for t, h in current.nectar_tables.items() if before.nectar_tables.get(t) != h
            )
        else:
            changed = sorted(previous.tables_by_source.get(source, []))
        rewrite += changed
        reasons.append(f"source {source} changed: reload {', '.join(changed) or 'its tables'}")
    return reload, rewrite


def _changed_code(before: Fingerprints, current: Fingerprints, reasons: list[str]) -> list[str]:
    """dbt selectors for changed dbt files, domain code and D-MPNN registry; a reason for each."""
    select: list[str] = []
    changed_files = sorted(
        f for f in set(before.project) | set(current.project)
        if before.project.get(f) != current.project.get(f)
    )  # fmt: skip
    if changed_files:
        shown = ", ".join(changed_files[:8]) + (" ..." if len(changed_files) > 8 else "")
        reasons.append(f"dbt project files changed ({shown}): state:modified+")
        select.append("state:modified+")
    models = python_model_domains()
    changed_domains = sorted(
        d for d in current.domains if before.domains.get(d) != current.domains[d]
    )
    for domain in changed_domains:
        hit = sorted(m for m, d in models.items() if d == domain)
        if hit:
            shown = ", ".join(hit)
            reasons.append(f"warehouse.{domain} code changed: rebuild {shown} (+ children)")
            select += [f"{m}+" for m in hit]
    if before.dmpnn != current.dmpnn:
        reasons.append(f"D-MPNN registry changed: rebuild {', '.join(DMPNN_MODELS)} (+ children)")
        select += [f"{m}+" for m in DMPNN_MODELS]
    return select


def plan_build(
    previous: State | None,
    current: Fingerprints,
    db_path: Path,
    *,
    full_refresh: bool = False,
    explicit_dbt_args: bool = False,
) -> Plan:
    """Decide what to rebuild; every decision carries its reason (printed and recorded)."""
    full = _full_rebuild_reasons(previous, current, db_path, full_refresh, explicit_dbt_args)
    if full:
        return Plan("full", full, reload_sources=sorted(current.sources))
    assert previous is not None
    before = previous.fingerprints
    reasons: list[str] = []
    reload, rewrite = _changed_sources(previous, current, reasons)
    select = selectors_for_tables(rewrite, previous.manifest_dir / "manifest.json")
    select += _changed_code(before, current, reasons)
    select = list(dict.fromkeys(select))
    gate = bool(select or rewrite) or before.quality != current.quality
    if before.quality != current.quality:
        reasons.append("quality suites or guards changed: the gate re-validates")
    if not (select or rewrite or gate):
        return Plan(
            "current",
            ["nothing changed since the published build (inputs, code, environment)"],
            run_gate=False,
        )
    return Plan("incremental", reasons, reload, sorted(set(rewrite)), select, gate)


def describe(plan: Plan, log: Callable[[str], None]) -> None:
    header = {"full": "full rebuild", "incremental": "incremental rebuild", "current": "up to date"}
    log(f"{header[plan.mode]}: " + "; ".join(plan.reasons))
