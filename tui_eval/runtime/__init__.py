"""A run as a process that owns its log: output checks, one writer per log, the per-user run registry,
the local control channel, signals and detaching, and the local Ray the RLlib evaluate path needs."""
