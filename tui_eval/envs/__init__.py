"""Envs as tui-eval runs them: the guard every env is wrapped in (seeds, invalid episodes), the check that an
env follows its seed, and the process-wide generators put in the seed's hands."""
