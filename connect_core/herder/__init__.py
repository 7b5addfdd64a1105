"""Herders: what decides which connectors and tasks run where (standalone, distributed)."""
