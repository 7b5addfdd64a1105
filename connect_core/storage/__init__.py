"""Backing stores for offsets, connector configs and statuses (memory, file, Kafka)."""
