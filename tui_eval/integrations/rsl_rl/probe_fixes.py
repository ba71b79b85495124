"""The doctor's probes' fixes in rsl_rl's and Isaac Lab's terms (CheckpointKind.probe_fix), by probe name."""

from __future__ import annotations

PROBE_FIXES = {
    "observation normalizer missing":
        "export the policy with its normalizer: runner.export_policy_to_jit / export_policy_to_onnx from the runner "
        "that loaded the checkpoint keep obs_normalizer (Isaac Lab's play.py exports that way), or normalize with "
        "the checkpoint's obs_norm_state_dict before calling `{sus}`",
    "recurrent state not reset between episodes":
        "reset the hidden state at every episode's start in `{sus}`: policy.reset(dones), as rsl_rl's runner does",
    "float64 vs float32":
        "give the policy float32 observations on both paths (the VecEnv's obs as float32 torch tensors, as rsl_rl's "
        "runner gets them), and keep the actor in float32",
    "actions clipped differently":
        "clip the same way on both paths (rsl_rl: the agent cfg's clip_actions, as Isaac Lab's RslRlVecEnvWrapper "
        "applies it; a deployment must clip to the same bound)",
}
