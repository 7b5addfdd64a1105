"""The Connect REST API (same paths, JSON shapes, status codes and error bodies as Java Connect).

``routes`` is the method+path table (with the namespace prefix that selects a herder in
MirrorMaker's dedicated mode), ``resources`` the handlers that render herder calls, ``entities``
the JSON shapes, ``errors`` the one exception -> status table. Around them: ``server`` (uvicorn,
binding, start/stop), ``asgi`` (the Starlette app), ``tls`` and ``auth`` (HTTPS, authentication) and
``client`` (requests to other workers). Only those do I/O.

The package imports none of them: a process that needs only ``client`` (``mm2 run`` without the internal
REST API) then loads neither uvicorn nor Starlette.
"""
