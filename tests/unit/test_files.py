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
