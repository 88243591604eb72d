"""Open a folder's ``croissant.json`` in mlcroissant, the reference Croissant client, as a user
would (``mlcroissant.Dataset(jsonld=...)``), and load every record set
(``dataset.records(record_set=...)``), comparing each record count with the rows of the file it
describes. ``tastebench verify`` runs it (docs/release.md, "Verify")."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from warehouse.release.croissant import CROISSANT_NAME


def _said(exc: BaseException) -> str:
    """What the client said: the exception's type and message (every line, stripped)."""
    text = " ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _source_file(record_set) -> str | None:
    """The file object every field of ``record_set`` extracts from (None when several)."""
    files = {f.source.file_object for f in record_set.fields}
    return files.pop() if len(files) == 1 else None


def _open(path: Path):
    """``(dataset, problems)``: mlcroissant's errors make problems; so do its warnings."""
    import mlcroissant as mlc

    logging.getLogger("absl").setLevel(logging.ERROR)  # its progress lines, not findings
    try:
        dataset = mlc.Dataset(jsonld=str(path))
    except Exception as exc:  # noqa: BLE001 - ValidationError, or the client failing (KeyError)
        return None, [f"{CROISSANT_NAME}: mlcroissant rejects it ({_said(exc)})"]
    warnings = sorted(dataset.metadata.ctx.issues.warnings)
    return dataset, [f"{CROISSANT_NAME}: mlcroissant warns: {w}" for w in warnings]


def mlcroissant_problems(root: Path, rows: Mapping[str, int]) -> list[str]:
    """Problems of ``root/croissant.json`` in mlcroissant: not valid, a warning, a record set
    that does not load, or whose record count differs from ``rows[<file it describes>]``
    (a Parquet twin is compared with its CSV's rows when it has no entry of its own)."""
    path = Path(root) / CROISSANT_NAME
    if not path.is_file():
        return [f"{CROISSANT_NAME}: missing"]
    dataset, out = _open(path)
    if dataset is None:
        return out
    for record_set in dataset.metadata.record_sets:
        name = record_set.uuid
        try:
            n = sum(1 for _ in dataset.records(record_set=name))
        except Exception as exc:  # noqa: BLE001 - any failure of the client is the finding
            out.append(
                f"{CROISSANT_NAME}: record set {name} does not load in mlcroissant ({_said(exc)})"
            )
            continue
        source = _source_file(record_set)
        twin = str(Path(source).with_suffix(".csv").as_posix()) if source else None
        expected = rows.get(source or "", rows.get(twin or ""))
        if expected is None:
            out.append(f"{CROISSANT_NAME}: record set {name}: no row count for {source}")
        elif n != expected:
            out.append(
                f"{CROISSANT_NAME}: record set {name} loads {n} record(s) in mlcroissant, "
                f"{source} has {expected} row(s)"
            )
    return out


__all__ = ["mlcroissant_problems"]
