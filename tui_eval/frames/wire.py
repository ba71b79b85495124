"""A FrameView as JSON for the control channel: raw pixels in base64, scaled down by the server to the
size the viewer draws at (a 100x60-pixel frame is 18 kB), so that a viewer gets small messages."""

from __future__ import annotations

import base64
from typing import Any

import numpy as np

from tui_eval.frames.hub import Frame, FrameView, Pane

#: the largest frame a viewer may ask for over the channel (pixels per side)
MAX_WIRE_SIDE = 256


def view_to_json(view: FrameView) -> dict[str, Any]:
    return {"key": list(view.key) if view.key else None, "keys": [list(k) for k in view.keys],
            "panes": [_pane_to_json(p) for p in view.panes]}


def view_from_json(data: dict[str, Any]) -> FrameView:
    return FrameView(_key(data.get("key")), tuple(_key(k) for k in data.get("keys") or []),  # type: ignore[misc]
                     tuple(_pane_from_json(p) for p in data.get("panes") or []))


def _key(value: Any) -> tuple[int, int] | None:
    return None if not value else (int(value[0]), int(value[1]))


def _pane_to_json(pane: Pane) -> dict[str, Any]:
    return {"path": pane.path, "key": list(pane.key) if pane.key else None, "step": pane.step, "ret": pane.ret,
            "done": pane.done, "problem": pane.problem,
            "frames": [{"step": f.step, "ret": f.ret, "shape": list(f.image.shape),
                        "data": base64.b64encode(np.ascontiguousarray(f.image).tobytes()).decode()}
                       for f in pane.frames]}


def _pane_from_json(data: dict[str, Any]) -> Pane:
    frames = tuple(Frame(int(f["step"]), float(f["ret"]),
                         np.frombuffer(base64.b64decode(f["data"]), dtype=np.uint8).reshape(f["shape"]))
                   for f in data.get("frames") or [])
    return Pane(str(data["path"]), _key(data.get("key")), int(data.get("step", 0)), float(data.get("ret", 0.0)),
                bool(data.get("done")), frames, data.get("problem"))


def wire_size(size: Any) -> tuple[int, int]:
    """A requested (width, height), bounded to MAX_WIRE_SIDE."""
    try:
        width, height = (int(v) for v in size)
    except (TypeError, ValueError):
        return MAX_WIRE_SIDE, MAX_WIRE_SIDE
    return max(8, min(width, MAX_WIRE_SIDE)), max(8, min(height, MAX_WIRE_SIDE))
