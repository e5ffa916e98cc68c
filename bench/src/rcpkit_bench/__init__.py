"""Benchmarks runnable as `rcpkit bench SUITE`."""
