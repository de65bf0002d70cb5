"""Analysis layer: pure functions from frames to frames, plus one orchestrator."""
