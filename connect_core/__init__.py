"""A Kafka Connect runtime in Python: plugin SPI, worker, stores, herders and REST API.

This package must never import :mod:`mirror`; the MirrorMaker product builds on it.
"""

__version__ = "0.1.0"
