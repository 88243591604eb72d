"""What a build did (:class:`BuildResult`) and its record beside the warehouse file
(``<db>.last_build.json``), written after every attempt, failed ones included."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from warehouse.config import Settings
from warehouse.files import atomic_text


@dataclass
class BuildResult:
    db_path: Path
    nectar_bundle: Path
    data_origin: str
    raw_counts: dict[str, int]
    timings: dict[str, float] = field(default_factory=dict)
    mode: str = "full"
    reasons: list[str] = field(default_factory=list)
    reloaded_tables: list[str] = field(default_factory=list)
    rebuilt_models: list[str] = field(default_factory=list)
    selection: list[str] = field(default_factory=list)
    quality: dict | None = None
    recomputed: list[str] = field(default_factory=list)
    """Cache entries that failed their checksum during this build and were recomputed."""


def write_build_record(
    settings: Settings,
    result: BuildResult | None,
    started_at=None,
    duration_s: float | None = None,
    error: BaseException | None = None,
) -> Path:
    """``<db>.last_build.json`` beside the warehouse file (like its lock): the last build attempt
    (time, duration, result, what it rebuilt and why, the quality gate's summary) and what the
    published warehouse was built from (its settings, the bundle, timings). A failed attempt is
    recorded too, with its error, and keeps the last successful build under ``last_success``.
    Later commands read the data mirror from it (:func:`warehouse.config.recorded_mirror`), so
    they work in a fresh shell."""
    import json
    from datetime import UTC, datetime

    from warehouse.config import build_record_path, read_build_record

    path = build_record_path(settings.db_path)
    now = datetime.now(UTC).isoformat(timespec="seconds")
    record: dict = {
        "started_at": started_at.isoformat(timespec="seconds") if started_at else None,
        "finished_at": now,
        "duration_s": None if duration_s is None else round(duration_s, 3),
        "settings": settings.as_record(),
        "db_path": str(settings.db_path),
    }
    if result is None:
        previous = read_build_record(settings.db_path, settings.build_dir) or {}
        last = previous if previous.get("result", "success") == "success" else None
        last = last or previous.get("last_success")
        first = str(error).splitlines()[0] if error is not None and str(error) else ""
        record |= {
            "result": "failed",
            "error": f"{type(error).__name__}: {first}" if error is not None else "",
            "last_success": last,
        }
    else:
        record |= {
            "result": "success",
            "nectar_bundle": str(result.nectar_bundle),
            "data_origin": result.data_origin,
            "raw_counts": result.raw_counts,
            "timings": {k: round(v, 3) for k, v in result.timings.items()},
            "rebuilt": {
                "mode": result.mode,
                "reasons": result.reasons,
                "reloaded_tables": result.reloaded_tables,
                "selection": result.selection,
                "models": result.rebuilt_models,
            },
            "quality": result.quality,
            "recomputed_cache_entries": result.recomputed,
        }
    return atomic_text(path, json.dumps(record, indent=1, sort_keys=True) + "\n")
