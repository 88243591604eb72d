"""Upstream files: the published TasteBench out-of-fold predictions and gold pairs that
``metrics/model_metrics.csv`` scores, **referenced by URL and sha256**, never re-published.

They are keyed by the original TasteBench codes and carry the same gold (``true_rank``) as this
release's ``benchmark/products.csv``: inside one release the two files would join on
``(category, true_rank)`` and map this release's public codes onto the TasteBench codes for every
untied product (the cross-file linkage guard refuses exactly that). So the release lists them in
``metrics/upstream_files.csv`` (registry key, role, model id, URL, sha256, rows) and ``tastebench
verify`` fetches them through the pinned dataset registry (the data mirror, the download cache or
the URL; a hash mismatch is an error) to re-derive every metric (docs/release.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import polars as pl

from warehouse.config import Settings
from warehouse.release.schema import UPSTREAM_FILES
from warehouse.release.tables import POLARS_TYPES, ReleaseError

OOF_PREFIX = "tastebench_oof_"
GOLD_PAIRS_KEY = "tastebench_gold_pairs"


def upstream_listing(model_ids: Iterable[str]) -> pl.DataFrame:
    """The ``metrics/upstream_files.csv`` rows for the published models and the gold pair file,
    from the registry pins."""
    from warehouse.errors import DatasetError
    from warehouse.sources import registry

    rows = []
    for model_id in sorted(set(model_ids)):
        try:
            ds = registry.get(OOF_PREFIX + model_id)
        except DatasetError as exc:
            raise ReleaseError(
                f"published model {model_id!r} has no registry entry {OOF_PREFIX}{model_id} "
                "(warehouse/sources/datasets.toml). Fix: register the file it was loaded from."
            ) from exc
        rows.append((ds.key, "oof", model_id, ds.url, ds.sha256, ds.rows))
    ds = registry.get(GOLD_PAIRS_KEY)
    rows.append((ds.key, "gold_pairs", None, ds.url, ds.sha256, ds.rows))
    schema = {c.name: POLARS_TYPES[c.type] for c in UPSTREAM_FILES.columns}
    return pl.DataFrame(rows, schema=schema, orient="row")


@dataclass
class Upstream:
    """The upstream frames in the keying the derivations use: ``oof`` by model id (category,
    tastebench_public_code, true_rank, predicted_score) and ``pairs`` (pair_id, category,
    tastebench_public_code_1, tastebench_public_code_2, tastebench_public_code_winner)."""

    oof: dict[str, pl.DataFrame] = field(default_factory=dict)
    pairs: pl.DataFrame | None = None


def _read(path, what: str) -> pl.DataFrame:
    try:
        return pl.read_csv(path, infer_schema_length=None)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise ValueError(f"{what}: {path} cannot be read ({exc})") from exc


def load_upstream(listing: pl.DataFrame, settings: Settings) -> tuple[Upstream, list[str]]:
    """Fetch every listed file by hash and read it; ``(upstream, problems)``. A file whose listed
    sha256 is not the registry's pin, that cannot be fetched, or whose rows differ is a problem
    naming ``metrics/upstream_files.csv`` and the dataset."""
    from warehouse.errors import DatasetError
    from warehouse.sources import registry

    where = UPSTREAM_FILES.path
    up, problems = Upstream(), []
    for row in listing.iter_rows(named=True):
        key = str(row["dataset"])
        try:
            ds = registry.get(key)
        except DatasetError:
            problems.append(f"{where}: dataset {key!r} is not in the dataset registry")
            continue
        if ds.sha256 != row["sha256"] or ds.url != row["url"]:
            problems.append(
                f"{where}: {key} lists sha256 {row['sha256']} / {row['url']}, the registry pins "
                f"{ds.sha256} / {ds.url}"
            )
            continue
        try:
            path = registry.resolve(key, settings)  # verifies the sha256 pin
            frame = _read(path, key)
        except (DatasetError, ValueError) as exc:
            problems.append(
                f"{where}: {key} cannot be fetched by hash ({str(exc).splitlines()[0]}). Fix: set "
                "TASTEBENCH_DATA_MIRROR to a data mirror or go online"
            )
            continue
        if row["n_rows"] is not None and len(frame) != row["n_rows"]:
            problems.append(f"{where}: {key} has {len(frame)} rows, listed {row['n_rows']}")
            continue
        try:
            if row["role"] == "oof":
                up.oof[str(row["model_id"])] = frame.select(
                    pl.col("category").cast(pl.String),
                    pl.col("product_code").cast(pl.Int64).alias("tastebench_public_code"),
                    pl.col("true_rank").cast(pl.Float64),
                    pl.col("predicted_score").cast(pl.Float64),
                )
            elif row["role"] == "gold_pairs":
                up.pairs = frame.select(
                    pl.col("pair_id").cast(pl.Int64),
                    pl.col("category").cast(pl.String),
                    pl.col("product_code_1").cast(pl.Int64).alias("tastebench_public_code_1"),
                    pl.col("product_code_2").cast(pl.Int64).alias("tastebench_public_code_2"),
                    pl.col("higher_rated_product")
                    .cast(pl.Int64)
                    .alias("tastebench_public_code_winner"),
                )
            else:
                problems.append(f"{where}: {key} has unknown role {row['role']!r}")
        except pl.exceptions.PolarsError as exc:
            problems.append(f"{where}: {key} lacks the expected columns ({exc})")
    if up.pairs is None and not problems:
        problems.append(f"{where}: no gold_pairs file listed")
    return up, problems


__all__ = ["GOLD_PAIRS_KEY", "OOF_PREFIX", "Upstream", "load_upstream", "upstream_listing"]
