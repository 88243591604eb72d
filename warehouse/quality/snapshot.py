"""Content hashes of every relation of a warehouse file: a fingerprint to prove that a refactor, an
incremental rebuild or a library upgrade changed no number.

Each relation is read with its rows in a fixed order (sorted by the row's own text), hashed as a
whole and column by column (columns taken by name, not position), so a comparison names the
columns that differ. Columns that change on every build by design are left out and listed:
timestamps (``_loaded_at``, ``run_at``), wall-clock durations (``*_wall_s``), run ids and absolute
paths (the build folder's location is not content).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from warehouse.errors import require_warehouse

# Columns that differ between two builds of the same inputs by design.
VOLATILE_COLUMN = re.compile(
    r"^(_?loaded_at|run_at|run_id|.*_wall_s|seconds|_?source_file|artifact_path|local_path"
    r"|image_local_path|bundle_dir|.*_seconds)$"
)
VOLATILE_TYPES = ("TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "DATE", "TIME")


@dataclass
class RelationHash:
    relation: str
    n_rows: int
    table_hash: str
    column_hashes: dict[str, str]
    skipped_columns: list[str] = field(default_factory=list)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def relation_hashes(db_path: Path, schemas: tuple[str, ...] | None = None) -> list[RelationHash]:
    """Hash every table and view of ``db_path`` (opened read-only), sorted by relation name."""

    from warehouse.sources.readonly import connect_read_only

    con = connect_read_only(db_path)
    try:
        rels = con.execute(
            "select table_schema, table_name from information_schema.tables "
            "where table_catalog = current_database() order by 1, 2"
        ).fetchall()
        out = []
        for schema, table in rels:
            if schemas and schema not in schemas:
                continue
            cols = con.execute(
                "select column_name, data_type from information_schema.columns "
                "where table_schema = ? and table_name = ? order by ordinal_position",
                [schema, table],
            ).fetchall()
            kept = [
                c
                for c, t in cols
                if not VOLATILE_COLUMN.match(c) and not t.upper().startswith(VOLATILE_TYPES)
            ]
            skipped = [c for c, _ in cols if c not in kept]
            rel = f"{_quote(schema)}.{_quote(table)}"
            if not kept:
                n = con.execute(f"select count(*) from {rel}").fetchone()[0]
                out.append(RelationHash(f"{schema}.{table}", n, "", {}, skipped))
                continue
            # columns by name: their position is presentation, not content
            packed = ", ".join(f"{_quote(c)} := {_quote(c)}" for c in sorted(kept))
            col_aggs = ", ".join(
                f"md5(coalesce(string_agg(coalesce({_quote(c)}::varchar, '\\N'), chr(10) "
                f"order by _r), ''))"
                for c in kept
            )
            sql = (
                f"with rows as (select struct_pack({packed})::varchar as _r, * from {rel}) "
                f"select count(*), md5(coalesce(string_agg(_r, chr(10) order by _r), '')), "
                f"{col_aggs} from rows"
            )
            n, whole, *per_col = con.execute(sql).fetchone()
            out.append(
                RelationHash(
                    f"{schema}.{table}",
                    int(n),
                    whole,
                    dict(zip(kept, per_col, strict=True)),
                    skipped,
                )
            )
        return out
    finally:
        con.close()


def write_hashes(hashes: list[RelationHash], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps([h.__dict__ for h in hashes], indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )


def read_hashes(path: Path) -> list[RelationHash]:
    return [RelationHash(**r) for r in json.loads(Path(path).read_text(encoding="utf-8"))]


@dataclass
class HashDiff:
    """What differs between two snapshots, relation by relation."""

    only_before: list[str]
    only_after: list[str]
    changed: dict[str, dict[str, object]]

    @property
    def equal(self) -> bool:
        return not (self.only_before or self.only_after or self.changed)


def compare_hashes(before: list[RelationHash], after: list[RelationHash]) -> HashDiff:
    """Relations present on one side only, and per common relation the row counts, the columns
    present on one side only and the columns whose values differ."""
    a = {h.relation: h for h in before}
    b = {h.relation: h for h in after}
    changed: dict[str, dict[str, object]] = {}
    for name in sorted(set(a) & set(b)):
        x, y = a[name], b[name]
        if x.table_hash == y.table_hash and x.n_rows == y.n_rows:
            continue
        cols_x, cols_y = set(x.column_hashes), set(y.column_hashes)
        changed[name] = {
            "n_rows": (x.n_rows, y.n_rows),
            "columns_only_before": sorted(cols_x - cols_y),
            "columns_only_after": sorted(cols_y - cols_x),
            "columns_changed": sorted(
                c for c in cols_x & cols_y if x.column_hashes[c] != y.column_hashes[c]
            ),
        }
    return HashDiff(sorted(set(a) - set(b)), sorted(set(b) - set(a)), changed)


def snapshot(db_path: Path, out: Path | None, compare: Path | None) -> tuple[list[str], bool]:
    """What ``tastebench snapshot`` does: hash ``db_path``, write the hashes to ``out`` and/or
    compare them with the snapshot ``compare``. Returns (lines to print, equal or nothing
    compared)."""
    from warehouse.errors import WarehouseError

    require_warehouse(db_path)
    if compare is not None and not compare.is_file():
        raise WarehouseError(f"no snapshot at {compare}. Fix: write one first with --out.")
    hashes = relation_hashes(db_path)
    lines = []
    if out is not None:
        write_hashes(hashes, out)
        lines.append(f"{len(hashes)} relations hashed into {out}")
    if compare is None:
        return lines, True
    diff = compare_hashes(read_hashes(compare), hashes)
    if diff.equal:
        return [*lines, f"[green]identical[/green]: {len(hashes)} relations, every column"], True
    changed = {
        "only_before": diff.only_before,
        "only_after": diff.only_after,
        "changed": diff.changed,
    }
    return [*lines, json.dumps(changed, indent=1, default=list)], False
