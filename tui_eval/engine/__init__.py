"""The engine: runs the paths on paired seeds, feeds them, watches them (stalls, frozen worlds), proves exact
differences, decides early, and what only it uses."""
