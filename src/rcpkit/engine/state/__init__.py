"""Per-engine state outside the index: feedback (§11), memory banks, trajectories."""
