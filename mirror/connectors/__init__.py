"""The three MirrorMaker connectors and their tasks (source, checkpoint, heartbeat), their pure logic,
the offset-sync writer/store/producer, the admin they share, their ConfigDefs and the scheduler of
their periodic work. Builds on :mod:`mirror.client` and :mod:`connect_core`."""
