"""RLlib's connector pieces read their caller's frame through a stand-in for `inspect.stack()` that leaves the source
lines out (tui_eval/integrations/rllib/connector_frames.py): the same frames, so every piece keeps the constructor
arguments RLlib's own `inspect` gives it, and a checkpoint's pipelines restore the same pieces."""

from __future__ import annotations

import inspect
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from ray.rllib.connectors import connector_v2
from ray.rllib.connectors.env_to_module import EnvToModulePipeline, FlattenObservations
from ray.rllib.connectors.module_to_env import ModuleToEnvPipeline, NormalizeAndClipActions

from tui_eval.config.spec import RunSpec
from tui_eval.integrations.rllib.connector_frames import InspectWithoutSource, cheap_connector_frames
from tui_eval.integrations.rllib.kind import RllibKind
from tui_eval.integrations.rllib.paths.layout import connector_dir

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "assets" / "ppo_cartpole"


@pytest.fixture
def rllibs_own_inspect():
    """connector_v2 with RLlib's own `inspect` for the test; as it was afterwards."""
    was = connector_v2.inspect
    connector_v2.inspect = inspect
    yield
    connector_v2.inspect = was


def _both_stacks():
    return inspect.stack(), InspectWithoutSource("inspect").stack()


def _nested(depth: int):
    return _nested(depth - 1) if depth else _both_stacks()


def test_the_stand_in_lists_the_frames_inspect_lists():
    real, stand_in = _nested(3)
    assert len(real) == len(stand_in) > 5
    assert [info.frame for info in stand_in] == [info.frame for info in real]  # the very frame objects, in order
    assert [info.function for info in stand_in] == [info.function for info in real]
    assert [info.lineno for info in stand_in[1:]] == [info.lineno for info in real[1:]]  # the first: its own line
    assert stand_in[1].function == "_nested" and stand_in[0].function == "_both_stacks"
    assert all(info.code_context is None and info.index is None for info in stand_in)


def _pieces():
    box = gym.spaces.Box(-2.0, 2.0, (3,), np.float32)
    nested = gym.spaces.Dict({"a": gym.spaces.Box(-1.0, 1.0, (2,), np.float32), "b": gym.spaces.Discrete(4)})
    return [NormalizeAndClipActions(input_action_space=box, normalize_actions=True, clip_actions=False),
            FlattenObservations(input_observation_space=nested, multi_agent=False)]


def _ctor_kwargs(pieces) -> list:
    return [(type(piece).__name__, piece.get_ctor_args_and_kwargs()) for piece in pieces]


def test_connector_pieces_keep_the_constructor_arguments_rllibs_inspect_gives_them(rllibs_own_inspect):
    with_rllibs = _ctor_kwargs(_pieces())
    cheap_connector_frames()
    assert isinstance(connector_v2.inspect, InspectWithoutSource)
    assert connector_v2.inspect.getargvalues is inspect.getargvalues  # every other name is inspect's own
    with_stand_in = _ctor_kwargs(_pieces())
    assert with_stand_in == with_rllibs
    kwargs = dict(with_stand_in)["NormalizeAndClipActions"][1]
    assert kwargs["normalize_actions"] is True and kwargs["clip_actions"] is False  # read from the caller's frame


def test_the_rllib_kind_installs_it_and_a_checkpoints_pipelines_restore_the_same(rllibs_own_inspect):
    def restored():
        return [_ctor_kwargs(cls.from_checkpoint(str(connector_dir(DEMO, side))).connectors)
                for cls, side in ((EnvToModulePipeline, "env_to_module"), (ModuleToEnvPipeline, "module_to_env"))]

    with_rllibs = restored()
    RllibKind(DEMO, RunSpec(checkpoint=str(DEMO)))
    assert isinstance(connector_v2.inspect, InspectWithoutSource)
    assert restored() == with_rllibs
    assert any(pieces for pieces in with_rllibs)
