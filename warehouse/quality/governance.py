"""Which relations are public and which stay gated, read from the dbt manifest.

Every model declares ``meta.data_access`` in dbt: ``gated`` is the project default
(``dbt_project.yml``), a model that may leave the gated area as stored says
``config: {meta: {data_access: public}}`` in its folder's YAML, and a gated mart says why in
``meta.gated_reason``. Changing a model's tier is a release decision made in the model's YAML,
reviewed with it; the de-identification guards, the quality report and the release read the tiers
from the manifest of the dbt run that built the warehouse (``<build_dir>/dbt/target/
manifest.json``), never from a hand-kept list.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from warehouse.errors import WarehouseError

PUBLIC = "public"
GATED = "gated"
TIERS = (PUBLIC, GATED)
MANIFEST_NAME = "manifest.json"


@dataclass(frozen=True)
class ModelAccess:
    relation: str  # schema.table as queried in the warehouse
    unique_id: str
    tier: str
    reason: str | None


def manifest_path(build_dir: Path) -> Path:
    """Where the build leaves the manifest of the dbt run that produced the warehouse."""
    return Path(build_dir) / "dbt" / "target" / MANIFEST_NAME


def read_access(manifest: Path) -> dict[str, ModelAccess]:
    """``relation -> ModelAccess`` for every model and seed of the manifest (sorted by relation).

    A node without a tier, or with a tier other than public/gated, is an error naming the model
    and the fix: the default in ``dbt_project.yml`` makes this impossible unless it is removed."""
    return dict(_read_access(Path(manifest).resolve(), Path(manifest).stat().st_mtime_ns))


@cache
def _read_access(manifest: Path, _mtime: int) -> tuple[tuple[str, ModelAccess], ...]:
    try:
        nodes = json.loads(manifest.read_text(encoding="utf-8"))["nodes"]
    except (OSError, ValueError, KeyError) as exc:
        raise WarehouseError(
            f"cannot read the dbt manifest {manifest} ({exc}). Fix: rebuild the warehouse "
            "(`tastebench build`) or run `dbt parse`."
        ) from exc
    out = {}
    for uid, node in nodes.items():
        if node.get("resource_type") not in ("model", "seed"):
            continue
        meta = node.get("config", {}).get("meta", {}) or {}
        tier = meta.get("data_access")
        if tier not in TIERS:
            raise WarehouseError(
                f"dbt node {uid} has meta.data_access = {tier!r}. Fix: declare "
                "`config: {meta: {data_access: public}}` (or gated) in its YAML; gated is the "
                "project default in dbt_project.yml."
            )
        relation = f"{node['schema']}.{node.get('alias') or node['name']}"
        out[relation] = ModelAccess(relation, uid, tier, meta.get("gated_reason"))
    return tuple(sorted(out.items()))


def public_relations(access: dict[str, ModelAccess]) -> tuple[str, ...]:
    """Relations declared public, sorted."""
    return tuple(r for r, a in access.items() if a.tier == PUBLIC)


def gated_marts(access: dict[str, ModelAccess]) -> dict[str, str]:
    """Gated relations of the marts schema with the reason their YAML gives."""
    return {
        r: a.reason or "gated (no reason given)"
        for r, a in access.items()
        if a.tier == GATED and r.startswith("marts.")
    }
