"""``tastebench verify DIR``: check a release from its own files (docs/release.md, "Verify").

Tier 1, integrity: ``MANIFEST.sha256`` lists every file (none missing, none extra) and every
sha256 matches; ``croissant.json`` hashes, record sets and types match the files, and it opens in
mlcroissant, where every record set loads with the rows of its file; every CSV has a
Parquet twin with the spec's types and the same rows; the public DuckDB file holds exactly one
table per CSV with the same rows (it is not byte-stable, so the manifest leaves it out:
:mod:`warehouse.release.public_db`).
Tier 2, re-derivation: every published number that other released files determine is computed
again and serialized the same way (:mod:`warehouse.release.tables`), then compared byte for byte:
``benchmark/gold_pairs.csv`` (winners from ``products.csv`` true_rank, with the published sides),
the counts of ``benchmark/categories.csv``, ``human_baseline/summary.csv`` (from the panelist rows,
block reliability, split-half iterations and curve), ``metrics/model_metrics.csv`` (from this
release's ``oof/`` files and the upstream TasteBench files of ``metrics/upstream_files.csv``,
fetched by hash: :mod:`warehouse.release.upstream`), ``metrics/release_audits.csv``. Plus
consistency: warehouse-fit OOFs carry products.csv's true_rank, one data_origin.
Tier 3 (outside this command): rebuild the warehouse and ``tastebench release`` again with the
same gated folder; the bytes are identical.

Every mismatch is reported with the file (and line and column for tables).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from warehouse.config import Settings
from warehouse.files import cached_mart, sha256_file
from warehouse.release import derive
from warehouse.release.croissant import check_croissant
from warehouse.release.croissant_load import mlcroissant_problems
from warehouse.release.public_db import public_db_problems
from warehouse.release.schema import (
    BLOCK_RELIABILITY,
    CATEGORIES,
    FIT_OOF,
    FIT_OOF_DIR,
    GOLD_PAIRS,
    GROUP_SIZE_CURVE,
    HUMAN_SUMMARY,
    MODEL_METRICS,
    PANELIST_ROWS,
    PRODUCTS,
    PUBLIC_SOURCE,
    RELEASE_AUDITS,
    RELEASE_FIXED_TABLES,
    SPLIT_HALF,
    UPSTREAM_FILES,
)
from warehouse.release.tables import (
    MANIFEST_NAME,
    PUBLIC_DB,
    ReleaseError,
    TableSpec,
    as_frame,
    parquet_problems,
    parse_manifest,
    read_table,
    release_files,
    table_bytes,
)
from warehouse.release.upstream import Upstream, load_upstream

MAX_CELL_DIFFS = 5


class VerifyError(ReleaseError):
    """A release failed verification (the message names every mismatch)."""


@dataclass
class VerifyReport:
    root: Path
    problems: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


@dataclass
class ReleaseTables:
    root: Path
    specs: dict[str, TableSpec]
    frames: dict[str, pl.DataFrame]
    problems: list[str]
    upstream: Upstream = field(default_factory=Upstream)
    upstream_problems: list[str] = field(default_factory=list)

    def get(self, spec: TableSpec) -> pl.DataFrame | None:
        return self.frames.get(spec.path)

    @property
    def fit_oof(self) -> dict[str, pl.DataFrame]:
        return {Path(p).stem: f for p, f in self.frames.items() if p.startswith(f"{FIT_OOF_DIR}/")}


def release_specs(root: Path) -> dict[str, TableSpec]:
    """Spec of every table a release at ``root`` holds: the fixed files plus one per fit OOF."""
    root = Path(root)
    specs = {s.path: s for s in RELEASE_FIXED_TABLES}
    for f in sorted((root / FIT_OOF_DIR).glob("*.csv")):
        rel = f"{FIT_OOF_DIR}/{f.name}"
        specs[rel] = FIT_OOF.with_path(rel)
    return specs


def read_release_tables(root: Path, settings: Settings) -> ReleaseTables:
    """Every table of the release (polars, typed by its spec) and the upstream files its
    ``metrics/upstream_files.csv`` references (fetched by hash with ``settings``' mirror)."""
    specs = release_specs(root)
    frames, problems = {}, []
    for rel, spec in specs.items():
        path = Path(root) / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
            continue
        try:
            frames[rel] = read_table(path, spec)
        except (ValueError, UnicodeDecodeError) as exc:
            problems.append(f"{rel}: cannot be read ({exc})")
    upstream, found = Upstream(), []
    if UPSTREAM_FILES.path in frames:
        upstream, found = load_upstream(frames[UPSTREAM_FILES.path], settings)
    return ReleaseTables(Path(root), specs, frames, problems, upstream, found)


def release_origin(t: ReleaseTables) -> str | None:
    products = t.get(PRODUCTS)
    if products is None or products.is_empty():
        return None
    vals = sorted(products["data_origin"].drop_nulls().unique().to_list())
    return vals[0] if len(vals) == 1 else "|".join(vals)


def derive_tables(
    t: ReleaseTables, frames: Path | None = None
) -> tuple[dict[str, pl.DataFrame], list[str]]:
    """Every re-derivable table from the others: ``({relpath: frame}, problems)``. With
    ``frames`` (a fit store) the two bootstrap tables (model metrics, release audits: 10,000
    resamples each) are :func:`~warehouse.files.cached_mart` frames, read back when the same
    inputs, code and libraries derived them before; each is a pure function of its inputs."""
    out: dict[str, pl.DataFrame] = {}
    problems: list[str] = []
    origin = release_origin(t)
    products, oriented = t.get(PRODUCTS), t.get(GOLD_PAIRS)

    def attempt(spec: TableSpec, fn) -> None:
        try:
            out[spec.path] = fn()
        except (ValueError, KeyError, TypeError, pl.exceptions.PolarsError) as exc:
            problems.append(f"{spec.path}: cannot be re-derived ({exc})")

    if products is not None and oriented is not None:
        attempt(
            GOLD_PAIRS,
            lambda: derive.gold_pairs_from_products(products, oriented).with_columns(
                data_origin=pl.lit(origin)
            ),
        )
    cats = t.get(CATEGORIES)
    if products is not None and cats is not None:

        def categories() -> pl.DataFrame:
            counts = derive.category_counts(products)
            if set(counts["category"]) != set(cats["category"]):
                raise ValueError("categories differ from those of benchmark/products.csv")
            base = cats.drop("n_analogs", "n_references", "n_within_category_pairs")
            return base.join(counts, on="category", how="left")

        attempt(CATEGORIES, categories)
    human = [t.get(s) for s in (PANELIST_ROWS, BLOCK_RELIABILITY, SPLIT_HALF, GROUP_SIZE_CURVE)]
    if all(f is not None for f in human):
        attempt(
            HUMAN_SUMMARY,
            lambda: derive.human_summary(*human).with_columns(data_origin=pl.lit(origin)),
        )
    unreadable = [p for p in t.specs if p.startswith(f"{FIT_OOF_DIR}/") and p not in t.frames]
    if unreadable:
        problems.append(
            f"{MODEL_METRICS.path}: not re-derived ({', '.join(unreadable)} cannot be read)"
        )
    elif t.upstream.oof and t.upstream.pairs is not None:
        attempt(
            MODEL_METRICS,
            lambda: _derived(
                frames,
                derive.model_metrics,
                derive.oof_frame(t.upstream.oof, t.fit_oof),
                as_frame(t.upstream.pairs),
            ),
        )
    else:
        problems.append(
            f"{MODEL_METRICS.path}: not re-derived (the upstream files of "
            f"{UPSTREAM_FILES.path} are not available)"
        )
    if products is not None and GOLD_PAIRS.path in out:
        attempt(
            RELEASE_AUDITS,
            lambda: _derived(
                frames,
                derive.release_audits,
                as_frame(products),
                out[GOLD_PAIRS.path],
                data_origin=origin or "",
            ),
        )
    return out, problems


def _derived(frames: Path | None, compute, *inputs: pl.DataFrame, **params) -> pl.DataFrame:
    if frames is None:
        return compute(*inputs, **params)
    return cached_mart(frames, compute, *inputs, **params)


# --- comparisons --------------------------------------------------------------------------------
def _rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8", errors="replace"))))


def describe_diff(rel: str, released: bytes, derived: bytes) -> list[str]:
    """Name the differing lines and columns of two serialized tables."""
    a, b = _rows(released), _rows(derived)
    if not a or not b or a[0] != b[0]:
        return [f"{rel}: header differs from the re-derived table"]
    header = a[0]
    out = []
    n_diff = 0
    for line in range(1, max(len(a), len(b))):
        ra = a[line] if line < len(a) else None
        rb = b[line] if line < len(b) else None
        if ra == rb:
            continue
        n_diff += 1
        if len(out) >= MAX_CELL_DIFFS:
            continue
        if ra is None or rb is None:
            which = "extra released row" if rb is None else "row missing from the release"
            out.append(f"{rel}: line {line + 1}: {which}")
            continue
        cells = [
            f"column {h}: released {x!r}, re-derived {y!r}"
            for h, x, y in zip(header, ra, rb, strict=False)
            if x != y
        ]
        out.append(f"{rel}: line {line + 1} ({header[0]}={ra[0]}): " + "; ".join(cells))
    if n_diff > len(out):
        out.append(f"{rel}: {n_diff} differing line(s) in all")
    return out or [f"{rel}: bytes differ from the re-derived table (formatting)"]


def check_manifest(root: Path) -> list[str]:
    root = Path(root)
    path = root / MANIFEST_NAME
    if not path.is_file():
        return [f"{MANIFEST_NAME}: missing"]
    try:
        listed = parse_manifest(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        return [f"{MANIFEST_NAME}: malformed ({exc})"]
    out = []
    present = set(release_files(root))
    if list(listed) != sorted(listed):
        out.append(f"{MANIFEST_NAME}: lines are not sorted by path")
    for rel in sorted(set(listed) - present):
        out.append(f"{rel}: listed in {MANIFEST_NAME} but missing")
    for rel in sorted(present - set(listed)):
        out.append(f"{rel}: not listed in {MANIFEST_NAME}")
    for rel in sorted(set(listed) & present):
        if sha256_file(root / rel) != listed[rel]:
            out.append(f"{rel}: sha256 differs from {MANIFEST_NAME} (file changed)")
    return out


def check_consistency(t: ReleaseTables) -> list[str]:
    out = []
    products = t.get(PRODUCTS)
    origin = release_origin(t)
    if origin is not None and "|" in origin:
        out.append(f"{PRODUCTS.path}: several data_origin values ({origin})")
    for rel, f in t.frames.items():
        if "data_origin" not in f.columns:
            continue
        vals = set(f["data_origin"].drop_nulls().cast(pl.String).to_list()) - {
            origin,
            PUBLIC_SOURCE,
        }
        if rel == MODEL_METRICS.path:
            vals = {v for v in vals if not v.startswith(PUBLIC_SOURCE)}
        if vals:
            out.append(f"{rel}: data_origin {sorted(vals)} differs from the release's {origin!r}")
    if products is not None:
        gold = products.select("category", "public_code", pl.col("true_rank").alias("gold"))
        for stem, f in t.fit_oof.items():
            m = f.join(gold, on=["category", "public_code"], how="left")
            bad = m.filter(pl.col("gold").is_null() | (pl.col("gold") != pl.col("true_rank")))
            if len(bad):
                r = bad.row(0, named=True)
                out.append(
                    f"{FIT_OOF_DIR}/{stem}.csv: {r['category']}:{r['public_code']} true_rank "
                    "differs from benchmark/products.csv"
                )
    return out


def check_parquet(t: ReleaseTables) -> list[str]:
    """Every released CSV has its Parquet twin, typed by the spec, holding the same rows."""
    out = []
    for rel, spec in sorted(t.specs.items()):
        if (t.root / rel).is_file():
            out += parquet_problems(t.root, spec)
    return out


def verify_release(root: Path, settings: Settings) -> VerifyReport:
    """Run tiers 1 and 2 on the release at ``root``; the report lists every mismatch.
    ``settings``: where the upstream files are fetched from."""
    root = Path(root).resolve()
    if not root.is_dir():
        raise VerifyError(
            f"{root} is not a folder. Fix: pass the folder `tastebench release` wrote."
        )
    report = VerifyReport(root)
    report.problems += check_manifest(root)
    report.checked.append(MANIFEST_NAME)
    tables = read_release_tables(root, settings)
    report.problems += tables.problems + tables.upstream_problems
    report.problems += check_croissant(root, release_origin(tables))
    report.problems += mlcroissant_problems(root, {r: len(f) for r, f in tables.frames.items()})
    report.checked.append("croissant.json")
    report.problems += check_parquet(tables)
    report.problems += public_db_problems(root, tables.specs.values())
    report.checked.append(PUBLIC_DB)
    derived, problems = derive_tables(tables, settings.fits_dir)
    report.problems += problems
    for rel, frame in sorted(derived.items()):
        spec = tables.specs[rel]
        path = root / rel
        if not path.is_file():
            continue  # reported as missing already
        try:
            expected = table_bytes(frame, spec)
        except ReleaseError as exc:
            report.problems.append(f"{rel}: cannot be serialized ({exc})")
            continue
        actual = path.read_bytes()
        if actual != expected:
            report.problems += describe_diff(rel, actual, expected)
        report.checked.append(rel)
    report.problems += check_consistency(tables)
    return report


__all__ = [
    "ReleaseTables",
    "VerifyError",
    "VerifyReport",
    "check_manifest",
    "check_parquet",
    "derive_tables",
    "describe_diff",
    "read_release_tables",
    "release_origin",
    "release_specs",
    "verify_release",
]
