"""Every RLlib connector piece, as it is built, keeps its constructor's arguments (for its checkpoints) by reading its
caller's frame: `inspect.stack()[1].frame` (ray/rllib/connectors/connector_v2.py). `inspect.stack()` builds a
`FrameInfo` for every frame on the stack with its source lines, looking each frame's module up among all the loaded
ones and reading its source file (slow, and slower the more modules are loaded: CPython issue 92041). In a process
with torch, Ray and RLlib loaded, the pieces of a checkpoint's pipelines and an Algorithm's env runners cost tens of
milliseconds each the first time; the check of a differing seed builds both paths in a fresh process every time.

`cheap_connector_frames` points connector_v2's `inspect` at a stand-in whose `stack()` gives the same frames, in the
same order, without source lines (`code_context` and `index` None, as `inspect.stack(context=0)` has them, and the
file name the code object's); every other name is inspect's own. Once per process, before RLlib builds connectors.
An RLlib that reads its caller another way is left as it is.

Measured (CartPole demo, Ray up, a fresh process as the check's): the evaluate path's build took 0.29-0.31 s, 0.15-0.16
s with the stand-in.
"""

from __future__ import annotations

import inspect
import sys
import types


class InspectWithoutSource(types.ModuleType):
    """`inspect`, but for `stack()`."""

    def __getattr__(self, name: str):
        return getattr(inspect, name)

    @staticmethod
    def stack(context: int = 1) -> list[inspect.FrameInfo]:
        """The caller's frame and those above it, outermost last, as `inspect.stack()` lists them (no source)."""
        frame: types.FrameType | None = sys._getframe(1)
        frames = []
        while frame is not None:
            code = frame.f_code
            frames.append(inspect.FrameInfo(frame, code.co_filename, frame.f_lineno, code.co_name, None, None))
            frame = frame.f_back
        return frames


def cheap_connector_frames() -> None:
    """Once per process (again: nothing changes)."""
    try:
        from ray.rllib.connectors import connector_v2
    except ImportError:  # no RLlib: nothing to speed up
        return
    if getattr(connector_v2, "inspect", None) is inspect:
        connector_v2.inspect = InspectWithoutSource("inspect")
