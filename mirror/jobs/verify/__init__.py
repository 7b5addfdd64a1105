"""`mm2 verify`: source and target partitions compared up to the flow's replicated position, on Spark.

The driver plans chunks (:mod:`.plan`), executors hash and read them (:mod:`.reads`), and records are aligned
only where chunk hashes differ (:mod:`.logic`); :mod:`.schedule` runs it periodically inside ``mm2 run``."""
