"""Block I: colour, texture and shape descriptors of the product photos (scikit-image, offline).

Encoder ``skimage_colour_texture`` (54 numbers per photo, docs/features.md "Block I"):

* the photo is decoded with Pillow to RGB (an alpha channel is composited on white), converted to
  float in [0, 1] and resized (bilinear, anti-aliased) so its longer side is 128 px, aspect kept;
* colour (29): hue histogram (12 bins, each pixel weighted by its saturation, so greys do not
  vote; sums to 1 unless the photo is all grey), saturation and value histograms (4 bins each,
  pixel shares); CIE Lab mean, standard deviation and skewness per channel (L/100, a/128, b/128);
* texture (22): grey-level co-occurrence matrix of the grey image quantised to 32 levels at
  distances 1 and 3, symmetric, normalised, averaged over 0, 45, 90 and 135 degrees: contrast,
  dissimilarity, homogeneity, energy, correlation, ASM (12); uniform LBP (P=8, R=1) histogram
  (10 bins, pixel shares);
* shape (3): share of foreground pixels (not near-white: V > 0.9 and S < 0.1 is background),
  Canny edge density (sigma 1), log(height / width) of the original photo.

A product with several photos gets the element-wise mean over its photos (in path order).
Descriptors are cached by (sha256 of the file bytes, encoder, version) in the caller's folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import numpy as np
import polars as pl

from warehouse.features.block import KEY_COLUMNS, FeatureBlock, FeatureError
from warehouse.features.cache import VectorCache
from warehouse.features.products import product_frame
from warehouse.files import sha256_file

IMAGE_ENCODER = "skimage_colour_texture"
IMAGE_ENCODER_REV = "1"
LONG_SIDE = 128
GLCM_LEVELS = 32
GLCM_DISTANCES = (1, 3)
GLCM_PROPS = ("contrast", "dissimilarity", "homogeneity", "energy", "correlation", "ASM")

FEATURE_NAMES = (
    *(f"hue_hist_{i}" for i in range(12)),
    *(f"saturation_hist_{i}" for i in range(4)),
    *(f"value_hist_{i}" for i in range(4)),
    *(f"lab_{c}_{m}" for c in ("l", "a", "b") for m in ("mean", "std", "skew")),
    *(f"glcm_{p.lower()}_d{d}" for d in GLCM_DISTANCES for p in GLCM_PROPS),
    *(f"lbp_hist_{i}" for i in range(10)),
    "foreground_share",
    "edge_density",
    "log_aspect_ratio",
)


def image_encoder_version() -> str:
    return f"{IMAGE_ENCODER_REV}+skimage{metadata.version('scikit-image')}"


def load_rgb(path: Path) -> np.ndarray:
    """uint8 RGB array; alpha composited on white. Unreadable files raise FeatureError."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            im.load()
            if im.mode in ("RGBA", "LA") or (im.mode == "P" and "transparency" in im.info):
                rgba = im.convert("RGBA")
                white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
                return np.asarray(Image.alpha_composite(white, rgba).convert("RGB"))
            return np.asarray(im.convert("RGB"))
    except (OSError, UnidentifiedImageError) as exc:
        raise FeatureError(
            f"image {path}: cannot be decoded ({exc}). Fix: replace the file or remove it "
            "from the bundle's images/ folder"
        ) from exc


def _hist(values: np.ndarray, bins: int, weights: np.ndarray | None = None) -> np.ndarray:
    h, _ = np.histogram(values, bins=bins, range=(0.0, 1.0), weights=weights)
    total = h.sum()
    return h / total if total > 0 else np.zeros(bins)


def _moments(x: np.ndarray) -> list[float]:
    mu = float(x.mean())
    sd = float(x.std())
    skew = float(((x - mu) ** 3).mean() / sd**3) if sd > 1e-12 else 0.0
    return [mu, sd, skew]


