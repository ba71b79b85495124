"""Recurrent state of exported rsl_rl policies, kept per world and reset when a world's episode starts.

rsl_rl's exports of an RNNModel are single-robot: the TorchScript module (`_TorchLSTMModel` /
`_TorchGRUModel`) keeps its state in buffers of batch 1 (`hidden_state`, and `cell_state` for an LSTM)
and clears them in its exported `reset()`; the ONNX graph takes the state as inputs (`h_in`, `c_in`) and
returns the next one (`h_out`, `c_out`). A deployment calls `reset()` (or feeds zeros) when its robot
starts an episode. Here many worlds share one policy, so:

- `JitMemory` widens the module's state buffers to one row per world (the module's own forward then runs
  batched). When every world starts an episode it calls the module's own `reset()`; when some do, it
  gives their rows what `reset()` leaves in them (learnt once from the module: a buffer that `reset()`
  does not clear is not cleared here either), so what is cleared is what a deployment would clear.
- `OnnxMemory` holds one state row per world, feeds it with each call and stores what comes back; a
  world's rows are zeroed when its episode starts.

The state is never carried from one episode to the next and never cleared within an episode.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch


class JitMemory:
    """The state buffers of a recurrent TorchScript policy, one row per world."""

    def __init__(self, module: Any, num_envs: int):
        self.module = module
        self.names = [name for name, buf in module.named_buffers(recurse=False) if buf.dim() == 3]
        for name in self.names:
            buf = getattr(module, name)
            if int(buf.shape[1]) != num_envs:
                setattr(module, name, torch.zeros(buf.shape[0], num_envs, buf.shape[2], dtype=buf.dtype,
                                                  device=buf.device))
        self.width = num_envs
        self.has_reset = hasattr(module, "reset")
        self.cleared = self._what_reset_clears() if self.names else {}

    def _what_reset_clears(self) -> dict[str, torch.Tensor]:
        """{buffer: the values the module's own `reset()` leaves in it} for the buffers it resets (filled with a
        marker first: a buffer `reset()` does not touch keeps it, and is then not reset here either). A
        module without `reset()` (not rsl_rl's export) has its state zeroed, as rsl_rl's `reset()` does."""
        if not self.has_reset:
            return {name: torch.zeros_like(getattr(self.module, name)) for name in self.names}
        marker = 12345.0
        with torch.no_grad():
            for name in self.names:
                getattr(self.module, name).fill_(marker)
            self.module.reset()
            return {name: getattr(self.module, name).clone() for name in self.names
                    if not bool((getattr(self.module, name) == marker).all())}

    @property
    def recurrent(self) -> bool:
        return bool(self.names)

    def describe(self) -> str:
        how = "its reset()" if self.has_reset else "zeros"
        return f"state {', '.join(self.names)} (one row per world, {how} at each episode start)"

    def reset(self, starting: torch.Tensor | None = None) -> None:
        """Worlds where `starting` is true begin an episode (None: all of them)."""
        if starting is None and self.has_reset:
            self.module.reset()
            return
        if starting is None:
            starting = torch.ones(1, dtype=torch.bool).expand(self.width)
        rows = starting.reshape(-1).to("cpu", torch.bool)
        if not bool(rows.any()):
            return
        for name, after_reset in self.cleared.items():  # what reset() does, for these rows only
            getattr(self.module, name)[:, rows] = after_reset[:, rows]


class OnnxMemory:
    """The state inputs/outputs of a recurrent ONNX policy (everything after the first input that is not an
    image group), one row per world."""

    def __init__(self, session: Any, num_envs: int, image_inputs: list[str]):
        inputs = session.get_inputs()[1:]
        outputs = session.get_outputs()[1:]
        self.inputs = [i.name for i in inputs if i.name not in image_inputs]
        self.outputs = [o.name for o in outputs][:len(self.inputs)]
        shapes = [i.shape for i in inputs if i.name not in image_inputs]
        self.state = [np.zeros((int(s[0]), num_envs, int(s[2])), dtype=np.float32) for s in shapes]

    @property
    def recurrent(self) -> bool:
        return bool(self.inputs)

    def describe(self) -> str:
        return (f"state {', '.join(self.inputs)} → {', '.join(self.outputs)} (one row per world, zeros at each "
                "episode start)")

    def feed(self, rows: slice | int) -> dict[str, np.ndarray]:
        """The state inputs for world `rows` (an index: one world, batch 1; a slice: those worlds)."""
        pick = slice(rows, rows + 1) if isinstance(rows, int) else rows
        return {name: np.ascontiguousarray(s[:, pick]) for name, s in zip(self.inputs, self.state, strict=True)}

    def store(self, rows: slice | int, outputs: list[np.ndarray]) -> None:
        """Keep the state the call returned (`outputs` after the actions, in the graph's order)."""
        pick = slice(rows, rows + 1) if isinstance(rows, int) else rows
        for s, value in zip(self.state, outputs, strict=False):
            s[:, pick] = value

    def reset(self, starting: torch.Tensor | None = None) -> None:
        if starting is None:
            for s in self.state:
                s.fill(0.0)
            return
        rows = starting.reshape(-1).to("cpu", torch.bool).numpy()
        for s in self.state:
            s[:, rows] = 0.0
