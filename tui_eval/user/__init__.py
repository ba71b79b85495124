"""The user's own code: `--import`ed modules, and envs registered only under a script's main guard."""
