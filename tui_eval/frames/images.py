"""Frames as arrays: which observations are images, and scaling a frame to fit a box, aspect kept."""

from __future__ import annotations

import os
from typing import Any

import numpy as np


def is_image_space(space: Any) -> bool:
    """True for a uint8 Box shaped like a picture (H, W), (H, W, 1) or (H, W, 3), as CarRacing's: the
    observation is then the frame, and the env need not render at all."""
    shape, dtype = getattr(space, "shape", None), getattr(space, "dtype", None)
    if shape is None or dtype != np.uint8:
        return False
    if len(shape) == 3 and shape[2] in (1, 3):
        return min(shape[:2]) >= 16
    return len(shape) == 2 and min(shape) >= 16


def as_rgb(image: Any) -> np.ndarray | None:
    """An (H, W, 3) uint8 array, or None when `image` is not a picture (a None render, text, a vector)."""
    if image is None:
        return None
    array = np.asarray(image)
    if array.ndim == 2:
        array = array[:, :, None]
    if array.ndim != 3 or array.shape[2] not in (1, 3, 4) or min(array.shape[:2]) < 1:
        return None
    if array.dtype != np.uint8:
        array = np.clip(array, 0, 255).astype(np.uint8)
    if array.shape[2] == 1:
        array = np.repeat(array, 3, axis=2)
    return np.ascontiguousarray(array[:, :, :3])


def fit_size(width: int, height: int, max_width: int, max_height: int) -> tuple[int, int]:
    """The largest (w, h) inside the box with the frame's aspect ratio (never upscaled, at least 1x1)."""
    scale = min(max_width / width, max_height / height, 1.0)
    return max(1, round(width * scale)), max(1, round(height * scale))


def shrink(image: np.ndarray, max_side: int) -> np.ndarray:
    """`image` with every k-th row and column, the smallest k that brings it within `max_side`: a view, no
    copy, no filtering (0.05 ms where a filtered resize of a 600x400 frame takes 2 ms): for frames taken
    beside the evaluation; the panes filter when they scale for display."""
    k = -(-max(image.shape[:2]) // max_side)
    return image if k <= 1 else np.ascontiguousarray(image[::k, ::k])


def fit(image: np.ndarray, max_width: int, max_height: int, upscale: bool = False) -> np.ndarray:
    """`image` scaled to fit the box, aspect kept (box-filtered when shrinking, so thin lines survive)."""
    from PIL import Image

    h, w = image.shape[:2]
    if upscale:
        scale = min(max_width / w, max_height / h)
        size = max(1, round(w * scale)), max(1, round(h * scale))
    else:
        size = fit_size(w, h, max_width, max_height)
    if size == (w, h):
        return image
    resample = Image.Resampling.BOX if size[0] < w else Image.Resampling.NEAREST
    return np.asarray(Image.fromarray(image).resize(size, resample))


def quiet_pygame() -> None:
    """rgb_array rendering needs no sound card or display: keep SDL from probing them (and from writing
    ALSA errors over the terminal). Before pygame initialises; a choice the user made is kept."""
    os.environ.setdefault("SDL_AUDIODRIVER", "dummy")
    os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
