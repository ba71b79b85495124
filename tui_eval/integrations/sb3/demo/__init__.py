"""The sb3 kind's demo: an rl-zoo3 run folder (logs/) and the script that trained it (make_demo.py)."""
