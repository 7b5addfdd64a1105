"""The one error the embedded clusters raise when a broker cannot be brought up.

A broker that cannot start must fail fast with a message a person can act on (install the package,
free the port, read the log tail) instead of leaving a test or ``mm2 demo`` hanging.
"""

from __future__ import annotations


class BrokerStartError(RuntimeError):
    """A cluster could not be started or reached; the message says why and what to do."""
