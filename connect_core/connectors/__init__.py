"""Connectors bundled with the runtime (Kafka's quickstart FileStreamSource)."""
