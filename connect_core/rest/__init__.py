"""The Connect REST API (same paths, JSON shapes, status codes and error bodies as Java Connect).

``routes`` is the method+path table (with the namespace prefix that selects a herder in
MirrorMaker's dedicated mode), ``resources`` the handlers that render herder calls, ``entities``
the JSON shapes, ``errors`` the one exception -> status table. Around them: ``server`` (uvicorn,
binding, start/stop), ``asgi`` (the Starlette app), ``tls`` and ``auth`` (HTTPS, authentication) and
``client`` (requests to other workers). Only those do I/O.
"""

from connect_core.rest.resources import RestApp, RestSettings
from connect_core.rest.routes import HerderSelector, Router
from connect_core.rest.server import RestServer, RestServerConfig

__all__ = ["HerderSelector", "RestApp", "RestServer", "RestServerConfig", "RestSettings", "Router"]
