"""Benchmarks: each prints its rate next to raw client rates measured in the same run."""
