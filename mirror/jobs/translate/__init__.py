"""`mm2 translate-offsets`: consumer-group offsets translated for many groups at once (failover), on Spark.

:mod:`.logic` is the pure translation, :mod:`.checkpoints` reads the flow's checkpoints when the source is
gone, :mod:`.job` runs it and, with ``--apply``, writes offsets of groups with no live members."""
