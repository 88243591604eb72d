"""Block I: descriptors of synthetic photos, caching, errors and the absent block."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from PIL import Image

from warehouse.features import FeatureError, image_block
from warehouse.features.images import FEATURE_NAMES, describe_images, image_descriptor

IDX = {name: i for i, name in enumerate(FEATURE_NAMES)}


def _photo(path: Path, rgb: tuple[int, int, int], size=(40, 20), square: bool = False) -> None:
    img = Image.new("RGB", size, rgb)
    if square:  # a dark square on the background: foreground and edges
        for x in range(10, 20):
            for y in range(5, 15):
                img.putpixel((x, y), (20, 20, 20))
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path)


def test_descriptor_of_flat_colours_by_hand() -> None:
    red = image_descriptor(np.full((20, 40, 3), (255, 0, 0), np.uint8))
    assert len(red) == 54
    assert red[IDX["hue_hist_0"]] == pytest.approx(1.0)  # hue 0, fully saturated
    assert red[IDX["saturation_hist_3"]] == pytest.approx(1.0)
    assert red[IDX["foreground_share"]] == pytest.approx(1.0)
    assert red[IDX["edge_density"]] == 0.0
    assert red[IDX["log_aspect_ratio"]] == pytest.approx(np.log(20 / 40))
    white = image_descriptor(np.full((30, 30, 3), 255, np.uint8))
    assert white[IDX["foreground_share"]] == 0.0  # near-white is background
    assert white[: IDX["saturation_hist_0"]].sum() == 0.0  # greys do not vote for a hue
    assert white[IDX["lab_l_mean"]] == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(FeatureError, match="expected an RGB photo"):
        image_descriptor(np.zeros((5, 5), np.uint8))


def _images(rows):
    return pl.DataFrame(rows, schema=["category", "product_code", "relative_path"], orient="row")


def test_block_means_photos_caches_and_leaves_missing_rows_empty(tmp_path: Path) -> None:
    bundle, cache = tmp_path / "bundle", tmp_path / "cache"
    _photo(bundle / "images/2026/Milk/1/front.png", (200, 30, 30), square=True)
    _photo(bundle / "images/2026/Milk/1/back.png", (30, 30, 200))
    products = pl.DataFrame(
        {"category": ["Milk", "Milk"], "product_code": [1, 2], "data_origin": ["test", "test"]}
    )
    images = _images(
        [("Milk", 1, "images/2026/Milk/1/front.png"), ("Milk", 1, "images/2026/Milk/1/back.png")]
    )
    blk = image_block(products, images, bundle, cache)
    paths = [bundle / "images/2026/Milk/1/back.png", bundle / "images/2026/Milk/1/front.png"]
    each, misses = describe_images(paths, cache)
    assert misses == 0  # both already cached by the block
    np.testing.assert_array_equal(blk.matrix[0], each.mean(axis=0))
    assert blk.has_block.tolist() == [True, False] and not blk.matrix[1].any()
    assert blk.extra["n_photos"].to_list() == [2, 0]
    again = image_block(products, images, bundle, cache)
    assert again.matrix.tobytes() == blk.matrix.tobytes()


def test_missing_file_and_missing_root_are_errors(tmp_path: Path) -> None:
    products = pl.DataFrame({"category": ["Milk"], "product_code": [1], "data_origin": ["t"]})
    images = _images([("Milk", 1, "images/2026/Milk/1/front.jpg")])
    with pytest.raises(FeatureError, match=r"front.jpg: listed in staging.*missing on disk"):
        image_block(products, images, tmp_path, tmp_path / "cache")
    with pytest.raises(FeatureError, match="no images root"):
        image_block(products, images, None, tmp_path / "cache")
    bad = tmp_path / "images/2026/Milk/1/front.jpg"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"not a jpeg")
    with pytest.raises(FeatureError, match="cannot be decoded"):
        image_block(products, images, tmp_path, tmp_path / "cache")


def test_no_photo_at_all_is_an_absent_block(tmp_path: Path) -> None:
    products = pl.DataFrame({"category": ["Milk"], "product_code": [1], "data_origin": ["t"]})
    blk = image_block(products, _images([]), None, tmp_path)
    assert blk.is_absent and blk.dim == 54 and not blk.matrix.any()


def test_a_corrupted_descriptor_is_recomputed(tmp_path: Path) -> None:
    from warehouse.features.cache import VectorCache, sha256_file
    from warehouse.features.images import IMAGE_ENCODER, image_encoder_version
    from warehouse.files import ledger_sizes, recomputed_since

    photo, cache = tmp_path / "front.png", tmp_path / "cache"
    _photo(photo, (200, 30, 30), square=True)
    cold, misses = describe_images([photo], cache)
    assert misses == 1
    entry = VectorCache(cache, IMAGE_ENCODER, image_encoder_version()).path(sha256_file(photo))
    entry.write_bytes(entry.read_bytes()[:-8] + np.float64(7.0).tobytes())  # last value changed
    marks = ledger_sizes([cache])
    warm, misses = describe_images([photo], cache)
    assert misses == 1 and warm.tobytes() == cold.tobytes()
    assert [line["entry"] for line in recomputed_since(marks)] == [str(entry)]
