"""A run's durable log (SQLite) and its lifecycle (status, meta, snapshots)."""
