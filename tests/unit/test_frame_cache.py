"""The content-addressed frame cache of the fit store (warehouse.files.cached_frame and
cached_mart): a hit returns the computed frame exactly, a change of input, code, parameter or
version is a miss, a corrupted entry is recomputed and counted; the cached marts return what
their library function computes."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

from warehouse import files
from warehouse.files import cached_frame, cached_mart, frame_key, write_checksum
from warehouse.molecular import marts

FRAME = pl.DataFrame(
    {
        "canonical_smiles": ["CCO", "c1ccccc1", None],
        "morgan_on_bits": pl.Series([[1, 5], [], None], dtype=pl.List(pl.Int32)),
        "mol_wt": [46.069, 78.114, float("nan")],
        "in_fartdb": [True, False, None],
    }
)


def _counting(frame: pl.DataFrame):
    calls = []

    def compute(*args, **kwargs) -> pl.DataFrame:
        calls.append((args, kwargs))
        return frame

    return compute, calls


def test_a_hit_returns_the_computed_frame_exactly(tmp_path) -> None:
    compute, calls = _counting(FRAME)
    key = frame_key("t", [FRAME], [frame_key], "v1")
    first = cached_frame(tmp_path, "t", key, compute)
    second = cached_frame(tmp_path, "t", key, compute)
    assert len(calls) == 1
    assert_frame_equal(first, FRAME) and assert_frame_equal(second, FRAME)
    assert second.schema == FRAME.schema


def test_inputs_code_and_versions_are_in_the_key() -> None:
    base = frame_key("t", [FRAME], [frame_key], "v1")
    changed = FRAME.with_columns(pl.col("mol_wt") + 1e-12)
    assert frame_key("t", [changed], [frame_key], "v1") != base
    assert frame_key("t", [FRAME], [cached_frame], "v1") != base
    assert frame_key("t", [FRAME], [frame_key], "v2") != base
    assert frame_key("u", [FRAME], [frame_key], "v1") != base
    assert frame_key("t", [FRAME], [frame_key], "v1") == base


def test_a_corrupted_entry_is_recomputed_and_counted(tmp_path) -> None:
    compute, calls = _counting(FRAME)
    key = frame_key("t", [FRAME], [frame_key])
    cached_frame(tmp_path, "t", key, compute)
    entry = tmp_path / "frames" / "t" / f"{key}.parquet"
    entry.write_bytes(entry.read_bytes()[:-10] + b"0123456789")
    assert_frame_equal(cached_frame(tmp_path, "t", key, compute), FRAME)
    assert len(calls) == 2
    (line,) = (tmp_path / "recomputed.jsonl").read_text().splitlines()
    assert json.loads(line)["entry"] == str(entry)
    cached_frame(tmp_path, "t", key, compute)  # rewritten: a hit again
    assert len(calls) == 2


def test_featurized_molecules_come_from_the_fit_store_on_the_second_call(
    tmp_path, monkeypatch
) -> None:
    molecules = pl.DataFrame({"canonical_smiles": ["CCO", "CC(=O)O", "c1ccccc1"]})
    pubchem = pl.DataFrame(
        {"pubchem_cid": [702, 176], "pubchem_canonical_smiles": ["CCO", "CCN"]},
        schema={"pubchem_cid": pl.Int64, "pubchem_canonical_smiles": pl.String},
    )
    monkeypatch.setenv("TASTEBENCH_FITS_DIR", str(tmp_path))
    first = marts.int_molecules_featurized(molecules, pubchem)
    assert_frame_equal(first, marts._featurized(molecules, pubchem))
    assert len(list((tmp_path / "frames" / "molecules_featurized").glob("*.parquet"))) == 1
    monkeypatch.setattr(marts, "_featurized", lambda *a: (_ for _ in ()).throw(AssertionError))
    assert_frame_equal(marts.int_molecules_featurized(molecules, pubchem), first)


def test_an_unreadable_entry_with_a_matching_checksum_is_recomputed(tmp_path) -> None:
    """A file that is not Parquet but matches its sidecar (written by something else) is a miss:
    recomputed and overwritten, never an error."""
    compute, calls = _counting(FRAME)
    key = frame_key("t", [FRAME], [frame_key])
    entry = tmp_path / "frames" / "t" / f"{key}.parquet"
    entry.parent.mkdir(parents=True)
    entry.write_bytes(b"not parquet")
    write_checksum(entry)
    assert_frame_equal(cached_frame(tmp_path, "t", key, compute), FRAME)
    assert len(calls) == 1
    assert_frame_equal(pl.read_parquet(entry), FRAME)


def test_a_cached_mart_misses_on_another_parameter_code_or_library(tmp_path, monkeypatch) -> None:
    compute, calls = _counting(FRAME)
    assert_frame_equal(cached_mart(tmp_path, compute, FRAME, n_boot=10), FRAME)
    assert_frame_equal(cached_mart(tmp_path, compute, FRAME, n_boot=10), FRAME)
    assert len(calls) == 1
    (args, kwargs) = calls[0]  # the computation gets exactly the parameters of the key
    assert kwargs == {"n_boot": 10} and len(args) == 1 and args[0] is FRAME
    cached_mart(tmp_path, compute, FRAME, n_boot=20)
    cached_mart(tmp_path, compute, FRAME.head(2), n_boot=10)
    assert len(calls) == 3
    monkeypatch.setattr(files, "code_digest", lambda: "an edited warehouse package")
    cached_mart(tmp_path, compute, FRAME, n_boot=10)
    monkeypatch.setattr(files, "library_versions", lambda: "numpy=0.0")
    cached_mart(tmp_path, compute, FRAME, n_boot=10)
    assert len(calls) == 5
    assert len(list((tmp_path / "frames" / "compute").glob("*.parquet"))) == 5


def test_the_code_digest_covers_every_module_and_the_project_vars() -> None:
    """An edit anywhere in the package (or to dbt_project.yml's vars, which the library reads)
    must be a miss: the digest is over the files, not over what one mart happens to import."""
    package = Path(files.__file__).resolve().parent
    h = hashlib.sha256()
    for path in sorted(package.rglob("*.py")) + [package.parent / "dbt_project.yml"]:
        h.update(str(path.relative_to(package.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    assert files.code_digest() == h.hexdigest()


def test_fartdb_staging_is_read_back_whatever_the_load_time(tmp_path, monkeypatch) -> None:
    """stg_fartdb__molecules of the same file loaded at another time is a hit: ``_loaded_at``
    (which staging never reads) is not part of the key."""
    monkeypatch.setenv("TASTEBENCH_FITS_DIR", str(tmp_path))
    raw = pl.DataFrame(
        {
            "split": ["train", "test"],
            "file_row_id": [0, 0],
            "_file_row": [2, 2],
            "Canonicalized SMILES": ["OCC", "c1ccccc1"],
            "Standardized SMILES": ["CCO", "c1ccccc1"],
            "Canonicalized Taste": ["sweet", "bitter"],
            "Original Labels": ["sweet", "bitter"],
            "Source": ["x", "y"],
            "is_multiclass": [False, False],
            "_source_file": ["fartdb.csv", "fartdb.csv"],
            "data_origin": ["fartdb", "fartdb"],
        }
    )
    first = marts.stg_fartdb__molecules(raw.with_columns(_loaded_at=pl.lit(datetime(2026, 1, 1))))
    later = marts.stg_fartdb__molecules(raw.with_columns(_loaded_at=pl.lit(datetime(2026, 6, 1))))
    assert_frame_equal(later, first)
    assert first["canonical_smiles"].to_list() == ["CCO", "c1ccccc1"]
    entries = list((tmp_path / "frames" / "stage_fartdb_molecules").glob("*.parquet"))
    assert len(entries) == 1
