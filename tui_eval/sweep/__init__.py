"""`tui-eval sweep`: every checkpoint of a training run on the same held-out seeds, the worse ones eliminated as
soon as an anytime-valid interval shows it (`elimination.py`); which checkpoints a run holds and what training
recorded of each (`candidates.py`); the rounds (`race.py`)."""
