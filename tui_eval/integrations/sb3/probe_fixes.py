"""The doctor's probes' fixes in Stable-Baselines3's terms (CheckpointKind.probe_fix), by probe name: what to put
into, or around, the ONNX export so that it acts as `predict` does."""

from __future__ import annotations

PROBE_FIXES = {
    "observation normalizer missing":
        "put the run's VecNormalize into the export: (obs - obs_rms.mean) / sqrt(obs_rms.var + epsilon), clipped "
        "to ±clip_obs, with the statistics of its vecnormalize.pkl (VecNormalize.load(path, venv), training=False), "
        "or call VecNormalize.normalize_obs before `{sus}`",
    "observation normalizer missing and action not unsquashed":
        "put both into the export, as predict applies them: the run's VecNormalize before the policy ((obs - "
        "obs_rms.mean) / sqrt(obs_rms.var + epsilon), clipped to ±clip_obs, from its vecnormalize.pkl) and "
        "policy.unscale_action after it (SB3's export recipe leaves both out)",
    "action not unsquashed":
        "unscale the export's action as predict does: policy.unscale_action(action), i.e. low + 0.5 * (action + 1) "
        "* (high - low) with the env's action space (SB3's export recipe leaves the tanh output in [-1, 1])",
    "actions clipped differently":
        "clip the export's action to the action space as predict does: np.clip(action, action_space.low, "
        "action_space.high) (SB3's export recipe leaves the Gaussian mean unclipped)",
}
