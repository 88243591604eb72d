"""Peak memory of `tastebench evaluate`'s input checks on large prediction files of duplicate rows.

Usage::

    python benchmarks/evaluate_memory.py [--sizes 2,20,200] [--products 1000]

Writes, into a temporary folder, prediction files of about 2, 20 and 200 MB: one row for each of
``--products`` known products in the order of a real file, then the row of line 9 repeated until
the size is reached (the first error is the duplicate on line ``products + 2``). Each check runs in
a child process of its own, which reports its own peak resident memory
(``getrusage(RUSAGE_SELF).ru_maxrss``) and the error it raised:

* ``bounded``: the check as ``evaluate`` runs it, :func:`warehouse.evaluate.files.load_predictions`
  with ``max_rows`` = known products + 1 (a lazy polars scan that stops there), then
  :func:`warehouse.metrics.validate.validate_predictions`;
* ``whole_file`` (the named baseline): the same functions on the whole file read at once, as
  ``evaluate`` did before (``max_rows=None``).

Prints, per size, both peaks, their ratio (baseline / bounded), the seconds and the error, plus the
peak of a child that only imports the modules (the floor). Linux (``ru_maxrss`` in KiB).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

CATEGORIES = 10


def known_products(n: int) -> list[tuple[str, int]]:
    return [(f"Category{i % CATEGORIES}", 1000 + i) for i in range(n)]


def write_file(path: Path, n_products: int, size_mb: float) -> None:
    """Every known product once, then line 9's row repeated up to ``size_mb`` megabytes."""
    rows = [f"{c},{p},{0.001 * i:.3f}\n" for i, (c, p) in enumerate(known_products(n_products))]
    block = rows[7] * 10_000
    target = int(size_mb * 1e6)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("category,product_code,predicted_score\n")
        fh.writelines(rows)
        written = fh.tell()
        while written < target:
            fh.write(block)
            written += len(block)


def child(mode: str, path: Path, n_products: int) -> None:
    """One check in this process; prints its peak memory and error as JSON."""
    from warehouse.errors import DataValidationError
    from warehouse.evaluate.files import load_predictions
    from warehouse.metrics.validate import validate_predictions

    t0 = time.perf_counter()
    error = ""
    if mode != "imports":
        known = known_products(n_products)
        max_rows = n_products + 1 if mode == "bounded" else None
        try:
            f = load_predictions(path, max_rows=max_rows)
            validate_predictions(f.frame, known, source=str(path))
        except DataValidationError as exc:
            error = str(exc)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"peak_mb": peak_mb, "seconds": time.perf_counter() - t0, "error": error}
    print(json.dumps(out))


def measure(mode: str, path: Path, n_products: int) -> dict:
    cmd = [sys.executable, __file__, "--child", mode, str(path), str(n_products)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2,20,200", help="file sizes in MB, comma-separated")
    parser.add_argument("--products", type=int, default=1000, help="known products")
    parser.add_argument(
        "--child", nargs=3, metavar=("MODE", "FILE", "PRODUCTS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        mode, file, n = args.child
        child(mode, Path(file), int(n))
        return
    floor = measure("imports", Path("-"), args.products)
    print(f"imports only: peak {floor['peak_mb']:.0f} MB (the floor of every check below)")
    print(f"{'file':>8} {'bounded':>10} {'whole_file':>11} {'ratio':>7} {'s bounded':>10} "
          f"{'s whole':>8}  error (bounded)")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        for size in (float(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"predictions_{size:g}mb.csv"
            write_file(path, args.products, size)
            new = measure("bounded", path, args.products)
            old = measure("whole_file", path, args.products)
            assert new["error"] == old["error"], (new["error"], old["error"])
            mb = path.stat().st_size / 1e6
            print(
                f"{mb:>6.0f}MB {new['peak_mb']:>7.0f} MB {old['peak_mb']:>8.0f} MB"
                f" {old['peak_mb'] / new['peak_mb']:>6.1f}x {new['seconds']:>9.1f}s "
                f"{old['seconds']:>7.1f}s  {new['error'][:90]}",
                flush=True,
            )
            path.unlink()


if __name__ == "__main__":
    from _results import run_and_record

    if "--child" in sys.argv:  # a measured child: its parent records the results
        main()
    else:
        run_and_record("evaluate_memory", main)
