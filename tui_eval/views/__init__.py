"""What every view of a run reads: its snapshot, its summary (`--json`), and the words and numbers shown."""
