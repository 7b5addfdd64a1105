"""The dedicated MirrorMaker driver (``mm2 run``): ``mm2.properties`` as MirrorMakerConfig, one Connect
herder per flow, status collection and its report, the demo, Prometheus metrics and the generated
configuration reference."""
