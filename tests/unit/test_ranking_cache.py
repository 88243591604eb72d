"""The fit cache: content addresses, atomic writes, integrity checks."""

from __future__ import annotations

import numpy as np
import pytest

from warehouse.files import recomputed_since
from warehouse.ranking.cache import (
    FitCache,
    canonical_json,
    config_hash,
    fit_id,
    library_versions,
)


def test_hashes_are_canonical_and_cover_versions():
    a = {"model": "bt", "settings": {"C": 1.0, "tol": 1e-9}}
    b = {"settings": {"tol": 1e-9, "C": 1.0}, "model": "bt"}
    assert (
        canonical_json(a)
        == canonical_json(b)
        == ('{"model":"bt","settings":{"C":1.0,"tol":1e-09}}')
    )
    v = library_versions()
    assert set(v) >= {"numpy", "scipy", "scikit-learn", "lightgbm", "python", "algorithm"}
    assert config_hash(a, v) == config_hash(b, v)
    assert config_hash(a, {**v, "scikit-learn": "0.0"}) != config_hash(a, v)
    assert fit_id(config_hash(a, v), "rows1") != fit_id(config_hash(a, v), "rows2")
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_round_trip_atomic_and_verified(tmp_path):
    cache = FitCache(tmp_path)
    key = "ab" + "0" * 62
    assert cache.get(key) is None and not cache.has(key)
    cache.put(key, {"predictions": np.arange(3.0)}, {"model": "m"})
    arrays, meta = cache.get(key)
    assert arrays["predictions"].tolist() == [0.0, 1.0, 2.0]
    assert meta["model"] == "m" and meta["fit_id"] == key
    assert sorted(p.name for p in (tmp_path / "ab").iterdir()) == [f"{key}.json", f"{key}.npz"]
    npz = tmp_path / "ab" / f"{key}.npz"
    npz.write_bytes(npz.read_bytes()[:-3] + b"xyz")
    assert cache.get(key) is None  # a mismatch is a miss: the caller refits, never stops
    (line,) = recomputed_since({tmp_path: 0})
    assert line["entry"] == str(npz) and "does not match the sha256" in line["problem"]
    (tmp_path / "ab" / f"{key}.json").write_text("{not json")
    assert cache.get(key) is None
    assert "unreadable" in recomputed_since({tmp_path: 0})[-1]["problem"]
    cache.put(key, {"predictions": np.arange(3.0)}, {"model": "m"})
    assert cache.get(key)[0]["predictions"].tolist() == [0.0, 1.0, 2.0]


def test_no_root_stores_nothing():
    cache = FitCache(None)
    cache.put("cd" + "1" * 62, {"predictions": np.zeros(1)}, {})
    assert cache.get("cd" + "1" * 62) is None and cache.writes == 0
