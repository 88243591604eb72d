"""warehouse.files: hashing, atomic writes, checksum sidecars and the recompute ledger."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import pytest

from warehouse import files


def test_sha256_file_matches_hashlib(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    data = bytes(range(256)) * 5000  # more than one 1 MiB chunk boundary is not needed: 1.28 MB
    path.write_bytes(data)
    assert files.sha256_file(path) == hashlib.sha256(data).hexdigest() == files.sha256_bytes(data)


def test_atomic_write_keeps_the_old_file_when_the_writer_fails(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "entry.npy"
    files.atomic_write(path, b"old")
    assert path.read_bytes() == b"old"

    def failing(tmp: Path) -> None:
        tmp.write_bytes(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        files.atomic_write(path, failing)
    assert path.read_bytes() == b"old"
    assert sorted(p.name for p in path.parent.iterdir()) == ["entry.npy"]  # no temporary left


def test_sidecar_round_trip_and_mismatch_is_recorded(tmp_path: Path, caplog) -> None:
    entry = tmp_path / "ab" / "entry.bin"
    files.atomic_write(entry, b"payload")
    assert not files.verified(entry, tmp_path)  # no sidecar yet: a miss, not trusted
    assert files.recomputed_since({tmp_path: 0}) == []  # ... and not counted
    files.write_checksum(entry)
    assert files.verified(entry, tmp_path)
    marks = files.ledger_sizes([tmp_path])
    entry.write_bytes(b"paylOad")
    with caplog.at_level(logging.WARNING, logger="warehouse.cache"):
        assert not files.verified(entry, tmp_path)
        assert not files.verified(entry, tmp_path)
    assert sum(str(entry) in r.getMessage() for r in caplog.records) == 1  # logged once
    lines = files.recomputed_since(marks)
    assert [line["entry"] for line in lines] == [str(entry), str(entry)]
    assert "differs from the recorded" in lines[0]["problem"]
    assert not files.verified(tmp_path / "absent.bin", tmp_path)  # a miss is not a recompute
    assert len(files.recomputed_since(marks)) == 2


def test_atomic_write_mode_and_atomic_text(tmp_path: Path) -> None:
    import os

    umask = os.umask(0o022)
    try:
        files.atomic_write(tmp_path / "private.bin", b"x")
        assert (tmp_path / "private.bin").stat().st_mode & 0o777 == 0o600  # caches, gated files
        files.atomic_text(tmp_path / "record.json", "{}\n")  # as Path.write_text would
        assert (tmp_path / "record.json").stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(umask)
    assert (tmp_path / "record.json").read_text(encoding="utf-8") == "{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["private.bin", "record.json"]


def test_atomic_dir_swaps_in_only_a_finished_folder(tmp_path: Path) -> None:
    out = tmp_path / "release"
    with files.atomic_dir(out) as tmp:
        (tmp / "a.csv").write_text("a\n")
        assert not out.exists()
    assert (out / "a.csv").read_text() == "a\n"
    with pytest.raises(RuntimeError), files.atomic_dir(out, replace_nonempty=True) as tmp:
        (tmp / "b.csv").write_text("b\n")
        raise RuntimeError("guard failed")
    assert sorted(p.name for p in out.iterdir()) == ["a.csv"]  # the previous folder untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]  # no temporary left
    with pytest.raises(OSError), files.atomic_dir(out) as tmp:  # a non-empty folder is refused
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]
    with files.atomic_dir(out, replace_nonempty=True) as tmp:
        (tmp / "c.csv").write_text("c\n")
    assert sorted(p.name for p in out.iterdir()) == ["c.csv"]
