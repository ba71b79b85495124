"""Paths in processes of their own: no path shares process-wide state (random generators, simulator contexts
that are not thread-safe) with another path (`process_path`, `child`, `frames_relay`)."""
