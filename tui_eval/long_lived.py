"""What a process builds before it plays lives as long as the process: kept out of the collector's full passes."""

from __future__ import annotations

import gc

_kept = False


def keep_built_objects() -> None:
    """Moves every object alive now out of the garbage collector's generations (`gc.freeze`), the first time the
    process's paths are built. A full pass over the ~300,000 objects of torch, a library and a policy takes
    ~0.15 s, and a path's books (episodes, infos, records) start one every second or so; afterwards a full
    pass walks only what was made since. Cyclic garbage alive at that moment is kept: nothing is collected
    first (that pass would delay the first episode), and only the first call freezes, so what a process keeps
    this way is bounded (a sweep or a test session starts many runs)."""
    global _kept
    if not _kept:
        _kept = True
        gc.freeze()
