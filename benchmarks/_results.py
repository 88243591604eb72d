"""Where a benchmark's numbers go: ``benchmarks/results/<name>.json``, one file per benchmark,
overwritten on every run, with the machine, its load average and the date beside the numbers.
The docs point to these files instead of quoting measurements in prose (docs/README.md)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def machine() -> dict[str, object]:
    """What the numbers were measured on."""
    return {"host": platform.node(), "cpus": os.cpu_count(), "python": platform.python_version()}


def write_result(name: str, numbers: object, **extra: object) -> Path:
    """Write ``numbers`` (anything JSON can hold) to ``benchmarks/results/<name>.json``."""
    record = {
        "benchmark": name,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        **extra,
        "numbers": numbers,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(record, indent=1, default=float) + "\n", encoding="utf-8")
    return path


class _Tee(io.TextIOBase):
    """Passes writes through to the real stdout and keeps them."""

    def __init__(self, out: io.TextIOBase) -> None:
        self.out, self.parts = out, []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return self.out.write(text)

    def flush(self) -> None:
        self.out.flush()


def run_and_record(name: str, main: Callable[[], object]) -> object:
    """Run a benchmark's ``main`` and write what it printed (its report, numbers included) to
    ``benchmarks/results/<name>.json`` as ``numbers.printed``, one line per entry; ``main``'s
    return value is passed on (an exit status). Nothing is written when ``main`` raises."""
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        status = main()
    lines = [line for line in "".join(tee.parts).splitlines() if line.strip()]
    write_result(name, {"printed": lines}, exit_status=status or 0)
    return status
