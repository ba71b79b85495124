"""Records across a path process's socket: a record encoded, pickled and decoded is the record it was, every field
set (tui_eval/isolation/record_wire.py)."""

from __future__ import annotations

import dataclasses
import pickle

from tui_eval.isolation.record_wire import FIELDS, decode, encode
from tui_eval.records import EpisodeRecord


def test_every_field_survives_the_wire_in_order():
    record = EpisodeRecord(path="jit", seed=3_000_000_017, ret=-1.25, length=9, success=False, invalid=True,
                           reason="non-finite observation at step 9", wall_s=0.5, block=2, explore=True,
                           modules=(("left", 1.0, 3), ("right", -2.25, 9)), world=17, start="ab12",
                           termination="fell_over", reward_terms=(("alive", 9.0), ("torque", -0.5)))
    assert FIELDS == tuple(f.name for f in dataclasses.fields(EpisodeRecord))
    rows = encode([record, dataclasses.replace(record, seed=5, world=None)])
    assert rows[0] == tuple(getattr(record, name) for name in FIELDS)
    back = decode(pickle.loads(pickle.dumps(rows)))
    assert back == [record, dataclasses.replace(record, seed=5, world=None)]
    assert encode([]) == [] and decode([]) == []
