"""Text analysis: how a text becomes the terms the index, the stores and the stages compare."""
