"""The PySpark batch jobs (backfill, offset translation, verification). Executors talk to the brokers
with confluent-kafka inside Spark tasks: data flows executor to broker, never through the Spark driver.
:mod:`mirror.jobs.spark` is the one place that starts Spark (a SparkContext: the jobs use its core only)."""