def image_descriptor(rgb: np.ndarray) -> np.ndarray:
    """The 54 descriptors of one uint8 RGB photo (see module doc), float64."""
    from skimage.color import rgb2gray, rgb2hsv, rgb2lab
    from skimage.feature import canny, graycomatrix, graycoprops, local_binary_pattern
    from skimage.transform import resize

    if rgb.ndim != 3 or rgb.shape[2] != 3 or min(rgb.shape[:2]) < 2:
        raise FeatureError(f"image descriptor: expected an RGB photo, got shape {rgb.shape}")
    h0, w0 = rgb.shape[:2]
    scale = LONG_SIDE / max(h0, w0)
    shape = (max(2, round(h0 * scale)), max(2, round(w0 * scale)))
    img = resize(rgb.astype(np.float64) / 255.0, shape, order=1, anti_aliasing=True)
    img = np.clip(img, 0.0, 1.0)
    hsv = rgb2hsv(img)
    hue, sat, val = hsv[..., 0].ravel(), hsv[..., 1].ravel(), hsv[..., 2].ravel()
    colour = [_hist(hue, 12, weights=sat), _hist(sat, 4), _hist(val, 4)]
    lab = rgb2lab(img)
    lab_m = []
    for ch, scale_c in ((0, 100.0), (1, 128.0), (2, 128.0)):
        lab_m += _moments(lab[..., ch].ravel() / scale_c)
    gray = rgb2gray(img)
    q = np.clip(np.floor(gray * GLCM_LEVELS), 0, GLCM_LEVELS - 1).astype(np.uint8)
    glcm = graycomatrix(
        q,
        distances=list(GLCM_DISTANCES),
        angles=[0, np.pi / 4, np.pi / 2, 3 * np.pi / 4],
        levels=GLCM_LEVELS,
        symmetric=True,
        normed=True,
    )
    texture = []
    for di in range(len(GLCM_DISTANCES)):
        for prop in GLCM_PROPS:
            texture.append(float(np.nan_to_num(graycoprops(glcm, prop)[di]).mean()))
    gray8 = np.clip(np.round(gray * 255), 0, 255).astype(np.uint8)
    lbp = local_binary_pattern(gray8, P=8, R=1, method="uniform")
    lbp_hist = np.bincount(lbp.astype(np.int64).ravel(), minlength=10)[:10] / lbp.size
    background = (val > 0.9) & (sat < 0.1)
    shape_stats = [
        float(1.0 - background.mean()),
        float(canny(gray, sigma=1.0).mean()),
        float(np.log(h0 / w0)),
    ]
    out = np.concatenate(
        [*colour, np.asarray(lab_m), np.asarray(texture), lbp_hist, np.asarray(shape_stats)]
    ).astype(np.float64)
    if out.shape != (len(FEATURE_NAMES),) or not np.isfinite(out).all():
        raise FeatureError("image descriptor: non-finite or wrongly sized descriptor")
    return out


def describe_images(paths: Sequence[Path], cache_dir: Path | str) -> tuple[np.ndarray, int]:
    """Descriptors (n x 54) of ``paths`` and the number computed now (cache misses)."""
    cache = VectorCache(cache_dir, IMAGE_ENCODER, image_encoder_version())
    out = np.zeros((len(paths), len(FEATURE_NAMES)), dtype=np.float64)
    misses = 0
    for i, path in enumerate(paths):
        if not path.is_file():
            raise FeatureError(
                f"image {path}: listed in staging.stg_nectar__images but missing on disk. "
                "Fix: restore the photo or rebuild from the bundle that has it"
            )
        key = sha256_file(path)
        vec = cache.get(key)
        if vec is None or vec.shape != (len(FEATURE_NAMES),):
            vec = image_descriptor(load_rgb(path))
            cache.put(key, vec)
            misses += 1
        out[i] = vec
    return out, misses


def image_block(
    products: pl.DataFrame,
    images: pl.DataFrame,
    images_root: Path | str | None,
    cache_dir: Path | str,
) -> FeatureBlock:
    """I from the photos listed in ``images`` (``category, product_code, relative_path``;
    paths relative to ``images_root``, the NECTAR bundle folder). Products without a photo have
    ``has_block = False`` (impute them with
    :func:`~warehouse.features.impute.impute_same_category`).
    With no photo at all the block is absent (all rows zero, no root needed)."""
    keys = product_frame(products)
    missing = [c for c in (*KEY_COLUMNS, "relative_path") if c not in images.columns]
    if missing:
        raise FeatureError(
            f"staging.stg_nectar__images: missing column(s) {missing}. Fix: pass the images view"
        )
    photos = (
        images.select(
            pl.col("category").cast(pl.String),
            pl.col("product_code").cast(pl.Int32),
            pl.col("relative_path").cast(pl.String),
        )
        .join(keys.select(KEY_COLUMNS), on=list(KEY_COLUMNS), how="semi")
        .sort([*KEY_COLUMNS, "relative_path"])
    )
    n, d = keys.height, len(FEATURE_NAMES)
    matrix = np.zeros((n, d), dtype=np.float64)
    n_photos = np.zeros(n, dtype=np.int32)
    if photos.height:
        if images_root is None:
            raise FeatureError(
                "block I: photos are listed but no images root was given. Fix: pass the "
                "NECTAR bundle folder the relative paths start from"
            )
        root = Path(images_root)
        vectors, _ = describe_images([root / p for p in photos["relative_path"]], cache_dir)
        index = {k: i for i, k in enumerate(keys.select(KEY_COLUMNS).iter_rows())}
        rows = np.array([index[k] for k in photos.select(KEY_COLUMNS).iter_rows()])
        np.add.at(matrix, rows, vectors)
        np.add.at(n_photos, rows, 1)
        matrix[n_photos > 0] /= n_photos[n_photos > 0, None]
    return FeatureBlock(
        name="I",
        keys=keys.select(KEY_COLUMNS),
        matrix=matrix,
        feature_names=FEATURE_NAMES,
        encoder=IMAGE_ENCODER,
        encoder_version=image_encoder_version(),
        has_block=n_photos > 0,
        is_imputed=np.zeros(n, dtype=bool),
        data_origin=tuple(keys["data_origin"].to_list()),
        extra=pl.DataFrame({"n_photos": n_photos}, schema={"n_photos": pl.Int32}),
    )
