"""The retrieval engine served through the rcpkit runtime."""
