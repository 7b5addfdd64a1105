"""mm2: MirrorMaker 2 replication in Python, on top of :mod:`connect_core`.

Layers, imports only downward (``tests/unit/test_import_layers.py`` holds them to it):

* :mod:`mirror.client` - replication policies, filters, the MM2 record formats and remote-topic
  analysis: what a consumer application needs for failover, with no runtime behind it;
* :mod:`mirror.connectors` - MirrorSource, MirrorCheckpoint and MirrorHeartbeat with their pure logic,
  offset syncs, admin and connector configs;
* :mod:`mirror.driver` - ``mm2.properties`` (MirrorMakerConfig), one herder per flow, status, demo, metrics;
* :mod:`mirror.jobs` - the PySpark batch jobs, with the one place that starts Spark;
* :mod:`mirror.cli` - the ``mm2`` command.
"""
