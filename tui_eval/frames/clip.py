"""A clip of one seed: each path's frames side by side, labelled, written as GIF (Pillow, through imageio)
or MP4 (imageio-ffmpeg, the `mp4` extra: an ffmpeg binary inside a PyPI wheel, no system ffmpeg)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tui_eval.errors import BadInput
from tui_eval.frames.hub import Episode, Frame

LABEL_HEIGHT = 16
GAP = 4  # pixels between two paths' frames
FORMATS = (".gif", ".mp4")


def check_output(out: Path) -> None:
    """BadInput unless `out` names a clip format we write, in a folder that exists."""
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise BadInput(f"--out {out}: write a .gif or an .mp4 (the extension chooses the format)")
    if suffix == ".mp4":
        try:
            import imageio_ffmpeg  # noqa: F401
        except ImportError:
            raise BadInput("--out .mp4 needs the mp4 extra: pip install 'tui-eval[mp4]' (or write a .gif)") from None
    if not out.parent.is_dir():
        raise BadInput(f"--out {out}: the folder {out.parent} does not exist")


def strided(frames: Sequence[Frame], stride: int) -> list[Frame]:
    """Every `stride`-th step's frame, and always the last (the episode's end)."""
    kept = [f for f in frames if f.step % stride == 0]
    if frames and (not kept or kept[-1] is not frames[-1]):
        kept.append(frames[-1])
    return kept


def compose(episodes: dict[str, Episode], seed: int, stride: int = 1) -> list[np.ndarray]:
    """One picture per kept step: the paths left to right, each under its label (path, seed, step, return);
    a path whose episode ended keeps its last frame, marked over."""
    columns = {name: strided(list(ep.frames), stride) for name, ep in episodes.items()}
    length = max((len(c) for c in columns.values()), default=0)
    height = max((f.image.shape[0] for c in columns.values() for f in c), default=1)
    pictures = []
    for i in range(length):
        tiles = []
        for name, frames in columns.items():
            frame = frames[min(i, len(frames) - 1)]
            over = i >= len(frames) - 1 and episodes[name].done
            tiles.append(_tile(name, seed, frame, height, over))
        gap = np.full((tiles[0].shape[0], GAP, 3), 255, np.uint8)
        pictures.append(np.concatenate([t for tile in tiles for t in (tile, gap)][:-1], axis=1))
    return pictures


def _tile(path: str, seed: int, frame: Frame, height: int, over: bool) -> np.ndarray:
    from PIL import Image, ImageDraw

    image = frame.image
    if image.shape[0] < height:
        image = np.pad(image, ((0, height - image.shape[0]), (0, 0), (0, 0)))
    label = Image.new("RGB", (image.shape[1], LABEL_HEIGHT), (24, 24, 24))
    text = f"{path}  seed {seed}  step {frame.step}  return {frame.ret:.1f}" + ("  (over)" if over else "")
    ImageDraw.Draw(label).text((3, 2), text, fill=(240, 240, 240))
    return np.concatenate([np.asarray(label), image], axis=0)


def write_clip(out: Path, pictures: list[np.ndarray], fps: float) -> None:
    import imageio.v3 as iio

    if out.suffix.lower() == ".gif":
        iio.imwrite(out, np.stack(pictures), extension=".gif", duration=1000.0 / fps, loop=0)
    else:  # libx264 wants even sides
        h, w = pictures[0].shape[:2]
        even = [np.pad(p, ((0, h % 2), (0, w % 2), (0, 0))) for p in pictures]
        iio.imwrite(out, np.stack(even), plugin="FFMPEG", fps=fps, codec="libx264", macro_block_size=1)
