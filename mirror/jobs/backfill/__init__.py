"""`mm2 backfill`: bulk copy of existing partition backlogs on Spark, handed over to live tailing.

The job (:mod:`.job`) plans on the Spark driver (:mod:`.flow`, :mod:`.plan`) and copies on the executors
(:mod:`.copy`), one transactional unit per source partition; :mod:`.handoff` and :mod:`.lease` take the
topics from a running ``mm2 run`` and hand them back."""
