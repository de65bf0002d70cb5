"""Fixtures that start the bundled simulator on a free loopback port (filled in by the simulator work)."""
