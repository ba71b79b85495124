"""The toy kind: recognises `*.toy.json`, reads it offline, declares paths `float64` and `float32`."""

from __future__ import annotations

import json
from pathlib import Path

from tui_eval.config.spec import RunSpec, SeedBlock
from tui_eval.errors import BadInput
from tui_eval.integrations.base import CheckpointKind, PathEntry

HELD_OUT_START = 5_000_000


class ToyKind(CheckpointKind):
    name = "toy"
    default_paths = ("float64", "float32")

    @classmethod
    def recognise(cls, path: Path) -> bool:
        return path.is_file() and path.name.endswith(".toy.json")

    def __init__(self, path: Path, spec: RunSpec):
        try:
            data = json.loads(path.read_text())
            self.weights = [[float(w) for w in row] for row in data["weights"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise BadInput(f"{path} is not a toy policy ({exc}); write {{\"env\": ID, \"weights\": [[...]]}}") from None
        self.checkpoint, self.spec = path, spec
        self.env_id = spec.env_id or data.get("env")
        self.env_config = dict(spec.env_config or {})
        if not self.env_id:
            raise BadInput(f"{path} names no env; pass --env ID")

    def own_paths(self) -> list[PathEntry]:
        return [PathEntry(name, lambda explore, name=name: self._build(name, explore), lambda: False,
                          "toy: its policy is greedy", lambda: (self.spec.num_envs or 4, "toy default"))
                for name in self.default_paths]

    def _build(self, name: str, explore: bool):
        from tests.support.toy_kind.paths import ToyPath

        flip = name == "float32" and self.spec.kind_option("toy_flip")
        weights = [[-w for w in row] for row in self.weights] if flip else self.weights
        return ToyPath(name=name, weights=weights, env_id=self.env_id, env_config=self.env_config,
                       num_envs=self.spec.num_envs or 4, explore=explore, success_key=self.spec.success_key,
                       step_timeout=self.spec.step_timeout)

    def describe(self) -> dict[str, str]:
        return {"policy": f"linear, {len(self.weights)} actions", "env": self.env_id}

    def default_seeds(self, episodes: int | None) -> tuple[SeedBlock, str]:
        stop = None if episodes is None else HELD_OUT_START + episodes
        return SeedBlock(HELD_OUT_START, stop), "held out: the toy library never trains"
