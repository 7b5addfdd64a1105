"""The ``mm2`` command line."""
