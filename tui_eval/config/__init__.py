"""What a run is asked to do: the run options, declared once, and the RunSpec they fill."""
