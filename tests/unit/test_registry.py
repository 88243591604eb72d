"""The dataset registry: pins, mirror resolution, and loud failures."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from warehouse.config import load_settings
from warehouse.errors import DatasetError, DatasetHashError
from warehouse.sources import registry


def _mirror_copy(data_mirror: Path, tmp_path: Path, key: str) -> Path:
    dataset = registry.get(key)
    target = tmp_path / dataset.path
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(data_mirror / dataset.path, target)
    return target


def test_every_pinned_dataset_resolves_from_the_mirror(data_mirror: Path) -> None:
    settings = load_settings(mirror=data_mirror)
    resolved = [
        registry.resolve(key, settings)
        for key, d in registry.load_registry().items()
        if not d.optional
    ]
    assert len(resolved) == 24
    assert all(p.exists() for p in resolved)


def test_registry_pins_have_upstream_commits_and_licenses() -> None:
    for d in registry.load_registry().values():
        assert len(d.sha256) == 64
        assert d.license
        if d.url:
            assert d.url.startswith("https://")
            if "githubusercontent" in d.url:
                # pinned to a 40-hex commit, never a branch
                parts = d.url.split("/")
                assert any(len(p) == 40 and all(c in "0123456789abcdef" for c in p) for p in parts)


def test_wrong_hash_in_mirror_is_an_error_naming_the_file(data_mirror, tmp_path) -> None:
    target = _mirror_copy(data_mirror, tmp_path, "tastebench_gold_pairs")
    target.write_text(target.read_text().replace("Bacon", "Bacom", 1))
    with pytest.raises(DatasetHashError) as err:
        registry.resolve("tastebench_gold_pairs", load_settings(mirror=tmp_path))
    message = str(err.value)
    assert str(target) in message
    assert "tastebench_gold_pairs" in message
    assert "does not match the registry pin" in message


def test_missing_file_in_mirror_never_falls_back_to_upstream(tmp_path) -> None:
    with pytest.raises(DatasetError, match="missing from the mirror"):
        registry.resolve("fartdb_train", load_settings(mirror=tmp_path))


def test_tree_dataset_detects_a_changed_photo(data_mirror, tmp_path) -> None:
    dataset = registry.get("tastebench_competition_images")
    target = tmp_path / dataset.path
    shutil.copytree(data_mirror / dataset.path, target)
    settings = load_settings(mirror=tmp_path)
    assert registry.resolve(dataset.key, settings) == target
    victim = sorted(target.rglob("*.jpg"))[0]
    victim.write_bytes(victim.read_bytes() + b"\0")
    with pytest.raises(DatasetHashError, match="tastebench_competition_images"):
        registry.resolve(dataset.key, settings)


def test_mirror_only_dataset_without_mirror_says_how_to_fix(monkeypatch) -> None:
    monkeypatch.delenv("TASTEBENCH_DATA_MIRROR", raising=False)
    with pytest.raises(DatasetError, match="TASTEBENCH_DATA_MIRROR"):
        registry.resolve("tastebench_competition_images", load_settings())


def test_unknown_dataset_key_lists_the_registered_ones() -> None:
    with pytest.raises(DatasetError, match="fartdb_train"):
        registry.get("no_such_dataset")


def test_every_pin_is_read_by_a_loader(data_mirror: Path) -> None:
    """The registry pins what the warehouse reads, no more: every non-optional dataset is resolved
    by a loader (unread files such as the FoodAtlas v1 evidence are not pinned)."""
    from unittest import mock

    from warehouse.sources.load import read_all

    settings = load_settings(mirror=data_mirror)
    fixture = Path(__file__).resolve().parents[1] / "fixtures" / "nectar_mini"
    resolved: list[str] = []
    real = registry.resolve

    def spy(key, settings=None):
        resolved.append(key)
        return real(key, settings)

    with mock.patch.object(registry, "resolve", spy):
        read_all(settings, fixture)
    pinned = {k for k, d in registry.load_registry().items() if not d.optional}
    assert set(resolved) == pinned
